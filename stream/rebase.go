package stream

import (
	"encoding/binary"
	"math/bits"
)

// Copying whole value sets into a new result body, for filters that
// rewrite some value sets of a result and keep the others as they are
// (pcprewrite). PCP's encoder lays a body out as every value set (header
// and pairs) first, then the value blocks in the same order, each padded
// to a multiple of 4 bytes; a value set kept as it is then differs from
// its input only in its pointer values. AppendRebased writes the set with
// its pointers moved, AppendBlocks its blocks, in one copy when the input
// already has them back to back.

// AppendRebased appends v as a value set of a result body: pmid (in place
// of v.PMID), numval, valfmt and the instance/value pairs, with every
// pointer value rewritten to address value blocks laid back to back, in
// pair order, each padded to a multiple of 4 bytes, from the word ptr on
// (pointer words count as in v's own body; see PointerBase). It returns
// the word after the last block, which is ptr for a set with no value
// blocks. On a pointer outside v's body it appends nothing and returns the
// error.
//
// It remembers in v whether the blocks lie back to back in its body, so
// that AppendBlocks on the same v need not walk them again.
func (v *VSet) AppendRebased(dst []byte, pmid PMID, ptr uint32) ([]byte, uint32, error) {
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(pmid))
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.NumVal))
	if v.NumVal <= 0 {
		return dst, ptr, nil
	}
	dst = binary.BigEndian.AppendUint32(dst, v.ValFmt)
	dst = append(dst, v.pairs...)
	if v.ValFmt == ValInsitu {
		return dst, ptr, nil
	}
	p := dst[start+12:]
	body := v.body
	blen := uint64(len(body))
	base := uint64(v.base)
	first := uint64(binary.BigEndian.Uint32(p[4:]))
	if next, ok := v.evenRebase(p, first, ptr); ok {
		return dst, next, nil
	}
	next, run, ragged := first, true, false
	for i := 4; i < len(p); i += 8 {
		w := uint64(binary.BigEndian.Uint32(p[i:]))
		off := (w - base) * 4 // wraps to a huge value when w < base
		if w < base || off+4 > blen {
			_, err := blockAt(body, v.base, uint32(w), v.off+i)
			return dst[:start], ptr, err
		}
		vlen := uint64(binary.BigEndian.Uint32(body[off:]) & 0xffffff)
		if vlen < 4 || off+vlen > blen {
			_, err := blockAt(body, v.base, uint32(w), v.off+i)
			return dst[:start], ptr, err
		}
		binary.BigEndian.PutUint32(p[i:], ptr)
		ptr += uint32((vlen + 3) / 4)
		run = run && w == next
		ragged = ragged || vlen&3 != 0
		next = w + (vlen+3)/4
	}
	v.run = blockRun{}
	if run && (next-base)*4 <= blen {
		v.run = blockRun{from: int((first - base) * 4), to: int((next - base) * 4), ok: true, ragged: ragged}
	}
	return dst, ptr, nil
}

// evenRebase is AppendRebased's quick way for the layout PCP writes for
// fixed-size values (64-bit integers, doubles): every block the same size,
// a multiple of 4 bytes, back to back in pair order. It applies when the
// pointers step evenly by the first block's size and the last block is
// that size too, reading two block headers instead of all of them; the
// blocks are then moved as one span (AppendBlocks), so every pointer still
// finds the bytes it found in v. It reports false, having written nothing,
// for anything else.
func (v *VSet) evenRebase(p []byte, first uint64, ptr uint32) (uint32, bool) {
	body := v.body
	blen := uint64(len(body))
	base := uint64(v.base)
	n := uint64(len(p) / 8)
	if n < 2 || first < base || (first-base)*4+4 > blen {
		return 0, false
	}
	from := (first - base) * 4
	vlen := uint64(binary.BigEndian.Uint32(body[from:]) & 0xffffff)
	if vlen < 4 || vlen&3 != 0 {
		return 0, false
	}
	step := vlen / 4
	to := from + n*vlen
	if to > blen || uint64(ptr)+n*step > 0xffffffff {
		return 0, false
	}
	if l := uint64(binary.BigEndian.Uint32(body[to-vlen:]) & 0xffffff); l != vlen {
		return 0, false
	}
	w, delta := uint32(first), ptr-uint32(first)
	for i := 4; i < len(p); i += 8 {
		if binary.BigEndian.Uint32(p[i:]) != w {
			copy(p, v.pairs) // undo
			return 0, false
		}
		binary.BigEndian.PutUint32(p[i:], w+delta)
		w += uint32(step)
	}
	v.run = blockRun{from: int(from), to: int(to), ok: true}
	return ptr + uint32(n*step), true
}

