package stream

import (
	"strings"
	"testing"
)

type locatedSlice struct{ *SliceIterator }

func (l locatedSlice) Where() (string, int64, bool) { return "x.0", int64(100 * l.i), true }

func describedResult(t *testing.T, sec int64, pmids ...PMID) *Result {
	t.Helper()
	var b ResultBuilder
	for _, p := range pmids {
		b.Add(p, Type32, Val{Inst: -1, I: 1})
	}
	r := new(Result)
	r.Version = 2
	if err := b.Build(Timestamp{Sec: sec}, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDescribedF1: a result whose metric has no descriptor before it stops
// the stream with an error naming where it was read; results of described
// metrics, repeated or in a new order, pass.
func TestDescribedF1(t *testing.T) {
	recs := []Record{
		&Label{Version: 2},
		&Desc{PMID: 1}, &Desc{PMID: 2},
		describedResult(t, 1, 1, 2),
		describedResult(t, 2, 1, 2),
		describedResult(t, 3, 2),
		describedResult(t, 4, 2, 1),
		&Desc{PMID: 3},
		describedResult(t, 5, 2, 1, 3),
		describedResult(t, 6, 2, 1, 3, 4),
		describedResult(t, 7, 1),
	}
	it := Described(locatedSlice{FromSlice(recs)})
	n := 0
	for it.Next() {
		n++
	}
	if n != 9 {
		t.Errorf("passed %d records, want 9 (up to the result with metric 0.0.4)", n)
	}
	err := it.Err()
	if err == nil || !strings.Contains(err.Error(), "x.0: offset 900: ") || !strings.Contains(err.Error(), "no descriptor for metric 0.0.4") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := As[Locator](it); !ok {
		t.Error("Described hides its source's Locator")
	}
}

// TestDescribedSameShape: a result as long as the one before it, with an
// undescribed metric where that one had a described metric, is caught.
func TestDescribedSameShape(t *testing.T) {
	recs := []Record{
		&Label{Version: 2},
		&Desc{PMID: 1}, &Desc{PMID: 2},
		describedResult(t, 1, 1, 2),
		describedResult(t, 2, 1, 5),
	}
	it := Described(FromSlice(recs))
	for it.Next() {
	}
	if err := it.Err(); err == nil || !strings.Contains(err.Error(), "no descriptor for metric 0.0.5") {
		t.Fatalf("err = %v, want metric 0.0.5 undescribed", err)
	}
}

// TestDescribedF6: a delta instance domain record with no full record of
// its domain before it is an error naming where it was read.
func TestDescribedF6(t *testing.T) {
	recs := []Record{
		&Label{Version: 3},
		&InDom{InDom: 7, Encoding: InDomFull, Insts: []int32{1}, Names: []string{"a"}},
		&InDom{InDom: 7, Encoding: InDomDelta, Insts: []int32{2}, Names: []string{"b"}, Deleted: []bool{false}},
		&InDom{InDom: 8, Encoding: InDomDelta, Insts: []int32{2}, Names: []string{"b"}, Deleted: []bool{false}},
	}
	it := Described(locatedSlice{FromSlice(recs)})
	n := 0
	for it.Next() {
		n++
	}
	if err := it.Err(); n != 3 || err == nil || !strings.Contains(err.Error(), "x.0: offset 300: delta record for instance domain") {
		t.Fatalf("%d records, err = %v", n, err)
	}
}

// metaSlice is a source with a pipe stream's METADATA frame.
type metaSlice struct {
	locatedSlice
	meta []Record
}

func (m metaSlice) Metadata() ([]Record, bool) { return m.meta, m.meta != nil }

// TestDescribedDescChange: a descriptor that differs from an earlier one
// of its metric, among the records or in a stream's METADATA frame (the
// hostile campaign, seed 19: a flipped bit in a descriptor frame made
// pcpcat -m refuse the stream and pcpcat -o copy it without a word).
func TestDescribedDescChange(t *testing.T) {
	d := &Desc{PMID: NewPMID(1, 2, 3), Type: TypeU32, InDom: 7, Sem: SemCounter}
	changed := *d
	changed.InDom = 1048583
	same := *d
	same.Names = []string{"another.name"}
	for _, c := range []struct {
		name string
		meta []Record
		recs []Record
		n    int
		want string
	}{
		{"two records", nil, []Record{&Label{Version: 3}, d, &changed}, 2, "x.0: offset 200: descriptor of metric 1.2.3: the instance domain changed"},
		{"the METADATA frame", []Record{d}, []Record{&Label{Version: 3}, &changed}, 1, "x.0: offset 100: descriptor of metric 1.2.3: the instance domain changed"},
		{"the same, named again", []Record{d}, []Record{&Label{Version: 3}, &same, d}, 3, ""},
		{"a result described only by the METADATA frame", []Record{d}, []Record{&Label{Version: 3}, describedResult(t, 1, d.PMID)}, 1, "x.0: offset 100: result at"},
	} {
		it := Described(metaSlice{locatedSlice{FromSlice(c.recs)}, c.meta})
		n := 0
		for it.Next() {
			n++
		}
		err := it.Err()
		if n != c.n || (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %d records, err = %v; want %d and %q", c.name, n, err, c.n, c.want)
		}
	}
}
