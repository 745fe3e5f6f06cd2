package summary

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/stream"
)

// instStats is the running state of one instance of one metric
// (pmlogsummary's instData), field for field: the arithmetic is
// pmlogsummary's, including what it does by accident, because its users
// compare numbers.
type instStats struct {
	inst      int32
	count     uint32
	stocave   float64 // sum of values (non-counters) or of rates (counters)
	timeave   float64 // sum of value × interval, or of counter deltas
	min, max  float64
	sum       float64
	lastval   float64
	first     timeval
	last      timeval
	mintime   timeval
	maxtime   timeval
	markcount int32
	marked    bool
	bintotal  uint32
	bin       []uint32
	spread    spread // values (rates, for counters): pcpsummary's own statistics
	pres      presence
}

// metricStats is one metric's state (pmlogsummary's aveData).
type metricStats struct {
	pmid  stream.PMID
	typ   stream.Type
	sem   stream.Sem
	indom stream.InDomID
	units stream.Units // rate units for counters (unless -s)
	scale float64      // seconds per unit of the counter's time dimension
	insts []*instStats
	pb    *pctBatch // the instances' values waiting to be counted (percentiles)
	// first maps an instance to its first position in insts, standing in
	// for pmlogsummary's linear search (which finds the first).
	first map[int32]int
	seq   uint64 // results with values of the metric so far (first pass)
	// shift is where the last search found an instance relative to its
	// position in the value set: when the sets are the stored order
	// moved along (an instance gone, one come back), trying j+shift
	// first saves the map. dups: some instance is in insts twice (then
	// only the map knows which position is the first).
	shift int
	dups  bool
	// foreign: a stub for a metric another accumulator owns (split).
	foreign bool
}

// accumulator is the state of both passes over the window.
type accumulator struct {
	o       *Options
	meta    descSource
	metrics map[stream.PMID]*metricStats
	skip    map[stream.PMID]bool // no descriptor, or not numeric
	order   []*metricStats       // creation order, for marks
	rc      realCache
	warned  map[stream.PMID]bool
	warnf   func(p stream.PMID, format string, args ...any)
	dbg     Debug
	tr      *tracer
	// bySlot remembers the metric of each value set position of the
	// last result: loggers write the same metrics in the same order, so
	// this usually saves the map lookup. (Metrics leave the map only
	// when printed, after both passes.)
	bySlot []*metricStats
	fatal  error // pmlogsummary exits at once (a first value it cannot read)
	// binning is set for the second pass (-B), which presence ignores.
	binning bool
	// honest: keep each instance's presence (only JSON and CSV print it).
	honest bool
	// split, when not nil, shares the metrics between accumulators
	// reading the same records (parallel.go); metrics another one owns
	// are stubs with foreign set.
	split *split
	// say, when not nil (pcpsummary's own name, not pmlogsummary's),
	// takes the warning about a value that cannot be read, which is then
	// left out (pmlogsummary gives up on the archive at a first value it
	// cannot read, and says nothing of a later one without -v); loc says
	// where the current result was read, and unread which metrics were
	// warned of.
	say    func(string)
	loc    stream.Locator
	unread map[stream.PMID]bool
}

// descSource gives descriptors, as pmLookupDesc.
type descSource interface {
	Desc(p stream.PMID) (*stream.Desc, bool)
}

func newAccumulator(o *Options, meta descSource) *accumulator {
	return &accumulator{o: o, meta: meta, metrics: map[stream.PMID]*metricStats{},
		skip: map[stream.PMID]bool{}, warned: map[stream.PMID]bool{}, honest: o.JSON || o.CSV,
		unread: map[stream.PMID]bool{}}
}

