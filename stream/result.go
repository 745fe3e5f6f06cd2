package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Result is one data record (a pmResult) in PCP's encoding.
//
// Body holds the record from numpmid to the end of the last value block,
// without the length words and the timestamp. Pointer values inside Body
// count 32-bit words from two words before the on-disk record's length word
// (a relic of PCP's PDU header), so they depend on the size of the header
// the record was written with: Version says which (2: 8-byte timestamp,
// 3: 12-byte timestamp). AppendBody converts between the two.
//
// A Result never decodes itself: VSets walks the encoded form in place.
// Body may alias a reader's buffer: it is valid until the iterator that
// produced the Result moves on. Clone it to keep it.
type Result struct {
	T       Timestamp
	Version uint8
	Body    []byte
}

// Kind implements Record.
func (*Result) Kind() Kind { return KindResult }

// Time implements Record.
func (r *Result) Time() Timestamp { return r.T }

// Clone returns a deep copy of r.
func (r *Result) Clone() *Result {
	return &Result{T: r.T, Version: r.Version, Body: append([]byte(nil), r.Body...)}
}

// Value formats (valfmt).
const (
	ValInsitu = 0 // PM_VAL_INSITU: 32-bit value stored in place
	ValDptr   = 1 // PM_VAL_DPTR: pointer to a value block
	ValSptr   = 2 // PM_VAL_SPTR: pointer to a value block
)

// PointerBase returns, for a record version, the word index that the first
// byte of a Body has when pointer values are resolved.
func PointerBase(version uint8) uint32 {
	if version >= 3 {
		return 6 // 2 words before len + len + sec(2 words) + nsec
	}
	return 5 // 2 words before len + len + sec + usec
}

// BodyError is a structural error inside a result body. Offset is relative
// to the start of Body; the reader adds the record's file offset.
type BodyError struct {
	Offset int
	Msg    string
}

func (e *BodyError) Error() string { return fmt.Sprintf("body offset %d: %s", e.Offset, e.Msg) }

// NumPMID returns the number of value sets (0 for a malformed body).
func (r *Result) NumPMID() int {
	if len(r.Body) < 4 {
		return 0
	}
	return int(int32(binary.BigEndian.Uint32(r.Body)))
}

// VSet is one value set of a result, viewed in place.
type VSet struct {
	PMID   PMID
	NumVal int32 // < 0 is a PCP error code, the set then has no values
	ValFmt uint32
	pairs  []byte // NumVal (inst, value) pairs
	off    int    // offset of pairs in body
	body   []byte
	base   uint32
	run    blockRun // see AppendRebased
}

// Inst returns the instance of value i.
func (v *VSet) Inst(i int) int32 { return int32(binary.BigEndian.Uint32(v.pairs[8*i:])) }

// Value returns value i. It never panics: a pointer outside the body, or a
// block too short for its header, is an error.
func (v *VSet) Value(i int) (Value, error) {
	w := binary.BigEndian.Uint32(v.pairs[8*i+4:])
	if v.ValFmt == ValInsitu {
		return Value{Insitu: true, Word: w}, nil
	}
	blk, err := blockAt(v.body, v.base, w, v.off+8*i+4)
	if err != nil {
		return Value{}, err
	}
	return Value{Word: w, VType: blk[0], Payload: blk[4:]}, nil
}

// Block returns value i's value block, its 4-byte header (type, length)
// included, for a set whose values are not insitu. It is Value without the
// Value: a hot loop that reads blocks avoids copying that struct (which
// Go's compiler does through memory, stalling on store forwarding).
func (v *VSet) Block(i int) ([]byte, error) {
	w := binary.BigEndian.Uint32(v.pairs[8*i+4:])
	return blockAt(v.body, v.base, w, v.off+8*i+4)
}

// RawPair returns the raw instance and value words of value i (the value
// word is an insitu value or a pointer).
func (v *VSet) RawPair(i int) (inst int32, word uint32) {
	return int32(binary.BigEndian.Uint32(v.pairs[8*i:])), binary.BigEndian.Uint32(v.pairs[8*i+4:])
}

