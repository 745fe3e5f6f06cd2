// Package interop checks our tools against PCP's own on PCP's QA archives:
// what we write must read back identically under pmdumplog and pass
// pmlogcheck, and our dumps must equal pmdumplog's.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	qaDir  = "/var/lib/pcp/testsuite/archives"
	badDir = "/var/lib/pcp/testsuite/badarchives"
)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pcptools-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	cmd := exec.Command("go", "build", "-o", dir+"/", "../cmd/...")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the tools:", err)
		os.Exit(1)
	}
	// Our tools take PCP's command lines under PCP's names.
	for _, l := range [][2]string{{"pcpextract", "pmlogextract"}, {"pcprewrite", "pmlogrewrite"}, {"pcpsummary", "pmlogsummary"}, {"pcpreduce", "pmlogreduce"}, {"pcpcat", "pmdumplog"}, {"pcpcat", "pmlogcheck"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if testing.Verbose() {
		logTwins()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// openSources opens every Go source of the module under root (and its
// go.mod and go.sum). go test caches a package's result by its own files
// and by the files the test opened; these tests run tools built from the
// rest of the module, so without this a change to a tool replayed the last
// cached pass instead of testing the change.
func openSources(root string) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			switch n := d.Name(); {
			case p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bench" || n == "duckdb"):
				return filepath.SkipDir
			}
			return nil
		}
		if n := d.Name(); strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			if f, err := os.Open(p); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// needPCP skips when PCP or its QA archives are missing, except in CI.
func needPCP(t *testing.T) {
	t.Helper()
	for _, p := range []string{qaDir, "/usr/bin/pmdumplog", "/usr/bin/pmlogcheck"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("PCP is required in CI and is missing: %v", err)
			}
			t.Skipf("PCP not installed: %v", err)
		}
	}
}

var metaSuffix = regexp.MustCompile(`\.meta(\.(xz|lzma|bz2|bz|gz|Z|z|zst))?$`)

// heavy are the QA archives whose xz volumes hold hundreds of MB: pmdumplog
// needs minutes for each view of them on a 2-core machine. The copy test
// always covers them; the view and -V 3 tests only with PCPTOOLS_QA_FULL=1,
// to keep CI within its time.
var heavy = map[string]bool{"pcp-pidstat-process-args": true, "20180416.10.00": true}

// bulky are the QA archives that cost the most test time after the heavy
// ones (a command log of a whole run, PCPTOOLS_TEST_CMDLOG: each took 40
// to 200 s of CPU over all tests, half of that pmdumplog's, where a
// typical archive takes 2 s). The tests that compare PCP's tools with ours
// over every QA archive (views, copies, merges, rewrites, reductions,
// summaries, redaction, and each of those through a pipe) run them all;
// the others (libpcp's debugging traces and --shape) take
// sampledArchives or withoutBulky: each runs a bulky archive or not by a hash
// of the test's name and the archive's, so that each test runs about half
// of them and each is covered by about half of those tests, the same ones
// on every run.
var bulky = []string{"bozo-20170904", "20201109", "20130706", "20180606",
	"pcp-pidstat-process-states", "20180102", "pcp-zeroconf"}

// costly reports whether a subtest's name names a heavy or bulky archive
// (the name is the archive's, or has it after a prefix: stock_20201109).
func costly(name string) bool {
	for h := range heavy {
		if strings.Contains(name, h) {
			return true
		}
	}
	for _, b := range bulky {
		if strings.Contains(name, b) {
			return true
		}
	}
	return false
}

// bulkySkipped returns the bulky archives this test leaves out (none with
// PCPTOOLS_QA_FULL), as a set and in bulky's order.
func bulkySkipped(t *testing.T) (map[string]bool, []string) {
	skip := map[string]bool{}
	if os.Getenv("PCPTOOLS_QA_FULL") != "" {
		return skip, nil
	}
	name := strings.SplitN(t.Name(), "/", 2)[0]
	var skipped []string
	for _, b := range bulky {
		if sum := sha256.Sum256([]byte(name + "\x00" + b)); sum[0]&1 != 0 {
			skip[b] = true
			skipped = append(skipped, b)
		}
	}
	return skip, skipped
}

// withoutBulky returns archives without the bulky ones this test leaves
// out (bulkySkipped).
func withoutBulky(t *testing.T, archives []string) []string {
	skip, skipped := bulkySkipped(t)
	var out []string
	for _, a := range archives {
		if !skip[filepath.Base(a)] {
			out = append(out, a)
		}
	}
	if len(skipped) > 0 {
		t.Logf("the bulky %v left out (PCPTOOLS_QA_FULL=1 includes them)", skipped)
	}
	return out
}

