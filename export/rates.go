package export

import (
	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// ratesNote is the "pcp.rates" metadata of a file whose counters are
// rates (ParquetRates).
const ratesNote = "the value of a counter metric is its rate per second, in the counter's units: " +
	"(v - previous v) / seconds between them, for each metric and instance; NULL for a series' first value, " +
	"the first after a <mark> (a gap in the recording) and where the counter went down (a wrap or a reset)"

// rater turns counters' values into rates, series by series.
type rater struct {
	counter map[stream.PMID]bool
	last    map[[2]int64]rateState
}

type rateState struct {
	ns   int64
	kind dump.SampleKind
	i    int64
	u    uint64
	f    float64
}

func newRater(m *format.Metadata) *rater {
	r := &rater{counter: map[stream.PMID]bool{}, last: map[[2]int64]rateState{}}
	for _, d := range m.Descs {
		if d.Sem == stream.SemCounter {
			r.counter[d.PMID] = true
		}
	}
	return r
}

// mark forgets every series' last value: a <mark> is a gap.
func (r *rater) mark() { clear(r.last) }

// rate returns the rate of s since its series' last value, and whether
// there is one.
func (r *rater) rate(s *dump.Sample) (float64, bool) {
	ns := s.Time.Sec*1e9 + int64(s.Time.Nsec)
	cur := rateState{ns: ns, kind: s.Kind, i: s.Int, u: s.Uint, f: s.Float}
	k := [2]int64{int64(s.PMID), int64(s.Inst)}
	prev, ok := r.last[k]
	switch s.Kind {
	case dump.SampleInt, dump.SampleUint, dump.SampleFloat:
		r.last[k] = cur
	default:
		delete(r.last, k)
		return 0, false
	}
	if !ok || prev.kind != s.Kind || ns <= prev.ns {
		return 0, false
	}
	var d float64
	switch s.Kind {
	case dump.SampleInt:
		if s.Int < prev.i {
			return 0, false
		}
		d = float64(uint64(s.Int - prev.i))
	case dump.SampleUint:
		if s.Uint < prev.u {
			return 0, false
		}
		d = float64(s.Uint - prev.u)
	case dump.SampleFloat:
		if s.Float < prev.f {
			return 0, false
		}
		d = s.Float - prev.f
	}
	return d / (float64(ns-prev.ns) / 1e9), true
}

// addRate appends the row of s with the rate v as its value, or none.
func (b *rowBatch) addRate(s *dump.Sample, v float64, ok bool) {
	b.time = append(b.time, s.Time.Sec*1e9+int64(s.Time.Nsec))
	b.metric = append(b.metric, s.Metric)
	var fl uint8
	inst := ""
	if s.HasInstance {
		fl, inst = hasInst, s.Instance
	}
	b.inst = append(b.inst, inst)
	if ok {
		fl |= hasValue
	} else {
		v = 0
	}
	b.flags = append(b.flags, fl)
	b.value = append(b.value, v)
}
