package rewrite

import (
	"fmt"
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
	// the value named is the one that did not convert (-7), not Retype's
	// zero result (QA 487 showed "0 to PM_TYPE_U32")
	for _, want := range []string{"x.bin", "instance 2", "2023-11-14 22:13:21", "-7 to PM_TYPE_U32", "negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestNewLabelsOneSetPerObject: several NEW labels for one object make
// one label set with the names in order, as pmlogrewrite writes them (PCP
// QA 1338), not one set per label.
func TestNewLabelsOneSetPerObject(t *testing.T) {
	recs, meta := synth(t, 1, 2, 3)
	plan := compile(t, `LABEL CONTEXT { NEW "zz" "last" }
LABEL CONTEXT { NEW "aa" 1 }
LABEL CONTEXT { NEW "mm" true }
LABEL INSTANCES 29.2 2 { NEW "b" null }
LABEL INSTANCES 29.2 2 { NEW "a" false }`, meta)
	out, err := collect(t, recs, plan, meta)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out {
		if ls, ok := r.(*stream.LabelSet); ok {
			for _, s := range ls.Sets {
				got = append(got, fmt.Sprintf("%d/%d %s", ls.Type, s.Inst, s.JSON))
			}
		}
	}
	want := []string{
		fmt.Sprintf("%d/%d %s", stream.LabelContext, stream.InstNull, `{"aa":1,"mm":true,"zz":"last"}`),
		fmt.Sprintf("%d/%d %s", stream.LabelInstances, 2, `{"a":false,"b":null}`),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("label sets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNewInstanceLabelOrder: NEW labels for the instances of an indom come
// in pmlogrewrite's order, the reverse of the first sight of each instance
// walking the indom's versions newest first (PCP QA 1239).
func TestNewInstanceLabelOrder(t *testing.T) {
	_, meta := synth(t, 1, 2, 3)
	id := stream.NewInDomID(29, 2)
	t0 := meta.Resolved[id][0].T
	meta.Resolved[id] = append(meta.Resolved[id], &stream.InstanceSet{T: stream.Timestamp{Sec: t0.Sec + 2}, Insts: []int32{3, 4}, Names: []string{"c", "d"}})
	plan := compile(t, `LABEL INSTANCES 29.2 * { NEW "x" 1 }`, meta)
	var got []int32
	for _, n := range plan.New {
		got = append(got, n.Inst)
	}
	// newest first: 3 4, then 1 2 from the older version; reversed
	if fmt.Sprint(got) != "[2 1 4 3]" {
		t.Errorf("instances labelled in order %v, want [2 1 4 3]", got)
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

// wide is a result like a pmlogger record: many value sets, most of them
// untouched, of 64-bit values (value blocks) and 32-bit ones (insitu).
func wide(b testing.TB) (*stream.Result, *format.Metadata) {
	b.Helper()
	var rb stream.ResultBuilder
	meta := &format.Metadata{ByPMID: map[stream.PMID]*stream.Desc{}}
	for m := 0; m < 100; m++ {
		typ := stream.TypeU64
		if m%3 == 0 {
			typ = stream.TypeU32
		}
		d := &stream.Desc{PMID: stream.NewPMID(60, 0, uint32(m)), Type: typ, InDom: stream.InDomNull, Sem: stream.SemCounter, Names: []string{fmt.Sprintf("w.m%d", m)}}
		meta.Descs = append(meta.Descs, d)
		meta.ByPMID[d.PMID] = d
		vals := make([]stream.Val, 32)
		for i := range vals {
			vals[i] = stream.Val{Inst: int32(i), U: uint64(m*1000 + i)}
		}
		rb.Add(d.PMID, typ, vals...)
	}
	res := &stream.Result{}
	if err := rb.Build(stream.Timestamp{Sec: 1700000001}, res); err != nil {
		b.Fatal(err)
	}
	return res, meta
}

// BenchmarkTouched: a wide result where two metrics change (a rename and
// a retype) and the rest are copied whole.
func BenchmarkTouched(b *testing.B) {
	res, meta := wide(b)
	plan := compile(b, "metric w.m1 { name -> w.renamed } metric w.m3 { type -> 64 }", meta)
	rw := New(&repeat{rec: res}, plan, Options{Meta: meta})
	rw.started = true
	b.ReportAllocs()
	b.SetBytes(int64(len(res.Body)))
	for i := 0; i < b.N; i++ {
		if !rw.Next() {
			b.Fatal(rw.Err())
		}
	}
}

// TestTouchedWide: the value sets copied whole keep their values, the
// retyped one is converted, and a warm touched result does not allocate.
func TestTouchedWide(t *testing.T) {
	res, meta := wide(t)
	plan := compile(t, "metric w.m1 { pmid -> 61.0.1 } metric w.m3 { type -> 64 } metric w.m5 { delete }", meta)
	rw := New(&repeat{rec: res}, plan, Options{Meta: meta})
	rw.started = true
	if !rw.Next() {
		t.Fatal(rw.Err())
	}
	out := rw.At().(*stream.Result)
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	if out.NumPMID() != 99 {
		t.Errorf("%d value sets, want 99", out.NumPMID())
	}
	it := out.VSets()
	for it.Next() {
		vs := it.VSet()
		m := int(vs.PMID.Item())
		typ := meta.ByPMID[stream.NewPMID(60, 0, uint32(m))].Type
		switch {
		case vs.PMID.Domain() == 61:
			if m != 1 {
				t.Errorf("%s renumbered", vs.PMID)
			}
		case m == 3:
			typ = stream.Type64
		case m == 5:
			t.Errorf("deleted metric left")
		}
		for i := 0; i < vs.Values(); i++ {
			v, err := vs.Value(i)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Uint64(typ)
			if typ == stream.Type64 {
				var n int64
				n, err = v.Int64(typ)
				got = uint64(n)
			}
			if err != nil || got != uint64(m*1000+i) || vs.Inst(i) != int32(i) {
				t.Errorf("%s value %d: %d (%v), want %d", vs.PMID, i, got, err, m*1000+i)
			}
		}
	}
	if a := testing.AllocsPerRun(100, func() { rw.Next() }); a != 0 {
		t.Errorf("%v allocations per touched result, want 0", a)
	}
}

// TestLayoutCache: results of alternating layouts, and one new after the
// cache is full, each get the plan of their own metrics.
func TestLayoutCache(t *testing.T) {
	recs, meta := synth(t, 1, 2, 3)
	plan := compile(t, "metric x.one { delete }", meta)
	var rb stream.ResultBuilder
	mk := func(n int, withOne bool) *stream.Result {
		rb.Reset()
		for i := 0; i < n; i++ {
			rb.Add(stream.NewPMID(29, 0, 1), stream.Type32, stream.Val{Inst: 1, I: int64(i)})
		}
		if withOne {
			rb.Add(stream.NewPMID(29, 0, 2), stream.Type64, stream.Val{Inst: stream.InstNull, I: 5})
		}
		r := &stream.Result{}
		if err := rb.Build(stream.Timestamp{Sec: 1700000001}, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	rw := New(stream.FromSlice(recs), plan, Options{Meta: meta})
	for _, c := range []struct {
		n       int
		withOne bool
	}{{1, true}, {2, false}, {1, true}, {2, true}, {3, false}, {4, true}, {5, false}, {6, true}, {2, false}, {1, true}, {2, true}} {
		res := mk(c.n, c.withOne)
		lay, err := rw.layoutOf(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(lay.acts) != res.NumPMID() || lay.touched != c.withOne {
			t.Fatalf("%+v: layout of %d sets, touched %v", c, len(lay.acts), lay.touched)
		}
		for i, id := range lay.pmids {
			if (lay.acts[i] != nil) != (id == stream.NewPMID(29, 0, 2)) {
				t.Fatalf("%+v: set %d (%s) has the wrong plan", c, i, id)
			}
		}
	}
	if len(rw.layouts) > maxLayouts {
		t.Errorf("%d layouts kept", len(rw.layouts))
	}
}

// labelRec builds a label set of one set, {name: value} JSON given whole.
func labelRec(t0 stream.Timestamp, typ, ident uint32, inst int32, labs ...label) *stream.LabelSet {
	return &stream.LabelSet{T: t0, Type: typ, Ident: ident, Sets: []stream.OneLabelSet{buildSet(inst, labs)}}
}

// TestValueSeesLabels: a value expression sees the value's labels merged
// as PCP merges them (context, domain, indom, cluster, item, instance; the
// more specific wins), with strings unquoted, as they stand at the time of
// the value.
func TestValueSeesLabels(t *testing.T) {
	recs, meta := synth(t, 5, 7, 9)
	t0 := recs[0].(*stream.Label).Start
	bin := stream.NewPMID(29, 0, 1)
	id := stream.NewInDomID(29, 2)
	ls := []stream.Record{
		labelRec(t0, stream.LabelContext, uint32(stream.PMIDNull), stream.InstNull, label{name: "site", value: `"ctx"`}, label{name: "rack", value: `"r1"`}),
		labelRec(t0, stream.LabelItem, uint32(bin), stream.InstNull, label{name: "site", value: `"item"`}),
		labelRec(t0, stream.LabelInstances, uint32(id), 2, label{name: "scale", value: `10`}),
	}
	// After the first results, the item's label changes.
	later := labelRec(stream.Timestamp{Sec: t0.Sec + 3}, stream.LabelItem, uint32(bin), stream.InstNull, label{name: "site", value: `"moved"`})
	var in []stream.Record
	in = append(in, recs[:4]...)
	in = append(in, ls...)
	in = append(in, recs[4:6]...)
	in = append(in, later)
	in = append(in, recs[6:]...)
	cfg, err := rules.ParseExpr("test.rules", `value name == "x.bin" {
    value = value + (labels["site"] == "item" ? 100 : 0) + (labels["site"] == "moved" ? 200 : 0) + (labels["scale"] == "10" ? 1000 : 0) + (labels["rack"] == "r1" ? 10000 : 0)
}`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := rules.Compile(cfg, meta, rules.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := collect(t, in, plan, meta)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out {
		res, ok := r.(*stream.Result)
		if !ok {
			continue
		}
		it := res.VSets()
		for it.Next() {
			vs := it.VSet()
			if vs.PMID != bin {
				continue
			}
			var row []string
			for i := 0; i < int(vs.NumVal); i++ {
				v, _ := vs.Value(i)
				row = append(row, fmt.Sprint(int32(v.Word)))
			}
			got = append(got, strings.Join(row, " "))
		}
	}
	want := []string{
		"10105 11107 10109", "10105 11107 10109", // site from the item, scale on instance 2 only
		"10205 11207 10209", "10205 11207 10209", // the item's label changed
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("values:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestKeepDescriptorsF3 is F3 of the hostile campaign (docs/reliability.md):
// a descriptor that no result holds (its results were in a volume that is
// lost) is released, in pmlogrewrite's order, only when a result holds its
// metric, and it blocks those behind it; results then went out with no
// descriptor. pcprewrite (KeepDescriptors) releases it early instead;
// pmlogrewrite's order (without) is kept for the PCP-name mode.
func TestKeepDescriptorsF3(t *testing.T) {
	recs, meta := synth(t, 1, 2, 3)
	lost := &stream.Desc{PMID: stream.NewPMID(29, 0, 9), Type: stream.Type32, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"x.lost"}}
	recs = append(recs[:1], append([]stream.Record{lost}, recs[1:]...)...)
	meta.Descs = append(meta.Descs, lost)
	meta.ByPMID[lost.PMID] = lost
	plan := compile(t, "global { hostname -> other }", meta)
	for _, keep := range []bool{false, true} {
		out, err := stream.Collect(New(stream.FromSlice(recs), plan, Options{Meta: meta, KeepDescriptors: keep}))
		if err != nil {
			t.Fatal(err)
		}
		described := map[stream.PMID]bool{}
		bare := 0
		for _, r := range out {
			switch v := r.(type) {
			case *stream.Desc:
				described[v.PMID] = true
			case *stream.Result:
				it := v.VSets()
				for it.Next() {
					if !described[it.VSet().PMID] {
						bare++
					}
				}
			}
		}
		switch {
		case keep && bare > 0:
			t.Errorf("KeepDescriptors: %d value sets went out before their descriptor", bare)
		case !keep && bare == 0:
			t.Errorf("pmlogrewrite's order: expected results before their descriptors (its behaviour), found none")
		}
	}
}
