package reduce

import (
	"encoding/binary"
	"math"
	"math/big"
	"slices"

	"github.com/pcptools/pcptools/stream"
)

// PCP's error codes that pmlogreduce can write in place of values.
const (
	errPMIDLog = -12345 - 33 // PM_ERR_PMID_LOG: libpcp's reading of a NOSUPPORT descriptor
	errType    = -12345 - 52 // PM_ERR_TYPE: a counter that cannot be interpolated
)

// val is one observed or computed value: an insitu word, or a whole value
// block (header and payload, vlen bytes) for pointer values.
type val struct {
	word uint32
	blk  []byte
}

// setAt sets v to value i of vs, read in place rather than through a
// stream.Value (whose
// copy through memory stalls on store forwarding in a hot loop).
func (v *val) setAt(vs *stream.VSet, i int) error {
	if vs.ValFmt == stream.ValInsitu {
		_, w := vs.RawPair(i)
		v.word, v.blk = w, v.blk[:0]
		return nil
	}
	blk, err := vs.Block(i) // the block as stored, header and payload
	if err != nil {
		return err
	}
	v.blk = append(v.blk[:0], blk...)
	v.word = 0
	return nil
}

// host returns the value as libpcp holds it in memory: the first 8
// payload bytes after its byte swap, which follows the block's own type
// (8 bytes for 64-bit and double blocks, 4 for float, none otherwise), not
// the metric's; a block shorter than 8 bytes is zero-filled (libpcp would
// read past it). Old archives whose 64-bit values sit in blocks of type 0
// therefore read, and reduce, as the byte-reversed garbage libpcp makes of
// them.
func (v *val) host() (m [8]byte) {
	if len(v.blk) <= 4 {
		return m
	}
	copy(m[:], v.blk[4:])
	switch stream.Type(v.blk[0]) {
	case stream.Type64, stream.TypeU64, stream.TypeDouble:
		slices.Reverse(m[:])
	case stream.TypeFloat:
		slices.Reverse(m[:4])
	}
	return m
}

// host64 and host32 read the in-memory image as libpcp's C code does on a
// little-endian machine.
func (v *val) host64() uint64 { m := v.host(); return binary.LittleEndian.Uint64(m[:]) }
func (v *val) host32() uint32 { m := v.host(); return binary.LittleEndian.Uint32(m[:4]) }

// Kinds of the next event of a metric-instance.
const (
	nextUnknown = iota
	nextValue
	nextMark
	nextEOF
)

// instState is one metric-instance: libpcp's instcntl (the bounds of the
// interpolation) and pmlogreduce's value_t (seen in this interval, never
// written yet), in a fixed size whatever the archive's length.
type instState struct {
	inst int32

	// The latest value at or before the current step (pSeq < 0: none),
	// and the instance's last value in the archive (from a first pass).
	pSeq    int64
	lastSeq int64
	pT      float64 // seconds since the archive's start, as libpcp computes it
	pVal    val

	// The first event after the records consumed so far, once looked for:
	// a value, a <mark>, or the end of the archive. Valid while nSeq is
	// beyond the records consumed.
	nKind uint8
	nSeq  int64
	nT    float64
	nVal  val
	inU   bool // being looked for
	// The values of the instance in the records buffered ahead of the
	// consumer, oldest first from fh (see compat.index).
	fut []futRef
	fh  int

	// pmlogreduce's value_t: created when the scan first sees the
	// instance, init until its first value is written, seen in the
	// current interval.
	created, init, seen bool

	// libpcp's time_caliper bounds (big instance domains only).
	hasBirth, hasDeath bool
	birth, death       float64

	inresult bool
}

// futRef is a value of an instance in a buffered record (value i of value
// set k); valid while the record (d, recycled once consumed) still has
// number seq. 24 bytes: there is one per value buffered.
type futRef struct {
	seq    int64
	d      *drec
	off, i int32 // the value set's offset in the record (VSetAt), the value's index
}

// value extracts the value r refers to into v.
func (r *futRef) value(v *val) error {
	vs := r.d.res.VSetAt(int(r.off)) // index framed it
	return v.setAt(&vs, int(r.i))
}

