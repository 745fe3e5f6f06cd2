package interop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The rewrites of rewrite_test.go through a pipe: pcprewrite reads the
// stream pcpcat makes, whose METADATA frame gives it the whole metadata
// before the first record (docs/stream.md), so it compiles the same plan as
// on the archive and spills nothing. What it writes must dump as the
// direct run's does, but for the temporal index: a stream carries none, so
// the archive writer makes its own where pmlogrewrite follows the input's.
//
// CI runs the cases on a few archives (every own configuration, the stock
// ones on three archives); PCPTOOLS_PIPE_FULL=1 runs all of rewrite_test's
// cases, and the whole chain pcpcat | pcprewrite | pcpextract against
// PCP's pmlogextract then pmlogrewrite (TestPipeChainLikePCP).

// pipeFlags are pmdumplog's views but the temporal index (-t).
var pipeFlags = []string{"-d", "-e", "-h", "-I", "-i", "-L", "-l", "-M", "-m", "-s"}

// pipeCIArchives are the archives of the cases CI runs.
var pipeCIArchives = map[string]bool{"omnibus_v3": true, "20041125": true, "541380_v2": true}

func pipeCases(t *testing.T) []rewriteCase {
	all := rewriteCases(t)
	if os.Getenv("PCPTOOLS_PIPE_FULL") != "" {
		return all
	}
	var out []rewriteCase
	for _, c := range all {
		if pipeCIArchives[filepath.Base(c.archive)] && !strings.HasPrefix(c.name, "stock_") {
			out = append(out, c)
		}
	}
	t.Logf("%d of %d cases (PCPTOOLS_PIPE_FULL=1 runs them all)", len(out), len(all))
	return out
}

// shell runs a bash pipeline with pipefail, the tools' directory first on
// PATH and TZ=UTC.
func shell(t *testing.T, dir, script string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-o", "pipefail", "-c", script, "pipe"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TZ=UTC", "PATH="+binDir+":"+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), timedOut: ctx.Err() != nil}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash: %v", err)
	}
	return r
}

func rewriteArgs(c rewriteCase) []string {
	if c.mine != nil {
		return c.mine
	}
	return c.theirs
}

func pipeCasesByName(t *testing.T) (map[string]rewriteCase, []string) {
	byName := map[string]rewriteCase{}
	var names []string
	for _, c := range pipeCases(t) {
		byName[c.name] = c
		names = append(names, c.name)
	}
	return byName, names
}

// absArgs makes the testdata files named in args absolute: the pipes run
// in a temporary directory.
func absArgs(t *testing.T, args []string) []string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string(nil), args...)
	for i, a := range args {
		if strings.HasPrefix(a, "testdata/") {
			args[i] = filepath.Join(wd, a)
		}
	}
	return args
}

func TestPipeRewriteLikeDirect(t *testing.T) {
	needPCP(t)
	byName, names := pipeCasesByName(t)
	forEach(t, names, func(t *testing.T, name string) {
		c := byName[name]
		dir := t.TempDir()
		args := absArgs(t, rewriteArgs(c))
		direct := shell(t, dir, `pcprewrite "$@" -o direct`, append(args, c.archive)...)
		// TMPDIR names no directory: a spill to a scratch archive fails.
		piped := shell(t, dir, `in=$1; shift; pcpcat "$in" | TMPDIR=/nonexistent/pipe-test pcprewrite "$@" -o piped`, append([]string{c.archive}, args...)...)
		if piped.timedOut || strings.Contains(piped.stderr, "internal error") || strings.Contains(piped.stderr, "panic") {
			t.Fatalf("the pipe crashed or hung: exit %d: %s", piped.code, piped.stderr)
		}
		_, pipedMade := os.Stat(filepath.Join(dir, "piped.meta"))
		switch {
		case direct.code != 0 && piped.code != 0:
			if pipedMade == nil {
				t.Errorf("the pipe failed (%s) but left piped.meta behind", strings.TrimSpace(piped.stderr))
			}
			return
		case direct.code != 0:
			t.Fatalf("pcprewrite fails on the archive (%s) and not through a pipe", strings.TrimSpace(direct.stderr))
		case piped.code != 0:
			t.Fatalf("pcprewrite fails through a pipe (exit %d: %s) and not on the archive", piped.code, strings.TrimSpace(piped.stderr))
		}
		_, directMade := os.Stat(filepath.Join(dir, "direct.meta"))
		if (directMade == nil) != (pipedMade == nil) {
			t.Fatalf("direct run wrote an archive: %v; the pipe: %v", directMade == nil, pipedMade == nil)
		}
		if directMade != nil {
			return
		}
		if strings.Contains(piped.stderr, "pcprewrite-") {
			t.Errorf("pcprewrite mentions a scratch archive: %s", piped.stderr)
		}
		mine, theirs := filepath.Join(dir, "piped"), filepath.Join(dir, "direct")
		if d := sameOutputs(t, theirs, mine, pipeFlags...); d != "" {
			t.Errorf("pmdumplog %v of the pipe's output differs from the direct run's: %s", pipeFlags, d)
		}
	})
}

