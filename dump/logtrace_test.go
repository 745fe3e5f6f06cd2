package dump

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

func TestLogBaseName(t *testing.T) {
	for name, want := range map[string]string{
		"a.0": "a", "a.12": "a", "a.meta": "a", "a.index": "a", "a.0.xz": "a",
		"a.meta.bz2": "a", "a.b.7": "a.b", "a": "", "a.xz": "", "a.txt": "",
		"a.0x": "", "a.": "", "a.index.zst": "", ".meta": "",
	} {
		if got := logBaseName(name); got != want {
			t.Errorf("logBaseName(%q) = %q, want %q", name, got, want)
		}
	}
	for p, want := range map[string]string{
		"a": ".", "d/a": "d", "/a": "/", "d//a": "d", "d/a/": "d", "/": "/", "x/y/z": "x/y",
	} {
		if got := cDirname(p); got != want {
			t.Errorf("cDirname(%q) = %q, want %q", p, got, want)
		}
	}
}

// copyExample copies the two-volume example archive to a directory of
// its own, as base "demo".
func copyExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, _ := filepath.Glob(filepath.Join("..", "testdata", "example", "demo.*"))
	if len(src) != 4 {
		t.Fatalf("example archive: %v", src)
	}
	for _, f := range src {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "demo")
}

// traceAll traces what pmdumplog does for the values view: open, end,
// the mode set at the label's start, and fetches until one fails.
func traceAll(t *testing.T, base string) (string, int) {
	t.Helper()
	var b bytes.Buffer
	tr := NewLogTrace(base, &b)
	defer tr.Close()
	tr.SetZone(time.UTC)
	if !tr.Open() {
		return b.String(), -1
	}
	tr.End()
	tr.SetTime(tr.start, false)
	n := 0
	for tr.Fetch() {
		n++
	}
	return b.String(), n
}

// TestLogTraceExample follows libpcp's reading of a healthy two-volume
// archive: every record fetched once, in order, each volume changed to
// when the one before ends, the last volume peeked at to find the end;
// and of the same archive cut inside its last record.
func TestLogTraceExample(t *testing.T) {
	base := copyExample(t)
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	var want []stream.Timestamp
	it := a.Records()
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Result, *stream.Mark:
			want = append(want, r.Time())
		}
	}
	it.Close()
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}

	out, n := traceAll(t, base)
	if n != len(want) {
		t.Fatalf("%d fetches, want %d records:\n%s", n, len(want), out)
	}
	for _, line := range []string{
		`__pmStat("` + base + `"): no decompress`,
		`__pmFopen("` + base + `.0", "r"): no decompress`,
		`__pmLogChkLabel: fd=3 vol=0 [magic=0x50052602 version=2 vol=0 `,
		"__pmLogChangeVol: change to volume 0\n",
		`__pmLogChkLabel: fd=6 vol=1 `,
		"__pmLogRead: fd=6 (peek) mode=back vol=0 posn=",
		" at ti[0]@",
		"__pmLogChangeVol: change to volume 1\n@",
		"mode=forw vol=1 posn=",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("no %q in the trace:\n%s", line, out)
		}
	}
	if c := strings.Count(out, "AFTER end\n"); c != 2 {
		t.Errorf("%d AFTER end, want one per volume:\n%s", c, out)
	}
	// the times read are the records', in order (the first through the
	// end's peek)
	at := regexp.MustCompile(`@(\d\d:\d\d:\d\d\.\d{9}) \(t=`).FindAllStringSubmatch(out, -1)
	if len(at) != len(want)+1 {
		t.Fatalf("%d records read, want %d", len(at), len(want)+1)
	}
	for i, w := range want {
		if got, ws := at[i+1][1], string(appendTraceTime(nil, w, time.UTC)); got != ws {
			t.Errorf("read %d at %s, want %s", i, got, ws)
		}
	}

	// the last volume cut 3 bytes into its last record's trailer
	vol1 := base + ".1"
	st, err := os.Stat(vol1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(vol1, st.Size()-3); err != nil {
		t.Fatal(err)
	}
	out, n = traceAll(t, base)
	if n != len(want)-1 {
		t.Errorf("%d fetches of the cut archive, want %d", n, len(want)-1)
	}
	for _, line := range []string{
		"__pmLogRead: fd=6 (peek) mode=back vol=0 posn=",
		"\nError: truncated log? rlen=",
		"\nError: trailer fread got 1 expected 4\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("no %q in the trace of the cut archive:\n%s", line, out)
		}
	}
}

