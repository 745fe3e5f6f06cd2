// Package duckdb reads pcpexport's Parquet with a real engine, DuckDB
// through its Go binding, and checks it against pcpcat --csv. It is a
// module of its own so that cgo stays out of the tools' build.
package duckdb

import (
	"database/sql"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

const qaDir = "/var/lib/pcp/testsuite/archives"

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pcptools-duckdb-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/pcptools/pcptools/cmd/pcpexport", "github.com/pcptools/pcptools/cmd/pcpcat")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the tools:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ciArchives are a handful of representative QA archives: v2 and v3,
// compressed and multi-volume, with instances, strings, events and
// counters. PCPTOOLS_EXPORT_FULL=1 checks every QA archive.
var ciArchives = []string{
	"20041125",       // v2, U32 and FLOAT, instances
	"20180102",       // v2, strings, many instances
	"20190628.04.03", // xz, two volumes
	"eventrec",       // event records
	"sample-labels",  // labels
	"omnibus_v3",     // v3, every value type
	"multi-vm00",     // several hosts' archives share names
	"value-test",     // edge values
	"20150105.17.57", // instance domain changes
}

// heavy are the QA archives of hundreds of MB of xz (as in interop's
// harness): the full sweep takes them only with PCPTOOLS_QA_FULL=1 too.
var heavy = map[string]bool{"pcp-pidstat-process-args": true, "20180416.10.00": true}

var metaSuffix = regexp.MustCompile(`\.meta(\.(xz|lzma|bz2|bz|gz|Z|z|zst))?$`)

func needPCP(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(qaDir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PCP's QA archives are required in CI: %v", err)
		}
		t.Skipf("no QA archives: %v", err)
	}
}

func archives(t *testing.T) []string {
	needPCP(t)
	if os.Getenv("PCPTOOLS_EXPORT_FULL") == "" {
		var out []string
		for _, a := range ciArchives {
			out = append(out, filepath.Join(qaDir, a))
		}
		return out
	}
	ents, err := os.ReadDir(qaDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !metaSuffix.MatchString(e.Name()) {
			continue
		}
		base := metaSuffix.ReplaceAllString(e.Name(), "")
		if heavy[base] && os.Getenv("PCPTOOLS_QA_FULL") == "" {
			continue
		}
		out = append(out, filepath.Join(qaDir, base))
	}
	if len(out) < 150 {
		t.Fatalf("only %d QA archives", len(out))
	}
	return out
}

func bin(name string) string { return filepath.Join(binDir, name) }

func openDB(t *testing.T) *sql.DB {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// csvRows is pcpcat --csv's rows without the header.
func csvRows(t *testing.T, archive string) [][]string {
	out, err := exec.Command(bin("pcpcat"), "--csv", archive).Output()
	if err != nil {
		t.Fatalf("pcpcat --csv %s: %v", archive, err)
	}
	r := csv.NewReader(strings.NewReader(string(out)))
	r.FieldsPerRecord = 4
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("pcpcat --csv %s: %v", archive, err)
	}
	return recs[1:]
}

type pqRow struct {
	ns       int64
	metric   string
	instance sql.NullString
	value    sql.NullFloat64
	vint     sql.NullInt64
	vtext    sql.NullString
}

// sameValue reports whether a row's typed value is the CSV's text.
func sameValue(r pqRow, want string) bool {
	switch {
	case r.vtext.Valid:
		return r.vtext.String == strings.ToValidUTF8(want, "\uFFFD")
	case r.vint.Valid:
		if r.value.Valid && r.value.Float64 != float64(r.vint.Int64) {
			return false
		}
		return strconv.FormatInt(r.vint.Int64, 10) == want
	case !r.value.Valid:
		return false
	}
	f := r.value.Float64
	switch want {
	case "NaN":
		return math.IsNaN(f)
	case "Infinity":
		return math.IsInf(f, 1)
	case "-Infinity":
		return math.IsInf(f, -1)
	}
	if w, err := strconv.ParseFloat(want, 64); err == nil && w == f {
		return true
	}
	w32, err := strconv.ParseFloat(want, 32)
	return err == nil && float32(w32) == float32(f)
}

