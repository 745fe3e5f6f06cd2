package stream_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// --- Timestamp ---

func TestTimestampCompare(t *testing.T) {
	ts := []stream.Timestamp{{-2, 0}, {-1, 999999999}, {0, 0}, {0, 1}, {1, 0}, {1, 999999999}, {math.MaxInt64, 0}}
	for i, a := range ts {
		for j, b := range ts {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
			if a.Before(b) != (want < 0) || a.After(b) != (want > 0) {
				t.Errorf("Before/After of %v and %v", a, b)
			}
		}
	}
}

func TestTimestampAddSub(t *testing.T) {
	cases := []struct {
		t    stream.Timestamp
		d    time.Duration
		want stream.Timestamp
	}{
		{stream.Timestamp{10, 0}, time.Millisecond, stream.Timestamp{10, 1000000}},
		{stream.Timestamp{10, 999999999}, 1, stream.Timestamp{11, 0}},
		{stream.Timestamp{10, 0}, -1, stream.Timestamp{9, 999999999}},
		{stream.Timestamp{10, 500000000}, -1500 * time.Millisecond, stream.Timestamp{9, 0}},
		{stream.Timestamp{10, 500000000}, 2500 * time.Millisecond, stream.Timestamp{13, 0}},
		{stream.Timestamp{0, 0}, -time.Nanosecond, stream.Timestamp{-1, 999999999}},
		{stream.Timestamp{1 << 40, 1}, -time.Duration(math.MaxInt64), stream.Timestamp{1<<40 - 9223372037, 145224194}},
	}
	for _, c := range cases {
		got := c.t.Add(c.d)
		if got != c.want {
			t.Errorf("%v.Add(%v) = %v, want %v", c.t, c.d, got, c.want)
		}
		if got.Nsec < 0 || got.Nsec >= 1e9 {
			t.Errorf("%v.Add(%v) not normalised: %+v", c.t, c.d, got)
		}
		if back := got.Sub(c.t); back != c.d {
			t.Errorf("(%v).Sub(%v) = %v, want %v", got, c.t, back, c.d)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 10000; i++ {
		a := stream.Timestamp{Sec: rng.Int64N(1<<33) - 1<<32, Nsec: rng.Int32N(1e9)}
		d := time.Duration(rng.Int64N(1<<50) - 1<<49)
		b := a.Add(d)
		if b.Sub(a) != d || b.Add(-d) != a {
			t.Fatalf("%v + %v = %v does not subtract back", a, d, b)
		}
		if (d > 0) != b.After(a) {
			t.Fatalf("%v + %v = %v is not after", a, d, b)
		}
	}
	// Nanoseconds from a damaged file can be anything; Sub must not wrap.
	x, y := stream.Timestamp{0, math.MaxInt32}, stream.Timestamp{0, math.MinInt32}
	if got := x.Sub(y); got != time.Duration(math.MaxInt32)-time.Duration(math.MinInt32) {
		t.Errorf("Sub of extreme nanoseconds = %v", got)
	}
}

func TestTimestampConversions(t *testing.T) {
	tm := time.Date(2022, 4, 3, 6, 50, 55, 422385141, time.UTC)
	ts := stream.FromTime(tm)
	if ts != (stream.Timestamp{1648968655, 422385141}) || !ts.Time().Equal(tm) {
		t.Fatalf("FromTime/Time: %+v %v", ts, ts.Time())
	}
	if ts.Time().Location() != time.UTC {
		t.Error("Time is not in UTC")
	}
	if f := ts.Float(); math.Abs(f-1648968655.422385141) > 1e-6 {
		t.Errorf("Float = %v", f)
	}
	if f := (stream.Timestamp{-1, 750000000}).Float(); f != -0.25 {
		t.Errorf("Float before the epoch = %v", f)
	}
	for _, c := range []struct {
		t    stream.Timestamp
		want string
	}{
		{stream.Timestamp{1648968655, 422385141}, "1648968655.422385141"},
		{stream.Timestamp{0, 5}, "0.000000005"},
		{stream.Timestamp{-1, 750000000}, "-0.250000000"},
		{stream.Timestamp{-2, 0}, "-2.000000000"},
		{stream.Timestamp{-3, 1}, "-2.999999999"},
		{stream.Timestamp{math.MinInt64, 1}, "-9223372036854775807.999999999"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("String of %+v = %s, want %s", c.t, got, c.want)
		}
	}
}

func TestTimestampFitsV2(t *testing.T) {
	for _, c := range []struct {
		t    stream.Timestamp
		fits bool
	}{
		{stream.Timestamp{0, 0}, true},
		{stream.Timestamp{math.MaxInt32, 999999000}, true},
		{stream.Timestamp{math.MaxInt32 + 1, 0}, false},
		{stream.Timestamp{math.MinInt32, 0}, true},
		{stream.Timestamp{math.MinInt32 - 1, 0}, false},
		{stream.Timestamp{5, 1000}, true},
		{stream.Timestamp{5, 1001}, false},
	} {
		if c.t.FitsV2() != c.fits {
			t.Errorf("%+v.FitsV2() = %v", c.t, !c.fits)
		}
	}
}

// --- iterators for the merge tests ---

// reuseIter yields results whose single body byte is a tag, reusing one
// Result as real readers do, so that a merge that advances an input too
// early hands out a wrong tag.
type reuseIter struct {
	times []int64
	tags  []byte
	i     int
	rec   stream.Result
	buf   [1]byte
	err   error // returned after the records, or at errAt
	errAt int   // index at which Next fails; -1 for never
}

func newReuseIter(tag byte, times ...int64) *reuseIter {
	it := &reuseIter{times: times, i: -1, errAt: -1}
	for range times {
		it.tags = append(it.tags, tag)
	}
	return it
}

func (r *reuseIter) Next() bool {
	r.i++
	if r.i == r.errAt || r.i >= len(r.times) {
		r.rec = stream.Result{}
		r.buf[0] = 0
		return false
	}
	r.rec.T = stream.Timestamp{Sec: r.times[r.i]}
	r.buf[0] = r.tags[r.i] + byte(r.i)
	r.rec.Body = r.buf[:]
	return true
}

func (r *reuseIter) At() stream.Record { return &r.rec }

func (r *reuseIter) Err() error {
	if r.errAt >= 0 && r.i >= r.errAt {
		return r.err
	}
	return nil
}

type merged struct {
	sec int64
	tag byte
	src int
}

func drainMerged(t *testing.T, it stream.Iterator) []merged {
	t.Helper()
	var out []merged
	for it.Next() {
		r := it.At().(*stream.Result)
		src := -1
		if s, ok := it.(stream.Sourcer); ok {
			src = s.Source()
		}
		out = append(out, merged{r.T.Sec, r.Body[0], src})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mergeReference merges by stable sort: time, then input order, then position.
func mergeReference(inputs [][]int64) []merged {
	var all []merged
	for src, times := range inputs {
		for i, s := range times {
			all = append(all, merged{s, byte(10*src) + byte(i), src})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].sec < all[j].sec })
	return all
}

func mergeOf(inputs [][]int64) stream.Iterator {
	its := make([]stream.Iterator, len(inputs))
	for i, times := range inputs {
		its[i] = newReuseIter(byte(10*i), times...)
	}
	return stream.Merge(its...)
}

func TestMergeTiesAndStability(t *testing.T) {
	inputs := [][]int64{
		{1, 3, 3, 5, 9},
		{1, 2, 3, 3, 9, 9},
		{0, 3, 10},
	}
	got := drainMerged(t, mergeOf(inputs))
	want := mergeReference(inputs)
	if !slices.Equal(got, want) {
		t.Fatalf("merge:\n got %v\nwant %v", got, want)
	}
	// Spelled out: at time 3, input 0's two records, then input 1's two,
	// then input 2's, each input in its own order.
	var at3 []merged
	for _, m := range got {
		if m.sec == 3 {
			at3 = append(at3, m)
		}
	}
	if !slices.Equal(at3, []merged{{3, 1, 0}, {3, 2, 0}, {3, 12, 1}, {3, 13, 1}, {3, 21, 2}}) {
		t.Fatalf("ties at 3: %v", at3)
	}
}

func TestMergeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 500; n++ {
		inputs := make([][]int64, 1+rng.IntN(6))
		for i := range inputs {
			var s int64
			for j := rng.IntN(12); j > 0; j-- {
				s += int64(rng.IntN(3))
				inputs[i] = append(inputs[i], s)
			}
		}
		got := drainMerged(t, mergeOf(inputs))
		if want := mergeReference(inputs); !slices.Equal(got, want) {
			t.Fatalf("inputs %v:\n got %v\nwant %v", inputs, got, want)
		}
	}
}

// The fast path (the input just advanced is still the smallest) must give
// the same order as the heap, including ties with the heap's top.
func TestMergeFastPath(t *testing.T) {
	inputs := [][]int64{
		{1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 20},
		{8, 9},
		{0, 8},
	}
	got := drainMerged(t, mergeOf(inputs))
	if want := mergeReference(inputs); !slices.Equal(got, want) {
		t.Fatalf("\n got %v\nwant %v", got, want)
	}
}

func TestMergeSingleAndEmpty(t *testing.T) {
	m := stream.Merge()
	if m.Next() || m.Err() != nil {
		t.Fatal("merge of nothing yields something")
	}
	one := stream.Merge(newReuseIter(0, 1, 2))
	if _, ok := one.(stream.Sourcer); !ok {
		t.Fatal("Merge of one input is not a Sourcer")
	}
	if got := drainMerged(t, one); !slices.Equal(got, []merged{{1, 0, 0}, {2, 1, 0}}) {
		t.Fatalf("single: %v", got)
	}
	if got := drainMerged(t, mergeOf([][]int64{nil, {4}, nil})); !slices.Equal(got, []merged{{4, 10, 1}}) {
		t.Fatalf("with empty inputs: %v", got)
	}
}

func TestMergeErrors(t *testing.T) {
	boom := errors.New("input 1 is damaged")

	// Failing on the first Next: nothing is yielded.
	bad := newReuseIter(10, 1, 2)
	bad.errAt, bad.err = 0, boom
	m := stream.Merge(newReuseIter(0, 0, 1), bad)
	if m.Next() {
		t.Fatal("merge yields a record although an input failed at once")
	}
	if !errors.Is(m.Err(), boom) {
		t.Fatalf("Err = %v", m.Err())
	}

	// Failing later: the records before the failure come out in order,
	// then Next stops for good.
	bad = newReuseIter(10, 1, 2, 3, 4)
	bad.errAt, bad.err = 2, boom
	m = stream.Merge(newReuseIter(0, 0, 1, 2, 5, 6), bad)
	var secs []int64
	for m.Next() {
		secs = append(secs, m.At().Time().Sec)
	}
	if !errors.Is(m.Err(), boom) {
		t.Fatalf("Err = %v", m.Err())
	}
	if !slices.Equal(secs, []int64{0, 1, 1, 2, 2}) {
		t.Fatalf("records before the error: %v", secs)
	}
	if m.Next() {
		t.Fatal("Next after an error")
	}

	// An input that ends cleanly is not an error.
	m = stream.Merge(newReuseIter(0), newReuseIter(10, 1))
	for m.Next() {
	}
	if m.Err() != nil {
		t.Fatal(m.Err())
	}
}

func TestAllAndCollect(t *testing.T) {
	recs := []stream.Record{&stream.Mark{T: stream.Timestamp{Sec: 1}}, &stream.Mark{T: stream.Timestamp{Sec: 2}}}
	var n int
	for rec, err := range stream.All(stream.FromSlice(recs)) {
		if err != nil || rec != recs[n] {
			t.Fatalf("All: %v %v", rec, err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("All yielded %d", n)
	}
	for range stream.All(stream.FromSlice(recs)) {
		break // stopping early must not panic
	}

	boom := errors.New("boom")
	bad := newReuseIter(0, 1, 2, 3)
	bad.errAt, bad.err = 2, boom
	var sawErr bool
	n = 0
	for rec, err := range stream.All(bad) {
		if err != nil {
			if rec != nil || !errors.Is(err, boom) {
				t.Fatalf("error element: %v %v", rec, err)
			}
			sawErr = true
			continue
		}
		n++
	}
	if !sawErr || n != 2 {
		t.Fatalf("All over a failing iterator: %d records, error seen %v", n, sawErr)
	}

	// Collect copies records out of an iterator that reuses them.
	got, err := stream.Collect(newReuseIter(7, 1, 2, 3))
	if err != nil || len(got) != 3 {
		t.Fatal(len(got), err)
	}
	for i, r := range got {
		if r.(*stream.Result).Body[0] != byte(7+i) {
			t.Fatalf("Collect record %d was overwritten", i)
		}
	}
	bad = newReuseIter(0, 1, 2, 3)
	bad.errAt, bad.err = 1, boom
	if got, err := stream.Collect(bad); len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("Collect of a failing iterator: %d, %v", len(got), err)
	}
}

func TestCloneRecordDeep(t *testing.T) {
	recs := []stream.Record{
		&stream.Label{Version: 3, Hostname: "h"},
		&stream.Desc{Names: []string{"a", "b"}},
		&stream.InDom{Insts: []int32{1}, Names: []string{"x"}, Deleted: []bool{false}},
		&stream.LabelSet{Sets: []stream.OneLabelSet{{JSON: "{}", Labels: []stream.LabelEntry{{Name: 1}}}}},
		&stream.Text{Text: "t"},
		&stream.Result{Body: []byte{1}},
		&stream.Mark{},
	}
	for _, r := range recs {
		c := stream.CloneRecord(r)
		if c == r {
			t.Errorf("%s: clone is the same pointer", r.Kind())
		}
		switch v := r.(type) {
		case *stream.Desc:
			v.Names[0] = "changed"
			if c.(*stream.Desc).Names[0] != "a" {
				t.Error("desc names shared")
			}
		case *stream.InDom:
			v.Insts[0], v.Names[0], v.Deleted[0] = 9, "changed", true
			if cc := c.(*stream.InDom); cc.Insts[0] != 1 || cc.Names[0] != "x" || cc.Deleted[0] {
				t.Error("indom slices shared")
			}
		case *stream.LabelSet:
			v.Sets[0].Labels[0].Name = 9
			v.Sets[0].JSON = "changed"
			if cc := c.(*stream.LabelSet); cc.Sets[0].Labels[0].Name != 1 || cc.Sets[0].JSON != "{}" {
				t.Error("label sets shared")
			}
		case *stream.Result:
			v.Body[0] = 9
			if c.(*stream.Result).Body[0] != 1 {
				t.Error("result body shared")
			}
		}
	}
	// A full indom keeps a nil Deleted.
	if c := stream.CloneRecord(&stream.InDom{Insts: []int32{1}, Names: []string{"x"}}).(*stream.InDom); c.Deleted != nil {
		t.Error("full indom gained a Deleted slice")
	}
}

// --- benchmarks ---

// benchMerge merges k inputs of n records each; with runs > 1 each input
// has runs of records earlier than the others', which the fast path takes
// without touching the heap.
func benchMerge(b *testing.B, k, run int) {
	const n = 4096
	inputs := make([][]int64, k)
	for i := range inputs {
		for j := 0; j < n; j++ {
			block := j / run
			inputs[i] = append(inputs[i], int64(block*k+i)*int64(run)+int64(j%run))
		}
	}
	its := make([]*reuseIter, k)
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for total < b.N {
		all := make([]stream.Iterator, k)
		for i := range its {
			its[i] = newReuseIter(0, inputs[i]...)
			all[i] = its[i]
		}
		m := stream.Merge(all...)
		for m.Next() && total < b.N {
			total++
		}
	}
}

func BenchmarkMerge2Interleaved(b *testing.B) { benchMerge(b, 2, 1) }
func BenchmarkMerge8Interleaved(b *testing.B) { benchMerge(b, 8, 1) }
func BenchmarkMerge8Runs(b *testing.B)        { benchMerge(b, 8, 64) }

func TestPrepend(t *testing.T) {
	l := &stream.Label{Version: 3, Hostname: "h"}
	rest := stream.FromSlice([]stream.Record{&stream.Mark{T: stream.Timestamp{Sec: 1}}, &stream.Mark{T: stream.Timestamp{Sec: 2}}})
	got, err := stream.Collect(stream.Prepend(l, rest))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].(*stream.Label).Hostname != "h" || got[2].(*stream.Mark).T.Sec != 2 {
		t.Fatalf("Prepend gave %#v", got)
	}
}

func TestPrependAll(t *testing.T) {
	marks := func(secs ...int64) []stream.Record {
		var out []stream.Record
		for _, s := range secs {
			out = append(out, &stream.Mark{T: stream.Timestamp{Sec: s}})
		}
		return out
	}
	for _, c := range []struct{ head, rest []int64 }{{nil, []int64{1, 2}}, {[]int64{1}, nil}, {[]int64{1, 2, 3}, []int64{4, 5}}, {nil, nil}} {
		got, err := stream.Collect(stream.PrependAll(marks(c.head...), stream.FromSlice(marks(c.rest...))))
		if err != nil {
			t.Fatal(err)
		}
		var secs []int64
		for _, r := range got {
			secs = append(secs, r.(*stream.Mark).T.Sec)
		}
		if want := append(append([]int64{}, c.head...), c.rest...); fmt.Sprint(secs) != fmt.Sprint(want) {
			t.Errorf("PrependAll(%v, %v) gave %v", c.head, c.rest, secs)
		}
	}
	if _, ok := stream.As[stream.CheckDeferrer](stream.PrependAll(marks(1), deferrer{stream.FromSlice(nil)})); !ok {
		t.Error("CheckDeferrer lost behind PrependAll")
	}
}

type deferrer struct{ *stream.SliceIterator }

func (deferrer) DeferChecks() bool  { return true }
func (deferrer) CheckResult() error { return nil }

// A capability survives a stage that unwraps (Prepend) and stops at one
// that does not; Concat, which does not (it makes marks of its own),
// offers CheckDeferrer itself (TestConcatDefersChecks).
func TestAsThroughStages(t *testing.T) {
	src := deferrer{stream.FromSlice(nil)}
	if _, ok := stream.As[stream.CheckDeferrer](stream.Prepend(&stream.Label{}, src)); !ok {
		t.Error("CheckDeferrer lost behind Prepend")
	}
	if d, ok := stream.As[stream.CheckDeferrer](stream.Concat(nil, src)); !ok || d == stream.CheckDeferrer(src) {
		t.Error("Concat does not offer CheckDeferrer of its own")
	}
	if _, ok := stream.As[stream.CheckDeferrer](stream.FromSlice(nil)); ok {
		t.Error("CheckDeferrer found where there is none")
	}
}

// checker is an input that defers its checks when asked and then fails
// CheckResult on the result at bad (a second); checked counts the calls.
type checker struct {
	*stream.SliceIterator
	bad      int64
	deferred bool
	checked  int
}

func (c *checker) DeferChecks() bool { c.deferred = true; return true }

func (c *checker) CheckResult() error {
	c.checked++
	if r, ok := c.At().(*stream.Result); ok && c.deferred && r.T.Sec == c.bad {
		return fmt.Errorf("result at %d is damaged", c.bad)
	}
	return nil
}

// TestConcatDefersChecks: Concat passes DeferChecks on to its inputs, also
// to those a ConcatSeq fetches later, and CheckResult to the input whose
// record is current (never for the marks it makes); a failed check ends
// the concatenation with that error.
func TestConcatDefersChecks(t *testing.T) {
	input := func(secs []int64, bad int64) *checker {
		recs := []stream.Record{&stream.Label{Version: 3, Hostname: "h", Start: stream.Timestamp{Sec: secs[0]}}}
		for _, s := range secs {
			recs = append(recs, &stream.Result{T: stream.Timestamp{Sec: s}, Version: 3, Body: []byte{0, 0, 0, 0}})
		}
		return &checker{SliceIterator: stream.FromSlice(recs), bad: bad}
	}
	a, b := input([]int64{1, 2}, 0), input([]int64{5, 6, 7}, 6)
	var fetched []*checker
	c := stream.ConcatSeq(func() (stream.Iterator, string, error) {
		for _, in := range []*checker{a, b} {
			if !slices.Contains(fetched, in) {
				fetched = append(fetched, in)
				return in, fmt.Sprint("input ", len(fetched)), nil
			}
		}
		return nil, "", nil
	})
	d, ok := stream.As[stream.CheckDeferrer](c)
	if !ok || !d.DeferChecks() {
		t.Fatal("Concat does not defer checks")
	}
	var got []string
	for c.Next() {
		r := c.At()
		err := d.CheckResult()
		got = append(got, fmt.Sprintf("%s@%d:%v", r.Kind(), r.Time().Sec, err))
	}
	want := "[label@1:<nil> result@1:<nil> result@2:<nil> mark@2:<nil> label@5:<nil> result@5:<nil> result@6:result at 6 is damaged]"
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
	if !a.deferred || !b.deferred {
		t.Errorf("deferred: first input %v, second (fetched later) %v", a.deferred, b.deferred)
	}
	if err := c.Err(); err == nil || err.Error() != "result at 6 is damaged" {
		t.Errorf("Err() = %v, want the failed check's", err)
	}
	if a.checked != 3 || b.checked != 3 {
		t.Errorf("CheckResult reached the inputs %d and %d times, want 3 and 3 (not for the mark)", a.checked, b.checked)
	}
}
