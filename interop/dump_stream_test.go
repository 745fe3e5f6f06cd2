package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDumpStream (issue 14): pcpcat --json and --csv, and the values view
// (-m), of a stream that came with its metadata (pcpcat ARCHIVE | pcpcat
// --json) print what they print of the archive, each on half the QA
// archives (rotation: every archive runs half of them), and
// spill nothing (TMPDIR names no directory, so a spill would fail), also
// with a window counted from the start, the views that list the
// metadata (-d -i -I -h -e, read to the stream's end, its metadata kept:
// since the twenty-first session), those views with the values (-m), and
// metric names (which the frame's whole namespace resolves: since the
// twenty-second session), and the label (-l, -L: the end it prints found
// as the stream is read to its end, nothing spilled: since the
// twenty-third); on every eighth archive, a window counted back from the
// end, which needs the whole archive, spills, prints the same and leaves
// nothing behind; and a stream
// without a METADATA frame (pcprewrite's) prints under --csv, -m, -L and
// the metadata views what the archive the same rewrite writes does, spilling
// nothing, and under --json (whose metadata records such a stream may
// bring in another order), the metadata views with the values, and metric
// names, which need the whole metadata up front, spills and prints the
// same.
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
	runs := rotation(all, 2)
	forEach(t, all, func(t *testing.T, a string) {
		for j, c := range []struct {
			opts, metrics []string
			spills        bool
		}{
			{[]string{"--json"}, nil, false},
			{[]string{"--csv"}, nil, false},
			{[]string{"--json", "-S", "30s", "-T", "20m"}, nil, false},
			{[]string{"-m", "-x"}, nil, false},
			{[]string{"-m", "-z", "-S", "30s", "-T", "20m"}, nil, false},
			{[]string{"--csv", "-S", "@00:00"}, []string{"kernel", "sample.bin", "pmcd"}, false},
			{[]string{"--json"}, []string{"kernel.all", "sample.bin"}, false},
			{[]string{"-d", "-i", "-I", "-h", "-e"}, nil, false},
			{[]string{"-d", "-i", "-I", "-h", "-e", "-m", "-x"}, nil, false},
			{[]string{"-m", "-z", "-S", "30s", "-T", "20m"}, []string{"kernel", "sample.bin"}, false},
			{[]string{"-h", "-e", "-I"}, []string{"sample", "hinv"}, false},
			{[]string{"-l"}, nil, false},
			{[]string{"-L", "-d", "-i", "-x", "-x", "-x"}, nil, false},
			{[]string{"--json", "-T", "-1m"}, nil, true},
		} {
			if c.spills && !some[a] || !c.spills && !runs(a, j) {
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
		// A stream without the frame: read as it comes for --csv and -m,
		// spilled for --json; the same as the archive either way.
		rw := filepath.Join(t.TempDir(), "rw")
		if r := run(slow, nil, ours("pcprewrite"), "-c", conf, a, "-o", rw); r.code != 0 {
			t.Fatalf("pcprewrite refuses it: %s", r.stderr)
		}
		for _, c := range []struct {
			opts   []string
			spills bool
		}{
			{[]string{"--csv"}, false},
			{[]string{"-m", "-x"}, false},
			{[]string{"-d", "-i", "-I", "-h", "-e"}, false},
			{[]string{"-L", "-x", "-x", "-x"}, false},
			{[]string{"--json"}, true},
			{[]string{"-d", "-m"}, true},
			{[]string{"--csv", "-", "kernel", "sample.bin"}, true},
		} {
			args := slices.Clone(c.opts)
			if !slices.Contains(args, "-") {
				args = append(args, rw)
			} else {
				args[slices.Index(args, "-")] = rw
			}
			want := run(slow, nil, ours("pcpcat"), args...)
			tmp := filepath.Join(t.TempDir(), "absent")
			if c.spills {
				tmp = t.TempDir()
			}
			out, code := toolOfPipe(t, ours("pcprewrite")+" -c "+conf+" "+a, tmp, "pcpcat", c.opts)
			if out != want.stdout || code != want.code {
				t.Errorf("%v of pcprewrite's stream (exit %d) differs from its archive's (exit %d): %s", c.opts, code, want.code, firstDiff(want.stdout, out))
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("%v of pcprewrite's stream: scratch files left: %v", c.opts, left)
			}
		}
	})
}

// TestDumpStreamJoin (issue 14): archives of one host joined, named
// together (pcpcat --csv A B) or as streams one after the other
// ((pcpcat A; pcpcat B) | pcpcat --csv), are read as they come, nothing
// spilled, and print under --csv and -m what pcpcat prints of the archive
// the join makes (pcpcat -o AB A B), also when a later archive brings
// metrics and instance domains the first did not have (its metadata is
// filed as it comes); under --json the same records, a later archive's
// new metadata where it comes in the join rather than where the written
// archive's reader puts it.
func TestDumpStreamJoin(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	multi, _ := filepath.Glob(filepath.Join(qaDir, "multi", "*.meta"))
	for i := range multi {
		multi[i] = strings.TrimSuffix(multi[i], ".meta")
	}
	grown := grownPieces(t, dir)
	for _, set := range [][]string{
		multi,
		{filepath.Join(qaDir, "20150105.17.57-00"), filepath.Join(qaDir, "20150105.17.57")},
		grown,
	} {
		joined := filepath.Join(t.TempDir(), "joined")
		if r := run(slow, nil, ours("pcpcat"), append([]string{"-o", joined}, set...)...); r.code != 0 {
			t.Fatalf("pcpcat -o %v: %s", set, r.stderr)
		}
		var each []string
		for _, a := range set {
			each = append(each, ours("pcpcat")+" "+a)
		}
		for _, opt := range []string{"--csv", "-m", "--json"} {
			want := run(slow, nil, ours("pcpcat"), opt, joined)
			if want.code != 0 {
				t.Fatalf("pcpcat %s of the join: %s", opt, want.stderr)
			}
			for _, producer := range []string{
				ours("pcpcat") + " " + strings.Join(set, " "),
				"(" + strings.Join(each, "; ") + ")",
			} {
				out, code := toolOfPipe(t, producer, filepath.Join(t.TempDir(), "absent"), "pcpcat", []string{opt})
				named, ncode := toolOfPipe(t, "true", filepath.Join(t.TempDir(), "absent"), "pcpcat", append([]string{opt}, set...))
				got, wantOut := out, want.stdout
				if opt == "--json" {
					got, wantOut = jsonShape(out), jsonShape(want.stdout)
				}
				if code != 0 || got != wantOut {
					t.Errorf("%s | pcpcat %s (exit %d) differs from the join's archive: %s", producer, opt, code, firstDiff(wantOut, got))
				}
				if ncode != 0 || named != out {
					t.Errorf("pcpcat %s %v (exit %d) differs from the same through a pipe: %s", opt, set, ncode, firstDiff(out, named))
				}
			}
		}
		// The views that list the metadata beside the values, and metric
		// names, plan on the join's METADATA frame: named together,
		// nothing spilled; streams concatenated, whose later metadata the
		// first stream's frame did not announce, refused.
		for _, opts := range [][]string{{"-d", "-i", "-m"}, {"-m", "-", "swap.used", "filesys", "hinv"}} {
			args := slices.Clone(opts)
			if !slices.Contains(args, "-") {
				args = append(args, "-")
			}
			want := run(slow, nil, ours("pcpcat"), slices.Concat(args[:slices.Index(args, "-")], []string{joined}, args[slices.Index(args, "-")+1:])...)
			out, code := toolOfPipe(t, ours("pcpcat")+" "+strings.Join(set, " "), filepath.Join(t.TempDir(), "absent"), "pcpcat", args)
			if want.code != 0 || code != 0 || out != want.stdout {
				t.Errorf("pcpcat %v of the named join (exit %d, the archive's %d) differs from the join's archive: %s", opts, code, want.code, firstDiff(want.stdout, out))
			}
			if opts[0] != "-d" {
				continue
			}
			cmd := exec.Command("sh", "-c", "("+strings.Join(each, "; ")+") | TMPDIR="+filepath.Join(t.TempDir(), "absent")+" "+ours("pcpcat")+" "+strings.Join(args, " "))
			msg, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(msg), "METADATA frame did not hold") {
				t.Errorf("pcpcat %v of concatenated streams: %v; want the unannounced metadata refused, got %s", opts, err, lastLine(string(msg)))
			}
		}
	}
}

