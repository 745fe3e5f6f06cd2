package stream_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// bodyVal is one value of a test value set: insitu (word) or a block.
type bodyVal struct {
	inst    int32
	word    uint32
	vtype   uint8
	payload []byte
}

// bodySet is a test value set; numval < 0 makes an error set.
type bodySet struct {
	pmid   stream.PMID
	numval int32
	valfmt uint32
	vals   []bodyVal
}

// encodeBody encodes value sets as PCP lays out a result for a record of
// the given version: numpmid, the sets, then the value blocks, each
// padded to a word.
func encodeBody(version uint8, sets ...bodySet) []byte {
	size := 4
	for _, s := range sets {
		size += 8
		if s.numval >= 0 && len(s.vals) > 0 {
			size += 4 + 8*len(s.vals)
		}
	}
	var blocks []byte
	b := binary.BigEndian.AppendUint32(nil, uint32(len(sets)))
	for _, s := range sets {
		b = binary.BigEndian.AppendUint32(b, uint32(s.pmid))
		if s.numval < 0 {
			b = binary.BigEndian.AppendUint32(b, uint32(s.numval))
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s.vals)))
		if len(s.vals) == 0 {
			continue
		}
		b = binary.BigEndian.AppendUint32(b, s.valfmt)
		for _, v := range s.vals {
			b = binary.BigEndian.AppendUint32(b, uint32(v.inst))
			if s.valfmt == stream.ValInsitu {
				b = binary.BigEndian.AppendUint32(b, v.word)
				continue
			}
			b = binary.BigEndian.AppendUint32(b, stream.PointerBase(version)+uint32(size+len(blocks))/4)
			blocks = binary.BigEndian.AppendUint32(blocks, uint32(v.vtype)<<24|uint32(4+len(v.payload)))
			blocks = append(blocks, v.payload...)
			for len(blocks)%4 != 0 {
				blocks = append(blocks, '~')
			}
		}
	}
	return append(b, blocks...)
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func sampleSets() []bodySet {
	return []bodySet{
		{pmid: stream.NewPMID(1, 2, 3), valfmt: stream.ValInsitu, vals: []bodyVal{{inst: stream.InstNull, word: uint32(0xfffffffe)}}},
		{pmid: stream.NewPMID(1, 2, 4), valfmt: stream.ValDptr, vals: []bodyVal{
			{inst: 7, vtype: uint8(stream.TypeU64), payload: be64(1 << 63)},
			{inst: 9, vtype: uint8(stream.Type64), payload: be64(uint64(math.MaxUint64 - 41))}, // -42
		}},
		{pmid: stream.NewPMID(1, 2, 5), numval: -12345},
		{pmid: stream.NewPMID(1, 2, 6)}, // no values
		{pmid: stream.NewPMID(1, 2, 7), valfmt: stream.ValSptr, vals: []bodyVal{
			{inst: 0, vtype: uint8(stream.TypeDouble), payload: be64(math.Float64bits(2.5))},
			{inst: 1, vtype: uint8(stream.TypeFloat), payload: be32(math.Float32bits(-1.25))},
			{inst: 2, vtype: uint8(stream.TypeString), payload: []byte("text\x00")},
			{inst: 3, vtype: uint8(stream.TypeAggregate), payload: []byte{1, 2, 3}},
		}},
	}
}

