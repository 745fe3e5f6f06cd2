package summary

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Reduced archives (docs/pcpsummary.md, "Reduced archives"): an archive
// written by pcpreduce in native mode says so in its context labels
// ({"reduce_tool":"pcpreduce","reduce_interval":SECONDS,...}) and carries,
// beside each metric NAME (one value per interval: the time-weighted mean,
// the last value, or the counter's monotone value), its aggregates as
// metrics pcpreduce.AGG.NAME (docs/pcpreduce.md, "Layout of a reduced
// archive"). Under its own name, pcpsummary takes from them what they give
// of the original's summary (instant metrics: minimum, maximum, count,
// sum, stochastic and time averages, standard deviation; discrete:
// minimum, maximum, count; counters: minimum and maximum rates, count),
// not the summary of the interval values. Under the name pmlogsummary
// nothing changes.
//
// The layout is read here by name, not through package reduce: the
// documented layout is the contract between the two tools.

const reducePrefix = "pcpreduce."

// aggregate kinds, as pcpreduce names them
const (
	raCount = iota
	raMin
	raMax
	raSum
	raSumsq
	raCovered
	raLast
	raMinRate
	raMaxRate
	raResets
	nRA
)

var raNames = [nRA]string{"count", "min", "max", "sum", "sumsq", "covered", "last", "min_rate", "max_rate", "resets"}

// raNeeds are the aggregates each kind of metric needs to be summarised
// from them.
var raNeeds = map[stream.Sem][]int{
	stream.SemInstant:  {raCount, raMin, raMax, raSum, raSumsq, raCovered, raLast},
	stream.SemDiscrete: {raCount, raMin, raMax},
	stream.SemCounter:  {raCount, raMinRate, raMaxRate, raResets},
}

// reduced is the state of the aggregates of a reduced archive, kept beside
// the plain accumulator in the first pass.
type reduced struct {
	interval float64 // seconds
	aggs     map[stream.PMID]raRef
	hidden   map[stream.PMID]bool // aggregates left out of the default output
	metrics  map[stream.PMID]*raMetric
	touched  []*raInst
	slots    map[stream.PMID]*raSlot
	bySlot   []*raSlot
	warn     func(format string, args ...any)
}

type raRef struct {
	base stream.PMID
	k    int
	typ  stream.Type
}

type raMetric struct {
	name  string
	sem   stream.Sem
	typ   stream.Type
	insts map[int32]*raInst
}

// raInst is one instance: the record being read, then the sums over the
// window's intervals.
type raInst struct {
	m    *raMetric
	inst int32
	// the current record
	touched bool
	base    bool
	baseV   float64 // the metric's own value
	got     uint16  // aggregates seen, by kind
	agg     [nRA]float64
	ts      timeval
	// a record lacked an aggregate, or an aggregate came without the
	// metric's own value: the instance is summarised from its values
	bad bool

	n                 uint64
	sum, sumsq        float64
	covered           float64 // Σ covered
	min, max          float64
	minT, maxT        timeval
	have, haveExtreme bool
	resets, segs      uint64
	// the time average (see leftSum)
	newSeg         bool
	afterMark      bool // the stretch began at a <mark>
	rsum           float64
	prevLast, step float64
	prevT          timeval
	// the last interval's share of rsum, by leftSum and by its mean ×
	// covered, kept until the next interval or <mark> tells which
	pending, pendMarked bool
	pendR, pendW        float64
	pendCov, pendExp    float64 // its covered time, and as expected (NaN: unknown)
	pendT               timeval
}

