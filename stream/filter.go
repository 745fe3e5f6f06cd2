package stream

import (
	"encoding/binary"
	"fmt"
)

// Pick is what Select keeps of one value set: nothing (Keep false), every
// value (Insts nil), or the values of the instances listed, in the order
// listed. An instance asked for and absent is left out; a set left with no
// values stays, with none (as pmlogextract writes it).
type Pick struct {
	Keep  bool
	Insts []int32
}

// AppendSelected appends to dst the body of a result holding the value sets
// of r that pick keeps, in r's order, and returns it with the number of
// value sets kept. The body has r's version (pointer values are laid out
// for it); value blocks are copied as they are, after the value sets, the
// layout PCP's encoder uses. r itself is not changed.
func (r *Result) AppendSelected(dst []byte, pick func(PMID) Pick) ([]byte, int, error) {
	var sets [16]keptSet
	keep, err := r.collect(sets[:0], pick)
	if err != nil {
		return dst, 0, err
	}
	dst, err = encodeKept(dst, PointerBase(r.Version), keep)
	if err != nil {
		return dst, 0, err
	}
	return dst, len(keep), nil
}

// JoinResults appends to dst the body of one result holding every value
// set of parts, in order. The parts must all have the given version,
// which the body has too.
func JoinResults(dst []byte, version uint8, parts []*Result) ([]byte, error) {
	var keep []keptSet
	all := func(PMID) Pick { return Pick{Keep: true} }
	for _, p := range parts {
		if (p.Version >= 3) != (version >= 3) {
			return dst, fmt.Errorf("joining a v%d result into a v%d one", p.Version, version)
		}
		var err error
		if keep, err = p.collect(keep, all); err != nil {
			return dst, err
		}
	}
	return encodeKept(dst, PointerBase(version), keep)
}

// collect appends to keep the value sets of r that pick keeps.
func (r *Result) collect(keep []keptSet, pick func(PMID) Pick) ([]keptSet, error) {
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		p := pick(vs.PMID)
		if !p.Keep {
			continue
		}
		k := keptSet{vs: *vs, all: p.Insts == nil}
		if !k.all && vs.NumVal > 0 {
			for _, want := range p.Insts {
				for i := 0; i < int(vs.NumVal); i++ {
					if vs.Inst(i) == want {
						k.which = append(k.which, i)
						break
					}
				}
			}
		}
		keep = append(keep, k)
	}
	return keep, it.Err()
}

// encodeKept appends the body of a result of the kept value sets, with
// pointers for a record whose pointer base is base. Two passes: the value
// sets first (pointers need to know where the blocks start), then the
// blocks.
func encodeKept(dst []byte, base uint32, keep []keptSet) ([]byte, error) {
	start := len(dst)
	size := 4
	for i := range keep {
		size += 8
		if n := keep[i].count(); n > 0 {
			size += 4 + 8*n
		}
	}
	blockOff := size
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(keep)))
	for i := range keep {
		k := &keep[i]
		n := k.count()
		numval := k.vs.NumVal
		if !k.all && numval > 0 {
			numval = int32(n)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(k.vs.PMID))
		dst = binary.BigEndian.AppendUint32(dst, uint32(numval))
		if n == 0 {
			continue
		}
		dst = binary.BigEndian.AppendUint32(dst, k.vs.ValFmt)
		for j := 0; j < n; j++ {
			vi := k.index(j)
			inst, w := k.vs.RawPair(vi)
			dst = binary.BigEndian.AppendUint32(dst, uint32(inst))
			if k.vs.ValFmt == ValInsitu {
				dst = binary.BigEndian.AppendUint32(dst, w)
				continue
			}
			blk, err := blockAt(k.vs.body, k.vs.base, w, k.vs.off+8*vi+4)
			if err != nil {
				return dst[:start], err
			}
			dst = binary.BigEndian.AppendUint32(dst, base+uint32(blockOff/4))
			blockOff += (len(blk) + 3) &^ 3
		}
	}
	for i := range keep {
		k := &keep[i]
		if k.vs.ValFmt == ValInsitu {
			continue
		}
		for j := 0; j < k.count(); j++ {
			vi := k.index(j)
			_, w := k.vs.RawPair(vi)
			blk, _ := blockAt(k.vs.body, k.vs.base, w, 0)
			// The block's padding is copied when the body has it.
			off := uint64(w-k.vs.base) * 4
			end := off + uint64((len(blk)+3)&^3)
			if end > uint64(len(k.vs.body)) {
				dst = append(dst, blk...)
				for len(dst)%4 != start%4 {
					dst = append(dst, 0)
				}
				continue
			}
			dst = append(dst, k.vs.body[off:end]...)
		}
	}
	if len(dst)-start != blockOff {
		return dst[:start], fmt.Errorf("internal error: selected result is %d bytes, expected %d", len(dst)-start, blockOff)
	}
	return dst, nil
}

// keptSet is a value set AppendSelected keeps, and which of its values.
type keptSet struct {
	vs    VSet
	which []int // indexes of the values kept, unless all
	all   bool
}

func (k *keptSet) count() int {
	if k.all {
		return k.vs.Values()
	}
	return len(k.which)
}

func (k *keptSet) index(j int) int {
	if k.all {
		return j
	}
	return k.which[j]
}