func TestVSetsValues(t *testing.T) {
	for _, version := range []uint8{2, 3} {
		r := &stream.Result{Version: version, Body: encodeBody(version, sampleSets()...)}
		if err := r.Validate(); err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if r.NumPMID() != 5 {
			t.Fatalf("NumPMID %d", r.NumPMID())
		}
		it := r.VSets()
		var sets []stream.VSet
		for it.Next() {
			sets = append(sets, *it.VSet())
		}
		if it.Err() != nil || len(sets) != 5 {
			t.Fatalf("v%d: %d sets, %v", version, len(sets), it.Err())
		}
		if sets[2].NumVal != -12345 || sets[2].Values() != 0 || sets[3].NumVal != 0 || sets[3].Values() != 0 {
			t.Fatalf("v%d: error set %d, empty set %d", version, sets[2].NumVal, sets[3].NumVal)
		}

		v, err := sets[0].Value(0)
		if err != nil || !v.Insitu || sets[0].Inst(0) != stream.InstNull {
			t.Fatalf("insitu: %+v %v", v, err)
		}
		if i, _ := v.Int64(stream.Type32); i != -2 {
			t.Errorf("insitu as 32: %d", i)
		}
		if u, _ := v.Uint64(stream.TypeU32); u != 0xfffffffe {
			t.Errorf("insitu as U32: %d", u)
		}
		if _, err := v.Int64(stream.Type64); !errors.Is(err, stream.ErrValueType) {
			t.Errorf("insitu as 64: %v", err)
		}

		u64v, _ := sets[1].Value(0)
		if u, err := u64v.Uint64(stream.TypeU64); err != nil || u != 1<<63 || u64v.VType != uint8(stream.TypeU64) {
			t.Errorf("U64 block: %d %v", u, err)
		}
		if f, _ := u64v.Float64(stream.TypeU64); f != float64(1<<63) {
			t.Errorf("U64 as float: %v", f)
		}
		i64v, _ := sets[1].Value(1)
		if i, _ := i64v.Int64(stream.Type64); i != -42 || sets[1].Inst(1) != 9 {
			t.Errorf("64 block: %d", i)
		}
		if inst, w := sets[1].RawPair(1); inst != 9 || w < stream.PointerBase(version) {
			t.Errorf("RawPair: %d %d", inst, w)
		}

		d, _ := sets[4].Value(0)
		if f, _ := d.Float64(stream.TypeDouble); f != 2.5 {
			t.Errorf("double: %v", f)
		}
		fl, _ := sets[4].Value(1)
		if f, _ := fl.Float64(stream.TypeFloat); f != -1.25 {
			t.Errorf("float: %v", f)
		}
		if _, err := fl.Float64(stream.TypeDouble); err == nil {
			t.Error("a 4-byte block read as a double")
		}
		s, _ := sets[4].Value(2)
		if got := s.Bytes(stream.TypeString); string(got) != "text" {
			t.Errorf("string: %q", got)
		}
		a, _ := sets[4].Value(3)
		if got := a.Bytes(stream.TypeAggregate); !bytes.HasPrefix(got, []byte{1, 2, 3}) || len(got) != 3 {
			// vlen counts the header and the 3 bytes; padding is not part of it
			t.Errorf("aggregate: %v", got)
		}
	}
}

func TestAppendBodyConverts(t *testing.T) {
	v2 := &stream.Result{Version: 2, Body: encodeBody(2, sampleSets()...)}
	v3 := &stream.Result{Version: 3, Body: encodeBody(3, sampleSets()...)}
	prefix := []byte("keep")
	cases := []struct {
		from *stream.Result
		to   uint8
		want []byte
	}{
		{v2, 3, v3.Body}, {v3, 2, v2.Body}, {v2, 2, v2.Body}, {v3, 3, v3.Body},
		{v2, 0, v2.Body}, // anything below 3 is v2
	}
	for _, c := range cases {
		got, err := c.from.AppendBody(bytes.Clone(prefix), c.to)
		if err != nil {
			t.Fatalf("v%d->v%d: %v", c.from.Version, c.to, err)
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], c.want) {
			t.Fatalf("v%d->v%d: wrong body", c.from.Version, c.to)
		}
	}
	if !bytes.Equal(v2.Body, encodeBody(2, sampleSets()...)) {
		t.Fatal("AppendBody modified its receiver")
	}
	// A result with no pointer values is the same in both versions.
	insitu := &stream.Result{Version: 2, Body: encodeBody(2, sampleSets()[0], sampleSets()[2])}
	if got, _ := insitu.AppendBody(nil, 3); !bytes.Equal(got, insitu.Body) {
		t.Fatal("insitu body changed")
	}
	// A zero Version counts as v2.
	zero := &stream.Result{Body: v2.Body}
	if got, _ := zero.AppendBody(nil, 3); !bytes.Equal(got, v3.Body) {
		t.Fatal("Version 0 is not treated as 2")
	}
}