// lightArchives returns qaArchives without the heavy ones, unless
// PCPTOOLS_QA_FULL is set.
func lightArchives(t *testing.T) []string {
	all := qaArchives(t)
	if os.Getenv("PCPTOOLS_QA_FULL") != "" {
		return all
	}
	var out []string
	for _, a := range all {
		if !heavy[filepath.Base(a)] {
			out = append(out, a)
		}
	}
	t.Logf("%d heavy archives left out (PCPTOOLS_QA_FULL=1 includes them)", len(all)-len(out))
	return out
}

// sampledArchives returns lightArchives without the half of bulky this
// test leaves out.
func sampledArchives(t *testing.T) []string {
	return withoutBulky(t, lightArchives(t))
}

// rotation spreads a test's option sets over its archives: archive i runs
// set j when (i+j)%k == 0, so that each set runs on a k-th of the archives
// (every k-th one, each set starting one further on) and each archive runs
// a k-th of the sets. PCPTOOLS_QA_FULL=1 runs every set on every archive.
// For the tests that compare our tools with themselves (a direct run with
// the same run through a pipe), whose cost is the product of the two.
func rotation(items []string, k int) func(item string, j int) bool {
	if os.Getenv("PCPTOOLS_QA_FULL") != "" || k <= 1 {
		return func(string, int) bool { return true }
	}
	index := make(map[string]int, len(items))
	for i, it := range items {
		index[it] = i
	}
	return func(item string, j int) bool { return (index[item]+j)%k == 0 }
}

// qaArchives returns the base names of PCP's QA archives.
func qaArchives(t *testing.T) []string {
	t.Helper()
	out := archivesIn(t, qaDir)
	if len(out) < 150 {
		t.Fatalf("only %d QA archives in %s", len(out), qaDir)
	}
	return out
}

type result struct {
	stdout, stderr string
	code           int
	timedOut       bool
}

// run runs a command with a deadline and TZ=UTC, returning its output.
// What PCP's own tools print about PCP's fixture archives is asked for by
// several tests; it is kept for the rest of the run (memoKey).
func run(timeout time.Duration, stdin []byte, name string, args ...string) result {
	if key, ok := memoKey(name, stdin, args); ok {
		e := memoFor("run\x00" + key)
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.done {
			return e.r
		}
		r := runCommand(timeout, stdin, name, args...)
		if !r.timedOut && len(r.stdout)+len(r.stderr) <= memoMaxBytes {
			e.r, e.done = r, true
		}
		return r
	}
	return runCommand(timeout, stdin, name, args...)
}

// memoMaxBytes bounds the output run keeps in memory for one command.
const memoMaxBytes = 8 << 20

// memoEntry is what one command line of PCP's printed, once it has run.
type memoEntry struct {
	mu     sync.Mutex // held while the command runs: the others wait for it
	done   bool
	r      result // run's
	file   string // outputOf's: a copy of the standard output, in memoDir
	code   int
	stderr string
}

var (
	memoMu  sync.Mutex
	memoTab = map[string]*memoEntry{}
)

func memoFor(key string) *memoEntry {
	memoMu.Lock()
	defer memoMu.Unlock()
	e := memoTab[key]
	if e == nil {
		e = &memoEntry{}
		memoTab[key] = e
	}
	return e
}

// memoKey says whether a command's output may be kept, and under what key:
// one of PCP's tools that only read (pmdumplog, pmlogcheck, pmlogsummary),
// the binary PCP installed, no standard input, and arguments naming a
// fixture under /var/lib/pcp/testsuite and no other file; the key holds
// the binary, the arguments and the whole environment.
func memoKey(name string, stdin []byte, args []string) (string, bool) {
	if stdin != nil || os.Getenv("PCPTOOLS_TEST_NOMEMO") != "" {
		return "", false
	}
	switch name {
	case "pmdumplog", "pmlogcheck", "pmlogsummary":
	default:
		return "", false
	}
	path, err := exec.LookPath(name)
	if err != nil || !strings.HasPrefix(path, "/usr/") {
		return "", false
	}
	fixture := false
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, qaDir+"/") || strings.HasPrefix(a, badDir+"/"):
			fixture = true
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "/"):
			return "", false
		default:
			if _, err := os.Stat(a); err == nil {
				return "", false
			}
		}
	}
	if !fixture {
		return "", false
	}
	return path + "\x00" + strings.Join(args, "\x00") + "\x00\x00" + strings.Join(os.Environ(), "\x00"), true
}