// TestLogTraceNotFound: libpcp's words when the files are not there.
func TestLogTraceNotFound(t *testing.T) {
	dir := t.TempDir()
	out, n := traceAll(t, filepath.Join(dir, "nothing"))
	want := `__pmStat("` + dir + `/nothing"): no decompress` + "\n" +
		`__pmLogOpen: Not found: data file "nothing.0" (or similar)` + "\n" +
		`__pmLogOpen: Not found: metadata file "nothing.meta"` + "\n"
	if n != -1 || out != want {
		t.Errorf("trace %q (%d), want %q", out, n, want)
	}
}

// TestLogTraceRecords: libpcp's fetches, as a dump's records, forwards
// from the label's start and backwards from the end, are the archive's
// results and marks in time order (the example archive is sound).
func TestLogTraceRecords(t *testing.T) {
	base := copyExample(t)
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	it := a.Records()
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Result, *stream.Mark:
			want = append(want, fmt.Sprintf("%T %v", r, r.Time()))
		}
	}
	it.Close()
	end, _, err := a.End()
	if err != nil {
		t.Fatal(err)
	}
	for _, back := range []bool{false, true} {
		tr := NewLogTrace(base, io.Discard)
		if !tr.Open() {
			t.Fatal("libpcp would not open the example")
		}
		tr.End()
		from := tr.start
		if back {
			from = end
		}
		tr.SetTime(from, back)
		got := fetchAll(t, tr)
		tr.Close()
		if back {
			slices.Reverse(got)
		}
		if !slices.Equal(got, want) {
			t.Errorf("back %v: fetched\n%v\nwant\n%v", back, got, want)
		}
	}
}

// TestLogTraceSetTimeAfterEnd: a new mode after the fetches reached the
// end reads again (pmlogsummary -B's second pass over the window), from
// the position given.
func TestLogTraceSetTimeAfterEnd(t *testing.T) {
	base := copyExample(t)
	tr := NewLogTrace(base, io.Discard)
	if !tr.Open() {
		t.Fatal("libpcp would not open the example")
	}
	defer tr.Close()
	tr.End()
	pass := func(from stream.Timestamp) []string {
		tr.SetTime(from, false)
		return fetchAll(t, tr)
	}
	first := pass(tr.start)
	if len(first) < 3 {
		t.Fatalf("the example has %d records", len(first))
	}
	if again := pass(tr.start); !slices.Equal(again, first) {
		t.Errorf("second pass fetched\n%v\nwant\n%v", again, first)
	}
	// from the third record's time: the records from it on
	mid := first[2:]
	var from stream.Timestamp
	tr.SetTime(tr.start, false)
	recs := tr.Records()
	for i := 0; i < 3 && recs.Next(); i++ {
		from = recs.At().Time()
	}
	if got := pass(from); !slices.Equal(got, mid) {
		t.Errorf("from the third record fetched\n%v\nwant\n%v", got, mid)
	}
}

// fetchAll is the type and time of each record tr's fetches return, to
// the end.
func fetchAll(t *testing.T, tr *LogTrace) []string {
	t.Helper()
	var got []string
	recs := tr.Records()
	for recs.Next() {
		got = append(got, fmt.Sprintf("%T %v", recs.At(), recs.At().Time()))
	}
	if err := recs.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