// TestAppendBodyBad: a body that does not frame, or whose pointers leave
// the range, is an error and appends nothing, however far the fast pass
// got before finding it.
func TestAppendBodyBad(t *testing.T) {
	good := encodeBody(2, sampleSets()...)
	cut := &stream.Result{Version: 2, Body: good[:40]} // inside the value sets
	huge := &stream.Result{Version: 2, Body: append([]byte{0x7f, 0, 0, 0}, good[4:]...)}
	for name, r := range map[string]*stream.Result{"cut": cut, "numpmid": huge} {
		got, err := r.AppendBody([]byte("keep"), 3)
		if err == nil || string(got) != "keep" {
			t.Errorf("%s: %q, %v; want an error and nothing appended", name, got, err)
		}
	}
}

func TestResultClone(t *testing.T) {
	r := &stream.Result{T: stream.Timestamp{Sec: 1, Nsec: 2}, Version: 3, Body: encodeBody(3, sampleSets()...)}
	c := r.Clone()
	if c.T != r.T || c.Version != 3 || !bytes.Equal(c.Body, r.Body) {
		t.Fatal("clone differs")
	}
	r.Body[0] = 0xff
	if c.Body[0] == 0xff {
		t.Fatal("clone shares the body")
	}
	if stream.CloneRecord(r).(*stream.Result).Body[0] != 0xff {
		t.Fatal("CloneRecord of a result")
	}
}

// hostileBodies are damaged result bodies, each with what must notice.
func hostileBodies() []struct {
	name    string
	version uint8
	body    []byte
} {
	good := encodeBody(3, sampleSets()...)
	ptr := func(b []byte, off int, w uint32) []byte {
		b = bytes.Clone(b)
		binary.BigEndian.PutUint32(b[off:], w)
		return b
	}
	// Offsets in good: numpmid 0; set 0 at 4 (pmid, numval, valfmt, inst,
	// value); set 1 at 24: valfmt 32, pairs at 36: pointer words at 40, 48.
	blk := int(binary.BigEndian.Uint32(good[40:])-stream.PointerBase(3)) * 4
	return []struct {
		name    string
		version uint8
		body    []byte
	}{
		{"empty", 3, nil},
		{"three bytes", 3, []byte{0, 0, 0}},
		{"negative numpmid", 3, be32(0x80000000)},
		{"numpmid beyond the body", 3, good[:24]},
		{"huge numpmid", 3, ptr(good, 0, math.MaxInt32)},
		{"vset header cut", 3, good[:28]},
		{"valfmt cut", 3, good[:4+20+8]},
		{"pairs cut", 3, good[:4+20+12+12]},
		{"huge numval", 3, ptr(good, 28, math.MaxInt32)},
		{"pointer before the body", 3, ptr(good, 40, 5)},
		{"pointer zero", 3, ptr(good, 40, 0)},
		{"pointer beyond the body", 3, ptr(good, 40, 1<<20)},
		{"pointer max", 3, ptr(good, 40, math.MaxUint32)},
		{"pointer max v2", 2, ptr(encodeBody(2, sampleSets()...), 40, math.MaxUint32)},
		{"pointer to the last word", 3, ptr(good, 40, stream.PointerBase(3)+uint32(len(good))/4-1)},
		{"block length zero", 3, ptr(good, blk, uint32(stream.TypeU64)<<24)},
		{"block length 3", 3, ptr(good, blk, uint32(stream.TypeU64)<<24|3)},
		{"block length beyond the body", 3, ptr(good, blk, uint32(stream.TypeU64)<<24|0xffffff)},
		// Bounds at the edge: the block ends one byte, and four bytes,
		// past the body.
		{"block one byte past the end", 3, ptr(good, blk, uint32(stream.TypeU64)<<24|uint32(len(good)-blk+1))},
		{"block four bytes past the end", 3, ptr(good, blk, uint32(stream.TypeU64)<<24|uint32(len(good)-blk+4))},
	}
}

