package logimport

import (
	"encoding/binary"

	"github.com/pcptools/pcptools/stream"
)

// resultTemplate is a result body kept with where each of its values
// lies, so that a record of the same shape as one before it (the same
// metrics in the same order, with the same instances: every row of a
// sheet, the records of a program that puts the same metrics each time)
// is made by copying those bytes and writing the new values over the old
// ones, instead of through the builder. The body a template gives is the
// one Build gives for the same values (TestTemplateLikeBuilder): only the
// values differ from record to record, and they sit at the same offsets.
//
// On the 1M-row by 100-column CSV import, building each record took a
// third of the CPU of the goroutine that puts and writes.
//
// A template is captured from a record the builder made, when every value
// set holds values of an integer type or a double (FLOAT and STRING values
// are built each time). A capture that is never used makes the next one
// wait: for records that each differ, the cost of capturing stays small.
type resultTemplate struct {
	valid   bool
	version uint8 // the body's layout (Result.Version)
	body    []byte
	sets    []tmplSet
	insts   []int32 // the instances of every set, in order
	offs    []int32 // where each of those values is in body
	// captureIn counts the builder's records until the next capture; wait
	// is what it is set to after a capture goes unused (doubling to
	// maxCaptureWait), and back to 0 once one is used.
	captureIn, wait int
	used            bool
	applied         int // records made from templates (for tests)
}

type tmplSet struct {
	m    int  // metric index
	n    int  // values
	wide bool // 8-byte values in blocks; else 32-bit values in place
}

const maxCaptureWait = 64

// noTemplates turns templates off (for tests comparing the two ways).
var noTemplates = false

// templatable reports a type whose values a template can write.
func templatable(t stream.Type) bool {
	switch t {
	case stream.Type32, stream.TypeU32, stream.Type64, stream.TypeU64, stream.TypeDouble:
		return true
	}
	return false
}

// apply makes im.result's body from the template and the pending values
// when they have the template's shape; false (and the result's body
// undefined) when they do not, and then the template is dropped.
func (tp *resultTemplate) apply(pend []pendSet, r *stream.Result, t stream.Timestamp) bool {
	if !tp.valid {
		return false
	}
	if len(pend) != len(tp.sets) {
		tp.drop()
		return false
	}
	r.Body = append(r.Body[:0], tp.body...)
	body := r.Body
	k := 0
	for i := range pend {
		p, s := &pend[i], &tp.sets[i]
		if p.m != s.m || len(p.vals) != s.n || p.err != 0 {
			tp.drop()
			return false
		}
		for _, v := range p.vals {
			if v.inst != tp.insts[k] {
				tp.drop()
				return false
			}
			off := tp.offs[k]
			if s.wide {
				binary.BigEndian.PutUint64(body[off:off+8], v.bits)
			} else {
				binary.BigEndian.PutUint32(body[off:off+4], uint32(v.bits))
			}
			k++
		}
	}
	r.T, r.Version = t, tp.version
	tp.used = true
	tp.wait = 0
	tp.applied++
	return true
}

func (tp *resultTemplate) drop() {
	if !tp.valid {
		return
	}
	tp.valid = false
	if !tp.used {
		tp.wait = min(max(2*tp.wait, 1), maxCaptureWait)
	}
	tp.captureIn = tp.wait
}

// capture keeps r (just built from pend) as the template, when its values
// are all of types a template writes and it is time for a capture.
func (tp *resultTemplate) capture(pend []pendSet, metrics []metric, r *stream.Result) {
	if noTemplates {
		return
	}
	if tp.captureIn > 0 {
		tp.captureIn--
		return
	}
	tp.valid, tp.used = false, false
	tp.sets, tp.insts, tp.offs = tp.sets[:0], tp.insts[:0], tp.offs[:0]
	for i := range pend {
		p := &pend[i]
		typ := metrics[p.m].desc.Type
		if p.err != 0 || len(p.vals) == 0 || !templatable(typ) {
			tp.captureIn = tp.wait
			return
		}
		tp.sets = append(tp.sets, tmplSet{m: p.m, n: len(p.vals), wide: typ != stream.Type32 && typ != stream.TypeU32})
		for _, v := range p.vals {
			tp.insts = append(tp.insts, v.inst)
		}
	}
	// Where the values are: walk the body as Build laid it out.
	b := r.Body
	base := stream.PointerBase(r.Version)
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(tp.sets) {
		return
	}
	pos, k := 4, 0
	for _, s := range tp.sets {
		if pos+12 > len(b) || int(binary.BigEndian.Uint32(b[pos+4:])) != s.n {
			return
		}
		pos += 12 // pmid, numval, valfmt
		for j := 0; j < s.n; j++ {
			if pos+8 > len(b) || int32(binary.BigEndian.Uint32(b[pos:])) != tp.insts[k] {
				return
			}
			off := pos + 4
			if s.wide {
				off = int(binary.BigEndian.Uint32(b[pos+4:])-base)*4 + 4
				if off < 4 || off+8 > len(b) {
					return
				}
			}
			tp.offs = append(tp.offs, int32(off))
			pos += 8
			k++
		}
	}
	tp.body = append(tp.body[:0], b...)
	tp.version = r.Version
	tp.valid = true
}
