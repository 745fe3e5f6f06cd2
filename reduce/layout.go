package reduce

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// The layout of a reduced archive (docs/pcpreduce.md, "Layout of a reduced
// archive"): each metric keeps its name, PMID and instance domain, with its
// interval value; each aggregate of it is a metric of its own named
// pcpreduce.AGG.NAME, in a PMID cluster the input does not use, labelled
// {"reduce_aggregate":AGG,"reduce_metric":NAME}.

// AggPrefix is the name subtree of the aggregate metrics.
const AggPrefix = "pcpreduce"

// Aggregate kinds, in the order their metrics are allocated.
const (
	aggCount = iota
	aggMin
	aggMax
	aggSum
	aggSumsq
	aggCovered
	aggLast
	aggMinRate
	aggMaxRate
	aggResets
	nAgg
)

// AggNames are the aggregate kinds as they appear in names and labels.
var AggNames = [nAgg]string{"count", "min", "max", "sum", "sumsq", "covered", "last", "min_rate", "max_rate", "resets"}

var aggHelp = [nAgg]string{
	"number of samples of %s in the interval",
	"lowest sample of %s in the interval",
	"highest sample of %s in the interval",
	"sum of the samples of %s in the interval",
	"sum of the squares of the samples of %s in the interval",
	"seconds of the interval covered by samples of %s (each sample covers the time since the one before, not across a <mark>)",
	"last sample of %s in the interval",
	"lowest rate of %s between two consecutive samples ending in the interval",
	"highest rate of %s between two consecutive samples ending in the interval",
	"number of resets (decreases that are not 32-bit wraps) of %s in the interval",
}

// aggsOf lists the aggregates kept for each kind of metric.
var aggsOf = map[int][]int{
	kInstant:  {aggCount, aggMin, aggMax, aggSum, aggSumsq, aggCovered, aggLast},
	kDiscrete: {aggCount, aggMin, aggMax, aggCovered},
	kCounter:  {aggCount, aggCovered, aggMinRate, aggMaxRate, aggResets},
	kString:   {aggCount},
}

func kindOf(d *stream.Desc) int {
	switch {
	case d.Type == stream.TypeString:
		return kString
	case d.Type > stream.TypeString || d.Type < stream.Type32:
		return kSkip
	case d.Sem == stream.SemCounter:
		return kCounter
	case d.Sem == stream.SemDiscrete:
		return kDiscrete
	}
	return kInstant
}