// Check checks that every pointer value of v addresses a value block
// inside the body, as Result.Validate does for every set.
func (v *VSet) Check() error {
	if v.NumVal <= 0 || v.ValFmt == ValInsitu {
		return nil
	}
	for i := 0; i < int(v.NumVal); i++ {
		if _, err := blockAt(v.body, v.base, binary.BigEndian.Uint32(v.pairs[8*i+4:]), v.off+8*i+4); err != nil {
			return err
		}
	}
	return nil
}

// Words64 appends to dst the first 8 payload bytes of each of v's value
// blocks, as big-endian 64-bit words: the values of a set of a 64-bit type
// (64, U64, DOUBLE), in one tight pass. It reports false, having appended
// some or none, when v's values are not all in blocks of at least 8
// payload bytes inside the body: the caller then reads them one by one
// (Value), which says what is wrong.
func (v *VSet) Words64(dst []uint64) ([]uint64, bool) {
	if v.NumVal <= 0 || v.ValFmt == ValInsitu {
		return dst, v.NumVal == 0
	}
	body := v.body
	base := uint64(v.base)
	blen := uint64(len(body))
	pairs := v.pairs
	for p := 4; p+4 <= len(pairs); p += 8 {
		w := uint64(binary.BigEndian.Uint32(pairs[p:]))
		off := (w - base) * 4 // wraps to a huge value when w < base
		if w < base || off+12 > blen {
			return dst, false
		}
		vlen := uint64(binary.BigEndian.Uint32(body[off:]) & 0xffffff)
		if vlen < 12 || off+vlen > blen {
			return dst, false
		}
		dst = append(dst, binary.BigEndian.Uint64(body[off+4:]))
	}
	return dst, true
}

// blockAt returns the value block that pointer w, found at offset at of
// body, points to.
func blockAt(body []byte, base, w uint32, at int) ([]byte, error) {
	if w < base {
		return nil, &BodyError{at, fmt.Sprintf("value pointer %d before the record body", w)}
	}
	off := uint64(w-base) * 4
	if off+4 > uint64(len(body)) {
		return nil, &BodyError{at, fmt.Sprintf("value pointer %d beyond the record (%d bytes)", w, len(body))}
	}
	hdr := binary.BigEndian.Uint32(body[off:])
	vlen := uint64(hdr & 0xffffff)
	if vlen < 4 || off+vlen > uint64(len(body)) {
		return nil, &BodyError{int(off), fmt.Sprintf("value block length %d does not fit the record", vlen)}
	}
	return body[off : off+vlen], nil
}

// Value is one value of a value set: an insitu 32-bit word, or a value
// block (VType is the block's type, Payload its bytes without the 4-byte
// header and including any padding).
type Value struct {
	Insitu  bool
	Word    uint32 // the insitu value, or the pointer word
	VType   uint8
	Payload []byte
}

// ErrValueType is returned when a value cannot be read as the requested type.
var ErrValueType = errors.New("value does not match the metric's type")

// Int64 reads the value as a signed integer of type t (32, U32, 64, U64).
func (v Value) Int64(t Type) (int64, error) {
	switch t {
	case Type32:
		if v.Insitu {
			return int64(int32(v.Word)), nil
		}
		if len(v.Payload) >= 4 {
			return int64(int32(binary.BigEndian.Uint32(v.Payload))), nil
		}
	case TypeU32:
		if v.Insitu {
			return int64(v.Word), nil
		}
		if len(v.Payload) >= 4 {
			return int64(binary.BigEndian.Uint32(v.Payload)), nil
		}
	case Type64, TypeU64:
		if !v.Insitu && len(v.Payload) >= 8 {
			return int64(binary.BigEndian.Uint64(v.Payload)), nil
		}
	}
	return 0, ErrValueType
}

// Uint64 reads a U64 (or any integer type reinterpreted as unsigned).
func (v Value) Uint64(t Type) (uint64, error) {
	if t == TypeU64 || t == TypeU32 {
		if v.Insitu {
			return uint64(v.Word), nil
		}
		if t == TypeU64 && len(v.Payload) >= 8 {
			return binary.BigEndian.Uint64(v.Payload), nil
		}
		if t == TypeU32 && len(v.Payload) >= 4 {
			return uint64(binary.BigEndian.Uint32(v.Payload)), nil
		}
		return 0, ErrValueType
	}
	i, err := v.Int64(t)
	return uint64(i), err
}

