package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// bar is what a progress display shows ("1234 records "), and nothing
// else a tool prints.
var bar = regexp.MustCompile(`\d+ records `)

// needTerminal skips a test that needs PCP's QA archives and script(1)
// where they are missing, and fails it in CI.
func needTerminal(t *testing.T) {
	t.Helper()
	needPCP(t)
	if _, err := exec.LookPath("script"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("script(1) (util-linux) is required in CI: %v", err)
		}
		t.Skip("no script(1)")
	}
}

// inTerminal runs the shell command line cmd with a pseudo-terminal from
// script(1) as its standard output and error, and returns its exit status
// and what the terminal showed, lines ended by "\n".
func inTerminal(t *testing.T, dir, name, cmd string) (int, string) {
	t.Helper()
	ts := filepath.Join(dir, "typescript-"+name) // not name.*: an output archive's files
	r := run(time.Minute, nil, "script", "-qec", "stty cols 120 rows 40; "+cmd, ts)
	b, err := os.ReadFile(ts)
	if err != nil {
		t.Fatalf("script %s: %d %s%s: %v", cmd, r.code, r.stdout, r.stderr, err)
	}
	return r.code, strings.ReplaceAll(string(b), "\r\n", "\n")
}

// sameOutput reports how the files at a and b differ: each a single file,
// or the files of an archive (prefix.*), whose labels may differ in the
// writer's PID.
func sameOutput(a, b string) error {
	files, _ := filepath.Glob(a + ".*")
	if len(files) == 0 {
		files = []string{a}
	}
	for _, fa := range files {
		fb := b + strings.TrimPrefix(fa, a)
		x, err := os.ReadFile(fa)
		if err != nil {
			return err
		}
		y, err := os.ReadFile(fb)
		if err != nil {
			return err
		}
		if fb != b {
			// The label holds the writer's PID: compare the rest.
			if len(x) < 16 || len(y) < 16 {
				return fmt.Errorf("%s or %s: too short for an archive's file", fa, fb)
			}
			x, y = x[16:], y[16:]
		}
		if string(x) != string(y) {
			return fmt.Errorf("%s and %s differ", fa, fb)
		}
	}
	if others, _ := filepath.Glob(b + ".*"); len(others) != len(files) && len(files) > 1 {
		return fmt.Errorf("%s has %d files, %s %d", a, len(files), b, len(others))
	}
	return nil
}

// TestProgress: a copy whose standard error is a terminal (a pseudo-
// terminal from script(1)) shows its progress, bytes, records and a
// finish; the same copy with -q, or with standard error in a file, shows
// none, and the archive written is the same.
func TestProgress(t *testing.T) {
	needTerminal(t)
	dir := t.TempDir()
	src := filepath.Join(qaDir, "20041125")
	inPty := func(out string, args ...string) string {
		t.Helper()
		cmd := ours("pcpcat") + " --no-sync " + strings.Join(args, " ") + " " + src + " -o " + filepath.Join(dir, out)
		code, shown := inTerminal(t, dir, out, cmd)
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", cmd, code, shown)
		}
		return shown
	}
	shown := inPty("tty")
	if !bar.MatchString(shown) || !strings.Contains(shown, "done") || !strings.Contains(shown, "KiB") {
		t.Errorf("no progress on a terminal:\n%s", shown)
	}
	if quiet := inPty("quiet", "-q"); bar.MatchString(quiet) {
		t.Errorf("progress with -q:\n%s", quiet)
	}
	r := run(time.Minute, nil, ours("pcpcat"), "--no-sync", src, "-o", filepath.Join(dir, "file"))
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Errorf("into a file: %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// pcpextract shows it too; under pmlogextract's name, never.
	x, b := inTerminal(t, dir, "x", ours("pcpextract")+" --no-sync "+src+" -o "+filepath.Join(dir, "x"))
	if x != 0 || !bar.MatchString(b) {
		t.Errorf("pcpextract on a terminal: %d, no progress:\n%s", x, b)
	}
	p, b := inTerminal(t, dir, "p", ours("pmlogextract")+" "+src+" "+filepath.Join(dir, "p"))
	if p != 0 || bar.MatchString(b) {
		t.Errorf("pmlogextract's name on a terminal: %d, progress shown:\n%s", p, b)
	}
	// pcpsummary shows it while it reads, and ends it before the summary;
	// not with -q, and never as pmlogsummary. The summary is the same.
	summ := func(name string, args ...string) string {
		t.Helper()
		code, shown := inTerminal(t, dir, name, strings.Join(args, " ")+" "+src)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, shown)
		}
		return shown
	}
	plain := run(time.Minute, nil, ours("pcpsummary"), src)
	shown = summ("s", ours("pcpsummary"))
	if !progressThen(shown, plain.stdout) {
		t.Errorf("pcpsummary on a terminal: want the progress, then the summary:\n%s", shown)
	}
	if q := summ("sq", ours("pcpsummary"), "-q"); bar.MatchString(q) {
		t.Errorf("pcpsummary -q shows progress:\n%s", q)
	}
	if c := summ("sc", ours("pmlogsummary")); bar.MatchString(c) || !strings.Contains(c, plain.stdout) {
		t.Errorf("pmlogsummary's name on a terminal: progress shown, or another summary:\n%s", c)
	}
	if err := sameOutput(filepath.Join(dir, "tty"), filepath.Join(dir, "file")); err != nil {
		t.Errorf("the copies on a terminal and into a file: %v", err)
	}
}

// progressThen reports whether shown has a progress display and then
// text, and no display after it.
func progressThen(shown, text string) bool {
	i, j := bar.FindStringIndex(shown), strings.Index(shown, text)
	return i != nil && j >= i[1] && !bar.MatchString(shown[j:])
}

