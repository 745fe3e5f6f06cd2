package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

func rebaseSample(t *testing.T) Result {
	t.Helper()
	var b ResultBuilder
	b.Add(NewPMID(1, 0, 1), TypeU32, Val{Inst: -1, U: 7})
	b.Add(NewPMID(1, 0, 2), TypeString, Val{Inst: 0, S: "zero"}, Val{Inst: 1, S: "one"}, Val{Inst: 2, S: "two!"})
	b.AddError(NewPMID(1, 0, 4), -12345)
	b.Add(NewPMID(1, 0, 3), TypeU64, Val{Inst: 5, U: 1 << 40}, Val{Inst: 6, U: 3})
	var r Result
	if err := b.Build(Timestamp{Sec: 1}, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// rebuild re-encodes every value set of r (renumbered by f) with
// AppendRebased and AppendBlocks, dropping the set with item drop.
func rebuild(t *testing.T, r *Result, drop uint32, f func(PMID) PMID) []byte {
	t.Helper()
	var sets []VSet
	it := r.VSets()
	for it.Next() {
		if it.VSet().PMID.Item() != drop {
			sets = append(sets, *it.VSet())
		}
	}
	size := 4
	for _, vs := range sets {
		size += 8
		if vs.NumVal > 0 {
			size += 4 + 8*int(vs.NumVal)
		}
	}
	ptr := PointerBase(r.Version) + uint32(size/4)
	body := binary.BigEndian.AppendUint32(nil, uint32(len(sets)))
	var err error
	for i := range sets {
		if body, ptr, err = sets[i].AppendRebased(body, f(sets[i].PMID), ptr); err != nil {
			t.Fatal(err)
		}
	}
	if len(body) != size {
		t.Fatalf("value sets take %d bytes, want %d", len(body), size)
	}
	for i := range sets {
		if body, err = sets[i].AppendBlocks(body, '~'); err != nil {
			t.Fatal(err)
		}
	}
	if want := int(ptr-PointerBase(r.Version)) * 4; len(body) != want {
		t.Fatalf("body is %d bytes, pointers say %d", len(body), want)
	}
	return body
}

func TestAppendRebasedMatchesSelect(t *testing.T) {
	r := rebaseSample(t)
	for _, version := range []uint8{3, 2} {
		src := r
		if version == 2 {
			body, err := r.AppendBody(nil, 2)
			if err != nil {
				t.Fatal(err)
			}
			src = Result{T: r.T, Version: 2, Body: body}
		}
		same := func(p PMID) PMID { return p }
		if got := rebuild(t, &src, 99, same); !bytes.Equal(got, src.Body) {
			t.Errorf("v%d: a copy of every set differs from the input", version)
		}
		got := rebuild(t, &src, 1, same)
		want, _, err := src.AppendSelected(nil, func(p PMID) Pick { return Pick{Keep: p.Item() != 1} })
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("v%d: without the first set:\n got %x\nwant %x", version, got, want)
		}
		// Renumbered: only the PMID words change.
		got = rebuild(t, &src, 99, func(p PMID) PMID { return NewPMID(9, p.Cluster(), p.Item()) })
		out := Result{Version: version, Body: got}
		if err := out.Validate(); err != nil {
			t.Fatal(err)
		}
		it := out.VSets()
		for it.Next() {
			if it.VSet().PMID.Domain() != 9 {
				t.Errorf("v%d: set %s not renumbered", version, it.VSet().PMID)
			}
		}
	}
}

// TestAppendBlocksNormalizes: blocks out of order, or padded with other
// bytes, come out in PCP's layout.
func TestAppendBlocksNormalizes(t *testing.T) {
	r := rebaseSample(t)
	want := rebuild(t, &r, 99, func(p PMID) PMID { return p })
	// Swap the pointers of the first two strings ("zero" and "one", 12 and
	// 8 bytes with their headers): the blocks are no longer in pair order.
	swapped := append([]byte(nil), r.Body...)
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.PMID.Item() != 2 {
			continue
		}
		a, b := vs.off+4, vs.off+12
		wa, wb := binary.BigEndian.Uint32(swapped[a:]), binary.BigEndian.Uint32(swapped[b:])
		// Move the blocks too, so that each pointer still finds its value.
		oa, ob := int(wa-vs.base)*4, int(wb-vs.base)*4
		blkA := append([]byte(nil), swapped[oa:oa+12]...)
		blkB := append([]byte(nil), swapped[ob:ob+8]...)
		copy(swapped[oa:], blkB)
		copy(swapped[oa+8:], blkA)
		binary.BigEndian.PutUint32(swapped[b:], wa)
		binary.BigEndian.PutUint32(swapped[a:], wa+2)
	}
	sr := Result{Version: r.Version, Body: swapped}
	if err := sr.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := rebuild(t, &sr, 99, func(p PMID) PMID { return p }); !bytes.Equal(got, want) {
		t.Errorf("out-of-order blocks:\n got %x\nwant %x", got, want)
	}
	// Zero padding instead of '~'.
	zeroed := bytes.ReplaceAll(r.Body, []byte("~"), []byte{0})
	zr := Result{Version: r.Version, Body: zeroed}
	if got := rebuild(t, &zr, 99, func(p PMID) PMID { return p }); !bytes.Equal(got, want) {
		t.Errorf("zero padding:\n got %x\nwant %x", got, want)
	}
}