// Float64 reads a numeric value of type t as a float64.
func (v Value) Float64(t Type) (float64, error) {
	switch t {
	case TypeFloat:
		if v.Insitu {
			return float64(math.Float32frombits(v.Word)), nil
		}
		if len(v.Payload) >= 4 {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(v.Payload))), nil
		}
		return 0, ErrValueType
	case TypeDouble:
		if !v.Insitu && len(v.Payload) >= 8 {
			return math.Float64frombits(binary.BigEndian.Uint64(v.Payload)), nil
		}
		return 0, ErrValueType
	case TypeU64, TypeU32:
		u, err := v.Uint64(t)
		return float64(u), err
	}
	i, err := v.Int64(t)
	return float64(i), err
}

// Bytes returns the payload of a value block trimmed to the block's length
// (for strings, without the terminating NUL when there is one).
func (v Value) Bytes(t Type) []byte {
	p := v.Payload
	if t == TypeString {
		for i, c := range p {
			if c == 0 {
				return p[:i]
			}
		}
	}
	return p
}

// VSetIter walks the value sets of a result without allocating.
type VSetIter struct {
	body []byte
	base uint32
	pos  int
	left int
	cur  VSet
	err  error
}

// VSets returns an iterator over r's value sets.
func (r *Result) VSets() VSetIter {
	it := VSetIter{body: r.Body, base: PointerBase(r.Version)}
	if len(r.Body) < 4 {
		it.err = &BodyError{0, "result shorter than its numpmid field"}
		return it
	}
	n := int32(binary.BigEndian.Uint32(r.Body))
	if n < 0 {
		it.err = &BodyError{0, fmt.Sprintf("negative numpmid %d", n)}
		return it
	}
	it.left = int(n)
	it.pos = 4
	return it
}

// Offset returns where the next value set's header starts in the body
// (before Next): for Result.VSetAt, once the iterator has framed it.
func (it *VSetIter) Offset() int { return it.pos }

// Next advances to the next value set.
func (it *VSetIter) Next() bool {
	if it.err != nil || it.left == 0 {
		return false
	}
	b := it.body
	if it.pos+8 > len(b) {
		it.err = &BodyError{it.pos, "value set header runs past the end of the record"}
		return false
	}
	pmid := PMID(binary.BigEndian.Uint32(b[it.pos:]))
	numval := int32(binary.BigEndian.Uint32(b[it.pos+4:]))
	it.pos += 8
	it.cur = VSet{PMID: pmid, NumVal: numval, body: b, base: it.base}
	if numval > 0 {
		if it.pos+4 > len(b) {
			it.err = &BodyError{it.pos, "valfmt runs past the end of the record"}
			return false
		}
		it.cur.ValFmt = binary.BigEndian.Uint32(b[it.pos:])
		it.pos += 4
		need := int64(numval) * 8
		if int64(it.pos)+need > int64(len(b)) {
			it.err = &BodyError{it.pos, fmt.Sprintf("%d values of metric %s do not fit in the record", numval, pmid)}
			return false
		}
		it.cur.pairs = b[it.pos : it.pos+int(need)]
		it.cur.off = it.pos
		it.pos += int(need)
	}
	it.left--
	return true
}

// VSet returns the current value set; valid until the next call to Next.
func (it *VSetIter) VSet() *VSet { return &it.cur }

// Err returns the first structural error met.
func (it *VSetIter) Err() error { return it.err }

// Values returns the number of values in the set (0 for an error set).
func (v *VSet) Values() int {
	if v.NumVal < 0 {
		return 0
	}
	return int(v.NumVal)
}

