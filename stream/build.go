package stream

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Val is one value to put in a result. Which field is used depends on the
// metric's type: I for 32 and 64, U for U32 and U64, F for FLOAT and
// DOUBLE, S for STRING, B for AGGREGATE (and the raw bytes of EVENT and
// HIGHRES_EVENT values).
type Val struct {
	Inst int32
	I    int64
	U    uint64
	F    float64
	S    string
	B    []byte
}

// ResultBuilder encodes results. It keeps its buffers between results, so
// building many results allocates only when a result is larger than any
// before it. Tools that change values (rewrite, reduce, import) use it;
// tools that pass results along never need it.
type ResultBuilder struct {
	// Version is the layout Build writes: 2 for a v2 record's pointers,
	// anything else v3's. A tool writing a v2 archive saves the writer
	// moving every pointer.
	Version uint8
	sets    []buildSet
	vals    []Val
	bits    []bitsVal // the values of the sets OpenBits started
}

// bitsVal is a value of an 8-byte type: its instance and its 64 bits.
type bitsVal struct {
	inst int32
	u    uint64
}

type buildSet struct {
	pmid   PMID
	typ    Type
	numval int32 // < 0: an error code, no values
	first  int   // index into vals (bits, for a bits set)
	n      int
	isBits bool
}

// Reset starts a new result.
func (b *ResultBuilder) Reset() {
	b.sets = b.sets[:0]
	b.vals = b.vals[:0]
	b.bits = b.bits[:0]
}

// newSet appends a zero value set and returns it. Its fields are then
// stored one by one: a composite literal is built on the stack with
// stores of 1, 4 and 8 bytes and copied with 16-byte loads, which the CPU
// cannot forward from those stores (a stall of ten-odd cycles a set,
// 10% of an import of doubles).
func (b *ResultBuilder) newSet(pmid PMID, typ Type) *buildSet {
	n := len(b.sets)
	if n < cap(b.sets) {
		b.sets = b.sets[:n+1]
		b.sets[n] = buildSet{}
	} else {
		b.sets = append(b.sets, buildSet{})
	}
	s := &b.sets[n]
	s.pmid, s.typ = pmid, typ
	return s
}

// Add appends a value set for pmid with values of type typ.
func (b *ResultBuilder) Add(pmid PMID, typ Type, vals ...Val) {
	s := b.newSet(pmid, typ)
	s.numval, s.first, s.n = int32(len(vals)), len(b.vals), len(vals)
	b.vals = append(b.vals, vals...)
}

// Open starts a value set for pmid with values of type typ, to which Put
// appends: Add without a slice of values to copy.
func (b *ResultBuilder) Open(pmid PMID, typ Type) {
	b.newSet(pmid, typ).first = len(b.vals)
}

// Put appends a value to the set Open started last.
func (b *ResultBuilder) Put(v Val) {
	s := &b.sets[len(b.sets)-1]
	b.vals = append(b.vals, v)
	s.n++
	s.numval++
}

// OpenBits starts a value set for pmid of an 8-byte type (64, U64 or
// DOUBLE), to which PutBits appends values as their 64 bits: a tool
// writing many numbers builds 16 bytes per value rather than a Val.
func (b *ResultBuilder) OpenBits(pmid PMID, typ Type) {
	if !fixed8(typ) {
		panic(fmt.Sprintf("ResultBuilder.OpenBits: type %d is not an 8-byte type", typ))
	}
	s := b.newSet(pmid, typ)
	s.first, s.isBits = len(b.bits), true
}

// PutBits appends a value to the set OpenBits started last: the int64
// or uint64 as 64 bits, or math.Float64bits of a double.
func (b *ResultBuilder) PutBits(inst int32, u uint64) {
	s := &b.sets[len(b.sets)-1]
	n := len(b.bits)
	if n < cap(b.bits) {
		b.bits = b.bits[:n+1]
	} else {
		b.bits = append(b.bits, bitsVal{})
	}
	b.bits[n].inst, b.bits[n].u = inst, u
	s.n++
	s.numval++
}

// AddError appends a value set that carries a PCP error code instead of
// values (code < 0).
func (b *ResultBuilder) AddError(pmid PMID, code int32) {
	b.newSet(pmid, 0).numval = code
}

// fixed8 reports a type whose values are 8-byte blocks.
func fixed8(typ Type) bool { return typ == Type64 || typ == TypeU64 || typ == TypeDouble }

func blockLen(typ Type, v *Val) (int, error) {
	switch typ {
	case Type64, TypeU64, TypeDouble:
		return 8, nil
	case TypeFloat:
		return 4, nil
	case TypeString:
		return len(v.S) + 1, nil
	case TypeAggregate, TypeAggStatic, TypeEvent, TypeHighresEvent:
		return len(v.B), nil
	}
	return 0, fmt.Errorf("type %d has no value block", typ)
}