// desc writes a metric's descriptor as the native mode changes it, and the
// descriptors, help text and labels of its aggregates.
func (n *native) desc(d *stream.Desc) error {
	if _, ok := n.inAgg[d.PMID]; n.metrics[d.PMID] != nil || ok {
		return nil
	}
	if n.late {
		if err := n.lateDesc(d); err != nil {
			return err
		}
	}
	m := &nMetric{desc: d, kind: kindOf(d), out: d.Type, insts: map[int32]*nInst{}}
	m.desc = &stream.Desc{T: n.now, PMID: d.PMID, Type: d.Type, InDom: d.InDom, Sem: d.Sem, Units: d.Units,
		Names: slices.Clone(d.Names)}
	n.metrics[d.PMID] = m
	if n.byName != nil {
		n.byName[d.Names[0]] = m
	}
	if m.kind == kSkip {
		if !d.Type.Defined() {
			// no PCP type: a damaged descriptor, said as such
			n.say("%s: %s: warning: %s (PMID %s): descriptor of type %d, which is no PCP type: metric skipped\n",
				n.opts.Prog, n.what, d.Names[0], d.PMID, int32(d.Type))
			return nil
		}
		n.say("%s: %s: warning: skipping %s metric\n", n.opts.Prog, d.Names[0], d.Type)
		return nil
	}
	m.float = d.Type == stream.TypeFloat || d.Type == stream.TypeDouble
	switch {
	case m.kind == kInstant:
		m.out = stream.TypeDouble
	case m.kind == kCounter && m.float:
		m.out = stream.TypeDouble
	case m.kind == kCounter:
		m.out = stream.TypeU64
	}
	out := *m.desc
	out.Type = m.out
	if err := n.emit(&out); err != nil {
		return err
	}
	m.agg = make([]stream.PMID, nAgg)
	for _, k := range aggsOf[m.kind] {
		dom := d.PMID.Domain()
		if d.InDom != stream.InDomNull {
			dom = d.InDom.Domain()
		}
		id, err := n.newPMID(dom)
		if err != nil {
			return err
		}
		m.agg[k] = id
		units, ok := aggUnits(k, d.Units)
		ad := &stream.Desc{T: n.now, PMID: id, Type: stream.TypeDouble, InDom: d.InDom, Sem: stream.SemInstant,
			Units: units}
		if k == aggCount || k == aggResets {
			ad.Type, ad.Units = stream.TypeU64, stream.NewUnits(0, 0, 1, 0, 0, 0)
		} else if !ok {
			n.say("%s: %s: warning: %s (PMID %s): its %s would be in units with a dimension past ±2, which pmlogcheck refuses (the metric's units are %s): written without units\n",
				n.opts.Prog, n.what, d.Names[0], d.PMID, AggNames[k], d.Units)
		}
		for _, name := range d.Names {
			ad.Names = append(ad.Names, AggPrefix+"."+AggNames[k]+"."+name)
		}
		if err := n.emit(ad); err != nil {
			return err
		}
		if err := n.emit(&stream.Text{T: n.now, Type: stream.TextOneline | stream.TextPMID, Ident: uint32(id),
			Text: fmt.Sprintf(aggHelp[k], d.Names[0])}); err != nil {
			return err
		}
		ls := labelSet(stream.InstNull, [][2]string{{"reduce_aggregate", strconv.Quote(AggNames[k])},
			{"reduce_metric", strconv.Quote(d.Names[0])}})
		if err := n.emit(&stream.LabelSet{T: n.now, Type: stream.LabelItem, Ident: uint32(id),
			Sets: []stream.OneLabelSet{ls}}); err != nil {
			return err
		}
	}
	return nil
}

// aggUnits are the units of aggregate k of a metric in units u. ok is
// false, and the units none, where they would have a dimension past ±2:
// pmlogcheck warns of those (a square of byte^2, a rate of a count/sec^2),
// and no PCP metric has them.
func aggUnits(k int, u stream.Units) (units stream.Units, ok bool) {
	space, time, count := u.DimSpace(), u.DimTime(), u.DimCount()
	switch k {
	case aggCovered:
		return stream.NewUnits(0, 1, 0, 0, 3, 0), true
	case aggSumsq:
		space, time, count = 2*space, 2*time, 2*count
		units = stream.NewUnits(space, time, count, u.ScaleSpace(), u.ScaleTime(), u.ScaleCount())
	case aggMinRate, aggMaxRate:
		if time == 1 {
			units = stream.NewUnits(space, 0, count, u.ScaleSpace(), 0, u.ScaleCount())
		} else {
			time--
			units = stream.NewUnits(space, time, count, u.ScaleSpace(), 3, u.ScaleCount())
		}
	default:
		return u, true
	}
	for _, d := range []int{space, time, count} {
		if d < -2 || d > 2 {
			return stream.Units(0), false
		}
	}
	return units, true
}

// contextLabels is the context label set: the input's (when given) with
// the reduction's own labels.
func (n *native) contextLabels(in *stream.LabelSet, t stream.Timestamp) *stream.LabelSet {
	labs := [][2]string{
		{"reduce_interval", strconv.FormatFloat(float64(n.step)/1e9, 'f', -1, 64)},
		{"reduce_source", strconv.Quote(n.src)},
		{"reduce_tool", `"pcpreduce"`},
	}
	if in != nil && len(in.Sets) > 0 {
		s := in.Sets[0]
		for _, e := range s.Labels {
			ne, ve := int(e.Name)+int(e.NameLen), int(e.Value)+int(e.ValueLen)
			if ne > len(s.JSON) || ve > len(s.JSON) || strings.HasPrefix(s.JSON[e.Name:ne], "reduce_") {
				continue
			}
			labs = append(labs, [2]string{s.JSON[e.Name:ne], s.JSON[e.Value:ve]})
		}
	}
	return &stream.LabelSet{T: t, Type: stream.LabelContext, Ident: uint32(stream.PMIDNull),
		Sets: []stream.OneLabelSet{labelSet(stream.InstNull, labs)}}
}

