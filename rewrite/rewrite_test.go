package rewrite

import (
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

// synth is a tiny archive in memory: one counter over an instance domain
// of three instances and one untouched singular metric.
func synth(t testing.TB, vals ...int64) ([]stream.Record, *format.Metadata) {
	t.Helper()
	id := stream.NewInDomID(29, 2)
	dBin := &stream.Desc{PMID: stream.NewPMID(29, 0, 1), Type: stream.Type32, InDom: id, Sem: stream.SemCounter, Names: []string{"x.bin"}}
	dOne := &stream.Desc{PMID: stream.NewPMID(29, 0, 2), Type: stream.Type64, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"x.one"}}
	t0 := stream.Timestamp{Sec: 1700000000}
	ind := &stream.InDom{T: t0, InDom: id, Encoding: stream.InDomFull, Insts: []int32{1, 2, 3}, Names: []string{"a", "b", "c"}}
	recs := []stream.Record{&stream.Label{Version: 3, Start: t0, Vol: -1, Hostname: "h", Timezone: "UTC"}, dBin, dOne, ind}
	var b stream.ResultBuilder
	for i := 0; i < 4; i++ {
		b.Reset()
		b.Add(dBin.PMID, stream.Type32, stream.Val{Inst: 1, I: vals[0]}, stream.Val{Inst: 2, I: vals[1]}, stream.Val{Inst: 3, I: vals[2]})
		b.Add(dOne.PMID, stream.Type64, stream.Val{Inst: stream.InstNull, I: int64(i)})
		r := &stream.Result{}
		if err := b.Build(stream.Timestamp{Sec: t0.Sec + 1 + int64(i)}, r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	meta := &format.Metadata{Label: *recs[0].(*stream.Label), Descs: []*stream.Desc{dBin, dOne},
		ByPMID:   map[stream.PMID]*stream.Desc{dBin.PMID: dBin, dOne.PMID: dOne},
		InDoms:   []*stream.InDom{ind},
		Resolved: map[stream.InDomID][]*stream.InstanceSet{id: {{T: t0, Insts: ind.Insts, Names: ind.Names}}}}
	return recs, meta
}

func compile(t testing.TB, src string, meta *format.Metadata) *rules.Plan {
	t.Helper()
	cfg, err := rules.ParsePmlogrewrite("test.conf", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rules.Compile(cfg, meta, rules.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func collect(t *testing.T, recs []stream.Record, plan *rules.Plan, meta *format.Metadata) ([]stream.Record, error) {
	rw := New(stream.FromSlice(recs), plan, Options{Meta: meta})
	return stream.Collect(rw)
}

func TestCollapseAndRetype(t *testing.T) {
	recs, meta := synth(t, 5, 7, 9)
	plan := compile(t, "metric x.bin { indom -> NULL output sum type -> DOUBLE }", meta)
	out, err := collect(t, recs, plan, meta)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, r := range out {
		switch v := r.(type) {
		case *stream.Desc:
			if v.PMID == stream.NewPMID(29, 0, 1) && (v.Type != stream.TypeDouble || v.InDom != stream.InDomNull) {
				t.Errorf("desc not rewritten: %+v", v)
			}
		case *stream.InDom:
			t.Errorf("indom 29.2 has no user left and should be dropped: %+v", v)
		case *stream.Result:
			n++
			it := v.VSets()
			for it.Next() {
				vs := it.VSet()
				if vs.PMID != stream.NewPMID(29, 0, 1) {
					continue
				}
				if vs.NumVal != 1 || vs.Inst(0) != stream.InstNull {
					t.Fatalf("want one singular value, got %d (inst %d)", vs.NumVal, vs.Inst(0))
				}
				val, _ := vs.Value(0)
				f, _ := val.Float64(stream.TypeDouble)
				if f != 21 {
					t.Errorf("sum = %v, want 21", f)
				}
			}
		}
	}
	if n != 4 {
		t.Errorf("%d results, want 4", n)
	}
}

func TestValueErrorNamesMetric(t *testing.T) {
	recs, meta := synth(t, 5, -7, 9)
	plan := compile(t, "metric x.bin { type -> U32 }", meta)
	_, err := collect(t, recs, plan, meta)
	if err == nil {
		t.Fatal("a negative value converted to U32")
	}
	for _, want := range []string{"x.bin", "instance 2", "2023-11-14 22:13:21", "negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestDeleteDropsEmptyResult(t *testing.T) {
	recs, meta := synth(t, 1, 2, 3)
	plan := compile(t, "metric x.bin { delete } metric x.one { delete }", meta)
	out, err := collect(t, recs, plan, meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out {
		if r.Kind() == stream.KindResult || r.Kind() == stream.KindDesc {
			t.Errorf("left a %s record", r.Kind())
		}
	}
}

// BenchmarkPassThrough is the path of results no rule touches: it must not
// allocate.
func BenchmarkPassThrough(b *testing.B) {
	recs, meta := synth(b, 1, 2, 3)
	plan := compile(b, "metric 30.*.* { pmid -> 31.*.* }", meta)
	res := recs[len(recs)-1].(*stream.Result)
	it := &repeat{rec: res}
	rw := New(it, plan, Options{Meta: meta})
	rw.started = true
	b.ReportAllocs()
	b.SetBytes(int64(len(res.Body)))
	for i := 0; i < b.N; i++ {
		if !rw.Next() {
			b.Fatal(rw.Err())
		}
	}
}

func TestPassThroughNoAllocs(t *testing.T) {
	recs, meta := synth(t, 1, 2, 3)
	plan := compile(t, "metric 30.*.* { pmid -> 31.*.* }", meta)
	res := recs[len(recs)-1].(*stream.Result)
	rw := New(&repeat{rec: res}, plan, Options{Meta: meta})
	rw.Next()
	if a := testing.AllocsPerRun(1000, func() { rw.Next() }); a != 0 {
		t.Errorf("%v allocations per untouched result, want 0", a)
	}
	// A touched result reuses its buffers too, once warm.
	plan = compile(t, "metric x.bin { type -> 64 }", meta)
	rw = New(&repeat{rec: res}, plan, Options{Meta: meta})
	rw.Next()
	rw.Next()
	if a := testing.AllocsPerRun(1000, func() { rw.Next() }); a != 0 {
		t.Errorf("%v allocations per retyped result, want 0", a)
	}
}

// repeat yields the same result forever.
type repeat struct{ rec stream.Record }

func (r *repeat) Next() bool        { return true }
func (r *repeat) At() stream.Record { return r.rec }
func (r *repeat) Err() error        { return nil }
