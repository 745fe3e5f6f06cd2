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
	sets []buildSet
	vals []Val
}

type buildSet struct {
	pmid   PMID
	typ    Type
	numval int32 // < 0: an error code, no values
	first  int   // index into vals
	n      int
}

// Reset starts a new result.
func (b *ResultBuilder) Reset() {
	b.sets = b.sets[:0]
	b.vals = b.vals[:0]
}

// Add appends a value set for pmid with values of type typ.
func (b *ResultBuilder) Add(pmid PMID, typ Type, vals ...Val) {
	b.sets = append(b.sets, buildSet{pmid: pmid, typ: typ, numval: int32(len(vals)), first: len(b.vals), n: len(vals)})
	b.vals = append(b.vals, vals...)
}

// AddError appends a value set that carries a PCP error code instead of
// values (code < 0).
func (b *ResultBuilder) AddError(pmid PMID, code int32) {
	b.sets = append(b.sets, buildSet{pmid: pmid, numval: code})
}

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

// Build encodes the result at time t (in v3 layout) into r, reusing r.Body's
// storage.
func (b *ResultBuilder) Build(t Timestamp, r *Result) error {
	const version = 3
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
