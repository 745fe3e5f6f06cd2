package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/example"
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
