package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDumpStream (issue 14): pcpcat --json and --csv, and the pmdumplog
// views that need no more than the metadata (-d -i -I -h -e -m -x), of a
// stream that came with its metadata (pcpcat ARCHIVE... | pcpcat --json)
// print what they print of the archive, on every QA archive, and spill
// nothing (TMPDIR names no directory, so a spill would fail), also with a
// window counted from the start and a metric selection; on every eighth
// archive, -l (which prints the end) and a window counted back from the
// end, which need the whole archive, spill, print the same and leave
// nothing behind, and a stream without a METADATA frame (pcprewrite's) is
// spilled and prints what the archive the same rewrite writes does.
func TestDumpStream(t *testing.T) {
	needPCP(t)
	conf := filepath.Join(t.TempDir(), "host.conf")
	if err := os.WriteFile(conf, []byte("global { hostname -> \"late.example\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := lightArchives(t)
	some := map[string]bool{}
	for i := 0; i < len(all); i += 8 {
		some[all[i]] = true
	}
	forEach(t, all, func(t *testing.T, a string) {
		for _, c := range []struct {
			opts, metrics []string
			spills        bool
		}{
			{[]string{"--json"}, nil, false},
			{[]string{"--csv"}, nil, false},
			{[]string{"--json", "-S", "30s", "-T", "20m"}, nil, false},
			{[]string{"--csv", "-S", "@00:00"}, []string{"kernel", "sample.bin", "pmcd"}, false},
			{[]string{"-d", "-i", "-I", "-h", "-e", "-m", "-x"}, nil, false},
			{[]string{"-m", "-z", "-S", "30s", "-T", "20m"}, []string{"kernel", "sample.bin"}, false},
			{[]string{"-l"}, nil, true},
			{[]string{"--json", "-T", "-1m"}, nil, true},
		} {
			if c.spills && !some[a] {
				continue
			}
			want := run(slow, nil, ours("pcpcat"), slices.Concat(c.opts, []string{a}, c.metrics)...)
			tmp := filepath.Join(t.TempDir(), "absent")
			if c.spills {
				tmp = t.TempDir()
			}
			out, code := toolOfPipe(t, ours("pcpcat")+" "+a, tmp, "pcpcat", slices.Concat(c.opts, []string{"-"}, c.metrics))
			if out != want.stdout || code != want.code {
				t.Errorf("%v: through a pipe (exit %d) differs from the archive's (exit %d): %s", c.opts, code, want.code, firstDiff(want.stdout, out))
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("%v: scratch files left: %v", c.opts, left)
			}
		}
		if !some[a] {
			return
		}
		// A stream without the frame: spilled, the same as the archive.
		rw := filepath.Join(t.TempDir(), "rw")
		if r := run(slow, nil, ours("pcprewrite"), "-c", conf, a, "-o", rw); r.code != 0 {
			t.Fatalf("pcprewrite refuses it: %s", r.stderr)
		}
		want := run(slow, nil, ours("pcpcat"), "--csv", rw)
		out, code := toolOfPipe(t, ours("pcprewrite")+" -c "+conf+" "+a, t.TempDir(), "pcpcat", []string{"--csv"})
		if out != want.stdout || code != want.code {
			t.Errorf("--csv of pcprewrite's stream (exit %d) differs from its archive's (exit %d): %s", code, want.code, firstDiff(want.stdout, out))
		}
	})
}

// TestDumpStreamJoin (issue 14): archives of one host joined in a stream
// (pcpcat A B, which sends the join's METADATA frame and a label for each
// archive) print under --json and --csv what pcpcat prints of A B (a
// scratch archive of the join, which has one label), with nothing spilled.
func TestDumpStreamJoin(t *testing.T) {
	needPCP(t)
	multi, _ := filepath.Glob(filepath.Join(qaDir, "multi", "*.meta"))
	for i := range multi {
		multi[i] = strings.TrimSuffix(multi[i], ".meta")
	}
	for _, set := range [][]string{
		multi,
		{filepath.Join(qaDir, "20150105.17.57-00"), filepath.Join(qaDir, "20150105.17.57")},
	} {
		for _, opt := range []string{"--json", "--csv"} {
			want := run(slow, nil, ours("pcpcat"), append([]string{opt}, set...)...)
			out, code := toolOfPipe(t, ours("pcpcat")+" "+strings.Join(set, " "), filepath.Join(t.TempDir(), "absent"), "pcpcat", []string{opt})
			if want.code != 0 || out != want.stdout || code != want.code {
				t.Errorf("%s %v: through a pipe (exit %d) differs from the join's (exit %d, %s): %s", opt, set, code, want.code, want.stderr, firstDiff(want.stdout, out))
			}
		}
	}
}

// TestExportStream (issue 14): pcpexport of a stream that came with its
// metadata (pcpcat ARCHIVE | pcpexport ... -) writes what it writes of the
// archive, OpenMetrics text on every QA archive and Parquet files byte
// for byte on every eighth (the rows are the same Samples: TestDumpStream
// compares them as CSV on all), with nothing spilled (TMPDIR names no
// directory); on those, a window counted back from the end needs the
// stream's end, so it spills, writes the same, and leaves nothing behind.
func TestExportStream(t *testing.T) {
	needPCP(t)
	all := lightArchives(t)
	parquet := map[string]bool{}
	for i := 0; i < len(all); i += 8 {
		parquet[all[i]] = true
	}
	forEach(t, all, func(t *testing.T, a string) {
		dir := t.TempDir()
		for _, c := range []struct {
			opts   []string
			spills bool
		}{
			{[]string{"--openmetrics"}, false},
			{[]string{"--openmetrics", "-T", "-1m"}, true},
			{[]string{"--parquet", "--rates", "-o", filepath.Join(dir, "%s.parquet")}, false},
		} {
			if (c.spills || c.opts[0] == "--parquet") && !parquet[a] {
				continue
			}
			opts := func(side string) []string {
				o := slices.Clone(c.opts)
				if n := len(o); strings.Contains(o[n-1], "%s") {
					o[n-1] = strings.ReplaceAll(o[n-1], "%s", side)
				}
				return o
			}
			want := run(slow, nil, ours("pcpexport"), append(opts("direct"), a)...)
			tmp := filepath.Join(t.TempDir(), "absent")
			if c.spills {
				tmp = t.TempDir()
			}
			out, code := toolOfPipe(t, ours("pcpcat")+" "+a, tmp, "pcpexport", append(opts("piped"), "-"))
			if out != want.stdout || code != want.code {
				t.Errorf("%v: through a pipe (exit %d) differs from the archive's (exit %d, %s): %s", c.opts, code, want.code, want.stderr, firstDiff(want.stdout, out))
			}
			if c.opts[0] == "--parquet" && want.code == 0 {
				d, err1 := os.ReadFile(filepath.Join(dir, "direct.parquet"))
				p, err2 := os.ReadFile(filepath.Join(dir, "piped.parquet"))
				if err1 != nil || err2 != nil || !bytes.Equal(d, p) {
					t.Errorf("%v: the Parquet file of the stream differs from the archive's (%v, %v)", c.opts, err1, err2)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("%v: scratch files left: %v", c.opts, left)
			}
		}
	})
}