// TestDumpJoinRefusedFirst: archives named together whose join fails
// (another host) are refused before any output, as when the join was
// spilled first: their join sends no METADATA frame, and without one
// they are spilled.
func TestDumpJoinRefusedFirst(t *testing.T) {
	needPCP(t)
	for _, opt := range []string{"--csv", "-m", "--json"} {
		r := run(slow, nil, ours("pcpcat"), opt, filepath.Join(qaDir, "20041125"), filepath.Join(qaDir, "20150105.17.57"))
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "differs") {
			t.Errorf("pcpcat %s of two hosts: exit %d, %d bytes out, %q; want the host refused before any output", opt, r.code, len(r.stdout), r.stderr)
		}
	}
}

// jsonShape is pcpcat --json's output with the metadata records apart:
// the other records in order, then the metadata records without their
// times, sorted.
func jsonShape(s string) string {
	var rest, meta []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, `{"kind":"desc"`) || strings.HasPrefix(l, `{"kind":"indom"`) ||
			strings.HasPrefix(l, `{"kind":"labelset"`) || strings.HasPrefix(l, `{"kind":"text"`) {
			if i := strings.Index(l, `,"pmid"`); i > 0 {
				l = l[i:]
			}
			meta = append(meta, l)
			continue
		}
		rest = append(rest, l)
	}
	slices.Sort(meta)
	return strings.Join(rest, "\n") + "\n--\n" + strings.Join(meta, "\n")
}

// grownPieces writes two pieces of one recording (20041125) into dir, A
// and B, the second with metrics and an instance domain the first has
// not, and returns their names.
func grownPieces(t *testing.T, dir string) []string {
	t.Helper()
	src := filepath.Join(qaDir, "20041125")
	piece := func(name, start, end string, metrics ...string) string {
		conf := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(conf, []byte(strings.Join(metrics, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name)
		cmd := exec.Command(filepath.Join("/usr/lib/pcp/bin", "pmlogextract"), "-c", conf, "-S", start, "-T", end, src, out)
		cmd.Env = append(os.Environ(), "TZ=UTC")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pmlogextract: %v\n%s", err, b)
		}
		return out
	}
	return []string{
		piece("A", "@23:10", "@23:30", "swap.used"),
		piece("B", "@23:31", "@23:58", "swap.used", "filesys.free", "swapdev.free"),
	}
}