// newReduced returns the state for a reduced archive, or nil when md is
// not one (or the summary is pmlogsummary's, or -B asks for a histogram
// of every value, which the aggregates cannot give).
func newReduced(o *Options, md *format.Metadata, warn func(format string, args ...any)) *reduced {
	if o.Prog == "pmlogsummary" || o.Bins > 0 {
		return nil
	}
	interval, ok := reduceLabel(md)
	if !ok {
		return nil
	}
	r := &reduced{interval: interval, aggs: map[stream.PMID]raRef{}, metrics: map[stream.PMID]*raMetric{},
		slots: map[stream.PMID]*raSlot{}, warn: warn}
	byName := map[string]*stream.Desc{}
	for _, d := range md.Descs {
		for _, n := range d.Names {
			if _, ok := byName[n]; !ok {
				byName[n] = d
			}
		}
	}
	have := map[stream.PMID]uint16{}
	byPMID := map[stream.PMID]*stream.Desc{}
	for _, d := range md.Descs {
		if len(d.Names) == 0 {
			continue
		}
		rest, ok := strings.CutPrefix(d.Names[0], reducePrefix)
		if !ok {
			continue
		}
		for k, a := range raNames {
			name, ok := strings.CutPrefix(rest, a+".")
			if !ok {
				continue
			}
			base := byName[name]
			if base == nil || !d.Type.Numeric() || d.InDom != base.InDom {
				break
			}
			r.aggs[d.PMID] = raRef{base: base.PMID, k: k, typ: d.Type}
			byPMID[base.PMID] = base
			have[base.PMID] |= 1 << k
			break
		}
	}
	seen := map[stream.PMID]bool{}
	for _, d := range md.Descs {
		if seen[d.PMID] || len(d.Names) == 0 || strings.HasPrefix(d.Names[0], reducePrefix) || !d.Type.Numeric() {
			continue
		}
		seen[d.PMID] = true
		needs, ok := raNeeds[d.Sem]
		if !ok {
			continue
		}
		var missing []string
		for _, k := range needs {
			if have[d.PMID]&(1<<k) == 0 {
				missing = append(missing, raNames[k])
			}
		}
		if len(missing) > 0 {
			warn("%s: the reduced archive lacks its aggregate(s) %s: summarised from its values\n",
				d.Names[0], strings.Join(missing, ", "))
			continue
		}
		r.metrics[d.PMID] = &raMetric{name: d.Names[0], sem: d.Sem, typ: d.Type, insts: map[int32]*raInst{}}
	}
	// Aggregates of metrics summarised from their values are not used,
	// and printed; those of metrics summarised from them, and of strings
	// (which have no summary), are left out of the default output.
	r.hidden = map[stream.PMID]bool{}
	for p, ref := range r.aggs {
		if r.metrics[ref.base] != nil {
			r.hidden[p] = true
			continue
		}
		delete(r.aggs, p)
		if d := byPMID[ref.base]; d != nil && !d.Type.Numeric() {
			r.hidden[p] = true
		}
	}
	return r
}

// reduceLabel reads the reduction's context labels: whether the archive
// is pcpreduce's, and its interval in seconds.
func reduceLabel(md *format.Metadata) (float64, bool) {
	for _, ls := range md.LabelSets {
		if ls.Type&stream.LabelTypeMask != stream.LabelContext || len(ls.Sets) == 0 {
			continue
		}
		var labs map[string]any
		if json.Unmarshal([]byte(ls.Sets[0].JSON), &labs) != nil || labs["reduce_tool"] != "pcpreduce" {
			continue
		}
		iv, _ := labs["reduce_interval"].(float64)
		return iv, true
	}
	return 0, false
}

// hides reports whether p is an aggregate metric whose metric is
// summarised from it: its own lines are left out of the default output.
func (r *reduced) hides(p stream.PMID) bool {
	if !r.hidden[p] {
		return false
	}
	if m := r.metrics[r.aggs[p].base]; m != nil {
		for _, ri := range m.insts {
			if ri.bad {
				return false // some of it is summarised from its values
			}
		}
	}
	return true
}

func (r *reduced) inst(m *raMetric, inst int32) *raInst {
	ri := m.insts[inst]
	if ri == nil {
		ri = &raInst{m: m, inst: inst, newSeg: true}
		m.insts[inst] = ri
	}
	return r.touch(ri)
}

// touch takes an instance into the result being read.
func (r *reduced) touch(ri *raInst) *raInst {
	if !ri.touched {
		ri.touched, ri.base, ri.got = true, false, 0
		r.touched = append(r.touched, ri)
	}
	return ri
}

// raSlot is what a PMID is to the aggregates: a metric's own values
// (k < 0), one of its aggregates, or nothing (m nil); byPos remembers the
// instance at each position of its last value set.
type raSlot struct {
	pmid  stream.PMID
	m     *raMetric
	k     int
	typ   stream.Type
	byPos []*raInst
}

// slot resolves a value set's PMID, looking first at the one that was at
// the same position of the last result (pcpreduce writes every interval
// in the same order).
func (r *reduced) slot(i int, p stream.PMID) *raSlot {
	if i < len(r.bySlot) {
		if sl := r.bySlot[i]; sl != nil && sl.pmid == p {
			return sl
		}
	}
	sl := r.slots[p]
	if sl == nil {
		sl = &raSlot{pmid: p, k: -1}
		if m := r.metrics[p]; m != nil {
			sl.m, sl.typ = m, m.typ
		} else if ref, ok := r.aggs[p]; ok {
			sl.m, sl.k, sl.typ = r.metrics[ref.base], ref.k, ref.typ
		}
		r.slots[p] = sl
	}
	for len(r.bySlot) <= i {
		r.bySlot = append(r.bySlot, nil)
	}
	r.bySlot[i] = sl
	return sl
}