// TestPipeChainLikePCP is the job: pcpcat A | pcprewrite | pcpextract
// against pmlogextract A, then pmlogrewrite of that. pcpextract reads the
// metadata that arrives inside pcprewrite's stream (pcprewrite cannot send
// its output metadata up front: it drops what follows the last data
// record). With PCPTOOLS_PIPE_FULL=1 every case runs (306 of 316 matched
// on 2026-11-24); CI runs pipeCases' subset but for the cases of
// pipeChainOpen, which do not match yet.
func TestPipeChainLikePCP(t *testing.T) {
	needPCP(t)
	full := os.Getenv("PCPTOOLS_PIPE_FULL") != ""
	byName, names := pipeCasesByName(t)
	forEach(t, names, func(t *testing.T, name string) {
		if why := pipeChainOpen[name]; why != "" && !full {
			t.Skipf("not yet like PCP's chain: %s", why)
		}
		c := byName[name]
		dir := t.TempDir()
		theirs := shell(t, dir, `in=$1; shift; /usr/bin/pmlogextract "$in" tmp && /usr/lib/pcp/bin/pmlogrewrite "$@" tmp theirs`, append([]string{c.archive}, absArgs(t, c.theirs)...)...)
		piped := shell(t, dir, `in=$1; shift; pcpcat "$in" | pcprewrite "$@" | pcpextract -o piped`, append([]string{c.archive}, absArgs(t, rewriteArgs(c))...)...)
		if piped.timedOut || strings.Contains(piped.stderr, "panic") {
			t.Fatalf("the pipe crashed or hung: %s", piped.stderr)
		}
		_, pipedMade := os.Stat(filepath.Join(dir, "piped.meta"))
		_, theirsMade := os.Stat(filepath.Join(dir, "theirs.meta"))
		switch {
		case theirs.code != 0 && piped.code != 0:
			if pipedMade == nil {
				t.Errorf("the pipe failed but left piped.meta behind")
			}
			return
		case theirs.code != 0:
			if rewriteQuirks[name] == nil {
				t.Errorf("PCP's chain fails (%s) and the pipe does not", strings.TrimSpace(theirs.stderr))
			}
			return
		case piped.code != 0:
			t.Fatalf("the pipe fails (exit %d: %s) where PCP's chain does not", piped.code, strings.TrimSpace(piped.stderr))
		case theirsMade != nil:
			return
		}
		mine, ref := filepath.Join(dir, "piped"), filepath.Join(dir, "theirs")
		if d := sameOutputs(t, ref, mine, pipeFlags...); d != "" && rewriteQuirks[name] == nil {
			t.Errorf("pmdumplog %v differs from PCP's chain: %s", pipeFlags, d)
		}
	})
}

// pipeChainOpen are the cases of CI's subset whose chain output does not
// match PCP's yet, and how (PCPTOOLS_PIPE_FULL=1 runs them, with the ten
// others of the whole set: the order of instance domains and label sets
// written at one time, and which version of an instance domain is taken).
var pipeChainOpen = map[string]string{
	"own_text_omnibus_v3":      "help text records come in another order",
	"own_label_omnibus_v3":     "a domain's label sets at one time come in another order",
	"expr_indom_omnibus_v3":    "instance label sets come in another order",
	"own_indom_omnibus_v3":     "instance label sets come in another order",
	"own_global_v3_omnibus_v3": "the rewrite sets v3 feature bits, which pcpextract, last in our chain, does not carry (nor does pmlogextract); PCP's chain sets them last",
}

// TestPipeRewriteCut: a stream cut anywhere (in the METADATA frame, in a
// record, between records) makes pcprewrite fail with the stream's error
// and write nothing; so does a producer that failed.
func TestPipeRewriteCut(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	src := filepath.Join(qaDir, "omnibus_v3")
	r := run(slow, nil, ours("pcpcat"), src, "-o", filepath.Join(dir, "copy"))
	if r.code != 0 {
		t.Fatalf("pcpcat: %s", r.stderr)
	}
	var full bytes.Buffer
	cmd := exec.Command(ours("pcpcat"), src)
	cmd.Stdout = &full
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	b := full.Bytes()
	conf := filepath.Join("testdata", "rewrite", "metric.conf")
	// 12: after the header; 40: inside the METADATA frame's header; then
	// spots through the metadata and the data, and the END frame cut.
	cuts := []int{12, 40, 200, len(b) / 3, len(b) / 2, len(b) - 20, len(b) - 1}
	for _, n := range cuts {
		out := filepath.Join(dir, "out")
		r := run(slow, b[:n], ours("pcprewrite"), "-c", conf, "-o", out)
		if r.code == 0 {
			t.Errorf("cut at %d of %d: exit 0", n, len(b))
		}
		if !strings.Contains(r.stderr, "standard input") {
			t.Errorf("cut at %d: the error does not name the stream: %s", n, r.stderr)
		}
		if _, err := os.Stat(out + ".meta"); err == nil {
			t.Errorf("cut at %d: an output was written", n)
			os.Remove(out + ".meta")
		}
	}
	r = run(slow, b, ours("pcprewrite"), "-c", conf, "-o", filepath.Join(dir, "whole"))
	if r.code != 0 {
		t.Fatalf("the whole stream: exit %d: %s", r.code, r.stderr)
	}
}

