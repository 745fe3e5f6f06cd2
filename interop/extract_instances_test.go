package interop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// TestExtractInstancesPCP603: the one place where pmlogextract 6.0.3's
// instance selection (-c with an instance list) and ours differ, pinned
// down. PCP's searchmlist tested a value set pointer left over from its
// first loop (the result's last value set) before selecting instances,
// so the first metric selected keeps all its instances in a record whose
// last value set holds no values (upstream fix 1d606c3dd8, in PCP 7.1.2,
// "fix long-standing latent bug"). pcpextract selects in every record,
// under either name, as pmlogextract(1) says and fixed PCP does
// (docs/compatibility.md). The test checks the explanation record by
// record against PCP itself, so that it fails if the installed
// pmlogextract stops behaving so (fixed, or for another reason).
func TestExtractInstancesPCP603(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	src := filepath.Join(qaDir, "20180416.10.00")
	both := filepath.Join(dir, "config-both")
	one := filepath.Join(dir, "config-one")
	if err := os.WriteFile(both, []byte("kernel.all.load\nxfs.buffer.get_read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(one, []byte("kernel.all.load [ 1 ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// the input: kernel.all.load's three instances in every record, and
	// in every other record after it xfs.buffer.get_read with no values
	in := filepath.Join(dir, "in")
	if r := run(slow, nil, ours("pcpextract"), "-c", both, src, "-o", in); r.code != 0 {
		t.Fatalf("pcpextract -c %s: %s", both, r.stderr)
	}
	theirs, mine := filepath.Join(dir, "theirs"), filepath.Join(dir, "mine")
	if r := run(slow, nil, pcpTool(t, "pmlogextract"), "-c", one, in, theirs); r.code != 0 {
		t.Fatalf("pmlogextract: %s", r.stderr)
	}
	if r := run(slow, nil, ours("pcpextract"), "-c", one, in, "-o", mine); r.code != 0 {
		t.Fatalf("pcpextract: %s", r.stderr)
	}
	type rec struct {
		t         stream.Timestamp
		loads     int32 // kernel.all.load's values
		lastEmpty bool  // the record's last value set holds none
	}
	const load = stream.PMID(60<<22 | 2<<10 | 0)
	records := func(base string) []rec {
		a, err := format.Open(base)
		if err != nil {
			t.Fatal(err)
		}
		it := a.Records()
		defer it.Close()
		var out []rec
		for it.Next() {
			res, ok := it.At().(*stream.Result)
			if !ok {
				continue
			}
			r := rec{t: res.T, loads: -1}
			vs := res.VSets()
			for vs.Next() {
				v := vs.VSet()
				if v.PMID == load {
					r.loads = v.NumVal
				}
				r.lastEmpty = v.NumVal <= 0
			}
			out = append(out, r)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ins, ts, ms := records(in), records(theirs), records(mine)
	if len(ins) < 100 || len(ts) != len(ins) || len(ms) != len(ins) {
		t.Fatalf("results: input %d, pmlogextract %d, pcpextract %d", len(ins), len(ts), len(ms))
	}
	unselected := 0
	for i, r := range ins {
		if r.loads != 3 || ts[i].t != r.t || ms[i].t != r.t {
			t.Fatalf("result %d: input %+v, pmlogextract %+v, pcpextract %+v", i, r, ts[i], ms[i])
		}
		want := int32(1)
		if r.lastEmpty {
			want = 3 // PCP 6.0.3's stale pointer: no selection
			unselected++
		}
		if ts[i].loads != want {
			t.Errorf("result %d at %v: pmlogextract kept %d of kernel.all.load's values, the explanation says %d", i, r.t, ts[i].loads, want)
		}
		if ms[i].loads != 1 {
			t.Errorf("result %d at %v: pcpextract kept %d of kernel.all.load's values, want 1", i, r.t, ms[i].loads)
		}
	}
	if unselected == 0 || unselected == len(ins) {
		t.Errorf("%d of %d results end in an empty value set: the input does not show the difference", unselected, len(ins))
	}
}
