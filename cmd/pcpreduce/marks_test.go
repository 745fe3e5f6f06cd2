package main

import (
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/internal/example"
)

// TestIgnoreMarks: --ignore-marks all reduces the example cut in two
// archives (a <mark> between them, as libpcp puts one) exactly as the
// example in one archive with its <mark>s dropped too; a gap shorter than
// the sampling keeps the <mark>s (the default's output); and
// $PCP_IGNORE_MARK_RECORDS set and empty means all, as for libpcp.
func TestIgnoreMarks(t *testing.T) {
	dir := t.TempDir()
	parts := writeParts(t, dir, "alpha", 2)
	full := filepath.Join(dir, "full")
	if err := example.Write(full, false); err != nil {
		t.Fatal(err)
	}
	reduce := func(args ...string) map[string]string {
		out := filepath.Join(t.TempDir(), "r")
		reduceRun(t, append(append([]string{"--no-sync", "-q", "-t", "1m"}, args...), "-o", out)...)
		return valuesOf(t, out)
	}
	kept := reduce(parts...)
	all := reduce(append([]string{"--ignore-marks", "all"}, parts...)...)
	sameValues(t, reduce("--ignore-marks", "all", full), all)
	differ := false
	for k, v := range kept {
		if all[k] != v {
			differ = true
		}
	}
	if !differ {
		t.Error("dropping the <mark> between the archives changed nothing: the test proves nothing")
	}
	sameValues(t, kept, reduce(append([]string{"--ignore-marks", "1msec"}, parts...)...))
	sameValues(t, all, reduce(append([]string{"--ignore-marks", "1h"}, parts...)...))
	t.Setenv("PCP_IGNORE_MARK_RECORDS", "")
	sameValues(t, all, reduce(parts...))
	reduceFail(t, "--ignore-marks", "--ignore-marks", "soon", parts[0], "-o", filepath.Join(dir, "x"))
}
