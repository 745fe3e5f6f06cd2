package export

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

const demo = "../testdata/example/demo"

// copyArchive copies an archive's files into dir under a new base name,
// replacing the host name in its labels with one of the same length.
func copyArchive(t *testing.T, base, dir, name, host string) string {
	t.Helper()
	files, err := filepath.Glob(base + ".*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files for %s: %v", base, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			old := "demo.example.com"
			if len(host) != len(old) {
				t.Fatalf("host %q must have %d bytes", host, len(old))
			}
			b = bytes.ReplaceAll(b, []byte(old), []byte(host))
		}
		out := filepath.Join(dir, name+strings.TrimPrefix(f, base))
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

// csvRows is pcpcat --csv's rows of a (dump.CSV), without the header.
func csvRows(t *testing.T, a *format.Archive) [][]string {
	t.Helper()
	var b bytes.Buffer
	if err := dump.CSV(&b, a, dump.Options{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

// openParquet opens a Parquet file for its footer and metadata.
func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

func readRows(t *testing.T, path string) []Row {
	t.Helper()
	rows, err := parquet.ReadFile[Row](path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestParquetRows checks every row against pcpcat --csv's (dump.CSV),
// with the rows in one row group, and in many encoded by several
// workers at once and put back in order.
func TestParquetRows(t *testing.T) {
	for _, c := range []struct{ groupRows, encoders int }{{RowGroupRows, 0}, {7, 3}, {64, 2}, {100, 4}} {
		func() {
			defer func(r, e int) { rowGroupRows, encoders = r, e }(rowGroupRows, encoders)
			rowGroupRows, encoders = c.groupRows, c.encoders
			checkParquetRows(t, c.groupRows)
		}()
	}
}

func checkParquetRows(t *testing.T, groupRows int) {
	a, err := format.Open(demo)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "demo.parquet")
	n, err := Parquet(out, archiveSource(t, a), dump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, out)
	if got, want := len(pf.RowGroups()), int((n+int64(groupRows)-1)/int64(groupRows)); got != want || groupRows < RowGroupRows && n < 3*int64(groupRows) {
		t.Fatalf("%d rows in groups of %d: %d row groups, want %d (and several groups when they are small)", n, groupRows, got, want)
	}
	want := csvRows(t, a)
	rows := readRows(t, out)
	if int(n) != len(want) || len(rows) != len(want) {
		t.Fatalf("wrote %d rows, read %d, CSV has %d", n, len(rows), len(want))
	}
	for i, r := range rows {
		w := want[i]
		got := []string{time.Unix(0, r.Time).UTC().Format(time.RFC3339Nano), r.Metric, "", ""}
		if r.Instance != nil {
			got[2] = *r.Instance
		}
		switch {
		case r.ValueText != nil:
			got[3] = *r.ValueText
		case r.ValueInt != nil:
			got[3] = strconv.FormatInt(*r.ValueInt, 10)
		case r.Value != nil && *r.Value == math.Trunc(*r.Value) && math.Abs(*r.Value) < 1<<53:
			got[3] = strconv.FormatFloat(*r.Value, 'f', -1, 64)
		case r.Value != nil:
			got[3] = strconv.FormatFloat(*r.Value, 'g', -1, 64)
			if f, err := strconv.ParseFloat(w[3], 32); err == nil && float32(f) == float32(*r.Value) {
				got[3] = w[3]
			}
		}
		if strings.Join(got, ",") != strings.Join(w, ",") {
			t.Fatalf("groups of %d rows: row %d: parquet %q, csv %q", groupRows, i+2, got, w)
		}
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm()&0o044 == 0 {
		t.Errorf("output mode: %v, %v: others cannot read it", st, err)
	}
}

// TestParquetDamage: an archive whose data is damaged part way fails the
// export, leaves no file at the output name (an older one stays as it
// was) and no temporary file beside it.
func TestParquetDamage(t *testing.T) {
	dir := t.TempDir()
	base := copyArchive(t, demo, dir, "bad", "")
	vol := base + ".1"
	b, err := os.ReadFile(vol)
	if err != nil {
		t.Fatal(err)
	}
	// A record's length that does not match its trailer, past the label.
	b[len(b)/2], b[len(b)/2+1] = 0xff, 0xff
	if err := os.WriteFile(vol, b, 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	for _, old := range []string{"", "an older export"} {
		out := filepath.Join(outDir, "bad.parquet")
		if old != "" {
			if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a, err := format.Open(base, format.WithWarn(func(error) {}))
		if err == nil {
			_, err = Parquet(out, archiveSource(t, a), dump.Options{})
		}
		if err == nil {
			t.Fatal("no error for a damaged archive")
		}
		if !strings.Contains(err.Error(), "bad") {
			t.Errorf("error %q does not name the archive", err)
		}
		got, rerr := os.ReadFile(out)
		switch {
		case old == "" && rerr == nil:
			t.Errorf("a file was left at %s", out)
		case old != "" && string(got) != old:
			t.Errorf("the older %s was changed", out)
		}
		ents, _ := os.ReadDir(outDir)
		for _, e := range ents {
			if e.Name() != "bad.parquet" {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	}
}

// TestParquetDiskFull exports to a tmpfs too small for the file, in many
// row groups from several encoders: a clear error, and nothing left at
// the output name or beside it. It needs root, to mount the tmpfs.
func TestParquetDiskFull(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, 0)
	defer func(r, e int) { rowGroupRows, encoders = r, e }(rowGroupRows, encoders)
	rowGroupRows, encoders = 7, 2
	a, err := format.Open(demo)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "demo.parquet")
	_, err = Parquet(out, archiveSource(t, a), dump.Options{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error %v, want ENOSPC", err)
	}
	if !strings.HasPrefix(err.Error(), out+": disk full") {
		t.Errorf("error %q does not name the output and say the disk is full", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestDataset exports two hosts, one of them damaged: the good host's
// partition is written, the bad one is reported; a second run redoes
// nothing; a changed archive is redone.
func TestDataset(t *testing.T) {
	src := t.TempDir()
	good := copyArchive(t, demo, src, "good", "good.example.com")
	bad := copyArchive(t, demo, src, "bad", "bad.example.orgx")
	b, err := os.ReadFile(bad + ".1")
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2], b[len(b)/2+1] = 0xff, 0xff
	if err := os.WriteFile(bad+".1", b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	type done struct {
		rows    int64
		skipped bool
	}
	runOnce := func() (map[string]done, map[string]error, error) {
		dones, reports := map[string]done{}, map[string]error{}
		err := Dataset(out, []string{src}, DatasetOptions{
			Jobs:   2,
			Warn:   func(error) {},
			Report: func(h string, err error) { reports[h] = err },
			Done: func(p string, rows int64, skipped bool) {
				rel, _ := filepath.Rel(out, p)
				dones[rel] = done{rows, skipped}
			},
		})
		return dones, reports, err
	}
	goodFile := filepath.Join("host=good.example.com", "date=2026-11-01", "good.parquet")
	dones, reports, err := runOnce()
	var f folio.Failed
	if !errors.As(err, &f) || f.Failed != 1 || f.Total != 2 {
		t.Fatalf("error %v, want 1 of 2 hosts failed", err)
	}
	if reports["bad.example.orgx"] == nil || len(reports) != 1 {
		t.Errorf("reports %v, want the bad host only", reports)
	}
	if d, ok := dones[goodFile]; !ok || d.skipped || d.rows != 513 {
		t.Fatalf("first run: %v, want %s with 513 rows", dones, goodFile)
	}
	if rows := readRows(t, filepath.Join(out, goodFile)); len(rows) != 513 {
		t.Fatalf("%d rows in %s", len(rows), goodFile)
	}
	if _, err := os.Stat(filepath.Join(out, "host=bad.example.orgx", "date=2026-11-01", "bad.parquet")); err == nil {
		t.Errorf("the bad host's file exists")
	}
	dones, _, _ = runOnce()
	if d := dones[goodFile]; !d.skipped {
		t.Errorf("second run redid %s", goodFile)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(good+".0", later, later); err != nil {
		t.Fatal(err)
	}
	dones, _, _ = runOnce()
	if d := dones[goodFile]; d.skipped || d.rows != 513 {
		t.Errorf("a changed archive was not redone: %v", d)
	}
}

func TestPromName(t *testing.T) {
	for in, want := range map[string]string{
		"kernel.all.load":        "kernel_all_load",
		"disk.dev.read_bytes":    "disk_dev_read_bytes",
		"9p.x":                   "_9p_x",
		"network.interface.in-x": "network_interface_in_x",
		"foo.bar_total":          "foo_bar",
		"":                       "_",
	} {
		if got := PromName(in); got != want {
			t.Errorf("PromName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParquetRates checks ParquetRates against rates worked out from
// pcpcat --csv's text: a counter's value is (v - previous v) / seconds
// for its metric and instance, NULL for the first, after the demo
// archive's <mark> and after a decrease; other metrics are as they were.
func TestParquetRates(t *testing.T) {
	a, err := format.Open(demo)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := a.Meta()
	if err != nil {
		t.Fatal(err)
	}
	counter := map[string]bool{}
	for _, d := range meta.Descs {
		if d.Sem == stream.SemCounter && len(d.Names) > 0 {
			counter[d.Names[0]] = true
		}
	}
	var marks []time.Time
	it := a.Records()
	for it.Next() {
		if m, ok := it.At().(*stream.Mark); ok {
			marks = append(marks, m.T.Time())
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if len(counter) == 0 || len(marks) == 0 {
		t.Fatalf("the demo archive has %d counters and %d marks: the test needs both", len(counter), len(marks))
	}
	out := filepath.Join(t.TempDir(), "rates.parquet")
	if _, err := ParquetRates(out, archiveSource(t, a), dump.Options{}); err != nil {
		t.Fatal(err)
	}
	want := csvRows(t, a)
	rows := readRows(t, out)
	if len(rows) != len(want) {
		t.Fatalf("%d rows, CSV has %d", len(rows), len(want))
	}
	type point struct {
		t time.Time
		v float64
	}
	last := map[string]point{}
	rates, nulls := 0, 0
	for i, r := range rows {
		w := want[i]
		tm, err := time.Parse(time.RFC3339Nano, w[0])
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseFloat(w[3], 64)
		if err != nil || !counter[w[1]] {
			continue
		}
		k := w[1] + "\x00" + w[2]
		p, ok := last[k]
		last[k] = point{tm, v}
		for _, m := range marks {
			if ok && p.t.Before(m) && !tm.Before(m) {
				ok = false
			}
		}
		if !ok || v < p.v {
			if r.Value != nil {
				t.Errorf("row %d (%v): rate %v, want NULL (first, after a mark, or a decrease)", i+2, w, *r.Value)
			}
			nulls++
			continue
		}
		rate := (v - p.v) / tm.Sub(p.t).Seconds()
		if r.Value == nil || math.Abs(*r.Value-rate) > 1e-9*math.Max(1, math.Abs(rate)) {
			t.Errorf("row %d (%v): rate %v, want %v", i+2, w, r.Value, rate)
		}
		rates++
	}
	if rates == 0 || nulls == 0 {
		t.Errorf("%d rates and %d NULLs: the test checked too little", rates, nulls)
	}
	if v, ok := openParquet(t, out).Lookup("pcp.rates"); !ok || !strings.Contains(v, "per second") {
		t.Errorf("pcp.rates metadata %q, %v", v, ok)
	}
}

// archiveSource is FromArchive, failing the test on an error.
func archiveSource(tb testing.TB, a *format.Archive) *Source {
	tb.Helper()
	src, err := FromArchive(a)
	if err != nil {
		tb.Fatal(err)
	}
	return src
}