// Build encodes the result at time t (in v3 layout, or v2's: see Version)
// into r, reusing r.Body's storage.
func (b *ResultBuilder) Build(t Timestamp, r *Result) error {
	version := uint8(3)
	if b.Version == 2 {
		version = 2
	}
	body := r.Body[:0]
	body = binary.BigEndian.AppendUint32(body, uint32(len(b.sets)))
	// First pass: the value set headers and pairs, with pointers filled in
	// as blocks are laid out after them.
	size := 4
	for _, s := range b.sets {
		size += 8
		if s.numval > 0 {
			size += 4 + 8*s.n
		}
	}
	blockOff := size
	base := PointerBase(version)
	for _, s := range b.sets {
		body = binary.BigEndian.AppendUint32(body, uint32(s.pmid))
		body = binary.BigEndian.AppendUint32(body, uint32(s.numval))
		if s.numval <= 0 {
			continue
		}
		insitu := s.typ == Type32 || s.typ == TypeU32
		if insitu {
			body = binary.BigEndian.AppendUint32(body, ValInsitu)
		} else {
			body = binary.BigEndian.AppendUint32(body, ValDptr)
		}
		if s.isBits {
			for _, v := range b.bits[s.first : s.first+s.n] {
				body = binary.BigEndian.AppendUint32(body, uint32(v.inst))
				body = binary.BigEndian.AppendUint32(body, base+uint32(blockOff/4))
				blockOff += 12
			}
			continue
		}
		if fixed8(s.typ) { // without blockLen per value
			for i := s.first; i < s.first+s.n; i++ {
				body = binary.BigEndian.AppendUint32(body, uint32(b.vals[i].Inst))
				body = binary.BigEndian.AppendUint32(body, base+uint32(blockOff/4))
				blockOff += 12
			}
			continue
		}
		for i := s.first; i < s.first+s.n; i++ {
			v := &b.vals[i]
			body = binary.BigEndian.AppendUint32(body, uint32(v.Inst))
			switch {
			case s.typ == Type32:
				body = binary.BigEndian.AppendUint32(body, uint32(int32(v.I)))
			case s.typ == TypeU32:
				body = binary.BigEndian.AppendUint32(body, uint32(v.U))
			default:
				n, err := blockLen(s.typ, v)
				if err != nil {
					return fmt.Errorf("metric %s: %w", s.pmid, err)
				}
				if 4+n > 0xffffff {
					return fmt.Errorf("metric %s: value of %d bytes is too large for a value block", s.pmid, n)
				}
				body = binary.BigEndian.AppendUint32(body, base+uint32(blockOff/4))
				blockOff += (4 + n + 3) &^ 3
			}
		}
	}
	// Second pass: the blocks, in the same order.
	for _, s := range b.sets {
		if s.numval <= 0 || s.typ == Type32 || s.typ == TypeU32 {
			continue
		}
		if s.isBits {
			hdr := uint32(s.typ)<<24 | 12
			for _, v := range b.bits[s.first : s.first+s.n] {
				body = binary.BigEndian.AppendUint32(body, hdr)
				body = binary.BigEndian.AppendUint64(body, v.u)
			}
			continue
		}
		if fixed8(s.typ) {
			hdr := uint32(s.typ)<<24 | 12
			for i := s.first; i < s.first+s.n; i++ {
				v := &b.vals[i]
				u := v.U
				switch s.typ {
				case Type64:
					u = uint64(v.I)
				case TypeDouble:
					u = math.Float64bits(v.F)
				}
				body = binary.BigEndian.AppendUint32(body, hdr)
				body = binary.BigEndian.AppendUint64(body, u)
			}
			continue
		}
		for i := s.first; i < s.first+s.n; i++ {
			v := &b.vals[i]
			n, _ := blockLen(s.typ, v)
			body = binary.BigEndian.AppendUint32(body, uint32(s.typ)<<24|uint32(4+n))
			switch s.typ {
			case Type64:
				body = binary.BigEndian.AppendUint64(body, uint64(v.I))
			case TypeU64:
				body = binary.BigEndian.AppendUint64(body, v.U)
			case TypeDouble:
				body = binary.BigEndian.AppendUint64(body, math.Float64bits(v.F))
			case TypeFloat:
				body = binary.BigEndian.AppendUint32(body, math.Float32bits(float32(v.F)))
			case TypeString:
				body = append(body, v.S...)
				body = append(body, 0)
			default:
				body = append(body, v.B...)
			}
			for (4+n)%4 != 0 {
				body = append(body, '~')
				n++
			}
		}
	}
	r.T = t
	r.Version = version
	r.Body = body
	return nil
}