// Validate walks the whole body and checks that every value set and every
// pointer value lies inside it, and that the body is laid out as libpcp's
// __pmDecodeResult requires (or every PCP tool refuses the record: pmdumplog
// fails its fetch, pmlogextract stops reading the volume there): value
// formats of 0, 1 or 2 only, and the value blocks starting right after
// the value sets and filling the rest of the body exactly. It runs on
// every record a reader passes along, so it is one tight loop over the
// bytes; only when something is wrong does the slower walk through VSets
// run, to say what.
func (r *Result) Validate() error {
	b := r.Body
	blen := uint64(len(b))
	if blen < 4 || int32(binary.BigEndian.Uint32(b)) < 0 {
		return r.describe()
	}
	n := int(binary.BigEndian.Uint32(b))
	base := PointerBase(r.Version)
	pos := uint64(4)
	// the first value block's offset, and the bytes all of them take
	// (each rounded up to whole words)
	minBlock, blocks := blen, uint64(0)
	for k := 0; k < n; k++ {
		if pos+8 > blen {
			return r.describe()
		}
		numval := int32(binary.BigEndian.Uint32(b[pos+4 : pos+8]))
		pos += 8
		if numval <= 0 {
			continue
		}
		end := pos + 4 + uint64(numval)*8 // the value format word, the values
		if end > blen {
			return r.describe()
		}
		valfmt := binary.BigEndian.Uint32(b[pos : pos+4])
		vals := b[pos+4 : end]
		pos = end
		if valfmt == ValInsitu {
			continue
		}
		if valfmt != ValDptr && valfmt != ValSptr {
			return r.describe()
		}
		if numval >= 8 && even12Check != nil {
			var first, groups uint64
			vals, first, groups = evenPrefix(b, vals, base)
			if groups > 0 {
				minBlock = min(minBlock, first)
				blocks += groups * 96
			}
		}
		// The pointer of each value, in a subslice that shrinks so that
		// the compiler drops its bounds checks: 8% of Validate's time.
		for len(vals) >= 8 {
			w := binary.BigEndian.Uint32(vals[4:8])
			vals = vals[8:]
			off := uint64(w-base) * 4
			if w < base || off+4 > blen {
				return r.describe()
			}
			vlen := uint64(binary.BigEndian.Uint32(b[off:]) & 0xffffff)
			// vlen < 4 wraps to a huge value: one test for both bounds.
			if vlen-4 > blen-off-4 {
				return r.describe()
			}
			minBlock = min(minBlock, off)
			blocks += (vlen + 3) &^ 3
		}
	}
	if pos != minBlock || pos+blocks != blen {
		if err := r.walkValues(); err != nil {
			return err
		}
		return &BodyError{int(pos), layoutMsg(pos, minBlock, blocks, blen)}
	}
	return nil
}

// layoutMsg says how a body whose values all lie inside it breaks
// libpcp's layout: its value sets end at pos, its first value block is at
// first (blen: none), and its value blocks take blocks bytes.
func layoutMsg(pos, first, blocks, blen uint64) string {
	switch {
	case first == blen:
		return fmt.Sprintf("the value sets end at byte %d of a %d-byte body; libpcp refuses the record", pos, blen)
	case first != pos:
		return fmt.Sprintf("the value blocks start at byte %d, not right after the value sets (byte %d); libpcp refuses the record", first, pos)
	}
	return fmt.Sprintf("the value blocks take %d bytes, but %d follow the value sets; libpcp refuses the record", blocks, blen-pos)
}

// even12Check, where the machine has it (rebase_amd64.go), checks groups
// of eight pairs from src that should point at consecutive 12-byte blocks
// from blocks, the first at word w, each block's header (as loaded from
// memory) hdr.
var even12Check func(src, blocks unsafe.Pointer, groups int, w, hdr uint32) bool

// evenPrefix is Validate's quick look at the values of a set (vals, the
// pairs, in the body b): where their blocks are 12 bytes each (the 64-bit
// types), one after the other in the order of the values, as PCP lays
// them out, whole groups of eight are checked at once, and the pairs left
// for the value-by-value loop are returned. Those groups are sound: each
// pointer is the one before it plus 3 words from a first one at or past
// base, each header says 12 bytes, and the last block ends inside b.
//
// It also returns the first block's offset and the number of groups
// checked (0: none; every pair is left to the loop).
func evenPrefix(b, vals []byte, base uint32) ([]byte, uint64, uint64) {
	g := len(vals) / 64
	w := binary.BigEndian.Uint32(vals[4:8])
	off := uint64(w-base) * 4
	if w < base || off+uint64(g)*96 > uint64(len(b)) || binary.BigEndian.Uint32(b[off:])&0xffffff != 12 {
		return vals, 0, 0
	}
	hdr := binary.NativeEndian.Uint32(b[off:])
	if !even12Check(unsafe.Pointer(unsafe.SliceData(vals)), unsafe.Pointer(&b[off]), g, w, hdr) {
		return vals, 0, 0
	}
	return vals[g*64:], off, uint64(g)
}

