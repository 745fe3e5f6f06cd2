package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/format"
)

// TestSeveralInputs: archives of one host named together are reduced as
// their merge is (the same values), in whatever order they are named,
// into an archive pmlogcheck accepts, for one interval and for several.
func TestSeveralInputs(t *testing.T) {
	dir := t.TempDir()
	parts := writeParts(t, dir, "alpha", 3)
	merged := filepath.Join(dir, "merged")
	merge(t, parts, merged)
	for _, step := range []string{"30s", "1m", "2m"} {
		t.Run(step, func(t *testing.T) {
			d := t.TempDir()
			want, got := filepath.Join(d, "want"), filepath.Join(d, "got")
			reduceRun(t, "--no-sync", "-t", step, merged, "-o", want)
			// Named out of order: they are read in time order.
			reduceRun(t, "--no-sync", "-t", step, parts[2], parts[0], parts[1], "-o", got)
			pmlogcheck(t, got)
			w, g := valuesOf(t, want), valuesOf(t, got)
			if len(w) == 0 {
				t.Fatal("no values")
			}
			sameValues(t, w, g)

			// Several intervals in one pass: the same values each.
			multi := filepath.Join(d, "multi")
			reduceRun(t, "--no-sync", "-t", step+",10m", parts[0], parts[1], parts[2], "-o", multi)
			sameValues(t, w, valuesOf(t, multi+"."+step))
			pmlogcheck(t, multi+".10m")

			// A directory of the archives, and a comma-separated list.
			bydir := filepath.Join(d, "bydir")
			reduceRun(t, "--no-sync", "-t", step, filepath.Dir(parts[0]), "-o", bydir)
			sameValues(t, w, valuesOf(t, bydir))
			bylist := filepath.Join(d, "bylist")
			reduceRun(t, "--no-sync", "-t", step, strings.Join(parts, ","), "-o", bylist)
			sameValues(t, w, valuesOf(t, bylist))
		})
	}
	// The reduction of one part alone differs: the comparison above can
	// fail.
	d := t.TempDir()
	one, all := filepath.Join(d, "one"), filepath.Join(d, "all")
	reduceRun(t, "--no-sync", "-t", "1m", parts[0], parts[1], "-o", one)
	reduceRun(t, "--no-sync", "-t", "1m", merged, "-o", all)
	if w, g := valuesOf(t, all), valuesOf(t, one); len(g) >= len(w) {
		t.Errorf("two parts of three give %d values, all three %d", len(g), len(w))
	}
}

// TestSeveralInputsBad: archives of different hosts, a damaged archive
// and an existing output are refused with a message, a failure, and no
// output.
func TestSeveralInputsBad(t *testing.T) {
	dir := t.TempDir()
	a := writeParts(t, dir, "alpha", 2)
	b := writeParts(t, dir, "beta", 2)
	out := filepath.Join(dir, "out")

	msg := reduceFail(t, "archives of different hosts", "-t", "1m", a[0], b[1], "-o", out)
	if !strings.Contains(msg, `"alpha"`) || !strings.Contains(msg, `"beta"`) || !strings.Contains(msg, a[0]) || !strings.Contains(msg, b[1]) {
		t.Errorf("the message does not name both archives and hosts: %s", msg)
	}
	noOutput(t, out)

	// The second archive's first data record says a length its trailer
	// does not: the first archive is reduced, then the damage fails it all.
	damaged := filepath.Join(dir, "damaged")
	for _, ext := range []string{".meta", ".0"} {
		b, err := os.ReadFile(a[1] + ext)
		if err != nil {
			t.Fatal(err)
		}
		if ext == ".0" {
			b[132+3] += 4 // the record after the 132-byte label
		}
		if err := os.WriteFile(damaged+ext, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reduceFail(t, "damaged.0", "-t", "1m", a[0], damaged, "-o", out)
	noOutput(t, out)
	reduceFail(t, "damaged.0", "-t", "1m,2m", a[0], damaged, "-o", out)
	noOutput(t, out+".1m")
	noOutput(t, out+".2m")

	// An existing output is left alone.
	reduceRun(t, "--no-sync", "-t", "1m", a[0], "-o", out)
	before := valuesOf(t, out)
	reduceFail(t, "exists", "-t", "2m", a[0], a[1], "-o", out)
	sameValues(t, before, valuesOf(t, out))
	// Without -o, an existing archive named last is an input, not the
	// output: two inputs, the stream on standard output.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"pcpreduce", "-t", "2m", a[0], a[1]}, nil, &stdout, &stderr); code != 0 || stdout.Len() == 0 {
		t.Fatalf("exit %d, %d bytes out: %s", code, stdout.Len(), stderr.String())
	}
	sameValues(t, before, valuesOf(t, out))
}

func noOutput(t *testing.T, base string) {
	t.Helper()
	m, _ := filepath.Glob(base + ".*")
	if len(m) > 0 {
		t.Errorf("partial output left behind: %q", m)
	}
}

// TestOverlappingInputs: two archives of one host that overlap in time
// (two loggers, each with its own metrics) are reduced as pcpextract
// merges them, and as the archive they were cut from.
func TestOverlappingInputs(t *testing.T) {
	dir := t.TempDir()
	parts := writeParts(t, dir, "alpha", 3)
	whole := filepath.Join(dir, "whole")
	merge(t, parts, whole)
	// Cut by metric: each part covers the whole time.
	cut := func(name, config string) string {
		specs, err := extract.ParseConfig(name, []byte(config))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name)
		var stderr bytes.Buffer
		s := &extract.Settings{Prog: "test", Stderr: &stderr, NoteOut: &stderr, Quiet: true, NoProgress: true,
			Config: specs, ConfigName: name, Writer: format.WriterOptions{StartAtFirstRecord: true, NoSync: true}}
		if err := s.Merge(extract.Job{Inputs: []string{whole}, Out: out}); err != nil {
			t.Fatalf("cutting %s: %v: %s", name, err, stderr.String())
		}
		return out
	}
	a := cut("a", "kernel.all.load\nkernel.all.cpu.user\nhinv.ncpu\n")
	b := cut("b", "disk.dev.read\nmem.util.free\nkernel.uname.release\ndemo.temperature\n")
	d := t.TempDir()
	merged, want, got, fromWhole := filepath.Join(d, "merged"), filepath.Join(d, "want"), filepath.Join(d, "got"), filepath.Join(d, "fromwhole")
	var stderr bytes.Buffer
	s := &extract.Settings{Prog: "test", Stderr: &stderr, NoteOut: &stderr, Quiet: true, NoProgress: true,
		Writer: format.WriterOptions{StartAtFirstRecord: true, NoSync: true}}
	if err := s.Merge(extract.Job{Inputs: []string{a, b}, Out: merged}); err != nil {
		t.Fatalf("merging the cuts: %v: %s", err, stderr.String())
	}
	reduceRun(t, "--no-sync", "-t", "1m", merged, "-o", want)
	reduceRun(t, "--no-sync", "-t", "1m", b, a, "-o", got)
	pmlogcheck(t, got)
	w, g := valuesOf(t, want), valuesOf(t, got)
	if len(w) == 0 {
		t.Fatal("no values")
	}
	sameValues(t, w, g)
	reduceRun(t, "--no-sync", "-t", "1m", whole, "-o", fromWhole)
	sameValues(t, valuesOf(t, fromWhole), g)
}
