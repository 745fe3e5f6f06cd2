package example

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/example from the generator")

const golden = "../../testdata/example/demo"

// TestGolden: the archive in testdata/example is exactly what the generator
// writes (regenerate with go test ./internal/example -update).
func TestGolden(t *testing.T) {
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Write(golden, true); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "demo")
	if err := Write(base, false); err != nil {
		t.Fatal(err)
	}
	for _, suf := range []string{".meta", ".0", ".1", ".index"} {
		got, err := os.ReadFile(base + suf)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(golden + suf)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/example -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s%s differs from the generator's output (run go test ./internal/example -update)", golden, suf)
		}
	}
	// PCP accepts it.
	if _, err := exec.LookPath("pmlogcheck"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pmlogcheck missing in CI")
		}
		return
	}
	out, err := exec.Command("pmlogcheck", "-w", base).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("pmlogcheck -w: %v\n%s", err, out)
	}
	out, err = exec.Command("pmdumplog", "-a", "-e", "-h", "-I", base).CombinedOutput()
	if err != nil {
		t.Errorf("pmdumplog: %v\n%s", err, out)
	}
}