func TestHostileBodies(t *testing.T) {
	for _, c := range hostileBodies() {
		r := &stream.Result{Version: c.version, Body: c.body}
		err := r.Validate()
		if err == nil {
			t.Errorf("%s: Validate accepts it", c.name)
			continue
		}
		var be *stream.BodyError
		if !errors.As(err, &be) || be.Offset < 0 || be.Offset > len(c.body) {
			t.Errorf("%s: error %v (%T) has no offset in the body", c.name, err, err)
		}
		// Walking it reports the error and never panics.
		found := false
		it := r.VSets()
		for it.Next() {
			vs := it.VSet()
			for i := 0; i < vs.Values(); i++ {
				vs.Inst(i)
				vs.RawPair(i)
				if v, err := vs.Value(i); err != nil {
					found = true
				} else {
					v.Int64(stream.Type64)
					v.Float64(stream.TypeDouble)
					v.Bytes(stream.TypeString)
				}
			}
		}
		if it.Err() == nil && !found {
			t.Errorf("%s: neither VSets nor Value notices", c.name)
		}
		// Conversion fails without panicking, or succeeds only for damage
		// it cannot see (a pointer that still fits 32 bits).
		for _, to := range []uint8{2, 3} {
			out, err := r.AppendBody([]byte("x"), to)
			if err != nil && string(out) != "x" {
				t.Errorf("%s: failed AppendBody left %d bytes behind", c.name, len(out)-1)
			}
		}
		if strings.HasPrefix(c.name, "pointer ") && c.name != "pointer to the last word" && be.Offset != 40 {
			t.Errorf("%s: offset %d, want 40, where the pointer is", c.name, be.Offset)
		}
		t.Logf("%s: %v", c.name, err)
	}
	// A pointer that would overflow or go negative is refused by the
	// conversion itself.
	for _, c := range hostileBodies() {
		if c.name != "pointer max v2" && c.name != "pointer zero" {
			continue
		}
		to := uint8(5) - c.version
		if c.name == "pointer zero" {
			to = 2
		}
		if _, err := (&stream.Result{Version: c.version, Body: c.body}).AppendBody(nil, to); err == nil {
			t.Errorf("%s: converted to v%d", c.name, to)
		}
	}
}

func TestValueTypeErrors(t *testing.T) {
	short := stream.Value{Payload: []byte{1, 2}}
	for _, typ := range []stream.Type{stream.Type32, stream.TypeU32, stream.Type64, stream.TypeU64, stream.TypeFloat, stream.TypeDouble, stream.TypeString} {
		if _, err := short.Int64(typ); err == nil && typ != stream.TypeString {
			t.Errorf("Int64(%d) of 2 bytes", typ)
		}
		if _, err := short.Float64(typ); err == nil {
			t.Errorf("Float64(%d) of 2 bytes", typ)
		}
	}
	insitu := stream.Value{Insitu: true, Word: math.Float32bits(1.5)}
	if f, err := insitu.Float64(stream.TypeFloat); err != nil || f != 1.5 {
		t.Errorf("insitu float: %v %v", f, err)
	}
	if _, err := insitu.Float64(stream.TypeDouble); err == nil {
		t.Error("insitu double")
	}
	if _, err := insitu.Uint64(stream.TypeU64); err != nil {
		t.Error("insitu U64 (PCP never writes one, but it is a value)")
	}
}