// unreadable warns, once per metric, of a value of p in the result at t
// that cannot be read: where the result is, the metric, the time and the
// cause. The value is left out.
func (a *accumulator) unreadable(p stream.PMID, t stream.Timestamp, err error) {
	if a.unread[p] {
		return
	}
	a.unread[p] = true
	where := ""
	if a.loc != nil {
		if f, off, ok := a.loc.Where(); ok {
			where = fmt.Sprintf("%s: offset %d: ", f, off)
		}
	}
	name := p.String()
	if d, ok := a.meta.Desc(p); ok && len(d.Names) > 0 {
		name = d.Names[0] + " (" + name + ")"
	}
	a.say(fmt.Sprintf("%s: warning: %smetric %s: a value at %s cannot be read (%v): left out of the summary (and any later one that cannot be read)\n",
		a.o.Prog, where, name, t, err))
}

func (a *accumulator) pmiderr(p stream.PMID, format string, args ...any) {
	if a.warnf != nil && !a.warned[p] {
		a.warned[p] = true
		a.warnf(p, format, args...)
	}
}

// errConv is PM_ERR_CONV.
var errConv = errors.New("Impossible value or scale conversion")

// extract reads a value as pmExtractValue(..., PM_TYPE_DOUBLE).
func extract(vs *stream.VSet, i int, t stream.Type) (float64, error) {
	if vs.ValFmt == stream.ValInsitu { // dump.ExtractDouble's insitu cases, inline
		_, w := vs.RawPair(i)
		switch t {
		case stream.Type32:
			return float64(int32(w)), nil
		case stream.TypeU32:
			return float64(w), nil
		case stream.TypeFloat:
			return float64(math.Float32frombits(w)), nil
		}
		return 0, errConv
	}
	blk, err := vs.Block(i)
	if err != nil {
		return 0, err
	}
	if len(blk) == 12 && (blk[0] == uint8(t) || blk[0] == 0) { // 64-bit blocks, inline
		u := binary.BigEndian.Uint64(blk[4:])
		if blk[0] == 0 {
			u = binary.LittleEndian.Uint64(blk[4:])
		}
		switch t {
		case stream.Type64:
			return float64(int64(u)), nil
		case stream.TypeU64:
			return float64(u), nil
		case stream.TypeDouble:
			return math.Float64frombits(u), nil
		}
	}
	v, _ := vs.Value(i) // the same block, read again: the rare types
	f, ok := dump.ExtractDouble(t, v)
	if !ok {
		return 0, errConv
	}
	return f, nil
}

// mark is pmlogsummary's markrecord: discrete values are held to the
// mark, and every instance notes the gap.
func (a *accumulator) mark(ts timeval) {
	if a.dbg.Appl0 {
		a.tr.mark(ts)
	}
	for _, m := range a.order {
		for _, is := range m.insts {
			if m.sem == stream.SemDiscrete {
				d := a.rc.toReal(tsub(ts, is.last))
				is.stocave += is.lastval
				is.timeave += float64(is.lastval * d)
				is.last = ts
				is.count++
			}
			is.marked = true
			is.markcount++
			if !a.binning {
				is.pres.marks++
			}
		}
	}
}

// find returns the position of a value's instance in m.insts, as
// pmlogsummary picks it: position j when that holds the instance (or the
// metric is singular and the set has one value), otherwise a search, and
// -1 when the instance is new (to be appended).
func (m *metricStats) find(j int, numval int32, inst int32) int {
	if numval <= 1 && m.indom == stream.InDomNull && j < len(m.insts) {
		return j // (none yet: a first value that could not be read)
	}
	if j < len(m.insts) {
		if m.insts[j].inst == inst {
			return j
		}
		if k := j + m.shift; !m.dups && k >= 0 && k < len(m.insts) && m.insts[k].inst == inst {
			return k // the only position holding inst, so the first
		}
		if k, ok := m.first[inst]; ok {
			m.shift = k - j
			return k
		}
		return -1
	}
	return -1
}

