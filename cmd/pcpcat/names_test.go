package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runAs runs pcpcat under another name and returns its status and output.
func runAs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := run(args, os.Stdin, &out, &errb)
	return st, out.String(), errb.String()
}

func example(t *testing.T) string {
	t.Helper()
	const ex = "../../testdata/example/demo"
	if _, err := os.Stat(ex + ".meta"); err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestPmlogcheckName: as pmlogcheck, a sound archive gives no output and
// status 0 (-w: the example has a counter wrap, which is reported but
// leaves the status 0), -l prints the label, and the command line errors
// are pmlogcheck's.
func TestPmlogcheckName(t *testing.T) {
	ex := example(t)
	if st, out, errs := runAs(t, "/x/pmlogcheck", "-w", ex); st != 0 || out != "" || errs != "" {
		t.Errorf("sound archive: status %d, stdout %q, stderr %q", st, out, errs)
	}
	// pmlogcheck prints its findings and the label on stderr.
	if st, out, errs := runAs(t, "pmlogcheck", ex); st != 0 || out != "" || !strings.Contains(errs, "32-bit wrap\n\tvalue ") {
		t.Errorf("counter wrap: status %d, stdout %q, stderr %q", st, out, errs)
	}
	st, _, errs := runAs(t, "pmlogcheck", "-l", "-w", ex)
	if st != 0 || !strings.HasPrefix(errs, "Log Label (Log Format Version ") || !strings.Contains(errs, "\n  commencing ") {
		t.Errorf("-l: status %d, stderr %q", st, errs)
	}
	st, _, errs = runAs(t, "pmlogcheck")
	if st != 1 || !strings.HasPrefix(errs, "Error: no archive specified\n\nUsage: pmlogcheck [options] archive\n") {
		t.Errorf("no archive: status %d, stderr %q", st, errs)
	}
	st, _, errs = runAs(t, "pmlogcheck", "no/such/archive")
	if st != 1 || errs != "pmlogcheck: no PCP archive files match \"no/such/archive\"\n" {
		t.Errorf("missing archive: status %d, stderr %q", st, errs)
	}
	st, _, errs = runAs(t, "pmlogcheck", "-Q", ex)
	if st != 1 || !strings.HasPrefix(errs, "pmlogcheck: invalid option -- 'Q'\nUsage: pmlogcheck") {
		t.Errorf("bad option: status %d, stderr %q", st, errs)
	}
}

// TestPmlogcheckDamage: a data volume cut in the middle of a record is
// damage pmlogcheck exits 1 on.
func TestPmlogcheckDamage(t *testing.T) {
	ex := example(t)
	dir := t.TempDir()
	files, _ := filepath.Glob(ex + ".*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".0") {
			b = b[:len(b)-3]
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, filepath.Base(ex))
	st, _, errs := runAs(t, "pmlogcheck", bad)
	if st != 1 || !strings.Contains(errs, bad+".0[record ") && !strings.Contains(errs, bad+".0: ") {
		t.Errorf("truncated volume: status %d, stderr %q", st, errs)
	}
}

// TestPmlogdumpName: pmlogdump is pmdumplog's newer name.
func TestPmlogdumpName(t *testing.T) {
	st, out, errs := runAs(t, "pmlogdump", "-l", example(t))
	if st != 0 || !strings.HasPrefix(out, "Log Label (Log Format Version ") {
		t.Errorf("status %d, stdout %q, stderr %q", st, out, errs)
	}
	st, _, errs = runAs(t, "pmlogdump", "-Q")
	if st != 1 || !strings.HasPrefix(errs, "pmlogdump: invalid option -- 'Q'\nUsage: pmlogdump ") {
		t.Errorf("bad option: status %d, stderr %q", st, errs)
	}
}