// labelSet encodes labels (name, JSON value) sorted by name.
func labelSet(inst int32, labs [][2]string) stream.OneLabelSet {
	slices.SortFunc(labs, func(a, b [2]string) int { return cmp.Compare(a[0], b[0]) })
	var b strings.Builder
	s := stream.OneLabelSet{Inst: inst, NLabels: int32(len(labs))}
	b.WriteByte('{')
	for i, l := range labs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		e := stream.LabelEntry{Name: uint16(b.Len()), NameLen: uint8(len(l[0]))}
		b.WriteString(l[0])
		b.WriteString(`":`)
		e.Value, e.ValueLen = uint16(b.Len()), uint16(len(l[1]))
		b.WriteString(l[1])
		s.Labels = append(s.Labels, e)
	}
	b.WriteByte('}')
	s.JSON = b.String()
	return s
}

// writeInterval writes the result of the interval ending at end (ns),
// from its metric-instances' snapshots: per metric (in the order the
// interval first saw them), its own value set then its aggregates, the
// instances in ascending order.
func (n *native) writeInterval(snaps []snap, end int64) error {
	order := n.order[:0]
	for i := range snaps {
		m := snaps[i].m
		if len(m.pending) == 0 {
			order = append(order, m)
		}
		m.pending = append(m.pending, int32(i))
	}
	n.rb.Reset()
	byInst := func(a, b int32) int { return cmp.Compare(snaps[a].inst, snaps[b].inst) }
	for _, m := range order {
		idx := m.pending
		m.pending = m.pending[:0]
		if !slices.IsSortedFunc(idx, byInst) {
			slices.SortFunc(idx, byInst)
		}
		n.rb.Open(m.desc.PMID, m.out)
		for _, i := range idx {
			n.rb.Put(snaps[i].value())
		}
		for _, k := range aggsOf[m.kind] {
			typ := stream.TypeDouble
			if k == aggCount || k == aggResets {
				typ = stream.TypeU64
			}
			n.rb.OpenBits(m.agg[k], typ)
			for _, i := range idx {
				n.rb.PutBits(snaps[i].inst, snaps[i].aggBits(k))
			}
		}
	}
	n.order = order
	if err := n.rb.Build(tsOf(end), &n.res); err != nil {
		return err
	}
	return n.w.Write(&n.res)
}

// value is the interval's value under the metric's own name.
func (st *snap) value() stream.Val {
	a := &st.acc
	v := stream.Val{Inst: st.inst}
	switch st.m.kind {
	case kString:
		v.S = st.lastS
	case kDiscrete:
		v = valOf(st.m.desc.Type, a.lastDU, a.lastDF)
		v.Inst = st.inst
	case kCounter:
		v.U, v.F = a.lastU, a.lastMonoF
	case kInstant:
		if a.covered > 0 {
			v.F = a.wsum / a.covered
		} else {
			v.F = a.sum / float64(a.n)
		}
	}
	return v
}

// aggBits is aggregate k's value as the 64 bits written: a U64 for
// counts, else a double.
func (st *snap) aggBits(k int) uint64 {
	a := &st.acc
	switch k {
	case aggCount:
		return a.n
	case aggResets:
		return a.resets
	}
	f := math.NaN()
	switch k {
	case aggMin:
		f = a.min
	case aggMax:
		f = a.max
	case aggSum:
		f = a.sum
	case aggSumsq:
		f = a.sumsq
	case aggCovered:
		f = a.covered
	case aggLast:
		f = a.last
	case aggMinRate:
		if a.rates > 0 {
			f = a.minRate
		}
	case aggMaxRate:
		if a.rates > 0 {
			f = a.maxRate
		}
	}
	return math.Float64bits(f)
}
