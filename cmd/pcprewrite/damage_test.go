package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInPlaceRefusesDamage: -i on an archive whose last record is cut
// short fails and leaves every file of it as it was.
func TestInPlaceRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Glob("../../testdata/example/demo.*")
	if err != nil || len(src) == 0 {
		t.Fatalf("example archive: %v", err)
	}
	before := map[string][]byte{}
	for _, f := range src {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".1") {
			b = b[:len(b)-7] // cut the last record short
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		before[dst] = b
	}
	conf := filepath.Join(dir, "r.conf")
	if err := os.WriteFile(conf, []byte("metric mem.util.free { name -> mem.util.avail }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"pcprewrite", "-i", "-c", conf, filepath.Join(dir, "demo")}, nil, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "damaged") {
		t.Fatalf("exit %d, stderr %q: want a failure about the damage", code, stderr.String())
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(after) != len(before)+1 { // + r.conf
		t.Errorf("files now %q", after)
	}
	for f, b := range before {
		got, err := os.ReadFile(f)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s changed (%v)", f, err)
		}
	}
}
