package interop

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The project's layout rules (issue 20): cmd/ wires flags to packages, so
// no file there grows past maxCmdLines; and no built binary or Python byte
// code is committed.
const maxCmdLines = 250

func TestCmdFilesShort(t *testing.T) {
	files, err := filepath.Glob("../cmd/*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files under cmd/ (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > maxCmdLines {
			t.Errorf("%s: %d lines; tool logic belongs in a package, cmd/ only wires flags (at most %d lines a file)", f, n, maxCmdLines)
		}
	}
}

func TestNoCommittedBinaries(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil && os.Getenv("CI") == "" {
		t.Skipf("not a git checkout: %v", err) // (a source tarball)
	} else if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if strings.HasSuffix(f, ".pyc") {
			t.Errorf("%s: Python byte code is committed", f)
			continue
		}
		st, err := os.Stat(filepath.Join("..", f))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		fh, err := os.Open(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4)
		n, _ := fh.Read(head)
		fh.Close()
		if n == 4 && string(head) == "\x7fELF" {
			t.Errorf("%s: a compiled binary is committed", f)
		}
	}
}