// memoDir holds outputOf's kept outputs; TestMain removes it with binDir.
func memoDir() string { return filepath.Join(binDir, "memo") }

// copyTo copies the file src to a new temporary file in dir.
func copyTo(t *testing.T, src, dir string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, "out-*.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	return out.Name()
}

func runCommand(timeout time.Duration, stdin []byte, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	t0 := time.Now()
	err := cmd.Run()
	logCommand(t0, name, args)
	r := result{stdout: out.String(), stderr: errb.String()}
	if ctx.Err() != nil {
		r.timedOut = true
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code = -1
		r.stderr += err.Error()
	}
	return r
}

// logCommand appends a command's wall time, name and arguments to the file
// PCPTOOLS_TEST_CMDLOG names, if set: to see where the suite's time goes.
func logCommand(t0 time.Time, name string, args []string) {
	path := os.Getenv("PCPTOOLS_TEST_CMDLOG")
	if path == "" {
		return
	}
	line := fmt.Sprintf("%.3f\t%s\t%s\n", time.Since(t0).Seconds(), strings.TrimPrefix(name, binDir+"/"), strings.Join(args, " "))
	cmdLogMu.Lock()
	defer cmdLogMu.Unlock()
	if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		f.WriteString(line)
		f.Close()
	}
}

var cmdLogMu sync.Mutex

// ours is the path of one of our tools, built by TestMain from the
// module's sources, which the first call opens (openSources): go test's
// cache logs only what tests open once they run, not what TestMain does.
func ours(name string) string {
	sourcesOnce.Do(func() { openSources("..") })
	return filepath.Join(binDir, name)
}

var sourcesOnce sync.Once

// forEach runs f for every item as parallel subtests (go test's -parallel
// bounds how many run at once; the Makefile raises it, as the work is
// mostly waiting for PCP's tools).
func forEach(t *testing.T, items []string, f func(t *testing.T, item string)) {
	t.Helper()
	// The costly archives start first, so that the last subtests to
	// finish are short ones and both cores stay busy to the end.
	first := make([]string, 0, len(items))
	var rest []string
	for _, it := range items {
		if costly(filepath.Base(it)) {
			first = append(first, it)
		} else {
			rest = append(rest, it)
		}
	}
	items = append(first, rest...)
	t.Run("all", func(t *testing.T) {
		for _, it := range items {
			it := it
			t.Run(filepath.Base(it), func(t *testing.T) {
				t.Parallel()
				f(t, it)
			})
		}
	})
}

var pidLine = regexp.MustCompile(`^PID for pmlogger: `)

// slow is the deadline for one run of a tool on one archive: the largest QA
// archives (hundreds of MB of xz) take minutes on a loaded 2-core machine.
const slow = 15 * time.Minute

// dumpOf runs pmdumplog with args on an archive and returns the file its
// output went to (stderr appended).
func dumpOf(t *testing.T, archive string, args ...string) string {
	t.Helper()
	f, _, stderr := outputOf(t, "pmdumplog", append(args, archive)...)
	if stderr != "" {
		// What pmdumplog says about damage is part of what must agree.
		af, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(af, stderr)
		af.Close()
	}
	return f
}

// outputOf runs a tool with TZ=UTC, writing its standard output to a file
// (the largest archives dump to gigabytes, too much to hold), and returns
// the file, the exit status and standard error.
func outputOf(t *testing.T, bin string, args ...string) (string, int, string) {
	t.Helper()
	key, ok := memoKey(bin, nil, args)
	if !ok {
		return outputOfCommand(t, bin, args...)
	}
	e := memoFor("file\x00" + key)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		f, code, stderr := outputOfCommand(t, bin, args...)
		if err := os.MkdirAll(memoDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		e.file, e.code, e.stderr, e.done = copyTo(t, f, memoDir()), code, stderr, true
		return f, code, stderr
	}
	return copyTo(t, e.file, t.TempDir()), e.code, e.stderr
}

func outputOfCommand(t *testing.T, bin string, args ...string) (string, int, string) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out-*.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.Stdout = out
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err = cmd.Run()
	logCommand(t0, bin, args)
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish in %v", bin, args, slow)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return out.Name(), code, errb.String()
}

