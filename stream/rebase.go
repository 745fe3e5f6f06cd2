package stream

import "encoding/binary"

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