func TestAppendRebasedBadPointer(t *testing.T) {
	r := rebaseSample(t)
	bad := append([]byte(nil), r.Body...)
	it := r.VSets()
	for it.Next() {
		if vs := it.VSet(); vs.PMID.Item() == 3 {
			binary.BigEndian.PutUint32(bad[vs.off+4:], 1<<30)
		}
	}
	br := Result{Version: r.Version, Body: bad}
	it = br.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.PMID.Item() != 3 {
			continue
		}
		dst := []byte("x")
		out, _, err := vs.AppendRebased(dst, vs.PMID, 100)
		if err == nil || !strings.Contains(err.Error(), "beyond the record") || len(out) != 1 {
			t.Errorf("AppendRebased: err %v, %d bytes", err, len(out))
		}
		out, err = vs.AppendBlocks(dst, '~')
		if err == nil || len(out) != 1 {
			t.Errorf("AppendBlocks: err %v, %d bytes", err, len(out))
		}
	}
}

func BenchmarkAppendRebased(b *testing.B) {
	var rb ResultBuilder
	vals := make([]Val, 512)
	for i := range vals {
		vals[i] = Val{Inst: int32(i), U: uint64(i) << 33}
	}
	rb.Add(NewPMID(1, 0, 1), TypeU64, vals...)
	var r Result
	if err := rb.Build(Timestamp{Sec: 1}, &r); err != nil {
		b.Fatal(err)
	}
	it := r.VSets()
	it.Next()
	vs := it.VSet()
	dst := make([]byte, 0, 2*len(r.Body))
	b.SetBytes(int64(len(r.Body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d, _, _ := vs.AppendRebased(dst[:0], vs.PMID, 1000)
		d, _ = vs.AppendBlocks(d, '~')
		dst = d
	}
}

// TestEvenRebaseKeepsValues: when the pointers step evenly but a block in
// the middle says it is shorter than the step, the quick path moves the
// blocks as one span; every pointer of the copy still finds what it found
// in the input.
func TestEvenRebaseKeepsValues(t *testing.T) {
	var b ResultBuilder
	b.Add(NewPMID(1, 0, 1), TypeU64, Val{Inst: 1, U: 11}, Val{Inst: 2, U: 22}, Val{Inst: 3, U: 33}, Val{Inst: 4, U: 44})
	var r Result
	if err := b.Build(Timestamp{Sec: 1}, &r); err != nil {
		t.Fatal(err)
	}
	body := append([]byte(nil), r.Body...)
	it := r.VSets()
	it.Next()
	vs := it.VSet()
	w := binary.BigEndian.Uint32(body[vs.off+8+4:]) // the second pointer
	off := int(w-vs.base) * 4
	binary.BigEndian.PutUint32(body[off:], binary.BigEndian.Uint32(body[off:])&^0xffffff|8)
	in := Result{Version: r.Version, Body: body}
	// libpcp refuses such a body (its blocks leave a gap), and so does
	// Validate: no reader passes it on. The rebase must still not lose a
	// value of it.
	if err := in.Validate(); err == nil {
		t.Fatal("Validate passes a body whose value blocks leave a gap")
	}
	if err := in.walkValues(); err != nil {
		t.Fatal(err)
	}
	out := Result{Version: r.Version, Body: rebuild(t, &in, 99, func(p PMID) PMID { return p })}
	if err := out.walkValues(); err != nil {
		t.Fatal(err)
	}
	values := func(r *Result) (got []string) {
		it := r.VSets()
		for it.Next() {
			vs := it.VSet()
			for i := 0; i < int(vs.NumVal); i++ {
				v, err := vs.Value(i)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d:%x", vs.Inst(i), v.Payload))
			}
		}
		return got
	}
	if g, w := values(&out), values(&in); strings.Join(g, " ") != strings.Join(w, " ") {
		t.Errorf("values %v, want %v", g, w)
	}
}

// TestEvenRebaseFallsBack: pointers that stop stepping evenly part-way
// (blocks out of pair order) undo the quick path's work and take the full
// walk, which lays the blocks out in order.
func TestEvenRebaseFallsBack(t *testing.T) {
	var b ResultBuilder
	// A set before it, dropped, so that the pointers move (and a pointer
	// left moved by the quick path would find one of these blocks).
	b.Add(NewPMID(1, 0, 9), TypeString, Val{Inst: 1, S: "thirteen char"}, Val{Inst: 2, S: "x"})
	b.Add(NewPMID(1, 0, 1), TypeU64, Val{Inst: 1, U: 11}, Val{Inst: 2, U: 22}, Val{Inst: 3, U: 33})
	var r Result
	if err := b.Build(Timestamp{Sec: 1}, &r); err != nil {
		t.Fatal(err)
	}
	want := rebuild(t, &r, 9, func(p PMID) PMID { return p })
	// Swap the last two pointers and their blocks.
	body := append([]byte(nil), r.Body...)
	it := r.VSets()
	it.Next()
	it.Next()
	vs := it.VSet()
	a, c := vs.off+8+4, vs.off+16+4
	wa, wc := binary.BigEndian.Uint32(body[a:]), binary.BigEndian.Uint32(body[c:])
	oa, oc := int(wa-vs.base)*4, int(wc-vs.base)*4
	blkA := append([]byte(nil), body[oa:oa+12]...)
	copy(body[oa:], body[oc:oc+12])
	copy(body[oc:], blkA)
	binary.BigEndian.PutUint32(body[a:], wc)
	binary.BigEndian.PutUint32(body[c:], wa)
	in := Result{Version: r.Version, Body: body}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := rebuild(t, &in, 9, func(p PMID) PMID { return p }); !bytes.Equal(got, want) {
		t.Errorf("out-of-order blocks:\n got %x\nwant %x", got, want)
	}
}