// futHead drops the references to consumed records and returns the first
// one left, or nil.
func (st *instState) futHead(consumed int64) *futRef {
	for st.fh < len(st.fut) && st.fut[st.fh].seq <= consumed {
		st.fut[st.fh] = futRef{}
		st.fh++
	}
	if st.fh == len(st.fut) {
		st.fut, st.fh = st.fut[:0], 0
		return nil
	}
	if st.fh > 32 && st.fh*2 > len(st.fut) {
		n := copy(st.fut, st.fut[st.fh:])
		clear(st.fut[n:])
		st.fut, st.fh = st.fut[:n], 0
	}
	return &st.fut[st.fh]
}

// metric is one entry of the fetch list with its instances.
type metric struct {
	fetchEntry
	desc      *stream.Desc
	outType   stream.Type // 32-bit counters are written as 64-bit
	promote   bool
	insts     []*instState // in libpcp's hash-walk order
	byInst    map[int32]*instState
	slots     []*instState // by position in the value set, last seen (exact)
	singular  *instState   // the PM_IN_NULL instance, if any
	valfmt    int32        // -1 until a value is seen
	lastNum   int          // libpcp's last_numval
	numval    int
	indomInfo *indomInfo
}

// lookup finds the state a value of instance inst updates, as libpcp's
// update_bounds does: the instance, else the PM_IN_NULL one.
func (m *metric) lookup(j int, inst int32) *instState {
	if st := m.exact(j, inst); st != nil {
		return st
	}
	return m.singular
}

// exact finds the state of instance inst, the j-th value of its set: at
// the position it had last time (loggers write a metric's instances in
// the same order record after record), else through the map.
func (m *metric) exact(j int, inst int32) *instState {
	if j < len(m.slots) {
		if st := m.slots[j]; st != nil && st.inst == inst {
			return st
		}
	}
	st := m.byInst[inst]
	if st != nil {
		for len(m.slots) <= j {
			m.slots = append(m.slots, nil)
		}
		m.slots[j] = st
	}
	return st
}

// hashOrder returns the instances in the order a walk of libpcp's hash
// table visits them: a table of len(list) buckets, keyed by instance
// modulo its size, each chain newest first.
func hashOrder(list []int32) []int32 {
	n := len(list)
	if n == 0 {
		return nil
	}
	buckets := make([][]int32, n)
	for _, v := range list {
		k := uint32(v) % uint32(n)
		buckets[k] = append(buckets[k], v)
	}
	out := make([]int32, 0, n)
	for _, b := range buckets {
		for i := len(b) - 1; i >= 0; i-- {
			out = append(out, b[i])
		}
	}
	return out
}

// tsub is libpcp's __pmTimestampSub: a-b in seconds, computed in x87
// long double (64-bit mantissa) and rounded to double. The rounding
// matters: interpolated counters are rounded to integers, and a last bit
// can move a value across .5.
type tsub struct {
	q, s, ns, bil big.Float
}

func newTsub() *tsub {
	t := &tsub{}
	for _, f := range []*big.Float{&t.q, &t.s, &t.ns, &t.bil} {
		f.SetPrec(64).SetMode(big.ToNearestEven)
	}
	t.bil.SetInt64(1e9)
	return t
}

func (t *tsub) sub(aSec, aNsec, bSec, bNsec int64) float64 {
	ds := aSec - bSec
	dn := aNsec - bNsec
	if dn == 0 {
		return float64(ds)
	}
	t.ns.SetInt64(dn)
	t.q.Quo(&t.ns, &t.bil)
	t.s.SetInt64(ds)
	t.s.Add(&t.s, &t.q)
	f, _ := t.s.Float64()
	return f
}

// u64 converts as gcc's code for a (__uint64_t) cast of a double does on
// x86-64 (out-of-range values as the hardware gives them).
func u64(x float64) uint64 {
	const two63 = 9223372036854775808.0
	if x < two63 {
		return uint64(int64(x))
	}
	return uint64(int64(x-two63)) ^ 1<<63
}

// u32 converts as gcc does for an (unsigned int) cast of a double.
func u32(x float64) uint32 { return uint32(int64(x)) }