// newMetric is newHashItem.
func (a *accumulator) newMetric(d *stream.Desc) *metricStats {
	m := &metricStats{pmid: d.PMID, typ: d.Type, sem: d.Sem, indom: d.InDom, units: d.Units, first: map[int32]int{}}
	if m.sem == stream.SemCounter {
		if !a.o.Sum {
			u := m.units
			dimTime, scaleTime := u.DimTime(), u.ScaleTime()
			if dimTime == 0 {
				m.scale = 1
				scaleTime = 3 // PM_TIME_SEC
			} else if scaleTime > 3 {
				m.scale = math.Pow(60, float64(3-int(scaleTime)))
			} else {
				m.scale = math.Pow(1000, float64(3-int(scaleTime)))
			}
			m.units = stream.NewUnits(u.DimSpace(), dimTime-1, u.DimCount(), u.ScaleSpace(), scaleTime, u.ScaleCount())
		} else {
			m.scale = 1
		}
	}
	return m
}

// newInst is newHashInst: v is the first value, at ts.
func (a *accumulator) newInst(m *metricStats, inst int32, v float64, ts timeval) {
	is := &instStats{inst: inst, lastval: v, first: ts, last: ts, mintime: ts, maxtime: ts}
	if a.honest {
		is.pres.see(ts, m.seq)
	}
	is.spread.wants = len(a.o.Percentiles) > 0
	is.spread.off = !a.o.JSON && !a.o.CSV && !is.spread.wants
	if is.spread.wants {
		if m.pb == nil {
			m.pb = &pctBatch{}
		}
		m.pb.join(&is.spread)
	}
	if a.o.Bins > 0 {
		is.bin = make([]uint32, a.o.Bins)
	}
	if m.sem != stream.SemCounter {
		is.min, is.max, is.sum, is.stocave, is.count = v, v, v, v, 1
		is.spread.add(v)
	}
	if _, ok := m.first[inst]; !ok {
		m.first[inst] = len(m.insts)
	} else {
		m.dups = true
	}
	m.insts = append(m.insts, is)
	if a.dbg.Appl0 {
		a.tr.initially(m.pmid, is.min, is.max)
	}
}

// unwrap is pmlogsummary's unwrap: with PCP_COUNTER_WRAP set, a counter
// that went down wrapped at its type's size.
func (a *accumulator) unwrap(cur, prev float64, t stream.Type) float64 {
	if cur-prev < 0 && a.o.CounterWrap {
		switch t {
		case stream.Type32, stream.TypeU32:
			return cur + 4294967296.0
		case stream.Type64, stream.TypeU64:
			return cur + 18446744073709551616.0
		}
	}
	return cur
}

// metric returns the state of a value set's metric (nil if none yet),
// looking first at the metric that was at the same position last time.
func (a *accumulator) metric(slot int, p stream.PMID, numval int32) *metricStats {
	if slot < len(a.bySlot) {
		if m := a.bySlot[slot]; m != nil && m.pmid == p {
			return m
		}
	}
	m := a.metrics[p]
	if m == nil && a.split != nil && !a.split.mine(p, numval) {
		m = a.split.stub(p)
	}
	for len(a.bySlot) <= slot {
		a.bySlot = append(a.bySlot, nil)
	}
	a.bySlot[slot] = m
	return m
}

