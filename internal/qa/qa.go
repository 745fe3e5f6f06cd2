// Package qa finds PCP's QA archives (Debian's pcp-testsuite) for tests.
package qa

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Dir is where pcp-testsuite installs its archives.
const Dir = "/var/lib/pcp/testsuite/archives"

// Need returns Dir, or ends the test when it is missing: skipped on a
// developer's machine, failed in CI (CI set), where the set-up installs it.
func Need(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(Dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PCP QA archives missing in CI: %v", err)
		}
		t.Skip(err)
	}
	return Dir
}

// Multi returns the base names of the archives of Dir/multi, several
// archives of one host that follow one another.
func Multi(t testing.TB) []string {
	t.Helper()
	metas, _ := filepath.Glob(filepath.Join(Need(t), "multi", "*.meta"))
	for i := range metas {
		metas[i] = metas[i][:len(metas[i])-len(".meta")]
	}
	return metas
}

// SameFiles fails the test unless the archives a and b (base names) have
// as many files and each of a's is, byte for byte, the one of b at the
// same place in name order.
func SameFiles(t testing.TB, a, b string) {
	t.Helper()
	fa, _ := filepath.Glob(a + ".*")
	fb, _ := filepath.Glob(b + ".*")
	if len(fa) != len(fb) || len(fa) == 0 {
		t.Fatalf("%s has files %v, %s has %v", a, fa, b, fb)
	}
	for i := range fa {
		x, err1 := os.ReadFile(fa[i])
		y, err2 := os.ReadFile(fb[i])
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("%s and %s differ", fa[i], fb[i])
		}
	}
}