// interpolate computes instance st's value of metric m at treq, as
// __pmLogFetchInterp builds it; ok is false when libpcp would leave it out.
// The arithmetic follows libpcp's C expression by expression: explicit
// float64 conversions keep Go from fusing a multiply and an add.
func (m *metric) interpolate(st *instState, treq float64, out *val) bool {
	d := m.desc
	prior, next := &st.pVal, &st.nVal
	exactNext := st.nKind == nextValue && st.nT == treq
	switch d.Type {
	case stream.Type32, stream.TypeU32:
		if st.pT == treq {
			out.word = prior.word
			return true
		}
		if exactNext {
			out.word = next.word
			return true
		}
		if d.Sem != stream.SemCounter {
			out.word = prior.word
			return true
		}
		dt1 := treq - st.pT
		dt2 := st.nT - st.pT
		if d.Type == stream.Type32 {
			p, n := int32(prior.word), int32(next.word)
			a := 0.5 + float64(p)
			b := float64(dt1 * float64(n-p))
			out.word = uint32(int32(a + float64(b/dt2)))
			return true
		}
		p, n := prior.word, next.word
		a := 0.5 + float64(p)
		if n >= p {
			b := float64(dt1 * float64(n-p))
			out.word = u32(a + float64(b/dt2))
		} else {
			b := float64(dt1 * float64(p-n))
			out.word = u32(a - float64(b/dt2))
		}
		return true
	case stream.TypeFloat:
		if m.valfmt == stream.ValInsitu {
			if st.pT == treq {
				out.word = prior.word
				return true
			}
			if exactNext {
				out.word = next.word
				return true
			}
			if d.Sem != stream.SemCounter {
				out.word = prior.word
				return true
			}
			fp, fn := math.Float32frombits(prior.word), math.Float32frombits(next.word)
			out.word = math.Float32bits(floatInterp(fp, fn, treq, st))
			return true
		}
		var f uint32
		switch {
		case st.pT == treq:
			f = prior.host32()
		case exactNext:
			f = next.host32()
		case d.Sem != stream.SemCounter:
			f = prior.host32()
		default:
			fp := math.Float32frombits(prior.host32())
			fn := math.Float32frombits(next.host32())
			f = math.Float32bits(floatInterp(fp, fn, treq, st))
		}
		out.blk = appendBlock(out.blk[:0], stream.TypeFloat, binary.BigEndian.AppendUint32(nil, f))
		return true
	case stream.Type64, stream.TypeU64, stream.TypeDouble:
		var w uint64
		switch {
		case st.pT == treq:
			w = prior.host64()
		case exactNext:
			w = next.host64()
		case d.Sem != stream.SemCounter:
			w = prior.host64()
		default:
			pw, nw := prior.host64(), next.host64()
			dt1 := treq - st.pT
			dt2 := st.nT - st.pT
			switch d.Type {
			case stream.Type64:
				p, n := int64(pw), int64(nw)
				a := 0.5 + float64(p)
				b := float64(dt1 * float64(n-p))
				w = uint64(int64(a + float64(b/dt2)))
			case stream.TypeU64:
				// libpcp holds these in signed variables: the comparison
				// and the conversion of the prior value are signed.
				// libpcp holds these in signed variables, and gcc
				// compiles its test next >= prior as next-prior >= 0,
				// the subtraction wrapping (the QA archive kenj-pc-2's
				// sample.wrap.ulonglong shows it); the differences go to
				// double unsigned.
				p, n := int64(pw), int64(nw)
				a := 0.5 + float64(p)
				if n-p >= 0 {
					diff := uint64(n - p)
					b := float64(dt1 * float64(diff))
					w = u64(a + float64(b/dt2))
				} else {
					diff := uint64(p - n)
					b := float64(dt1 * float64(diff))
					w = u64(a - float64(b/dt2))
				}
			default:
				p, n := math.Float64frombits(pw), math.Float64frombits(nw)
				b := float64(dt1 * float64(n-p))
				w = math.Float64bits(p + float64(b/dt2))
			}
		}
		var pb [8]byte
		binary.BigEndian.PutUint64(pb[:], w)
		out.blk = appendBlock(out.blk[:0], d.Type, pb[:])
		return true
	case stream.TypeString, stream.TypeAggregate, stream.TypeEvent, stream.TypeHighresEvent:
		if len(prior.blk) < 4 {
			return false
		}
		out.blk = append(out.blk[:0], prior.blk...)
		return true
	}
	return false
}

func floatInterp(fp, fn float32, treq float64, st *instState) float32 {
	diff := fn - fp
	b := float64((treq - st.pT) * float64(diff))
	return float32(float64(fp) + float64(b/(st.nT-st.pT)))
}

func appendBlock(dst []byte, t stream.Type, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(t)<<24|uint32(4+len(payload)))
	return append(dst, payload...)
}