// add reads one result: the metrics' own values and their aggregates,
// folded once the result is read.
func (r *reduced) add(res *stream.Result, ts timeval) error {
	it := res.VSets()
	for i := 0; it.Next(); i++ {
		vs := it.VSet()
		if vs.NumVal <= 0 {
			continue
		}
		sl := r.slot(i, vs.PMID)
		if sl.m == nil {
			continue
		}
		for j := 0; j < int(vs.NumVal); j++ {
			inst := vs.Inst(j)
			var ri *raInst
			if j < len(sl.byPos) && sl.byPos[j] != nil && sl.byPos[j].inst == inst {
				ri = r.touch(sl.byPos[j])
			} else {
				ri = r.inst(sl.m, inst)
				for len(sl.byPos) <= j {
					sl.byPos = append(sl.byPos, nil)
				}
				sl.byPos[j] = ri
			}
			v, err := extract(vs, j, sl.typ)
			if err != nil {
				ri.bad = true
				continue
			}
			if sl.k < 0 {
				ri.base, ri.baseV = true, v
			} else {
				ri.agg[sl.k] = v
				ri.got |= 1 << sl.k
			}
		}
	}
	for _, ri := range r.touched {
		ri.touched = false
		ri.ts = ts
		ri.fold(r)
	}
	r.touched = r.touched[:0]
	return it.Err()
}

// mark starts a new stretch for every instance. pcpreduce stamps a
// <mark> that came inside an interval with the interval's end: that
// interval's samples are not evenly spaced, and its share of the time
// average is its mean × covered time instead.
func (r *reduced) mark(ts timeval) {
	for _, m := range r.metrics {
		for _, ri := range m.insts {
			ri.newSeg = true
			// when its covered time is not what its samples at the
			// instance's step before would cover (else the <mark> came
			// before them; an instance without a step yet is taken to
			// have started after it)
			if ri.pending && ri.pendT == ts && math.Abs(ri.pendCov-ri.pendExp) > 0.01*ri.pendCov {
				ri.pendMarked = true
			}
		}
	}
}

// commit adds the last interval's share of the time-weighted sum.
func (ri *raInst) commit() {
	if ri.pending {
		if ri.pendMarked {
			ri.rsum += ri.pendW
		} else {
			ri.rsum += ri.pendR
		}
	}
	ri.pending, ri.pendMarked = false, false
}

// fold takes one interval's aggregates into the window's.
func (ri *raInst) fold(r *reduced) {
	if ri.bad {
		return
	}
	for _, k := range raNeeds[ri.m.sem] {
		if ri.got&(1<<k) == 0 || !ri.base {
			ri.bad = true
			return
		}
	}
	a := &ri.agg
	c := a[raCount]
	if !(c > 0 && c < 1<<53) || ri.m.sem == stream.SemCounter && !(a[raResets] >= 0 && a[raResets] <= c) {
		ri.bad = true
		return
	}
	ri.n += uint64(c)
	ri.have = true
	lo, hi := a[raMin], a[raMax]
	if ri.m.sem == stream.SemCounter {
		lo, hi = a[raMinRate], a[raMaxRate]
		res := uint64(a[raResets])
		if ri.newSeg {
			ri.segs++
			// pcpreduce counts a decrease across a <mark> as a reset
			// (of the interval's first sample); pmlogsummary leaves
			// that step out once, as it crosses the <mark>
			if ri.afterMark && res > 0 {
				res--
			}
		}
		ri.resets += res
	}
	// pmlogsummary keeps the first of equal extremes
	if !math.IsNaN(lo) && (!ri.haveExtreme || lo < ri.min) {
		ri.min, ri.minT = lo, ri.ts
	}
	if !math.IsNaN(hi) && (!ri.haveExtreme || hi > ri.max) {
		ri.max, ri.maxT = hi, ri.ts
	}
	ri.haveExtreme = ri.haveExtreme || !math.IsNaN(lo) && !math.IsNaN(hi)
	if ri.m.sem == stream.SemInstant {
		ri.sum += a[raSum]
		ri.sumsq += a[raSumsq]
		ri.covered += a[raCovered]
		ri.commit()
		ri.pendR, ri.pendW, ri.pendT, ri.pending = ri.leftSum(r), ri.baseV*a[raCovered], ri.ts, true
		ri.pendCov = a[raCovered]
		ri.prevLast, ri.prevT = a[raLast], ri.ts
	}
	ri.newSeg, ri.afterMark = false, false
}