// sameOutputs compares two archives written by two tools (PCP's, theirs,
// and ours, mine) under pmdumplog's flags, and returns "" when they read
// the same, or where their dumps first differ. Where every file of the two
// (volumes, .meta, .index) holds the same bytes but for the writer's PID
// in its label, pmdumplog's output is the same by construction (its PID
// line aside, which sameDump skips too), and the dumps are not made
// (PCPTOOLS_QA_FULL=1 makes them). Most merges and rewrites are such
// twins: leaving their dumps out halved TestExtractLikePmlogextract's and
// TestRewriteLikePmlogrewrite's times. go test -v prints how many pairs
// each test found twins (logTwins).
func sameOutputs(t *testing.T, theirs, mine string, flags ...string) string {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	c, _ := twinCounts.LoadOrStore(top, new([2]atomic.Int32))
	pair := c.(*[2]atomic.Int32)
	pair[1].Add(1)
	if os.Getenv("PCPTOOLS_QA_FULL") == "" && twins(theirs, mine) {
		pair[0].Add(1)
		return ""
	}
	return sameDump(dumpOf(t, theirs, flags...), dumpOf(t, mine, flags...), theirs, mine)
}

// twinCounts holds, by top-level test, the pairs sameOutputs found twins
// and the pairs it compared.
var twinCounts sync.Map

// logTwins prints twinCounts, a test a line.
func logTwins() {
	var lines []string
	twinCounts.Range(func(k, v any) bool {
		c := v.(*[2]atomic.Int32)
		lines = append(lines, fmt.Sprintf("%s: %d of %d pairs twins (not dumped)", k, c[0].Load(), c[1].Load()))
		return true
	})
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(os.Stderr, l)
	}
}

// twins reports whether archives a and b have the same files, each with
// the same bytes but for bytes 8-11, the PID of the label every file of an
// archive begins with (a record length, the magic number, then the PID).
func twins(a, b string) bool {
	fa, _ := filepath.Glob(a + ".*")
	fb, _ := filepath.Glob(b + ".*")
	if len(fa) == 0 || len(fa) != len(fb) {
		return false
	}
	for _, f := range fa {
		g := b + strings.TrimPrefix(f, a)
		if !sameButPID(f, g) {
			return false
		}
	}
	return true
}

// sameButPID compares two files, bytes 8-11 aside.
func sameButPID(f, g string) bool {
	sf, err1 := os.Stat(f)
	sg, err2 := os.Stat(g)
	if err1 != nil || err2 != nil || sf.Size() != sg.Size() || sf.Size() < 12 {
		return false
	}
	ff, err := os.Open(f)
	if err != nil {
		return false
	}
	defer ff.Close()
	gf, err := os.Open(g)
	if err != nil {
		return false
	}
	defer gf.Close()
	var hf, hg [12]byte
	if _, err := io.ReadFull(ff, hf[:]); err != nil {
		return false
	}
	if _, err := io.ReadFull(gf, hg[:]); err != nil {
		return false
	}
	return bytes.Equal(hf[:8], hg[:8]) && sameReaders(bufio.NewReaderSize(ff, 1<<20), bufio.NewReaderSize(gf, 1<<20))
}

// sameDump compares two dump files line by line, ignoring the pmlogger PID
// line and replacing gotName by wantName in got; it returns "" when they
// are the same, or where they first differ.
func sameDump(want, got, wantName, gotName string) string {
	wf, err := os.Open(want)
	if err != nil {
		return err.Error()
	}
	defer wf.Close()
	gf, err := os.Open(got)
	if err != nil {
		return err.Error()
	}
	defer gf.Close()
	ws, gs := bufio.NewScanner(wf), bufio.NewScanner(gf)
	ws.Buffer(make([]byte, 1<<20), 1<<26)
	gs.Buffer(make([]byte, 1<<20), 1<<26)
	next := func(s *bufio.Scanner) (string, bool) {
		for s.Scan() {
			l := s.Text()
			if !pidLine.MatchString(l) {
				return l, true
			}
		}
		return "", false
	}
	for line := 1; ; line++ {
		w, wok := next(ws)
		g, gok := next(gs)
		if gotName != "" {
			g = strings.ReplaceAll(g, gotName, wantName)
		}
		if !wok && !gok {
			return ""
		}
		if w != g || wok != gok {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", line, w, g)
		}
	}
}

// checkFindings runs pmlogcheck and returns its report with file names
// and the archive's own name normalised away, one finding per line.
func checkFindings(archive string) []string {
	r := run(slow, nil, "pmlogcheck", archive)
	text := strings.ReplaceAll(r.stdout+r.stderr, archive, "ARCHIVE")
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// archivesIn returns the base names of the archives in dir (one per .meta,
// compressed or not), sorted.
func archivesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if metaSuffix.MatchString(e.Name()) {
			out = append(out, filepath.Join(dir, metaSuffix.ReplaceAllString(e.Name(), "")))
		}
	}
	sort.Strings(out)
	return out
}