// TestDuckDBArchives exports QA archives to Parquet and checks, row by
// row through DuckDB, that times, metrics, instances and values are what
// pcpcat --csv prints.
func TestDuckDBArchives(t *testing.T) {
	db := openDB(t)
	dir := t.TempDir()
	for _, a := range archives(t) {
		t.Run(filepath.Base(a), func(t *testing.T) {
			out := filepath.Join(dir, filepath.Base(a)+".parquet")
			if b, err := exec.Command(bin("pcpexport"), "--parquet", "-o", out, a).CombinedOutput(); err != nil {
				t.Fatalf("pcpexport: %v\n%s", err, b)
			}
			want := csvRows(t, a)
			rows, err := db.Query(`select epoch_ns("time"), metric, instance, value, value_int, value_text
				from read_parquet(?, file_row_number = true) order by file_row_number`, out)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var r pqRow
				if err := rows.Scan(&r.ns, &r.metric, &r.instance, &r.value, &r.vint, &r.vtext); err != nil {
					t.Fatal(err)
				}
				if n >= len(want) {
					n++
					continue
				}
				w := want[n]
				tm, err := time.Parse(time.RFC3339Nano, w[0])
				if err != nil {
					t.Fatalf("row %d: %v", n+2, err)
				}
				if r.ns != tm.UnixNano() || r.metric != strings.ToValidUTF8(w[1], "\uFFFD") ||
					r.instance.String != strings.ToValidUTF8(w[2], "\uFFFD") || !sameValue(r, w[3]) {
					t.Fatalf("row %d: parquet %d %q %v %v %v %v, csv %q", n+2, r.ns, r.metric, r.instance, r.value, r.vint, r.vtext, w)
				}
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n != len(want) {
				t.Fatalf("%d rows in Parquet, %d in CSV", n, len(want))
			}
		})
	}
}

// TestDuckDBDataset exports a directory of several hosts' archives as a
// Hive-partitioned dataset and reads it as one table: rows per host, and
// per host and metric with partition pruning, equal pcpcat --csv's.
func TestDuckDBDataset(t *testing.T) {
	src := t.TempDir()
	as := archives(t)
	if len(as) > 5 {
		as = as[:5]
	}
	// Link the archives' files into one directory, as a farm would
	// hold them.
	for _, a := range as {
		files, _ := filepath.Glob(a + ".*")
		for _, f := range files {
			if err := os.Symlink(f, filepath.Join(src, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "ds")
	if b, err := exec.Command(bin("pcpexport"), "--dataset", out, src).CombinedOutput(); err != nil {
		t.Fatalf("pcpexport --dataset: %v\n%s", err, b)
	}
	// What CSV says, per host (from the label) and metric.
	want := map[string]int{}
	hosts := map[string]bool{}
	for _, a := range as {
		b, err := exec.Command(bin("pcpcat"), "-l", a).Output()
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^Performance metrics from host (.*)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("no host in pcpcat -l %s:\n%s", a, b)
		}
		host := string(m[1])
		hosts[host] = true
		for _, r := range csvRows(t, a) {
			want[host+"\x00"+r[1]]++
			want[host]++
		}
	}
	if len(hosts) < 2 {
		t.Fatalf("only %d hosts: the test needs several", len(hosts))
	}
	db := openDB(t)
	glob := filepath.Join(out, "**", "*.parquet")
	q := `select host, count(*) from read_parquet(?, hive_partitioning = true) group by host`
	rows, err := db.Query(q, glob)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for rows.Next() {
		var h string
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			t.Fatal(err)
		}
		got[h] = n
	}
	rows.Close()
	var names []string
	for h := range hosts {
		names = append(names, h)
		if got[h] != want[h] {
			t.Errorf("host %s: %d rows in the dataset, %d in CSV", h, got[h], want[h])
		}
	}
	if len(got) != len(hosts) {
		t.Errorf("dataset hosts %v, archives' hosts %v", got, hosts)
	}
	sort.Strings(names)
	// One host's metrics, the host partition pruned.
	h := names[0]
	rows, err = db.Query(`select metric, count(*) from read_parquet(?, hive_partitioning = true)
		where host = ? group by metric`, glob, h)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	total := 0
	for rows.Next() {
		var m string
		var n int
		if err := rows.Scan(&m, &n); err != nil {
			t.Fatal(err)
		}
		if want[h+"\x00"+m] != n {
			t.Errorf("host %s metric %s: %d rows, %d in CSV", h, m, n, want[h+"\x00"+m])
		}
		total += n
	}
	if total != want[h] {
		t.Errorf("host %s: %d rows, %d in CSV", h, total, want[h])
	}
}
