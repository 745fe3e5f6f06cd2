package reduce

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Reducing a reduced archive again: each input interval's aggregates are
// merged (counts, sums, sums of squares and covered time added, minimums
// and maximums kept, the time-weighted sum taken back as mean × covered,
// the last value and the counter's monotone value at the end taken), so
// that 5 minutes then 1 hour gives what 1 hour directly gives (up to the
// rounding of mean × covered). The aggregate metrics keep their PMIDs:
// they are allocated again in the same order from the same free clusters.

type aggRef struct {
	name string // the metric it is an aggregate of
	k    int
}

// detectReduced notes whether the input is pcpreduce's output (its context
// label says so) and which of its metrics are aggregates.
func (n *native) detectReduced(meta *format.Metadata) {
	if n.reduced = isReduced(meta); !n.reduced {
		return
	}
	n.inAgg = map[stream.PMID]aggRef{}
	n.byName = map[string]*nMetric{}
	for _, d := range meta.Descs {
		rest, ok := strings.CutPrefix(d.Names[0], AggPrefix+".")
		if !ok {
			continue
		}
		for k, a := range AggNames {
			if name, ok := strings.CutPrefix(rest, a+"."); ok {
				n.inAgg[d.PMID] = aggRef{name, k}
				break
			}
		}
	}
}

// isReduced says whether meta is that of pcpreduce's output: a context
// label set names it as the reduce_tool.
func isReduced(meta *format.Metadata) bool {
	for _, ls := range meta.LabelSets {
		if ls.Type&stream.LabelTypeMask == stream.LabelContext && len(ls.Sets) > 0 &&
			strings.Contains(ls.Sets[0].JSON, `"reduce_tool":"pcpreduce"`) {
			return true
		}
	}
	return false
}

// isInputAgg says whether a help text or label set belongs to one of the
// input's aggregate metrics (written again with the metric).
func (n *native) isInputAgg(r stream.Record) bool {
	if !n.reduced {
		return false
	}
	switch r := r.(type) {
	case *stream.Text:
		_, ok := n.inAgg[stream.PMID(r.Ident)]
		return ok && r.Type&stream.TextPMID != 0
	case *stream.LabelSet:
		_, ok := n.inAgg[stream.PMID(r.Ident)]
		return ok && r.Type&stream.LabelTypeMask == stream.LabelItem
	}
	return false
}

// mergeInput is one input interval of one metric-instance.
type mergeInput struct {
	agg  [nAgg]float64
	cnt  [2]uint64 // count, resets
	f    float64
	u    uint64
	s    string
	seen bool
}

func (n *native) resultReduced(r *stream.Result, t int64) error {
	var sts []*nInst
	vi := r.VSets()
	for vi.Next() {
		vs := vi.VSet()
		m, k := n.metrics[vs.PMID], -1
		if ref, ok := n.inAgg[vs.PMID]; ok {
			m, k = n.byName[ref.name], ref.k
		}
		if m == nil || m.kind == kSkip || vs.NumVal <= 0 {
			continue
		}
		typ := m.desc.Type
		if k >= 0 {
			typ = stream.TypeDouble
			if k == aggCount || k == aggResets {
				typ = stream.TypeU64
			}
		}
		for i := 0; i < int(vs.NumVal); i++ {
			v, err := vs.Value(i)
			if err != nil {
				return fmt.Errorf("%s%s: metric %s: %w", n.where(), r.T, m.desc.Names[0], err)
			}
			st := n.instance(m, vs.Inst(i))
			if !st.in.seen {
				st.in = mergeInput{seen: true}
				sts = append(sts, st)
			}
			switch {
			case k == aggCount || k == aggResets:
				u, err := v.Uint64(typ)
				if err != nil {
					return fmt.Errorf("%s%s: metric %s: %w", n.where(), r.T, vs.PMID, err)
				}
				st.in.cnt[min(k, 1)] = u
			case k >= 0:
				if st.in.agg[k], err = v.Float64(typ); err != nil {
					return fmt.Errorf("%s%s: metric %s: %w", n.where(), r.T, vs.PMID, err)
				}
			case m.kind == kString:
				st.in.s = strings.TrimRight(string(v.Payload), "\x00")
			default:
				if st.in.f, st.in.u, err = m.number(v); err != nil {
					return fmt.Errorf("%s%s: metric %s: %w", n.where(), r.T, m.desc.Names[0], err)
				}
			}
		}
	}
	if err := vi.Err(); err != nil {
		return err
	}
	for _, st := range sts {
		st.merge()
		st.in.seen = false
	}
	return nil
}

// merge adds an input interval (st.in) into the instance's interval.
func (st *nInst) merge() {
	in, a := &st.in, &st.acc
	first := a.n == 0
	a.n += in.cnt[0]
	a.resets += in.cnt[1]
	lo, hi := in.agg[aggMin], in.agg[aggMax]
	if first || lo < a.min {
		a.min = lo
	}
	if first || hi > a.max {
		a.max = hi
	}
	a.sum += in.agg[aggSum]
	a.sumsq += in.agg[aggSumsq]
	a.covered += in.agg[aggCovered]
	a.last = in.agg[aggLast]
	switch st.m.kind {
	case kString:
		st.lastS = in.s
	case kInstant:
		a.wsum += in.f * in.agg[aggCovered]
	case kDiscrete:
		a.lastDU, a.lastDF = in.u, in.f
	case kCounter:
		a.lastU, a.lastMonoF = in.u, in.f
		if lo, hi := in.agg[aggMinRate], in.agg[aggMaxRate]; !math.IsNaN(lo) && !math.IsNaN(hi) {
			if a.rates == 0 || lo < a.minRate {
				a.minRate = lo
			}
			if a.rates == 0 || hi > a.maxRate {
				a.maxRate = hi
			}
			a.rates++
		}
	}
}

// inputSource is the reduce_source label of a reduced input (the raw
// archive it came from), or def.
func (n *native) inputSource(meta *format.Metadata, def string) string {
	const key = `"reduce_source":`
	for _, ls := range meta.LabelSets {
		if ls.Type&stream.LabelTypeMask != stream.LabelContext || len(ls.Sets) == 0 {
			continue
		}
		j := ls.Sets[0].JSON
		if i := strings.Index(j, key); i >= 0 {
			if v, err := strconv.QuotedPrefix(j[i+len(key):]); err == nil {
				if s, err := strconv.Unquote(v); err == nil {
					return s
				}
			}
		}
	}
	return def
}
