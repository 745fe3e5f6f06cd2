package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/example"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/stream"
)

// writeParts writes a host's n archives that do not overlap
// (example.WriteParts).
func writeParts(t *testing.T, dir, host string, n int) []string {
	t.Helper()
	bases, err := example.WriteParts(dir, host, n)
	if err != nil {
		t.Fatal(err)
	}
	return bases
}

// reduceRun runs pcpreduce with args and wants success; it returns stderr.
func reduceRun(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"pcpreduce"}, args...), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("pcpreduce %q: exit %d: %s", args, code, stderr.String())
	}
	return stderr.String()
}

// reduceFail runs pcpreduce with args and wants a failure whose message
// holds want; it returns stderr.
func reduceFail(t *testing.T, want string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"pcpreduce"}, args...), nil, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("pcpreduce %q: exit %d, stderr %q: want a failure saying %q", args, code, stderr.String(), want)
	}
	return stderr.String()
}

// valuesOf reads the results of an archive as "time metric inst" → value.
func valuesOf(t *testing.T, base string) map[string]string {
	t.Helper()
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	return valuesOfIter(t, a.Records())
}

func valuesOfIter(t *testing.T, it stream.Iterator) map[string]string {
	t.Helper()
	descs := map[stream.PMID]*stream.Desc{}
	out := map[string]string{}
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Desc:
			descs[r.PMID] = stream.CloneRecord(r).(*stream.Desc)
		case *stream.Result:
			vi := r.VSets()
			for vi.Next() {
				vs := vi.VSet()
				d := descs[vs.PMID]
				if d == nil {
					t.Fatalf("%s: value of %s without a descriptor", r.T, vs.PMID)
				}
				for i := 0; i < int(vs.NumVal); i++ {
					v, err := vs.Value(i)
					if err != nil {
						t.Fatal(err)
					}
					var s string
					switch d.Type {
					case stream.TypeDouble, stream.TypeFloat:
						f, err := v.Float64(d.Type)
						if err != nil {
							t.Fatal(err)
						}
						s = strconv.FormatFloat(f, 'g', -1, 64)
					case stream.TypeString:
						s = string(v.Bytes(d.Type))
					default:
						u, err := v.Uint64(d.Type)
						if err != nil {
							t.Fatal(err)
						}
						s = strconv.FormatUint(u, 10)
					}
					out[fmt.Sprintf("%s %s %d", r.T, d.Names[0], vs.Inst(i))] = s
				}
			}
			if err := vi.Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameValues wants the same keys and values within 1e-12 relative.
func sameValues(t *testing.T, want, got map[string]string) {
	t.Helper()
	var bad []string
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			bad = append(bad, "missing "+k+" = "+w)
			continue
		}
		if g == w {
			continue
		}
		a, err1 := strconv.ParseFloat(w, 64)
		b, err2 := strconv.ParseFloat(g, 64)
		if err1 != nil || err2 != nil || math.Abs(a-b) > 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
			bad = append(bad, fmt.Sprintf("%s: want %s, got %s", k, w, g))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			bad = append(bad, "unexpected "+k+" = "+g)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d of %d values differ, first: %s", len(bad), len(want), strings.Join(bad[:min(len(bad), 10)], "\n"))
	}
}

// pmlogcheck runs PCP's pmlogcheck on base when PCP is installed (in CI
// it must be) and wants no finding.
func pmlogcheck(t *testing.T, base string) {
	t.Helper()
	bin, err := exec.LookPath("pmlogcheck")
	if err != nil {
		for _, p := range []string{"/usr/bin/pmlogcheck", "/usr/lib/pcp/bin/pmlogcheck"} {
			if _, err := os.Stat(p); err == nil {
				bin = p
			}
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("pmlogcheck is required in CI and is missing")
		}
		t.Logf("pmlogcheck not installed: %s not checked", base)
		return
	}
	out, err := exec.Command(bin, base).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("pmlogcheck %s: %v: %s", base, err, out)
	}
}

// merge writes the archives' merge, with a <mark> between inputs (as
// libpcp and pcpreduce read several archives), with the extract package.
func merge(t *testing.T, inputs []string, out string) {
	t.Helper()
	var stderr bytes.Buffer
	s := &extract.Settings{Prog: "test", Stderr: &stderr, NoteOut: &stderr, Quiet: true, NoProgress: true,
		Opts: extract.Options{AlwaysMark: true}, Writer: format.WriterOptions{StartAtFirstRecord: true, NoSync: true}}
	if err := s.Merge(extract.Job{Inputs: inputs, Out: out}); err != nil {
		t.Fatalf("merging %q: %v: %s", inputs, err, stderr.String())
	}
}

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
