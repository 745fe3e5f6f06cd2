package interop

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's examples are what a new user runs first, so every line of
// its ```sh blocks runs here, as written, in a fresh directory holding the
// archives and files the examples name:
//
//	20041125                    PCP's QA archive of that name
//	20261121                    a day's archive (a copy of 20041125)
//	20261122.00.10 .00.30 .00.50 three consecutive "hourly" archives of one
//	a b c                        host, cut from 20041125 by pmlogextract
//	big                         20041125 moved to 09:10 UTC by pmlogrewrite
//	work.cfg fix.rules          a selection and a rule
//	pmlogger/<host>/...         two hosts' archives, as pmlogger_farm lays
//	                            them out (the README's /var/log/pcp/pmlogger)
//
// with our tools first on PATH and TZ=UTC. A line passes when it exits 0
// (a stage before `| head` may die of SIGPIPE) and every archive it writes
// (-o) passes pmlogcheck (PCP 6.0.3 cannot read --zstd volumes) and our
// --check.
// `make` lines are the README's instructions for a fresh machine, not
// examples, and do not run.

// readmeExamples returns the lines of README.md's sh blocks that run.
func readmeExamples(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, l := range strings.Split(string(src), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "make "):
			out = append(out, strings.TrimSpace(l))
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %d examples in README.md's sh blocks", len(out))
	}
	return out
}

// readmeFixtures makes the archives and files the examples name in dir,
// with PCP's own tools, so that a fault of ours cannot hide in them.
func readmeFixtures(t *testing.T, dir string) {
	t.Helper()
	pcp := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join("/usr/lib/pcp/bin", name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TZ=UTC")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	src := filepath.Join(qaDir, "20041125")
	pcp("pmlogextract", src, "20041125")
	pcp("pmlogextract", src, "20261121")
	cuts := [][2]string{{"@23:10", "@23:25"}, {"@23:25:01", "@23:40"}, {"@23:40:01", "@23:59"}}
	for i, c := range cuts {
		hourly := fmt.Sprintf("20261122.00.%d0", 2*i+1)
		pcp("pmlogextract", "-S", c[0], "-T", c[1], src, hourly)
		pcp("pmlogextract", hourly, string(rune('a'+i)))
		if err := os.MkdirAll(filepath.Join(dir, "pmlogger", "mortenb"), 0o755); err != nil {
			t.Fatal(err)
		}
		pcp("pmlogextract", hourly, filepath.Join("pmlogger", "mortenb", hourly))
	}
	if err := os.MkdirAll(filepath.Join(dir, "pmlogger", "bozo"), 0o755); err != nil {
		t.Fatal(err)
	}
	pcp("pmlogextract", filepath.Join(qaDir, "20180102"), filepath.Join("pmlogger", "bozo", "20180102"))
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("shift.conf", "global { time -> -14:00:00 }\n")
	pcp("pmlogrewrite", "-c", "shift.conf", "20041125", "big")
	write("work.cfg", "kernel.all.load\nmem.util.free\n")
	write("fix.rules", "metric name == \"mem.util.free\" { name = \"mem.util.available\" }\n")
}

var outputArg = regexp.MustCompile(`(?:^|\s)-o\s+(\S+)`)

func TestReadmeExamplesRun(t *testing.T) {
	needPCP(t)
	examples := readmeExamples(t)
	fixtures := t.TempDir()
	readmeFixtures(t, fixtures)
	for i, ex := range examples {
		t.Run(fmt.Sprintf("%02d", i+1), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-a", fixtures+"/.", dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			line := strings.ReplaceAll(ex, "/var/log/pcp/pmlogger", "pmlogger")
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", line)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TZ=UTC", "PATH="+binDir+":"+os.Getenv("PATH"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				// A stage killed by SIGPIPE when head has read enough
				// is what `| head` means.
				sigpipe := cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 141 && strings.Contains(line, "| head")
				if err != nil && !sigpipe {
					t.Fatalf("README example %q: %v\nstderr:\n%s", ex, err, stderr.String())
				}
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("README example %q: still running after 2 minutes", ex)
			}
			m := outputArg.FindStringSubmatch(line)
			if m == nil || strings.Contains(line, "--folio") || strings.HasPrefix(line, "pcpexport ") {
				return // pcpexport's output is Parquet or text, not an archive
			}
			out := filepath.Join(dir, m[1])
			// PCP reads .zst volumes from 6.3.2 on; 6.0.3 cannot.
			if f := checkFindings(out); len(f) > 0 && !strings.Contains(line, "--zstd") {
				t.Errorf("README example %q: pmlogcheck on its output: %v", ex, f)
			}
			if r := run(time.Minute, nil, ours("pcpcat"), "--check", out); r.code != 0 {
				t.Errorf("README example %q: pcpcat --check on its output: %s%s", ex, r.stdout, r.stderr)
			}
		})
	}
}

// TestReadmeMergeTakesEachArchiveOnce is issue 21's first point: the
// README's nightly merge names each archive by its .0, .meta and .index;
// every archive must be merged once, not three times.
func TestReadmeMergeTakesEachArchiveOnce(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	readmeFixtures(t, dir)
	inputs, _ := filepath.Glob(filepath.Join(dir, "20261122.*"))
	if len(inputs) != 9 {
		t.Fatalf("fixture: %d files for 20261122.*, want 9", len(inputs))
	}
	r := run(time.Minute, nil, ours("pcpextract"), append(append([]string{}, inputs...), "-o", filepath.Join(dir, "merged"))...)
	if r.code != 0 {
		t.Fatalf("pcpextract: %s", r.stderr)
	}
	if strings.TrimSpace(r.stderr) != "" {
		t.Errorf("pcpextract said something for a glob of one day's archives: %s", r.stderr)
	}
	want := 0
	for _, h := range []string{"20261122.00.10", "20261122.00.30", "20261122.00.50"} {
		want += countRecords(t, filepath.Join(dir, h))
	}
	if got := countRecords(t, filepath.Join(dir, "merged")); got != want {
		t.Errorf("merged archive has %d value records, the three inputs %d", got, want)
	}
	// pcpcat concatenates, and takes each archive once too.
	r = run(time.Minute, nil, ours("pcpcat"), append(append([]string{}, inputs...), "-o", filepath.Join(dir, "cat"))...)
	if r.code != 0 {
		t.Fatalf("pcpcat: %s", r.stderr)
	}
	if got := countRecords(t, filepath.Join(dir, "cat")); got != want {
		t.Errorf("pcpcat of the glob has %d value records, the three inputs %d", got, want)
	}
}

var recordLine = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d+ +\d+ metrics?$`)

// countRecords counts the value records pmdumplog shows in an archive.
func countRecords(t *testing.T, archive string) int {
	t.Helper()
	out, err := exec.Command("pmdumplog", archive).Output()
	if err != nil {
		t.Fatalf("pmdumplog %s: %v", archive, err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if recordLine.MatchString(l) {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("pmdumplog %s: no records", archive)
	}
	return n
}