// TestPipeRewriteJoinLikeDirect (issue 14): archives of one host named
// together (pcpcat A B | pcprewrite) go through the rewrite as they come,
// planned on the join's METADATA frame, with nothing spilled (TMPDIR
// names no directory), and give what rewriting the joined archive gives.
func TestPipeRewriteJoinLikeDirect(t *testing.T) {
	needPCP(t)
	multi, _ := filepath.Glob(filepath.Join(qaDir, "multi", "*.meta"))
	for i := range multi {
		multi[i] = strings.TrimSuffix(multi[i], ".meta")
	}
	conf := filepath.Join(t.TempDir(), "join.conf")
	if err := os.WriteFile(conf, []byte("global { hostname -> \"joined.example\" }\nmetric 60.0.* { indom -> NULL output first }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, set := range [][]string{
		multi,
		{filepath.Join(qaDir, "20150105.17.57-00"), filepath.Join(qaDir, "20150105.17.57")},
		{filepath.Join(qaDir, "20180127.08.40"), filepath.Join(qaDir, "20180415.09.16")},
	} {
		dir := t.TempDir()
		direct := shell(t, dir, `conf=$1; shift; pcpcat "$@" -o joined && pcprewrite -c "$conf" joined -o direct`, append([]string{conf}, set...)...)
		piped := shell(t, dir, `conf=$1; shift; pcpcat "$@" | TMPDIR=/nonexistent/pipe-test pcprewrite -c "$conf" -o piped`, append([]string{conf}, set...)...)
		if direct.code != 0 || piped.code != 0 {
			t.Fatalf("%v: direct exit %d (%s), piped exit %d (%s)", set, direct.code, direct.stderr, piped.code, piped.stderr)
		}
		mine, theirs := filepath.Join(dir, "piped"), filepath.Join(dir, "direct")
		if d := sameOutputs(t, theirs, mine, pipeFlags...); d != "" {
			t.Errorf("%v: pmdumplog %v of the pipe's output differs from the joined archive's rewrite: %s", set, pipeFlags, d)
		}
	}
}

// TestStreamLostDescRefused (F19, hostile seed 21): a descriptor frame
// whose kind lost to a flipped bit read as an optional frame (0x82), which
// a reader skipped (docs/stream.md); the results of its metric then had no
// descriptor before them. Every reader of the stream refuses them and
// writes nothing: pcpextract wrote them out, described by the stream's
// METADATA frame, while the others refused. (0x82 itself is refused now,
// a kind never assigned; the test makes the frame one a reader skips.)
func TestStreamLostDescRefused(t *testing.T) {
	data := streamOf(t, filepath.Join(qaDir, "omnibus_v2"))
	const header, frameHeader = 12, 20
	off, flipped := header, false
	for off+frameHeader <= len(data) {
		n := int(data[off+4])<<24 | int(data[off+5])<<16 | int(data[off+6])<<8 | int(data[off+7])
		if data[off] == 0x02 { // the first descriptor record, after the METADATA frame
			// 0x82, the kind one flipped bit makes, is refused as
			// such since the frame kinds never assigned; an optional
			// kind (0x88) is still skipped, and the descriptor lost
			data[off] = 0x88
			flipped = true
			break
		}
		off += frameHeader + n
	}
	if !flipped {
		t.Fatal("no descriptor frame in the stream")
	}
	conf := filepath.Join(t.TempDir(), "host.conf")
	if err := os.WriteFile(conf, []byte("global { hostname -> elsewhere }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"pcpextract", "-o"}, {"pcpcat", "-o"}, {"pcprewrite", "-c", conf, "-o"}, {"pcpreduce", "-t", "1m", "-o"}} {
		dir := t.TempDir()
		r := run(slow, data, ours(c[0]), append(c[1:], filepath.Join(dir, "out"))...)
		left, _ := os.ReadDir(dir)
		if r.code != 1 || !strings.Contains(r.stderr, "no descriptor for metric") || len(left) != 0 {
			t.Errorf("%v: exit %d, %d files left, stderr %q: want exit 1, no descriptor, nothing written", c, r.code, len(left), r.stderr)
		}
	}
}
