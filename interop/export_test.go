package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/pcptools/pcptools/export"
)

// exportArchives are the QA archives the OpenMetrics test takes in CI:
// v2 and v3, compressed and several volumes, counters, instances,
// strings (left out of OpenMetrics), events and edge values.
// PCPTOOLS_EXPORT_FULL=1 takes all the light ones.
var exportArchives = []string{"20041125", "20190628.04.03", "eventrec", "sample-labels",
	"omnibus_v3", "multi-vm00", "value-test", "20150105.17.57", "pcp-vmstat"}

func needPromtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool (Debian's prometheus package) is required in CI: %v", err)
		}
		t.Skipf("no promtool: %v", err)
	}
	return p
}

// TestOpenMetricsPromtool checks that promtool turns our OpenMetrics
// into TSDB blocks holding every sample we wrote.
func TestOpenMetricsPromtool(t *testing.T) {
	needPCP(t)
	promtool := needPromtool(t)
	var archives []string
	if os.Getenv("PCPTOOLS_EXPORT_FULL") != "" {
		archives = lightArchives(t)
	} else {
		for _, a := range exportArchives {
			archives = append(archives, filepath.Join(qaDir, a))
		}
	}
	forEach(t, archives, func(t *testing.T, a string) {
		dir := t.TempDir()
		om := filepath.Join(dir, "om.txt")
		if r := run(slow, nil, ours("pcpexport"), "--openmetrics", "-o", om, a); r.code != 0 {
			t.Fatalf("pcpexport --openmetrics: %d\n%s", r.code, r.stderr)
		}
		want := omSamples(t, om)
		r := run(slow, nil, promtool, "tsdb", "create-blocks-from", "openmetrics", om, filepath.Join(dir, "tsdb"))
		if r.code != 0 {
			t.Fatalf("promtool refused our OpenMetrics: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if want == 0 {
			return // no sample, no block, and no table (procpid-encode2 holds strings only)
		}
		if got := blockSamples(t, r.stdout); got != want {
			t.Fatalf("promtool's blocks hold %d samples, we wrote %d\n%s", got, want, r.stdout)
		}
	})
}

// omSamples counts the sample lines of an OpenMetrics file.
func omSamples(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && l[0] != '#' {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// blockSamples adds up the NUM SAMPLES column of promtool's table of the
// blocks it made.
func blockSamples(t *testing.T, out string) int {
	col, total := -1, 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "BLOCK" {
			// "BLOCK ULID MIN TIME MAX TIME DURATION NUM SAMPLES ...":
			// the values row has one field per two-word heading.
			col = -1
			for i := 0; i+1 < len(f); i++ {
				if f[i] == "NUM" && f[i+1] == "SAMPLES" {
					col = i - 3 // BLOCK ULID, MIN TIME, MAX TIME are pairs
				}
			}
			continue
		}
		if col < 0 || len(f) <= col {
			continue
		}
		n, err := strconv.Atoi(f[col])
		if err != nil {
			t.Fatalf("promtool's table: %q: %v", l, err)
		}
		total += n
	}
	if col < 0 {
		t.Fatalf("no block table in promtool's output:\n%s", out)
	}
	return total
}

// TestOpenMetricsLabels checks that a series carries the PCP labels
// libpcp would give it, each level's: QA archive sample-labels records
// context, domain, cluster, item, instance domain and instance labels
// (pmdumplog -e), and the Parquet file's "pcp.labels" lists every set.
func TestOpenMetricsLabels(t *testing.T) {
	needPCP(t)
	a := filepath.Join(qaDir, "sample-labels")
	r := run(slow, nil, ours("pcpexport"), "--openmetrics", a)
	if r.code != 0 {
		t.Fatalf("pcpexport --openmetrics: %d\n%s", r.code, r.stderr)
	}
	want := map[string][]string{
		// context, domain, cluster, instance domain; instid 2 is blue
		`sample_colour{hostname="shard",instname="blue",instid="2",`: {`agent="sample"`, `role="testing"`,
			`cluster="zero"`, `model="RGB"`, `domainname="localdomain"`, `userid="1000"`},
		// the instances' own labels: m-00 is not transient, m-01 is
		`sample_mirage{hostname="shard",instname="m-00",instid="0",`: {`transient="false"`},
		`sample_mirage{hostname="shard",instname="m-01",instid="1",`: {`transient="true"`},
		// an item's labels (PMID 29.0.64)
		`sample_rapid_total{hostname="shard",`: {`measure="speed"`, `units="metres per second"`, `unitsystem="SI"`},
	}
	for prefix, labels := range want {
		var line string
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, prefix) {
				line = l
				break
			}
		}
		if line == "" {
			t.Errorf("no series starts %s", prefix)
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, ","+l) {
				t.Errorf("%s: no %s", line, l)
			}
		}
		if strings.Count(line, "hostname=") != 1 {
			t.Errorf("%s: hostname twice (the context's label and the archive's)", line)
		}
	}
	pq := filepath.Join(t.TempDir(), "l.parquet")
	if r := run(slow, nil, ours("pcpexport"), "--parquet", "-o", pq, a); r.code != 0 {
		t.Fatalf("pcpexport --parquet: %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := pf.Lookup("pcp.labels")
	if !ok {
		t.Fatal("no pcp.labels in the Parquet file's metadata")
	}
	var sets []export.LabelMeta
	if err := json.Unmarshal([]byte(v), &sets); err != nil {
		t.Fatalf("pcp.labels: %v", err)
	}
	found := map[string]bool{}
	for _, s := range sets {
		found[s.Type+" "+s.Ident+" "+string(s.Labels)] = true
	}
	for _, w := range []string{`domain 29 {"agent":"sample","role":"testing"}`, `cluster 29.0 {"cluster":"zero"}`,
		`item 29.0.64 {"measure":"speed","units":"metres per second","unitsystem":"SI"}`, `indom 29.1 {"model":"RGB"}`} {
		if !found[w] {
			t.Errorf("pcp.labels has no %s", w)
		}
	}
}

// TestExportStreamNotSpilled checks that pcpexport reads a stream with its
// METADATA frame (pcpcat's) as it arrives, with no scratch archive (its
// temporary directory does not exist, so a spill would fail), and writes
// the same Parquet, Parquet with rates, and OpenMetrics as from the
// archive; that what it cannot stream (metric names: the spill) does try
// to spill, so the check can fail; and that a stream cut short leaves no
// output file.
func TestExportStreamNotSpilled(t *testing.T) {
	needPCP(t)
	noTmp := "TMPDIR=" + filepath.Join(t.TempDir(), "absent")
	pipeTo := func(a string, args ...string) (string, error) {
		t.Helper()
		sh := exec.Command("sh", "-c", `c=$1 a=$2 e=$3; shift 3; "$c" "$a" | "$e" "$@"`, "sh", ours("pcpcat"), a, ours("pcpexport"))
		sh.Args = append(sh.Args, args...)
		sh.Env = append(os.Environ(), "TZ=UTC", noTmp)
		var stderr bytes.Buffer
		sh.Stderr = &stderr
		out, err := sh.Output()
		if err != nil {
			return stderr.String(), err
		}
		return string(out), nil
	}
	for _, name := range exportArchives {
		a := filepath.Join(qaDir, name)
		dir := t.TempDir()
		for i, mode := range [][]string{{"--parquet"}, {"--parquet", "--rates"}} {
			want, got := filepath.Join(dir, fmt.Sprintf("a%d.parquet", i)), filepath.Join(dir, fmt.Sprintf("s%d.parquet", i))
			args := append(append([]string{}, mode...), "-o", want, a)
			if r := run(slow, nil, ours("pcpexport"), args...); r.code != 0 {
				t.Fatalf("%s: pcpexport %v: %d\n%s", name, args, r.code, r.stderr)
			}
			if msg, err := pipeTo(a, append(append([]string{}, mode...), "-o", got, "-")...); err != nil {
				t.Fatalf("%s: pcpcat | pcpexport %v -: %v\n%s", name, mode, err, msg)
			}
			wb, _ := os.ReadFile(want)
			gb, _ := os.ReadFile(got)
			if len(wb) == 0 || !bytes.Equal(wb, gb) {
				t.Fatalf("%s: %v from the stream (%d bytes) differs from the archive's (%d bytes)", name, mode, len(gb), len(wb))
			}
		}
		r := run(slow, nil, ours("pcpexport"), "--openmetrics", a)
		if r.code != 0 {
			t.Fatalf("%s: pcpexport --openmetrics: %d\n%s", name, r.code, r.stderr)
		}
		got, err := pipeTo(a, "--openmetrics", "-")
		if err != nil {
			t.Fatalf("%s: pcpcat | pcpexport --openmetrics -: %v\n%s", name, err, got)
		}
		if got != r.stdout {
			t.Fatalf("%s: OpenMetrics from the stream differs from the archive's", name)
		}
	}
	a := filepath.Join(qaDir, "20041125")
	// Metric names select from the frame's whole namespace: nothing
	// spilled. Without the frame (pcprewrite's stream) they need the
	// whole metadata first: the spill, which fails here.
	r := run(slow, nil, ours("pcpexport"), "--openmetrics", a, "kernel.all.load", "swap")
	if r.code != 0 || r.stdout == "" {
		t.Fatalf("pcpexport --openmetrics with names: %d\n%s", r.code, r.stderr)
	}
	if got, err := pipeTo(a, "--openmetrics", "-", "kernel.all.load", "swap"); err != nil || got != r.stdout {
		t.Fatalf("with metric names, OpenMetrics from the stream (%v) differs from the archive's: %s", err, firstDiff(r.stdout, got))
	}
	conf := filepath.Join(t.TempDir(), "host.conf")
	if err := os.WriteFile(conf, []byte("global { hostname -> \"late.example\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", `"$1" -c "$2" "$3" | "$4" --openmetrics - kernel.all.load`, "sh", ours("pcprewrite"), conf, a, ours("pcpexport"))
	sh.Env = append(os.Environ(), "TZ=UTC", noTmp)
	if msg, err := sh.CombinedOutput(); err == nil || !strings.Contains(string(msg), "absent") {
		t.Fatalf("a stream without its frame, with a metric name, should have been spilled (and failed here): %v\n%s", err, msg)
	}
	// a stream cut short: an error, and no output
	stream := run(slow, nil, ours("pcpcat"), a)
	if stream.code != 0 {
		t.Fatalf("pcpcat: %d\n%s", stream.code, stream.stderr)
	}
	out := filepath.Join(t.TempDir(), "cut.parquet")
	r = run(slow, []byte(stream.stdout[:len(stream.stdout)*2/3]), ours("pcpexport"), "--parquet", "-o", out, "-")
	if r.code == 0 || r.stderr == "" {
		t.Fatalf("a cut stream: exit %d, %q", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 0 {
		t.Fatalf("a cut stream left %v", ents)
	}
}

// TestExportOutputExists: pcpexport -o FILE replaced an existing file
// without a word, even a file of the archive it read (pcpexport
// --openmetrics -o A.meta A wrote the text over the input's metadata). An
// existing output is refused as the archive tools refuse one (remove it,
// or --overwrite), and a file of the input archive always, the input left
// as it was.
func TestExportOutputExists(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "in")
	if r := run(slow, nil, ours("pcpcat"), "-o", a, filepath.Join(qaDir, exportArchives[0])); r.code != 0 {
		t.Fatalf("pcpcat -o: %s", r.stderr)
	}
	meta, _ := os.ReadFile(a + ".meta")
	out := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(out, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{{"--openmetrics"}, {"--parquet"}} {
		r := run(slow, nil, ours("pcpexport"), slices.Concat(mode, []string{"-o", out, a})...)
		if b, _ := os.ReadFile(out); r.code != 1 || string(b) != "keep" || !strings.Contains(r.stderr, "file exists: remove it first, or replace it with --overwrite") {
			t.Errorf("%v over an existing file: exit %d, %q, the file now %d bytes", mode, r.code, r.stderr, len(b))
		}
		for _, f := range []string{a + ".meta", a + ".0", a + ".index"} {
			r := run(slow, nil, ours("pcpexport"), slices.Concat(mode, []string{"--overwrite", "-o", f, a})...)
			if r.code != 1 || !strings.Contains(r.stderr, "a file of the input archive") {
				t.Errorf("%v -o %s: exit %d, %q", mode, filepath.Base(f), r.code, r.stderr)
			}
		}
		if b, _ := os.ReadFile(a + ".meta"); !bytes.Equal(b, meta) {
			t.Fatalf("%v: the input's .meta changed", mode)
		}
	}
	if r := run(slow, nil, ours("pcpexport"), "--openmetrics", "--overwrite", "-o", out, a); r.code != 0 {
		t.Fatalf("--overwrite: exit %d, %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(out); !strings.HasSuffix(string(b), "# EOF\n") {
		t.Errorf("--overwrite did not replace the file: %q", b)
	}
}

// TestExportOutputSpecial: an output that is a device or a FIFO (-o
// /dev/null, a named pipe) is written into, as a shell's redirection
// would, without --overwrite: the rename into place of any other output
// would put a regular file where the device node was (as root, /dev/null
// itself). An output that is a symbolic link has the file it names
// replaced, and stays a link.
func TestExportOutputSpecial(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	a := filepath.Join(qaDir, exportArchives[0])
	want := run(slow, nil, ours("pcpexport"), "--openmetrics", a)
	if want.code != 0 || !strings.HasSuffix(want.stdout, "# EOF\n") {
		t.Fatalf("pcpexport --openmetrics: exit %d, %s", want.code, want.stderr)
	}
	for _, mode := range []string{"--openmetrics", "--parquet"} {
		fifo := filepath.Join(dir, "fifo"+mode)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		got := make(chan []byte)
		go func() {
			b, _ := os.ReadFile(fifo)
			got <- b
		}()
		r := run(slow, nil, ours("pcpexport"), mode, "-o", fifo, a)
		if r.code != 0 { // (let the reader go)
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
		}
		b := <-got
		if r.code != 0 {
			t.Errorf("%s -o FIFO: exit %d, %s", mode, r.code, r.stderr)
		}
		if mode == "--openmetrics" && string(b) != want.stdout {
			t.Errorf("%s -o FIFO: the reader had %d bytes, standard output %d", mode, len(b), len(want.stdout))
		}
		if mode == "--parquet" && !bytes.HasPrefix(b, []byte("PAR1")) {
			t.Errorf("%s -o FIFO: the reader had %d bytes, not a Parquet file", mode, len(b))
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s -o FIFO: the FIFO is gone or replaced (%v)", mode, err)
		}
		if r := run(slow, nil, ours("pcpexport"), mode, "-o", os.DevNull, a); r.code != 0 {
			t.Errorf("%s -o %s: exit %d, %s", mode, os.DevNull, r.code, r.stderr)
		}
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s -o %s: no longer a device (%v)", mode, os.DevNull, err)
		}
		target, link := filepath.Join(dir, "target"+mode), filepath.Join(dir, "link"+mode)
		if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if r := run(slow, nil, ours("pcpexport"), mode, "--overwrite", "-o", link, a); r.code != 0 {
			t.Errorf("%s -o LINK: exit %d, %s", mode, r.code, r.stderr)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s -o LINK: the link was replaced (%v)", mode, err)
		}
		if b, _ := os.ReadFile(target); len(b) < 100 {
			t.Errorf("%s -o LINK: the file it names holds %q", mode, b)
		}
	}
}