// TestProgressTools: pcprewrite, pcpreduce, pcpimport and pcpexport show
// their progress on a terminal, none with -q (--quiet for pcprewrite,
// whose -q is pmlogrewrite's) or with standard error not a terminal,
// and write the same output either way; pmlogrewrite and pmlogreduce
// (PCP's command lines, PCP's output) never show it.
func TestProgressTools(t *testing.T) {
	needTerminal(t)
	dir := t.TempDir()
	src := filepath.Join(qaDir, "20041125")
	jsonl := filepath.Join(dir, "in.jsonl")
	if r := run(time.Minute, nil, "sh", "-c", ours("pcpcat")+" --json "+src+" > "+jsonl); r.code != 0 {
		t.Fatalf("pcpcat --json: %d %s", r.code, r.stderr)
	}
	var csv strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&csv, "2026-11-24T10:%02d:%02dZ,%d\n", i/60%60, i%60, i)
	}
	csvFile := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csvFile, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each case writes OUT; {OUT} in its arguments names it.
	cases := []struct {
		name  string
		tool  string
		args  string
		quiet string
	}{
		{"rewrite", "pcprewrite", "--no-sync " + src + " -o {OUT}", "--quiet"},
		{"reduce", "pcpreduce", "--no-sync -t 10m " + src + " -o {OUT}", "-q"},
		{"import-json", "pcpimport", "--no-sync --json " + jsonl + " -o {OUT}", "-q"},
		{"import-csv", "pcpimport", "--no-sync --csv -c time -c test.value " + csvFile + " -o {OUT}", "-q"},
		{"parquet", "pcpexport", "--parquet -o {OUT} " + src, "-q"},
		{"openmetrics", "pcpexport", "--openmetrics -o {OUT} " + src, "-q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := func(out string, extra ...string) string {
				args := strings.ReplaceAll(c.args, "{OUT}", filepath.Join(dir, out))
				return strings.Join(append([]string{ours(c.tool)}, append(extra, args)...), " ")
			}
			code, shown := inTerminal(t, dir, c.name+"-tty", cmd(c.name+"-tty"))
			if code != 0 || !bar.MatchString(shown) || !strings.Contains(shown, "done") {
				t.Errorf("%s on a terminal: exit %d, no progress:\n%s", c.tool, code, shown)
			}
			code, quiet := inTerminal(t, dir, c.name+"-q", cmd(c.name+"-q", c.quiet))
			if code != 0 || bar.MatchString(quiet) {
				t.Errorf("%s %s on a terminal: exit %d, progress shown:\n%s", c.tool, c.quiet, code, quiet)
			}
			r := run(time.Minute, nil, "sh", "-c", cmd(c.name+"-file"))
			if r.code != 0 || r.stderr != "" || r.stdout != "" {
				t.Errorf("%s into a file: %d stdout %q stderr %q", c.tool, r.code, r.stdout, r.stderr)
			}
			for _, other := range []string{"-q", "-file"} {
				if err := sameOutput(filepath.Join(dir, c.name+"-tty"), filepath.Join(dir, c.name+other)); err != nil {
					t.Errorf("%s: the output with progress and without: %v", c.tool, err)
				}
			}
		})
	}
	t.Run("openmetrics-stdout", func(t *testing.T) {
		// The text is written once the archive is read: the display
		// ends before it.
		plain := run(time.Minute, nil, ours("pcpexport"), "--openmetrics", src)
		if plain.code != 0 || plain.stderr != "" {
			t.Fatalf("pcpexport --openmetrics: %d %s", plain.code, plain.stderr)
		}
		code, shown := inTerminal(t, dir, "om", ours("pcpexport")+" --openmetrics "+src)
		if code != 0 || !progressThen(shown, strings.ReplaceAll(plain.stdout, "\r\n", "\n")) {
			t.Errorf("pcpexport --openmetrics on a terminal: exit %d; want the progress, then the text:\n%.3000s", code, shown)
		}
	})
	t.Run("failure", func(t *testing.T) {
		// A run that fails ends the display before its error.
		bad := filepath.Join(dir, "bad.jsonl")
		b, err := os.ReadFile(jsonl)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bad, append(b, "{not json\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		code, shown := inTerminal(t, dir, "bad", ours("pcpimport")+" --no-sync --json "+bad+" -o "+filepath.Join(dir, "bad"))
		i, j := bar.FindAllStringIndex(shown, -1), strings.Index(shown, "\npcpimport: ")
		if code == 0 || i == nil || j < i[len(i)-1][1] {
			t.Errorf("pcpimport of bad JSON on a terminal: exit %d; want the progress, then the error on a line of its own:\n%s", code, shown)
		}
		// One that fails before it reads shows none.
		code, shown = inTerminal(t, dir, "exists", ours("pcprewrite")+" "+src+" -o "+filepath.Join(dir, "rewrite-tty"))
		if code == 0 || bar.MatchString(shown) || !strings.Contains(shown, "exists") {
			t.Errorf("pcprewrite to an existing archive on a terminal: exit %d; want its error alone:\n%s", code, shown)
		}
	})
	t.Run("PCP names", func(t *testing.T) {
		links := t.TempDir()
		for _, l := range [][2]string{{"pcprewrite", "pmlogrewrite"}, {"pcpreduce", "pmlogreduce"}} {
			link := filepath.Join(links, l[1])
			if err := os.Symlink(ours(l[0]), link); err != nil {
				t.Fatal(err)
			}
			code, shown := inTerminal(t, dir, l[1], link+" "+src+" "+filepath.Join(dir, l[1]))
			if code != 0 || bar.MatchString(shown) {
				t.Errorf("%s on a terminal: exit %d, progress shown:\n%s", l[1], code, shown)
			}
		}
	})
}
