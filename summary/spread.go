package summary

import (
	"math"
	"slices"
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
// large values), and the sketch when percentiles are asked for.
type spread struct {
	// off: nothing is accumulated (text output shows neither the
	// standard deviation nor percentiles, and Welford's division per
	// value was an eighth of a summary's time).
	off   bool
	n     float64
	mean  float64
	m2    float64
	sk    *ddsketch.DDSketch
	wants bool
	// A run of equal values goes into the sketch at once, with its count
	// (a sketch's Add takes a logarithm): archives hold long runs of one
	// value (zeros, constants, counters that do not move).
	runV, runN float64
	// Single values wait in codes, as their bins (binCode), and go into
	// the sketch sketchBatch at a time, bin by bin in ascending order:
	// one add per value went to a bin of a different instance's sketch
	// each time, a cache miss (97% of the sketch's time, on one load, on
	// the 1 GiB bench archive); in a batch, values of one bin share one
	// add. A batch of values (16 bytes with their count) missed the cache
	// on its own appends in turn (81% of flush's samples on that store):
	// 4-byte codes take four times fewer lines. Runs of a value wait in
	// runs, with their count.
	codes []int32
	runs  []weighted
	// scratch is drain's, shared by the instances of one accumulator
	// (one goroutine)
	scratch *drainScratch
}

// weighted is a value, or a bin index, and how many times it came.
type weighted struct {
	v, n float64
}

// drainScratch is drain's scratch: bin indexes of the batch's positive
// and negative values, and counts per bin.
type drainScratch struct {
	pos, neg []binCount
	counts   []float64
}

type binCount struct {
	i int
	n float64
}

// sketchBatch is how many single values wait before they go into the
// sketch: 256 took 3.8-4.1 s on the bench archive's --percentiles run
// against 4.4-4.6 s for 64, more sorted values sharing each bin's cache
// line.
const sketchBatch = 256

// sketchMapping maps values to bins, for every sketch (it is read-only).
var sketchMapping, sketchMappingErr = mapping.NewCubicallyInterpolatedMapping(SketchAccuracy)

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

// flush moves the pending run of equal values to the batch, and the
// batch into the sketch when it is full.
func (p *spread) flush() {
	switch {
	case p.runN == 0:
		return
	case p.runN == 1:
		if p.codes == nil {
			p.codes = make([]int32, 0, sketchBatch)
		}
		p.codes = append(p.codes, binCode(p.runV))
	default:
		p.runs = append(p.runs, weighted{p.runV, p.runN})
	}
	p.runN = 0
	if len(p.codes) == sketchBatch || len(p.runs) == sketchBatch {
		p.drain()
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

// drain adds the batch to the sketch, in ascending order of value: each
// value's bin index is computed, the indexes counted (in an array when
// they span few bins, as one instance's values mostly do; sorted
// otherwise), and each bin's count added once, in the order a sorted
// batch would visit them, so the sketch ends up as value-by-value adds
// leave it.
func (p *spread) drain() {
	if len(p.codes) == 0 && len(p.runs) == 0 {
		return
	}
	sk := p.sketch()
	if sk == nil {
		p.codes, p.runs = p.codes[:0], p.runs[:0]
		return
	}
	if p.scratch == nil {
		p.scratch = &drainScratch{}
	}
	sc := p.scratch
	pos, neg := sc.pos[:0], sc.neg[:0]
	zeros := 0.0
	add := func(c int32, n float64) {
		switch {
		case c == zeroCode:
			zeros += n
		case c == skipCode:
		case c&1 == 0:
			pos = append(pos, binCount{int(c >> 1), n})
		default:
			neg = append(neg, binCount{int(c >> 1), n})
		}
	}
	for _, c := range p.codes {
		add(c, 1)
	}
	for _, w := range p.runs {
		add(binCode(w.v), w.n)
	}
	// Ascending values: the negative ones from the largest magnitude.
	sc.counts = addBins(sk.GetNegativeValueStore(), neg, true, sc.counts)
	if zeros > 0 {
		_ = sk.AddWithCount(0, zeros)
	}
	sc.counts = addBins(sk.GetPositiveValueStore(), pos, false, sc.counts)
	sc.pos, sc.neg = pos, neg
	p.codes, p.runs = p.codes[:0], p.runs[:0]
}

// countSpan is the widest span of bin indexes counted in an array.
const countSpan = 1024

// addBins adds each count of idx to st's bin, bin by bin, in ascending
// order of index (descending with down); counts is scratch.
func addBins(st store.Store, idx []binCount, down bool, counts []float64) []float64 {
	if len(idx) == 0 {
		return counts
	}
	lo, hi := idx[0].i, idx[0].i
	for _, b := range idx {
		lo, hi = min(lo, b.i), max(hi, b.i)
	}
	if hi-lo < countSpan {
		if cap(counts) < countSpan {
			counts = make([]float64, countSpan)
		}
		c := counts[:hi-lo+1]
		for _, b := range idx {
			c[b.i-lo] += b.n
		}
		for k := range c {
			if down {
				k = len(c) - 1 - k
			}
			if c[k] > 0 {
				st.AddWithCount(lo+k, c[k])
				c[k] = 0
			}
		}
		return counts
	}
	slices.SortFunc(idx, func(a, b binCount) int { return a.i - b.i })
	if down {
		slices.Reverse(idx)
	}
	for j := 0; j < len(idx); {
		i, n := idx[j].i, idx[j].n
		for j++; j < len(idx) && idx[j].i == i; j++ {
			n += idx[j].n
		}
		st.AddWithCount(i, n)
	}
	return counts
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
