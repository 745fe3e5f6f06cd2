package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSummaryStream (issue 14): pcpsummary of a stream that came with its
// metadata (pcpcat ARCHIVE | pcpsummary) prints what pcpsummary ARCHIVE
// prints, each option set on half the QA archives (rotation: every
// archive runs half of them), and spills nothing (TMPDIR names no
// directory, so a spill would fail), also with a window counted from the
// start (-S, -T); with -B, which needs a second look at the values, or a
// -T counted back from the end, it spills, prints the same, and leaves
// nothing behind.
func TestSummaryStream(t *testing.T) {
	needPCP(t)
	all := lightArchives(t)
	runs := rotation(all, 2)
	forEach(t, all, func(t *testing.T, a string) {
		for j, c := range []struct {
			opts   []string
			spills bool
			names  []string // metric names: the stream named "-" before them
		}{
			{[]string{"-a", "-l"}, false, nil},
			{[]string{"-x", "-m", "-M", "-i", "-I", "-H", "-F", "-z"}, false, nil},
			{[]string{"--json", "--percentiles", "50,99"}, false, nil},
			{[]string{"-B", "3"}, true, nil},
			// A window counted from the start needs no end: streamed.
			// One counted back from the end is spilled.
			{[]string{"-S", "30s", "-T", "20m", "-a", "-l", "-z"}, false, nil},
			{[]string{"-S", "2m", "--json"}, false, nil},
			{[]string{"-T", "-1m", "-a"}, true, nil},
			// metric names after "-", standard input (since the
			// twenty-third session)
			{[]string{"-a", "-l"}, false, []string{"kernel.all", "sample.bin"}},
		} {
			if !runs(a, j) {
				continue
			}
			opts := c.opts
			want := run(slow, nil, ours("pcpsummary"), slices.Concat(opts, []string{a}, c.names)...)
			if c.names != nil {
				opts = slices.Concat(opts, []string{"-"}, c.names)
			}
			// Unless it must spill, TMPDIR names no directory: a spill
			// would fail.
			tmp := filepath.Join(t.TempDir(), "absent")
			if c.spills {
				tmp = t.TempDir()
			}
			out, code := summaryOfPipe(t, ours("pcpcat")+" "+a, tmp, opts)
			if out != want.stdout || code != want.code {
				t.Errorf("%v: through a pipe (exit %d):\n%s\nwant (exit %d):\n%s", opts, code, out, want.code, want.stdout)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("%v: scratch files left: %v", opts, left)
			}
		}
	})
}

// TestSummaryStreamJoin (issue 14): streams concatenated one after the
// other ((pcpcat A; pcpcat B) | pcpsummary), the second bringing metrics
// the first's METADATA frame had not, are summarised as they arrive,
// nothing spilled, as pcpsummary summarises the archive of the join
// (pcpcat -o AB A B); and pcpreduce reduces them as it reduces that
// archive (the same metadata and values; the index, which
// points into a .meta laid out in another order, may differ).
func TestSummaryStreamJoin(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	set := grownPieces(t, dir)
	joined := filepath.Join(dir, "AB")
	if r := run(slow, nil, ours("pcpcat"), append([]string{"-o", joined}, set...)...); r.code != 0 {
		t.Fatalf("pcpcat -o: %s", r.stderr)
	}
	producer := "(" + ours("pcpcat") + " " + set[0] + "; " + ours("pcpcat") + " " + set[1] + ")"
	for _, opts := range [][]string{{"-a", "-l"}, {"-x", "-m", "-M", "-i", "-I", "-H", "-F", "-z"}, {"--json", "--percentiles", "50,99"}} {
		want := run(slow, nil, ours("pcpsummary"), append(append([]string{}, opts...), joined)...)
		out, code := summaryOfPipe(t, producer, filepath.Join(t.TempDir(), "absent"), opts)
		if want.code != 0 || out != want.stdout || code != want.code {
			t.Errorf("%v: two streams (exit %d) differ from their join's archive (exit %d, %s): %s", opts, code, want.code, want.stderr, firstDiff(want.stdout, out))
		}
		if !strings.Contains(want.stdout, "swapdev") {
			t.Fatalf("%v: the join's summary has not the second piece's metrics:\n%s", opts, want.stdout)
		}
	}
	// pcpreduce likewise: the reduction of the two streams is the
	// reduction of their join's archive.
	for _, side := range []struct{ name, line string }{
		{"piped", producer + " | TMPDIR=" + filepath.Join(dir, "absent") + " " + ours("pcpreduce") + " -t 5m -o " + filepath.Join(dir, "piped")},
		{"joined", ours("pcpreduce") + " -t 5m " + joined + " " + filepath.Join(dir, "joined")},
	} {
		if r := run(slow, nil, "sh", "-c", side.line); r.code != 0 {
			t.Fatalf("%s: exit %d, %s", side.line, r.code, r.stderr)
		}
	}
	dumpOf := func(a string) string {
		r := run(slow, nil, ours("pcpcat"), "-d", "-i", "-h", "-m", "-x", a)
		if r.code != 0 {
			t.Fatalf("pcpcat -d -i -h -m %s: %s", a, r.stderr)
		}
		// (not -e: the context labels name the source, "standard
		// input" or the archive)
		return r.stdout
	}
	piped, joinedOut := dumpOf(filepath.Join(dir, "piped")), dumpOf(filepath.Join(dir, "joined"))
	if !strings.Contains(piped, "swapdev.free") {
		t.Errorf("pcpreduce of two streams: no second piece's metric in:\n%s", piped)
	} else if piped != joinedOut {
		t.Errorf("pcpreduce of two streams differs from that of their join's archive: %s", firstDiff(joinedOut, piped))
	}
}