// AppendBlocks appends v's value blocks in pair order, each padded to a
// multiple of 4 bytes with pad: the layout AppendRebased's pointers
// assume. When v's body holds them that way already (as PCP writes them),
// they are copied in one go. A set with no value blocks appends nothing.
func (v *VSet) AppendBlocks(dst []byte, pad byte) ([]byte, error) {
	if v.NumVal <= 0 || v.ValFmt == ValInsitu {
		return dst, nil
	}
	body := v.body
	if r := v.run; r.ok && !r.ragged && r.to <= len(body) {
		// AppendRebased found the blocks back to back, none needing
		// padding.
		return append(dst, body[r.from:r.to]...), nil
	}
	blen := uint64(len(body))
	base := uint64(v.base)
	first := uint64(binary.BigEndian.Uint32(v.pairs[4:]))
	next := first
	run := first >= base
	for i := 4; run && i < len(v.pairs); i += 8 {
		w := uint64(binary.BigEndian.Uint32(v.pairs[i:]))
		off := (w - base) * 4
		if w != next || off+4 > blen {
			run = false
			break
		}
		vlen := uint64(binary.BigEndian.Uint32(body[off:]) & 0xffffff)
		padded := (vlen + 3) &^ 3
		if vlen < 4 || off+padded > blen {
			run = false
			break
		}
		for _, c := range body[off+vlen : off+padded] {
			if c != pad {
				run = false
			}
		}
		next += padded / 4
	}
	if run {
		return append(dst, body[(first-base)*4:(next-base)*4]...), nil
	}
	// Anything else: block by block.
	start := len(dst)
	for i := 0; i < int(v.NumVal); i++ {
		w := binary.BigEndian.Uint32(v.pairs[8*i+4:])
		blk, err := blockAt(body, v.base, w, v.off+8*i+4)
		if err != nil {
			return dst[:start], err
		}
		dst = append(dst, blk...)
		for n := len(blk); n%4 != 0; n++ {
			dst = append(dst, pad)
		}
	}
	return dst, nil
}

// blockRun is what AppendRebased learnt of a value set's blocks: they lie
// back to back in pair order at body[from:to], and whether some need
// padding (whose bytes AppendBlocks must then check).
type blockRun struct {
	from, to   int
	ok, ragged bool
}

// Frame appends to offs the offset in r.Body of each value set's header,
// then the offset where the last header ends: NumPMID+1 offsets. It walks
// the headers as VSets does, without building the sets, and reports the
// same error on a body that does not frame.
func (r *Result) Frame(offs []int32) ([]int32, error) {
	b := r.Body
	if len(b) < 4 || int32(binary.BigEndian.Uint32(b)) < 0 || len(b) > 1<<31-1 {
		return offs, r.frameError()
	}
	n := int(binary.BigEndian.Uint32(b))
	blen := len(b)
	pos := 4
	for k := 0; k < n; k++ {
		if pos+8 > blen {
			return offs, r.frameError()
		}
		offs = append(offs, int32(pos))
		numval := int32(binary.BigEndian.Uint32(b[pos+4:]))
		pos += 8
		if numval <= 0 {
			continue
		}
		if int64(pos)+4+int64(numval)*8 > int64(blen) {
			return offs, r.frameError()
		}
		pos += 4 + int(numval)*8
	}
	return append(offs, int32(pos)), nil
}

