package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/reduce"
)

// TestReducedNames: on an archive reduced by pcpreduce, pcpsummary says
// that its statistics come from the aggregates and leaves the aggregates'
// own lines out; as pmlogsummary it prints what PCP's pmlogsummary prints
// (compared with it when it is installed).
func TestReducedNames(t *testing.T) {
	in, err := filepath.Abs("../../testdata/example/demo")
	if err != nil {
		t.Fatal(err)
	}
	r := filepath.Join(t.TempDir(), "r")
	if err := reduce.RunNative(in, []reduce.Output{{Name: r, Interval: 10 * time.Second}}, reduce.Options{Mode: reduce.Native, Samples: -1}); err != nil {
		t.Fatal(err)
	}
	var own, compat, errb bytes.Buffer
	if code := run([]string{"pcpsummary", "-z", "-a", r}, nil, &own, &errb); code != toolio.ExitOK {
		t.Fatalf("pcpsummary: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(own.String(), "Note: reduced archive (pcpreduce, 10 s intervals)") {
		t.Errorf("pcpsummary: no note:\n%s", own.String())
	}
	if strings.Contains(own.String(), "\npcpreduce.") {
		t.Errorf("pcpsummary: aggregates printed:\n%s", own.String())
	}
	if code := run([]string{"pmlogsummary", "-z", "-a", r}, nil, &compat, &errb); code != toolio.ExitOK {
		t.Fatalf("pmlogsummary: exit %d: %s", code, errb.String())
	}
	if strings.Contains(compat.String(), "Note: reduced") || !strings.Contains(compat.String(), "\npcpreduce.") {
		t.Errorf("pmlogsummary: not the plain summary:\n%s", compat.String())
	}
	pcp := "/usr/bin/pmlogsummary"
	if _, err := os.Stat(pcp); err != nil {
		t.Skip("no PCP pmlogsummary to compare with")
	}
	cmd := exec.Command(pcp, "-z", "-a", r)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", pcp, err)
	}
	if compat.String() != string(want) {
		t.Errorf("as pmlogsummary:\n%s\nPCP's pmlogsummary:\n%s", compat.String(), want)
	}
}