// TestSummaryLateStream (issue 14): a stream without a METADATA frame
// (pcprewrite's: its metadata depends on its rules) is summarised as it
// arrives too, taking each descriptor as it comes, and prints what
// pcpsummary prints of the archive the same rewrite writes, on every QA
// archive (the option sets in rotation), with nothing spilled (TMPDIR names no directory); a reduced
// archive's stream (pcpreduce's, whose aggregates are matched with their
// metrics before any record is read) is spilled, and prints the same.
func TestSummaryLateStream(t *testing.T) {
	needPCP(t)
	conf := filepath.Join(t.TempDir(), "host.conf")
	if err := os.WriteFile(conf, []byte("global { hostname -> \"late.example\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pipe := summaryOfPipe
	all := lightArchives(t)
	runs := rotation(all, 2)
	forEach(t, all, func(t *testing.T, a string) {
		rw := filepath.Join(t.TempDir(), "rw")
		if r := run(slow, nil, ours("pcprewrite"), "-c", conf, a, "-o", rw); r.code != 0 {
			t.Fatalf("pcprewrite refuses it: %s", r.stderr) // (none of the light archives is refused)
		}
		for j, opts := range [][]string{
			{"-a", "-l"},
			{"--json", "--percentiles", "50,99"},
			{"-S", "30s", "-T", "20m", "-x", "-z"},
		} {
			if !runs(a, j) {
				continue
			}
			want := run(slow, nil, ours("pcpsummary"), append(append([]string{}, opts...), rw)...)
			tmp := filepath.Join(t.TempDir(), "absent")
			out, code := pipe(t, ours("pcprewrite")+" -c "+conf+" "+a, tmp, opts)
			if out != want.stdout || code != want.code {
				t.Errorf("%v: through a pipe (exit %d):\n%s\nwant (exit %d):\n%s", opts, code, out, want.code, want.stdout)
			}
		}
	})
	t.Run("reduced", func(t *testing.T) {
		a := filepath.Join(qaDir, "20180416.10.00")
		red := filepath.Join(t.TempDir(), "red")
		if r := run(slow, nil, ours("pcpreduce"), "-t", "10m", a, "-o", red); r.code != 0 {
			t.Fatalf("pcpreduce: %s", r.stderr)
		}
		want := run(slow, nil, ours("pcpsummary"), "-a", red)
		tmp := t.TempDir()
		out, code := pipe(t, ours("pcpreduce")+" -t 10m "+a+" -o -", tmp, []string{"-a"})
		if out != want.stdout || code != want.code || !strings.Contains(want.stdout, "reduced archive") {
			t.Errorf("through a pipe (exit %d):\n%s\nwant (exit %d, a reduced archive's summary):\n%s", code, out, want.code, want.stdout)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
			t.Errorf("scratch files left: %v", left)
		}
		// It is spilled: with TMPDIR naming no directory, it fails.
		if _, code := pipe(t, ours("pcpreduce")+" -t 10m "+a+" -o -", filepath.Join(tmp, "absent"), []string{"-a"}); code == 0 {
			t.Errorf("a reduced archive's stream was not spilled")
		}
	})
}

// summaryOfPipe runs producer | pcpsummary opts, with TMPDIR=tmp (UTC),
// and returns pcpsummary's output and exit status.
func summaryOfPipe(t *testing.T, producer, tmp string, opts []string) (string, int) {
	return toolOfPipe(t, producer, tmp, "pcpsummary", opts)
}

// toolOfPipe runs producer | tool opts (one of ours), with TMPDIR=tmp
// (UTC), and returns the tool's output and exit status.
func toolOfPipe(t *testing.T, producer, tmp, tool string, opts []string) (string, int) {
	sh := producer + " 2>/dev/null | TMPDIR=" + tmp + " " + ours(tool) + " " + strings.Join(opts, " ")
	cmd := exec.Command("sh", "-c", sh)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}
