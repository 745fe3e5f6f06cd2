package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
)

// TestFolio: each host's archives are reduced into OUT/<host>/, as their
// merge is, OUT/Folio names them, and a host that fails does not stop the
// others.
func TestFolio(t *testing.T) {
	in := t.TempDir()
	a := writeParts(t, in, "alpha", 2)
	b := writeParts(t, in, "beta", 3)
	f := filepath.Join(t.TempDir(), "in.folio")
	fh, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := folio.Write(fh, &folio.Folio{Creator: "test", Archives: []folio.Archive{{Host: "beta", Path: b[0]}, {Host: "beta", Path: b[1]}, {Host: "beta", Path: b[2]}}}); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	want := map[string]map[string]string{}
	for host, parts := range map[string][]string{"alpha": a, "beta": b} {
		m := filepath.Join(t.TempDir(), "merged")
		merge(t, parts, m)
		r := filepath.Join(t.TempDir(), "r")
		reduceRun(t, "--no-sync", "-t", "1m", m, "-o", r)
		want[host] = valuesOf(t, r)
	}
	for _, args := range [][]string{{in}, {filepath.Join(in, "alpha"), f}} {
		out := filepath.Join(t.TempDir(), "out")
		reduceRun(t, append(append([]string{"--folio", "--no-sync", "-t", "1m", "-j", "2"}, args...), "-o", out)...)
		fo, err := folio.Read(filepath.Join(out, "Folio"))
		if err != nil {
			t.Fatal(err)
		}
		if fo.Creator != "pcpreduce" || len(fo.Archives) != 2 || fo.Archives[0].Host != "alpha" || fo.Archives[1].Host != "beta" {
			t.Fatalf("folio %+v", fo)
		}
		for _, ar := range fo.Archives {
			if !strings.HasPrefix(ar.Path, filepath.Join(out, ar.Host)+"/") {
				t.Errorf("%s not under %s/%s", ar.Path, out, ar.Host)
			}
			sameValues(t, want[ar.Host], valuesOf(t, ar.Path))
			pmlogcheck(t, ar.Path)
		}
	}

	// A host whose archive is damaged fails alone; the exit status says so.
	g := writeParts(t, in, "gamma", 1)
	data, err := os.ReadFile(g[0] + ".0")
	if err != nil {
		t.Fatal(err)
	}
	data[132+3] += 4
	if err := os.WriteFile(g[0]+".0", data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	msg := reduceFail(t, "1 of 3 hosts failed", "--folio", "--no-sync", "-t", "1m", in, "-o", out)
	if !strings.Contains(msg, "host gamma") {
		t.Errorf("the failing host is not named: %s", msg)
	}
	fo, err := folio.Read(filepath.Join(out, "Folio"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fo.Archives) != 2 {
		t.Errorf("folio %+v: want alpha and beta", fo.Archives)
	}
	noOutput(t, filepath.Join(out, "gamma", "part0"))

	// Usage: an output directory.
	reduceFail(t, "-o DIR", "--folio", "-t", "1m", in)

	// Several intervals: a folio directory each, OUT/1m and OUT/5m, from
	// one pass; each host's archive there is the one a run of that
	// interval alone writes.
	if err := os.RemoveAll(filepath.Join(in, "gamma")); err != nil {
		t.Fatal(err)
	}
	multi := filepath.Join(t.TempDir(), "multi")
	reduceRun(t, "--folio", "--no-sync", "-t", "1m,5m", in, "-o", multi)
	for _, iv := range []string{"1m", "5m"} {
		fo, err := folio.Read(filepath.Join(multi, iv, "Folio"))
		if err != nil {
			t.Fatal(err)
		}
		if len(fo.Archives) != 2 || fo.Archives[0].Host != "alpha" || fo.Archives[1].Host != "beta" {
			t.Fatalf("%s folio %+v", iv, fo)
		}
		single := filepath.Join(t.TempDir(), "single")
		reduceRun(t, "--folio", "--no-sync", "-t", iv, in, "-o", single)
		for _, ar := range fo.Archives {
			if !strings.HasPrefix(ar.Path, filepath.Join(multi, iv, ar.Host)+"/") {
				t.Errorf("%s not under %s/%s/%s", ar.Path, multi, iv, ar.Host)
			}
			one := filepath.Join(single, ar.Host, filepath.Base(ar.Path))
			sameValues(t, valuesOf(t, one), valuesOf(t, ar.Path))
			pmlogcheck(t, ar.Path)
		}
	}
}

// TestStreamOutput: -o - writes the record stream, which holds the values
// the archive output holds.
func TestStreamOutput(t *testing.T) {
	dir := t.TempDir()
	parts := writeParts(t, dir, "alpha", 2)
	arch := filepath.Join(dir, "arch")
	reduceRun(t, "--no-sync", "-t", "1m", parts[0], parts[1], "-o", arch)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"pcpreduce", "-t", "1m", parts[0], parts[1], "-o", "-"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f := filepath.Join(dir, "stream")
	if err := os.WriteFile(f, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sf, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	a, err := toolio.Spill(nil, sf, dir, "back", format.WriterOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, valuesOf(t, arch), valuesOf(t, a.Base()))

	reduceFail(t, "one interval", "-t", "1m,5m", parts[0], "-o", "-")
	reduceFail(t, "--zstd", "--zstd", "-t", "1m", parts[0], "-o", "-")
}

// TestSamplingWarning: an interval no longer than the sampling gets one
// warning naming both; a longer one none.
func TestSamplingWarning(t *testing.T) {
	dir := t.TempDir()
	parts := writeParts(t, dir, "alpha", 1)
	msg := reduceRun(t, "--no-sync", "-t", "10s", parts[0], "-o", filepath.Join(dir, "short"))
	if strings.Count(msg, "warning: -t 10s: the input is sampled every 10s") != 1 {
		t.Errorf("want one warning naming -t 10s and the 10s sampling, got %q", msg)
	}
	msg = reduceRun(t, "--no-sync", "-t", "5s,1m", parts[0], "-o", filepath.Join(dir, "two"))
	if !strings.Contains(msg, "-t 5s:") || strings.Contains(msg, "-t 1m") {
		t.Errorf("want a warning for 5s only, got %q", msg)
	}
	if msg := reduceRun(t, "--no-sync", "-t", "20s", parts[0], "-o", filepath.Join(dir, "ok")); strings.Contains(msg, "warning") {
		t.Errorf("2 samples per interval: no warning wanted, got %q", msg)
	}
}
