package summary

import (
	"math"
	"strconv"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// The spread of each instance's values (of its rates, for counters), which
// pmlogsummary does not give: the standard deviation, and percentiles
// from a mergeable quantile sketch.
//
// Percentiles come from a DDSketch (github.com/DataDog/sketches-go: kept
// up by Datadog, and mergeable exactly, so that summaries of parts can be
// combined; t-digest ports are stale or merge approximately) with a
// relative accuracy of SketchAccuracy: the value reported for the q-th
// percentile is within 1% of a value whose rank is q% of the values. The
// sketch keeps at most sketchBins bins per instance (about 16 KiB), the
// lowest collapsing first, so memory grows with the number of instances
// and never with the archive's length.

// SketchAccuracy is the percentiles' relative accuracy.
const SketchAccuracy = 0.01

const sketchBins = 2048

// spread accumulates one instance's values: Welford's running mean and sum
// of squared deviations (stable where a sum of squares cancels: counters'
// large values), and the percentile bins when percentiles are asked for.
type spread struct {
	// off: nothing is accumulated (text output shows neither the
	// standard deviation nor percentiles, and Welford's division per
	// value was an eighth of a summary's time).
	off   bool
	wants bool
	n     float64
	mean  float64
	m2    float64
	// A run of equal values is counted at once (runV, runN): archives
	// hold long runs of one value (zeros, constants, counters that do
	// not move), and a run costs one bin index.
	runV, runN float64
	// The values' bins, counted in the sketch's own indexes
	// (sketchMapping): pos for positive values, neg for negative ones
	// (by the index of -v), zeros for the sketch's zero bin. They go into
	// the sketch (sk) when the percentiles are read, or when a bin would
	// take the span of pos or neg past sketchBins, or a count past 32
	// bits (then the sketch, which collapses its lowest bins, takes what
	// is counted, and counting starts again). A value counted here is
	// one increment; in the sketch, it went through two more pointers and
	// the store's range checks.
	pos, neg bins
	counted  float64 // values counted in pos and neg
	zeros    float64
	sk       *ddsketch.DDSketch
	// mb is where the values wait to be counted, with those of the
	// other instances of the metric (pctBatch), as instance k of it.
	mb *pctBatch
	k  uint32
}

// pctBatch holds the values of one metric's instances waiting to be
// counted into their bins, as their bins' codes (binCode), in the order
// they came: a value is an entry of its instance's number (spread.k) and
// its code, a run of equal values an entry with runFlag and one more with
// its count.
//
// Counting each value as it came missed the cache on its bin: the bins of
// tens of thousands of instances are far larger than the cache, and one
// instance's values land all over its bins (3.1 of the 6.4 s of CPU of a
// --percentiles summary of the 1 GiB bench archive went to that one
// increment). A batch per instance (128 codes) counted its bins a line at
// a time, but each value then went to a line of its own instance's batch,
// out of the cache by the time that instance came round again (1.3 s of
// the 1.9 s of CPU percentiles added to a --json summary of that archive,
// measured by leaving the batch out). One batch per metric is written in
// sequence, and is counted while the instances it names, just walked,
// are still in the cache.
type pctBatch struct {
	spreads []*spread // by instance number
	ents    []uint64  // k<<32 | code; a run: (k|runFlag)<<32 | code, count
	limit   int       // entries counted at once
}

const runFlag = 1 << 31

// join adds p to the metric's instances.
func (mb *pctBatch) join(p *spread) {
	p.mb, p.k = mb, uint32(len(mb.spreads))
	mb.spreads = append(mb.spreads, p)
	mb.limit = min(max(batchPerInst*len(mb.spreads), batchMin), batchMax)
}

// The batch's size: batchPerInst entries an instance, between batchMin
// and batchMax (64 KiB). On the 1 GiB bench archive (--json --percentiles
// 50,90,99), with a fuzzer on the other core, 32 and 64 an instance took
// about 6% less CPU than 16; idle, against the batches per instance, 32
// takes the same time and peaks at 67.7-73.6 MiB instead of 74.8-80.2
// (docs/benchmarks.md, ninth session).
const (
	batchPerInst = 32
	batchMin     = 256
	batchMax     = 8192
)

// count counts the batch into each instance's bins, each instance's
// values in the order they came.
func (mb *pctBatch) count() {
	ents := mb.ents
	for j := 0; j < len(ents); j++ {
		e := ents[j]
		k, c, n := uint32(e>>32), int32(uint32(e)), 1.0
		if k&runFlag != 0 && j+1 < len(ents) {
			k &^= runFlag
			j++
			n = float64(ents[j])
		}
		p := mb.spreads[k]
		// the common case, countCode's and bins.add's first steps
		// here: a value of a bin in range whose count stays a byte
		if c != zeroCode && c != skipCode && p.counted+n <= math.MaxUint32 {
			b := &p.pos
			if c&1 != 0 {
				b = &p.neg
			}
			if i := int(c>>1) - b.lo; uint(i) < uint(len(b.c)) {
				if s := uint32(b.c[i]) + uint32(n); s <= math.MaxUint8 {
					b.c[i] = uint8(s)
					p.counted += n
					continue
				}
			}
		}
		p.countCode(c, n)
	}
	mb.ents = ents[:0]
}

// zeroCode is the code of a value in the sketch's zero bin (between
// -MinIndexableValue and MinIndexableValue); skipCode, of a value too
// large to index, which the sketch leaves out.
const (
	zeroCode = math.MinInt32
	skipCode = math.MaxInt32
)

// binCode is v's bin in a sketch of sketchMapping: twice its index, plus
// one for a negative value (whose index is that of -v).
func binCode(v float64) int32 {
	lo, hi := sketchMapping.MinIndexableValue(), sketchMapping.MaxIndexableValue()
	switch {
	case v > lo:
		if v <= hi {
			return int32(sketchMapping.Index(v)) * 2
		}
	case v < -lo:
		if v >= -hi {
			return int32(sketchMapping.Index(-v))*2 + 1
		}
	default:
		return zeroCode
	}
	return skipCode // (a value past ±1e308 is left out of the sketch)
}

// bins counts values by bin index: c[k] plus hi[lo+k] is the count of
// index lo+k. A count is a byte until it would pass 255; then it moves
// into hi, which holds the rest (a byte a bin keeps an instance's bins a
// quarter of the size of 32-bit counts, and the bins of tens of thousands
// of instances in the cache: a --percentiles summary of the 1 GiB bench
// archive peaked at 79 MiB instead of 95-99).
type bins struct {
	lo int
	c  []uint8
	hi map[int]uint32
}

// add counts n values of index i; false if that would take the span past
// sketchBins (nothing is counted then).
func (b *bins) add(i int, n uint32) bool {
	if k := i - b.lo; uint(k) < uint(len(b.c)) {
		if s := uint32(b.c[k]) + n; s <= math.MaxUint8 {
			b.c[k] = uint8(s)
		} else {
			b.spill(i, s)
		}
		return true
	}
	return b.grow(i, n)
}

// spill moves a byte count, with n more, into hi.
func (b *bins) spill(i int, n uint32) {
	if b.hi == nil {
		b.hi = map[int]uint32{}
	}
	b.hi[i] += n
	b.c[i-b.lo] = 0
}

// binSlack is how many bins a count array is made with, and at least how
// many more it grows by, on the side it grows.
const binSlack = 8

func (b *bins) grow(i int, n uint32) bool {
	if len(b.c) == 0 {
		b.lo, b.c = i-binSlack/2, make([]uint8, binSlack)
		b.add(i, n)
		return true
	}
	lo, hi := min(b.lo, i), max(b.lo+len(b.c)-1, i)
	if hi-lo+1 > sketchBins {
		return false
	}
	extra := max(binSlack, (hi-lo+1)/2)
	if i < b.lo {
		lo = max(lo-extra, hi-sketchBins+1)
	} else {
		hi = min(hi+extra, lo+sketchBins-1)
	}
	c := make([]uint8, hi-lo+1)
	copy(c[b.lo-lo:], b.c)
	b.lo, b.c = lo, c
	b.add(i, n)
	return true
}

// into adds the counts to st, bin by bin, in ascending order of index
// (descending with down), and clears them.
func (b *bins) into(st store.Store, down bool) {
	for k := range b.c {
		if down {
			k = len(b.c) - 1 - k
		}
		if n := uint64(b.c[k]) + uint64(b.hi[b.lo+k]); n > 0 {
			st.AddWithCount(b.lo+k, float64(n))
		}
	}
	b.c, b.hi = b.c[:0], nil
}

// sketchMapping maps values to bins, for every sketch (it is read-only).
var sketchMapping, sketchMappingErr = mapping.NewCubicallyInterpolatedMapping(SketchAccuracy)

func (p *spread) add(v float64) {
	if p.off || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	p.n++
	d := v - p.mean
	p.mean += d / p.n
	p.m2 += d * (v - p.mean)
	if p.wants {
		if p.runN > 0 && v == p.runV {
			p.runN++
			return
		}
		p.flush()
		p.runV, p.runN = v, 1
	}
}

// flush puts the pending run of equal values in the metric's batch: a
// single value as one entry, a longer run as two.
func (p *spread) flush() {
	if p.runN == 0 {
		return
	}
	if p.mb == nil { // (a spread of its own: the tests')
		(&pctBatch{}).join(p)
	}
	mb := p.mb
	switch c := binCode(p.runV); {
	case p.runN == 1:
		mb.ents = append(mb.ents, uint64(p.k)<<32|uint64(uint32(c)))
	case p.runN <= math.MaxUint32:
		mb.ents = append(mb.ents, uint64(p.k|runFlag)<<32|uint64(uint32(c)), uint64(p.runN))
	default: // (over 4 billion equal values: at once, after what waits)
		mb.count()
		p.countCode(c, p.runN)
	}
	p.runN = 0
	if len(mb.ents) >= mb.limit {
		mb.count()
	}
}

// countCode counts n values of code c in their bin.
func (p *spread) countCode(c int32, n float64) {
	b := &p.pos
	switch {
	case c == zeroCode:
		p.zeros += n
		return
	case c == skipCode:
		return
	case c&1 != 0:
		b = &p.neg
	}
	if p.counted+n > math.MaxUint32 { // (a bin's count could overflow)
		p.drain()
		if n > math.MaxUint32 { // a run of over 4 billion values
			if p.sketch() != nil {
				st := p.sk.GetPositiveValueStore()
				if b == &p.neg {
					st = p.sk.GetNegativeValueStore()
				}
				st.AddWithCount(int(c>>1), n)
			}
			return
		}
	}
	p.counted += n
	if !b.add(int(c>>1), uint32(n)) {
		p.drain()
		p.counted = n
		b.add(int(c>>1), uint32(n))
	}
}

// sketch is the instance's sketch, made on first use (nil only if the
// library refused its constant arguments: no percentiles then).
func (p *spread) sketch() *ddsketch.DDSketch {
	if p.sk == nil {
		p.sk, _ = newSketch()
	}
	return p.sk
}

// newSketch makes a sketch of SketchAccuracy that keeps sketchBins bins,
// the lowest collapsing first. Its bins come from the library's cubically
// interpolated mapping, which keeps the same accuracy with a few more
// bins than the logarithmic one and no logarithm per value (a sixth of a
// --percentiles run's CPU went to math.Log).
func newSketch() (*ddsketch.DDSketch, error) {
	if sketchMappingErr != nil {
		return nil, sketchMappingErr
	}
	return ddsketch.NewDDSketch(sketchMapping, store.NewCollapsingLowestDenseStore(sketchBins), store.NewCollapsingLowestDenseStore(sketchBins)), nil
}

// drain moves the counted bins into the sketch (made on first use), in
// ascending order of value, the negative ones from the largest
// magnitude: within sketchBins of span the sketch ends up as adding each
// value in turn leaves it (its stores collapse nothing then, and a bin's
// count is a sum).
func (p *spread) drain() {
	if len(p.pos.c) == 0 && len(p.neg.c) == 0 && p.zeros == 0 {
		return
	}
	p.counted = 0
	if p.sketch() == nil {
		p.pos.c, p.neg.c, p.pos.hi, p.neg.hi, p.zeros = p.pos.c[:0], p.neg.c[:0], nil, nil, 0
		return
	}
	p.neg.into(p.sk.GetNegativeValueStore(), true)
	if p.zeros > 0 {
		_ = p.sk.AddWithCount(0, p.zeros)
		p.zeros = 0
	}
	p.pos.into(p.sk.GetPositiveValueStore(), false)
}

// stddev is the population standard deviation; NaN without values.
func (p *spread) stddev() float64 {
	if p.n == 0 {
		return math.NaN()
	}
	return math.Sqrt(p.m2 / p.n)
}

// Percentile is one percentile of an instance's values.
type Percentile struct {
	P     float64 // in percent, 0 < P <= 100
	Value float64 // NaN without values
}

func (p *spread) percentiles(ps []float64) []Percentile {
	p.flush()
	if p.mb != nil {
		p.mb.count()
	}
	p.drain()
	out := make([]Percentile, len(ps))
	for i, q := range ps {
		out[i] = Percentile{P: q, Value: math.NaN()}
		if p.sk != nil && !p.sk.IsEmpty() {
			if v, err := p.sk.GetValueAtQuantile(q / 100); err == nil {
				out[i].Value = v
			}
		}
	}
	return out
}

// ParsePercentiles reads a list such as "50,90,99.9".
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for f := range splitComma(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, &UsageError{"--percentiles: " + strconv.Quote(f) + " is not a percentile (a number above 0, at most 100)"}
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, &UsageError{"--percentiles: give a list, such as 50,90,99"}
	}
	return out, nil
}

func splitComma(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == ',' {
				if i > start && !yield(s[start:i]) {
					return
				}
				start = i + 1
			}
		}
	}
}