// leftSum is the interval's share of pmlogsummary's time-weighted sum,
// Σ v(i-1)·(t(i) − t(i-1)) over the samples i of the interval: each
// sample weighted by the time until the next one (see docs/pcpsummary.md,
// "Reduced archives"). pcpreduce's covered time gives each sample the time
// since the one before, so the interval's c samples, of sum S and last L,
// after a last sample P in the instance's interval before, cover
//
//   - at the start of a stretch (the window's start, after a <mark>):
//     (c−1) steps, dt = covered/(c−1), and the sum is dt·(S − L);
//   - after the interval just before: c steps, dt = covered/c, and the sum
//     is dt·(P + S − L);
//   - after intervals without the instance (it left and came back, or is
//     sampled less often than the reduction's interval): a first step G
//     then c−1 steps of the instance's last known step dt, so that
//     G = covered − (c−1)·dt and the sum is P·G + dt·(S − L).
//
// Each is exact when the samples are evenly spaced as said.
func (ri *raInst) leftSum(r *reduced) float64 {
	a := &ri.agg
	cov := a[raCovered]
	lo, hi := a[raMin], a[raMax]
	if !ri.newSeg {
		lo, hi = min(lo, ri.prevLast), max(hi, ri.prevLast)
	}
	// each weight goes to the last sample before the interval or to one
	// of its samples: the sum is within these bounds whatever the spacing
	return max(lo*cov, min(hi*cov, ri.leftSum1(r)))
}

func (ri *raInst) leftSum1(r *reduced) float64 {
	a := &ri.agg
	c, S, L, cov := a[raCount], a[raSum], a[raLast], a[raCovered]
	prev := ri.step
	ri.pendExp = math.NaN()
	if ri.newSeg {
		if c < 2 || cov <= 0 {
			return 0
		}
		if prev > 0 {
			ri.pendExp = (c - 1) * prev
		}
		ri.step = cov / (c - 1)
		return ri.step * (S - L)
	}
	gap := float64(ri.ts.sec-ri.prevT.sec) + float64(ri.ts.usec-ri.prevT.usec)/1e6
	if gap > r.interval+1e-3 {
		dt := prev
		if c == 1 || dt > 0 && cov-(c-1)*dt >= dt {
			g := cov - (c-1)*dt
			return ri.prevLast*g + dt*(S-L)
		}
	}
	if prev > 0 {
		ri.pendExp = c * prev
	}
	ri.step = cov / c
	return ri.step * (ri.prevLast + S - L)
}

// lookup returns the aggregates of one instance of a metric, when it was
// summarised from them (a warning when its aggregates were incomplete).
func (r *reduced) lookup(p stream.PMID, inst int32) *raInst {
	if r == nil {
		return nil
	}
	m := r.metrics[p]
	if m == nil {
		return nil
	}
	ri := m.insts[inst]
	if ri == nil || !ri.have && !ri.bad {
		return nil
	}
	if ri.bad {
		r.warn("%s: instance %d: the reduced archive lacks some of its aggregates: summarised from its values\n", m.name, inst)
		return nil
	}
	return ri
}

// apply replaces the statistics of st that the aggregates give (the
// others stay those of the archive's values: see docs/pcpsummary.md).
func (r *reduced) apply(ri *raInst, st *Stat, o *Options) {
	st.FromAggregates, st.ReduceInterval = true, r.interval
	st.Samples = ri.n
	if st.Insufficient {
		return
	}
	if ri.haveExtreme && !(ri.m.sem == stream.SemCounter && o.Sum) {
		st.Min, st.Max, st.MinTime, st.MaxTime = ri.min, ri.max, ri.minT.stamp(), ri.maxT.stamp()
	}
	switch ri.m.sem {
	case stream.SemInstant:
		n := float64(ri.n)
		mean := ri.sum / n
		st.Count, st.Values, st.Sum, st.StochasticAverage = uint32(ri.n), ri.n, ri.sum, mean
		st.StdDev = math.Sqrt(max(0, ri.sumsq/n-mean*mean))
		st.TimeAverage = ri.timeAverage()
	case stream.SemDiscrete:
		st.Count = uint32(ri.n)
	case stream.SemCounter:
		// pmlogsummary counts the rates: not the first sample of each
		// stretch between <mark>s, not an interval with a reset.
		rates := ri.n - min(ri.n, ri.segs)
		rates -= min(rates, ri.resets)
		st.Count, st.Resets = uint32(rates), uint32(ri.resets)
	}
}

// timeAverage is pmlogsummary's time average of an instant metric: the
// time-weighted sum (leftSum) over the covered time, which is
// pmlogsummary's span (the window less the time across <mark>s).
func (ri *raInst) timeAverage() float64 {
	ri.commit()
	span := ri.covered
	if span == 0 {
		span = 1 // a single value, as pmlogsummary has it
	}
	return ri.rsum / span
}