// Reframe is Frame for a result laid out like the one offs came from
// (Frame's answer for it), as the results of an archive mostly are: it
// returns offs itself when they frame r too, else Frame(offs[:0]). It
// checks each set's end against the next offset it already has, so no
// load waits for the one before, where Frame's walk must chain them.
func (r *Result) Reframe(offs []int32) ([]int32, error) {
	b := r.Body
	n := len(offs) - 1
	if n < 0 || len(b) < 4 || len(b) > 1<<31-1 || binary.BigEndian.Uint32(b) != uint32(n) || offs[0] != 4 {
		return r.Frame(offs[:0])
	}
	blen := int64(len(b))
	for k := 0; k < n; k++ {
		pos := int64(offs[k])
		if pos+8 > blen {
			return r.Frame(offs[:0])
		}
		next := pos + 8
		if numval := int64(int32(binary.BigEndian.Uint32(b[pos+4:]))); numval > 0 {
			next += 4 + numval*8
		}
		if next != int64(offs[k+1]) || next > blen {
			return r.Frame(offs[:0])
		}
	}
	return offs, nil
}

// frameError is VSets' error for a body that does not frame.
func (r *Result) frameError() error {
	it := r.VSets()
	for it.Next() {
	}
	if err := it.Err(); err != nil {
		return err
	}
	return &BodyError{0, "malformed result"}
}

// VSetAt returns the value set whose header starts at off, an offset
// Frame returned for r.
func (r *Result) VSetAt(off int) VSet {
	b := r.Body
	v := VSet{PMID: PMID(binary.BigEndian.Uint32(b[off:])), NumVal: int32(binary.BigEndian.Uint32(b[off+4:])),
		body: b, base: PointerBase(r.Version)}
	if v.NumVal > 0 {
		v.ValFmt = binary.BigEndian.Uint32(b[off+8:])
		v.off = off + 12
		v.pairs = b[v.off : v.off+8*int(v.NumVal)]
	}
	return v
}

// AppendSetsRebased appends the value set headers r.Body[from:to], whole
// sets as Frame found them, with every pointer value moved so that their
// value blocks are addressed from the word ptr on. It is AppendRebased for
// a run of sets at once, for the layout PCP writes: the blocks of the run
// must lie back to back in r.Body, in pair order from the first pointer,
// each padded to a multiple of 4 bytes with pad; the caller then appends
// r.Body[blocks.From:blocks.To] as they are. It returns the word after the
// last block (ptr when the run has no blocks). ok is false, with nothing
// appended, when the blocks lie any other way or a pointer leaves the
// body: the caller then takes the set-by-set way, which says what is
// wrong.
func (r *Result) AppendSetsRebased(dst []byte, from, to int, ptr uint32, pad byte) (out []byte, blocks Span, next uint32, ok bool) {
	start := len(dst)
	dst = append(dst, r.Body[from:to]...)
	h := dst[start:]
	body := r.Body
	base := uint64(PointerBase(r.Version))
	var first, want uint64 // words
	have := false
	delta := uint64(ptr) // ptr - first, once first is known (mod 2^32)
	pos := 0
	for pos < len(h) {
		numval := int32(binary.BigEndian.Uint32(h[pos+4:]))
		pos += 8
		if numval <= 0 {
			continue
		}
		insitu := binary.BigEndian.Uint32(h[pos:]) == ValInsitu
		pos += 4
		end := pos + 8*int(numval)
		if insitu {
			pos = end
			continue
		}
		if !have {
			first = uint64(binary.BigEndian.Uint32(h[pos+4:]))
			want, have = first, true
			delta = uint64(ptr) - first
		}
		var ok bool
		if want, ok = chainBlocks(h[pos:end], body[from+pos:from+end], body, base, want, delta, pad); !ok {
			return dst[:start], Span{}, ptr, false
		}
		pos = end
	}
	if !have {
		return dst, Span{}, ptr, true
	}
	if uint64(ptr)+(want-first) > 0xffffffff {
		return dst[:start], Span{}, ptr, false
	}
	return dst, Span{From: int((first - base) * 4), To: int((want - base) * 4)}, ptr + uint32(want-first), true
}