// FuzzResultBody: no body makes VSets, Value, Validate or AppendBody
// panic, and a body that Validate accepts converts to the other version
// and back unchanged.
func FuzzResultBody(f *testing.F) {
	f.Add(uint8(3), encodeBody(3, sampleSets()...))
	f.Add(uint8(2), encodeBody(2, sampleSets()...))
	// 64-bit values in blocks one after the other, as PCP lays them out:
	// Validate's quick check of eight at a time.
	even := bodySet{pmid: stream.NewPMID(1, 2, 8), valfmt: stream.ValDptr}
	for i := 0; i < 19; i++ {
		even.vals = append(even.vals, bodyVal{inst: int32(i), vtype: uint8(stream.TypeU64), payload: be64(uint64(i) << 40)})
	}
	f.Add(uint8(3), encodeBody(3, append(sampleSets(), even)...))
	f.Add(uint8(2), encodeBody(2, even))
	for _, c := range hostileBodies() {
		f.Add(c.version, c.body)
	}
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		r := &stream.Result{Version: version, Body: body}
		r.NumPMID()
		walkErr := false
		var walked []stream.PMID
		it := r.VSets()
		for it.Next() {
			vs := it.VSet()
			walked = append(walked, vs.PMID)
			for i := 0; i < vs.Values(); i++ {
				vs.Inst(i)
				v, err := vs.Value(i)
				if err != nil {
					walkErr = true
					continue
				}
				for _, typ := range []stream.Type{stream.Type32, stream.TypeU32, stream.Type64, stream.TypeU64, stream.TypeFloat, stream.TypeDouble} {
					v.Int64(typ)
					v.Uint64(typ)
					v.Float64(typ)
				}
				v.Bytes(stream.TypeString)
			}
		}
		if pmids, err := r.AppendPMIDs(nil); (err == nil) != (it.Err() == nil) {
			t.Fatalf("AppendPMIDs says %v, the walk %v", err, it.Err())
		} else if err == nil && !slices.Equal(pmids, walked) {
			t.Fatalf("AppendPMIDs gives %v, the walk %v", pmids, walked)
		}
		verr := r.Validate()
		if verr == nil && (walkErr || it.Err() != nil) {
			t.Fatalf("Validate passes a body that the walk rejects: %v", it.Err())
		}
		if ok := stream.WalkOK(r); (verr == nil) != ok {
			t.Fatalf("Validate says %v; the walk with libpcp's layout rule computed apart says ok=%v", verr, ok)
		}
		other := uint8(2)
		if version < 3 {
			other = 3
		}
		mid, err := r.AppendBody(nil, other)
		if verr != nil {
			return
		}
		if err != nil {
			t.Fatalf("valid body does not convert to v%d: %v", other, err)
		}
		m := &stream.Result{Version: other, Body: mid}
		if err := m.Validate(); err != nil {
			t.Fatalf("converted body is not valid: %v", err)
		}
		back, err := m.AppendBody(nil, version)
		if err != nil {
			t.Fatalf("converting back: %v", err)
		}
		if !bytes.Equal(back, body) {
			t.Fatalf("v%d->v%d->v%d changes the body", version, other, version)
		}
	})
}

func benchBody(version uint8) *stream.Result {
	var sets []bodySet
	for i := 0; i < 24; i++ {
		s := bodySet{pmid: stream.NewPMID(60, uint32(i), 1), valfmt: stream.ValDptr}
		if i%3 == 0 {
			s.valfmt = stream.ValInsitu
		}
		for j := 0; j < 1+3*(i%2); j++ {
			s.vals = append(s.vals, bodyVal{inst: int32(j), word: uint32(j), vtype: uint8(stream.TypeU64), payload: be64(uint64(i))})
		}
		sets = append(sets, s)
	}
	return &stream.Result{Version: version, Body: encodeBody(version, sets...)}
}

func BenchmarkVSetsValues(b *testing.B) {
	r := benchBody(3)
	b.SetBytes(int64(len(r.Body)))
	b.ReportAllocs()
	var sum uint64
	for i := 0; i < b.N; i++ {
		it := r.VSets()
		for it.Next() {
			vs := it.VSet()
			for j := 0; j < vs.Values(); j++ {
				v, _ := vs.Value(j)
				u, _ := v.Uint64(stream.TypeU64)
				sum += u
			}
		}
	}
	_ = sum
}

func BenchmarkValidate(b *testing.B) {
	r := benchBody(3)
	b.SetBytes(int64(len(r.Body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateU64: a body as the bench archive's, 64-bit pointer
// values (24 sets of 1 to 50 instances), where Validate checks every block.
func BenchmarkValidateU64(b *testing.B) {
	var sets []bodySet
	for i := 0; i < 24; i++ {
		s := bodySet{pmid: stream.NewPMID(60, uint32(i), 1), valfmt: stream.ValDptr}
		for j := 0; j < 1+(i*7)%50; j++ {
			s.vals = append(s.vals, bodyVal{inst: int32(j), word: uint32(j), vtype: uint8(stream.TypeU64), payload: be64(uint64(i * j))})
		}
		sets = append(sets, s)
	}
	r := &stream.Result{Version: 3, Body: encodeBody(3, sets...)}
	b.SetBytes(int64(len(r.Body)))
	for i := 0; i < b.N; i++ {
		if err := r.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBodyV2toV3(b *testing.B) {
	r := benchBody(2)
	buf := make([]byte, 0, len(r.Body))
	b.SetBytes(int64(len(r.Body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var err error
		if buf, err = r.AppendBody(buf[:0], 3); err != nil {
			b.Fatal(err)
		}
	}
}