// add is pmlogsummary's calcaverage for one result.
func (a *accumulator) add(r *stream.Result, ts timeval) error {
	rate := 0.0 // as in calcaverage, it outlives a value set (traces only)
	it := r.VSets()
	for slot := 0; it.Next(); slot++ {
		vs := it.VSet()
		if vs.NumVal == 0 {
			continue
		}
		if vs.NumVal < 0 {
			a.pmiderr(vs.PMID, "failed in archive value fetch: %s\n", errText(vs.NumVal))
			continue
		}
		m := a.metric(slot, vs.PMID, vs.NumVal)
		if m != nil && m.foreign {
			continue
		}
		if m == nil {
			if a.skip[vs.PMID] {
				continue
			}
			d, ok := a.meta.Desc(vs.PMID)
			if !ok {
				a.pmiderr(vs.PMID, "cannot find descriptor: Unknown or illegal metric identifier\n")
				a.skip[vs.PMID] = true
				continue
			}
			if !d.Type.Numeric() {
				a.skip[vs.PMID] = true
				continue
			}
			m = a.newMetric(d)
			m.seq = 1
			for j := 0; j < int(vs.NumVal); j++ {
				v, err := extract(vs, j, m.typ)
				if err != nil && a.say != nil {
					a.unreadable(vs.PMID, r.T, err)
					continue
				}
				if err != nil {
					return a.badFirst(vs.PMID, r.T, err)
				}
				a.newInst(m, vs.Inst(j), v, ts)
			}
			a.metrics[vs.PMID] = m
			a.bySlot[slot] = m
			a.order = append(a.order, m)
			continue
		}
		m.seq++
		for j := 0; j < int(vs.NumVal); j++ {
			inst := vs.Inst(j)
			k := m.find(j, vs.NumVal, inst)
			if k < 0 {
				v, err := extract(vs, j, m.typ)
				if err != nil && a.say != nil {
					a.unreadable(vs.PMID, r.T, err)
					continue
				}
				if err != nil {
					return a.badFirst(vs.PMID, r.T, err)
				}
				a.newInst(m, inst, v, ts)
				continue
			}
			is := m.insts[k]
			if a.honest {
				is.pres.see(ts, m.seq)
			}
			v, err := extract(vs, j, m.typ)
			if err != nil && a.say != nil {
				a.unreadable(vs.PMID, r.T, err)
				continue
			}
			if err != nil {
				a.pmiderr(vs.PMID, "failed to extract value: %v\n", err)
				continue
			}
			if math.IsNaN(v) {
				continue
			}
			diff := a.rc.toReal(tsub(ts, is.last))
			wrap := false
			val := v
			if m.sem == stream.SemCounter {
				diff *= m.scale
				if diff == 0 {
					continue
				}
				if !is.marked {
					val = a.unwrap(v, is.lastval, m.typ)
				}
				if a.dbg.Appl0 {
					a.tr.base(m.pmid, val, is.count)
				}
				if !is.marked && v < is.lastval {
					is.pres.resets++
				}
				if is.marked || val < is.lastval {
					if a.dbg.Appl1 {
						a.tr.wrapped(m.pmid)
					}
					wrap = true
					is.marked = false
					is.first = tsub(tadd(is.first, ts), is.last)
				} else {
					delta := val - is.lastval
					rate = delta / diff
					is.spread.add(rate)
					is.stocave += rate
					is.timeave += delta
					if is.count == 0 {
						is.min, is.max = rate, rate
						is.sum = delta
					} else {
						if a.dbg.Appl2 {
							if rate < is.min {
								a.tr.extreme("min", m.pmid, m.indom, is.inst, rate, ts)
							}
							if rate > is.max {
								a.tr.extreme("max", m.pmid, m.indom, is.inst, rate, ts)
							}
						}
						if rate < is.min {
							is.min, is.mintime = rate, ts
						}
						if rate > is.max {
							is.max, is.maxtime = rate, ts
						}
						is.sum += delta
					}
				}
			} else {
				is.spread.add(v)
				is.sum += v
				is.stocave += v
				if v < is.min {
					is.min, is.mintime = v, ts
				}
				if v > is.max {
					is.max, is.maxtime = v, ts
				}
				if !is.marked {
					is.timeave += float64(is.lastval * diff)
				} else {
					is.marked = false
					is.first = tsub(tadd(is.first, ts), is.last)
				}
			}
			if !wrap {
				is.count++
				if a.dbg.Appl1 && (m.sem != stream.SemCounter || is.count > 0) {
					span := a.rc.toReal(tsub(ts, is.first))
					a.tr.update(m.pmid, m.sem == stream.SemCounter, is, diff, rate, val, span)
				}
			}
			is.lastval = v
			is.last = ts
		}
	}
	return it.Err()
}