// Span is a range of bytes, [From, To).
type Span struct{ From, To int }

// chainBlocks moves the pointers of pairs (a value set's instance/value
// pairs, a copy of src) by delta words, checking that the blocks they address lie back to
// back in body from the word want on, each padded to a multiple of 4 bytes
// with pad. It returns the word after the last block; false, with pairs
// partly changed, when the blocks lie otherwise.
func chainBlocks(pairs, src, body []byte, base, want, delta uint64, pad byte) (uint64, bool) {
	blen := uint64(len(body))
	if want < base || (want-base)*4+4 > blen {
		return want, false
	}
	d := uint32(delta)
	// The usual case first: blocks all alike (one type, one size, a
	// multiple of 4 bytes), as PCP writes fixed-size values. Every block
	// header must then be the first one's, and every pointer one step on
	// from the one before: no load depends on another.
	from := (want - base) * 4
	hdr := binary.LittleEndian.Uint32(body[from:]) // compared as it is
	vlen := uint64(bits.ReverseBytes32(hdr) & 0xffffff)
	n := uint64(len(pairs) / 8)
	if vlen >= 4 && vlen&3 == 0 && from+n*vlen <= blen {
		p := evenLoop(pairs, src, body[from:from+n*vlen], uint32(want), d, hdr, int(vlen))
		if p >= len(pairs) {
			return want + n*(vlen/4), true
		}
		// The general way, from where the usual case stopped.
		want += uint64(p/8) * (vlen / 4)
		pairs = pairs[p-4:]
	}
	next := want
	for p := 4; p+4 <= len(pairs); p += 8 {
		w := uint64(binary.BigEndian.Uint32(pairs[p:]))
		off := (w - base) * 4
		if w != next || off+4 > blen {
			return want, false
		}
		vlen := uint64(binary.BigEndian.Uint32(body[off:]) & 0xffffff)
		padded := (vlen + 3) &^ 3
		if vlen < 4 || off+padded > blen {
			return want, false
		}
		for _, c := range body[off+vlen : off+padded] {
			if c != pad {
				return want, false
			}
		}
		binary.BigEndian.PutUint32(pairs[p:], uint32(w)+d)
		next += padded / 4
	}
	return next, true
}

// evenLoop is the loop chainBlocks uses (tests run it with both).
var evenLoop = evenBlocks

// evenBlocksSafe is chainBlocks' usual case: the pointers of src (which
// pairs is a copy of) must step by vlen/4 words from w, and each block in blocks, vlen bytes apart
// (vlen at least 4), must have the header hdr (as it lies in memory). It
// moves the pointers of pairs by d and returns the offset in pairs of the first
// pointer that does not fit, having moved those before it; len(pairs)+4
// when all fit. evenBlocks is the same loop, quicker where the machine
// reads unaligned words (rebase_unaligned.go).
func evenBlocksSafe(pairs, src, blocks []byte, w, d, hdr uint32, vlen int) int {
	if vlen < 4 {
		return 4
	}
	step := uint32(vlen / 4)
	n := min(len(pairs)/8, len(src)/8, len(blocks)/vlen)
	for k := 0; k < n; k++ {
		sw := (*[4]byte)(src[8*k+4 : 8*k+8])
		bw := (*[4]byte)(blocks[k*vlen : k*vlen+4])
		if binary.LittleEndian.Uint32(sw[:]) != bits.ReverseBytes32(w) ||
			binary.LittleEndian.Uint32(bw[:]) != hdr {
			return 8*k + 4
		}
		binary.BigEndian.PutUint32(pairs[8*k+4:8*k+8], w+d)
		w += step
	}
	return 8*n + 4
}
