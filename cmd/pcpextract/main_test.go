package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/example"
	"github.com/pcptools/pcptools/internal/scripttest"
	"github.com/pcptools/pcptools/stream"
)

func TestMain(m *testing.M) { scripttest.Main(m, "pcpextract", "pmlogextract", run) }

// TestScripts runs the command-line sessions in testdata/script.
func TestScripts(t *testing.T) { scripttest.Scripts(t) }

// writeHalves writes a host's two archives (example.WriteHalves).
func writeHalves(t *testing.T, dir, host string) []string {
	t.Helper()
	bases, err := example.WriteHalves(dir, host)
	if err != nil {
		t.Fatal(err)
	}
	return bases
}

func countData(t *testing.T, base string) int {
	t.Helper()
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	it := a.Records(format.DataOnly())
	defer it.Close()
	n := 0
	for it.Next() {
		if _, ok := it.At().(*stream.Result); ok {
			n++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFolio(t *testing.T) {
	in := t.TempDir()
	a := writeHalves(t, in, "alpha")
	b := writeHalves(t, in, "beta")
	want := countData(t, a[0]) + countData(t, a[1])

	// A directory of per-host folders, and a folio naming archives.
	f := filepath.Join(t.TempDir(), "in.folio")
	fh, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := folio.Write(fh, &folio.Folio{Creator: "test", Archives: []folio.Archive{{Host: "beta", Path: b[0]}, {Host: "beta", Path: b[1]}}}); err != nil {
		t.Fatal(err)
	}
	fh.Close()

	for _, args := range [][]string{{filepath.Join(in, "alpha"), filepath.Join(in, "beta")}, {filepath.Join(in, "alpha"), f}} {
		out := filepath.Join(t.TempDir(), "out")
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{"pcpextract", "--folio"}, args...), "-o", out), nil, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		fo, err := folio.Read(filepath.Join(out, "Folio"))
		if err != nil {
			t.Fatal(err)
		}
		if len(fo.Archives) != 2 || fo.Archives[0].Host != "alpha" || fo.Archives[1].Host != "beta" {
			t.Fatalf("folio %+v", fo.Archives)
		}
		for _, ar := range fo.Archives {
			if got := countData(t, ar.Path); got != want {
				t.Errorf("%s: %d results, want %d", ar.Path, got, want)
			}
			if !strings.HasPrefix(ar.Path, filepath.Join(out, ar.Host)+"/") {
				t.Errorf("%s not under %s/%s", ar.Path, out, ar.Host)
			}
		}
	}

	// A host that fails does not stop the others; the exit status says so.
	bad := filepath.Join(in, "gamma")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "x.meta"), []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"pcpextract", "--folio", in, "-o", out}, nil, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "x.meta") {
		t.Fatalf("exit %d, stderr %q: want a failure naming the bad archive", code, stderr.String())
	}
}
