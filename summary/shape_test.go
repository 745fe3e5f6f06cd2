package summary

import (
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// TestShapeChurn: instances that come or go between a metric's results
// count once each; values, instances and bytes (8 + 4 + 8 per value for
// insitu values, plus each block rounded up to 4) are counted per metric.
func TestShapeChurn(t *testing.T) {
	const p, q = stream.PMID(1<<22 | 1), stream.PMID(1<<22 | 2)
	sh := newShape()
	var rb stream.ResultBuilder
	var r stream.Result
	for _, insts := range [][]int32{{1, 2, 3}, {2, 3, 4}, {2, 3, 4}, {5}} {
		rb.Reset()
		var vals []stream.Val
		for _, i := range insts {
			vals = append(vals, stream.Val{Inst: i, U: 7})
		}
		rb.Add(p, stream.TypeU32, vals...)
		rb.Add(q, stream.TypeString, stream.Val{Inst: -1, S: "abcde"}) // 4+6 -> a 12-byte block
		if err := rb.Build(stream.Timestamp{Sec: 1}, &r); err != nil {
			t.Fatal(err)
		}
		if err := sh.add(&r); err != nil {
			t.Fatal(err)
		}
	}
	m := sh.metrics[p]
	// {1,2,3} -> {2,3,4}: 4 came, 1 went; then none; then 5 came, 2 3 4 went.
	if m.churn != 6 || len(m.last) != 5 || m.values != 10 || m.records != 4 {
		t.Errorf("churn %d, instances %d, values %d, records %d; want 6, 5, 10, 4", m.churn, len(m.last), m.values, m.records)
	}
	if want := int64(4*(8+4) + 8*10); m.bytes != want {
		t.Errorf("bytes %d, want %d", m.bytes, want)
	}
	if s := sh.metrics[q]; s.bytes != 4*(8+4+8+12) || s.churn != 0 {
		t.Errorf("string metric: bytes %d churn %d, want %d and 0", s.bytes, s.churn, 4*(8+4+8+12))
	}
	if sh.results != 4 || sh.values != 14 {
		t.Errorf("results %d values %d, want 4 and 14", sh.results, sh.values)
	}
}

// TestIndomChurn: an instance domain's versions {1,2} {2,3} {2,3} {}:
// 1 went and 3 came, nothing, then 2 and 3 went: churn 4, 3 instances.
func TestIndomChurn(t *testing.T) {
	sets := []*stream.InstanceSet{{Insts: []int32{1, 2}}, {Insts: []int32{2, 3}}, {Insts: []int32{3, 2}}, {}}
	if r, n, c := indomChurn(sets); r != 4 || n != 3 || c != 4 {
		t.Errorf("records %d, instances %d, churn %d; want 4, 3, 4", r, n, c)
	}
}