// badFirst is pmlogsummary's reaction to a first value it cannot read:
// it gives up on the whole archive.
func (a *accumulator) badFirst(p stream.PMID, t stream.Timestamp, err error) error {
	a.pmiderr(p, "failed to extract value: %v\n", err)
	a.fatal = &CorruptError{T: t, PMID: p, Err: err}
	return a.fatal
}

// CorruptError is the end of a summary at a value that cannot be read
// (pmlogsummary's "possibly corrupt archive?", its words as Error's):
// the metric, and the time of the result that holds it. Only under
// pmlogsummary's name: pcpsummary says where such a value is and reads
// on (unreadable).
type CorruptError struct {
	T    stream.Timestamp
	PMID stream.PMID
	Err  error
}

func (e *CorruptError) Error() string { return "possibly corrupt archive?" }

// findbin is pmlogsummary's findbin.
func findbin(nbins int, val, min, max float64) int {
	binsize := (max - min) / float64(nbins)
	bound := min
	i := 0
	for ; i < nbins-1; i++ {
		next := bound + binsize
		if val >= bound && val <= next {
			break
		}
		bound = next
	}
	return i
}

// findbin is findbin with its trace.
func (a *accumulator) findbin(p stream.PMID, val, min, max float64) int {
	i := findbin(a.o.Bins, val, min, max)
	if a.dbg.Appl0 {
		a.tr.bin(p, i, a.o.Bins, val, min, max)
	}
	return i
}

// bin is pmlogsummary's calcbinning for one result: the second look at the
// window, which recomputes each rate and counts it into a bin between the
// first pass's minimum and maximum. It leaves behind what pmlogsummary's
// second pass leaves behind (counts, times, marks counted twice), since
// the printed averages are computed from that.
func (a *accumulator) bin(r *stream.Result, ts timeval) error {
	it := r.VSets()
	for slot := 0; it.Next(); slot++ {
		vs := it.VSet()
		if vs.NumVal == 0 {
			continue
		}
		if vs.NumVal < 0 {
			a.pmiderr(vs.PMID, "failed in 2nd pass archive fetch: %s\n", errText(vs.NumVal))
			continue
		}
		m := a.metric(slot, vs.PMID, vs.NumVal)
		if m == nil || m.foreign {
			continue
		}
		for j := 0; j < int(vs.NumVal); j++ {
			inst := vs.Inst(j)
			k := m.find(j, vs.NumVal, inst)
			if k < 0 {
				a.pmiderr(vs.PMID, "ignoring new instance found on second pass\n")
				continue
			}
			is := m.insts[k]
			v, err := extract(vs, j, m.typ)
			if err != nil {
				a.pmiderr(vs.PMID, "failed to extract value: %v\n", err)
				continue
			}
			if math.IsNaN(v) {
				continue
			}
			if is.bintotal == 0 {
				is.bintotal = is.count
				is.last, is.first, is.lastval = ts, ts, v
				if m.sem == stream.SemCounter {
					is.count = 0
				} else {
					is.count = 1
					is.bin[a.findbin(m.pmid, v, is.min, is.max)]++
				}
				continue
			}
			diff := a.rc.toReal(tsub(ts, is.last))
			wrap := false
			if m.sem == stream.SemCounter {
				diff *= m.scale
				if diff == 0 {
					continue
				}
				val := v
				if !is.marked {
					val = a.unwrap(v, is.lastval, m.typ)
				}
				if is.marked || val < is.lastval {
					wrap = true
					is.marked = false
					is.first = tsub(tadd(is.first, ts), is.last)
				} else {
					rate := (val - is.lastval) / diff
					is.bin[a.findbin(m.pmid, rate, is.min, is.max)]++
				}
			} else {
				is.bin[a.findbin(m.pmid, v, is.min, is.max)]++
			}
			if !wrap {
				is.count++
			}
			is.lastval = v
			is.last = ts
		}
	}
	return it.Err()
}