// AppendPMIDs appends the metric of each value set of r to dst, in order,
// in one tight pass over the value set headers (as Validate walks them),
// for a consumer that needs only which metrics a result holds. A body that
// does not frame gives the error VSets would.
func (r *Result) AppendPMIDs(dst []PMID) ([]PMID, error) {
	b := r.Body
	blen := uint64(len(b))
	if blen < 4 || int32(binary.BigEndian.Uint32(b)) < 0 {
		return dst, r.describe()
	}
	n := int(binary.BigEndian.Uint32(b))
	pos := uint64(4)
	for k := 0; k < n; k++ {
		if pos+8 > blen {
			return dst, r.describe()
		}
		dst = append(dst, PMID(binary.BigEndian.Uint32(b[pos:])))
		numval := int32(binary.BigEndian.Uint32(b[pos+4:]))
		pos += 8
		if numval > 0 {
			pos += 4 + uint64(numval)*8
		}
	}
	if pos > blen {
		return dst, r.describe()
	}
	return dst, nil
}

// describe finds the first structural error in r the slow way, value by
// value, for the message.
func (r *Result) describe() error {
	if err := r.walkValues(); err != nil {
		return err
	}
	return &BodyError{0, "malformed result"}
}

// walkValues is the slow walk: the first error met resolving every value.
func (r *Result) walkValues() error {
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.NumVal <= 0 || vs.ValFmt == ValInsitu {
			continue
		}
		for i := 0; i < int(vs.NumVal); i++ {
			if _, err := vs.Value(i); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

// movePointers adds delta to every pointer value in the result body b, in
// one tight pass over the value set headers (as Validate walks them). It
// reports false, with b partly changed, when the body does not frame or a
// pointer would leave the 32-bit range.
func movePointers(b []byte, delta int64) bool {
	blen := uint64(len(b))
	if blen < 4 || int32(binary.BigEndian.Uint32(b)) < 0 {
		return false
	}
	n := int(binary.BigEndian.Uint32(b))
	pos := uint64(4)
	for k := 0; k < n; k++ {
		if pos+8 > blen {
			return false
		}
		numval := int32(binary.BigEndian.Uint32(b[pos+4:]))
		pos += 8
		if numval <= 0 {
			continue
		}
		if pos+4 > blen {
			return false
		}
		insitu := binary.BigEndian.Uint32(b[pos:]) == ValInsitu
		pos += 4
		end := pos + uint64(numval)*8
		if end > blen {
			return false
		}
		if !insitu {
			for p := pos + 4; p < end; p += 8 {
				w := int64(binary.BigEndian.Uint32(b[p:])) + delta
				if w < 0 || w > math.MaxUint32 {
					return false
				}
				binary.BigEndian.PutUint32(b[p:], uint32(w))
			}
		}
		pos = end
	}
	return true
}

// AppendBody appends r's body encoded for a record of the given version
// to dst, adjusting pointer values when the version differs.
func (r *Result) AppendBody(dst []byte, version uint8) ([]byte, error) {
	if version < 3 {
		version = 2
	}
	have := r.Version
	if have < 3 {
		have = 2
	}
	start := len(dst)
	dst = append(dst, r.Body...)
	if have == version {
		return dst, nil
	}
	delta := int64(PointerBase(version)) - int64(PointerBase(have))
	out := dst[start:]
	if movePointers(out, delta) {
		return dst, nil
	}
	// Something does not add up: start again, the slow way, for the
	// error.
	copy(out, r.Body)
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.NumVal <= 0 || vs.ValFmt == ValInsitu {
			continue
		}
		off := vs.off
		for i := 0; i < int(vs.NumVal); i++ {
			p := off + 8*i + 4
			w := int64(binary.BigEndian.Uint32(out[p:])) + delta
			if w < 0 || w > math.MaxUint32 {
				return dst[:start], &BodyError{p, "value pointer out of range"}
			}
			binary.BigEndian.PutUint32(out[p:], uint32(w))
		}
	}
	if err := it.Err(); err != nil {
		return dst[:start], err
	}
	return dst, nil
}
