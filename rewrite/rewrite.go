// Package rewrite applies a compiled rules.Plan to a record stream: the
// engine of pcprewrite. It is a stream.Iterator filter, so it sits in a
// pipe between a reader and a writer like every other stage.
//
//	archive ──Records──▶ rewrite.New(plan) ──▶ format.Writer ──▶ archive
//	                          │
//	                          └── IndexHints ──▶ FixIndex (pmlogrewrite's .index)
//
// The output is what pmlogrewrite(1) of PCP 6.0.3 writes, record for
// record:
//
//   - Metadata is held back and released in pmlogrewrite's order: before
//     each data record, the .meta records up to the first descriptor of a
//     metric that record does not hold (all descriptors once an event
//     metric has been seen), or the first instance domain or label set
//     stamped after it. Metadata left after the last data record is
//     dropped, as pmlogrewrite drops it.
//   - Instance domains are resolved (deltas applied) before they are
//     rewritten and written as full records; the writer (DeltaInDoms)
//     turns them back into deltas where PCP would. A domain no output
//     metric uses any more, or left with no instances, is not written.
//   - A result whose metrics no rule touches passes through as bytes,
//     without decoding or allocating; one that needs changes is re-encoded
//     as libpcp's __pmEncodeResult lays results out (value sets, then the
//     value blocks in the same order, padded with '~'). The value sets no
//     rule changes lie in runs between those that change; a run is copied
//     in two pieces, its headers (pointers moved by one difference) and its
//     blocks, when its blocks lie as PCP lays them out
//     (stream.Result.AppendSetsRebased), set by set otherwise. Values of
//     64-bit types that are rescaled or retyped are read, converted and
//     written in one pass each.
//   - Reading an archive or a stream, the reader leaves its structural
//     check of each result to the Rewriter (stream.CheckDeferrer): a
//     result that needs changes is walked whole here anyway, and is
//     checked on that walk; one that passes through is checked by the
//     reader's own check. An error is always the reader's, naming the
//     file (or stream) and offset.
//   - A result whose value sets are all deleted is dropped (a <mark> is
//     always kept).
//
// pmlogrewrite's temporal index differs from the one the writer builds
// (pmlogextract's): an entry wherever the input index has one at the same
// time, after any instance domain, label set or help text, at the first
// record, after a <mark>, and a final one only when the last record had
// none. The Rewriter records where those entries go (IndexHints) and
// FixIndex rewrites the finished archive's .index from them.
//
// Designs rejected:
//   - Compiling the plan lazily per PMID as descriptors arrive, for stdin
//     streams: pmlogrewrite's checks (conflicts, names in use, instances
//     made ambiguous) and its -q need the whole metadata before the first
//     record. A stream on stdin brings it up front in a METADATA frame
//     (docs/stream.md; streammeta.go); one without is spooled to a
//     temporary archive first.
//   - Decoding every result into Go values and re-encoding (pmlogrewrite's
//     way): most records of a typical rewrite hold only untouched metrics.
package rewrite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/vm"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

// Options configure a Rewriter.
type Options struct {
	// OutputVersion is the version of the archive written (2 or 3); 0
	// means the version of the input's label.
	OutputVersion int
	// Meta is the input's metadata. With it, instance domains that no
	// output metric uses are dropped (as pmlogrewrite does); without it,
	// every domain is kept.
	Meta *format.Metadata
	// Index is the input's temporal index, for IndexHints; may be nil.
	Index []format.IndexEntry
	// KeepDescriptors never lets a result out without its metric's
	// descriptor. pmlogrewrite releases held-back descriptors only while
	// the next result holds their metric, so one that no result holds
	// blocks those behind it; in an archive whose first volume is lost,
	// results then go out with no descriptor at all (pmlogrewrite's output
	// fails pmlogcheck: F3 in docs/reliability.md). With this set, such a
	// blocking descriptor is released early, but only when the result
	// holds a metric whose descriptor was never written, so an archive
	// pmlogrewrite writes correctly comes out byte for byte the same.
	// pcprewrite sets it; under the name pmlogrewrite it is off.
	KeepDescriptors bool
	// TraceValues, when not nil, gets libpcp's -Dvalue trace of each
	// value rescaled or retyped (pmExtractValue, pmConvScale), as
	// pmlogrewrite -Dvalue prints it.
	TraceValues io.Writer
	// TraceMeta, when not nil, gets pmlogrewrite -Dappl1's trace of each
	// descriptor deleted or rewritten, each instance domain dropped
	// because no output metric uses it, each instance deleted or
	// changed, and each help text deleted or rewritten, as the records
	// come (see rules.Plan.PCPRefTrace for the part before them; label
	// changes are not traced).
	TraceMeta io.Writer
}

// IndexHint says where pmlogrewrite puts a temporal index entry: at time
// T, before the data record numbered Data (counting the data records
// written, from 0; equal to their number for an entry at the end), with
// the .meta offset after the first Meta metadata records written (-1: the
// end of the .meta).
type IndexHint struct {
	T    stream.Timestamp
	Data int
	Meta int
}

// Rewriter is the rewriting filter. Create it with New.
type Rewriter struct {
	in     stream.Iterator
	plan   *rules.Plan
	opts   Options
	outVer int
	shift  *rules.TimeShift

	pend  []stream.Record // held metadata (copies), .meta order
	phead int
	out   []stream.Record // records ready to hand out
	outI  int
	cur   stream.Record

	tracker   *stream.InDomTracker
	refs      map[stream.InDomID]int
	seenEvent bool
	started   bool
	needti    bool
	tiIdx     int
	metaOut   int
	nData     int
	hints     []IndexHint
	lastT     stream.Timestamp
	lastData  int
	lastIdxed bool
	haveData  bool
	finished  bool
	err       error

	label stream.Label
	mark  stream.Mark
	res   stream.Result
	buf   []byte // encoded bodies (owned)
	space ResultSpacer
	enc   encoder
	nums  []rules.Num
	words []uint64 // decode64's
	vm    vm.VM
	env   rules.ValueEnv
	vlabs valueLabels                            // the input's labels, for value expressions
	names map[stream.InDomID]*stream.InstanceSet // current set per input indom, for iname

	checks stream.CheckDeferrer // in, handing out results unchecked; nil if it checks them

	acts    map[stream.PMID]*metricAct // per metric the plan names
	layouts []*layout                  // recent result layouts
	offs    []int32                    // the current result's value sets (stream.Result.Frame)
	tick    uint64                     // results seen, for the layouts' LRU
	// described are the metrics whose descriptors were released (with
	// KeepDescriptors; nil without).
	described map[stream.PMID]bool
}

// New returns a Rewriter applying plan to the records of in.
func New(in stream.Iterator, plan *rules.Plan, opts Options) *Rewriter {
	r := &Rewriter{in: in, plan: plan, opts: opts, outVer: opts.OutputVersion,
		tracker: stream.NewInDomTracker(), acts: make(map[stream.PMID]*metricAct, len(plan.Metrics))}
	r.shift = plan.Global.Shift
	if opts.KeepDescriptors {
		r.described = map[stream.PMID]bool{}
	}
	// Results that need rewriting are walked whole here anyway: checking
	// them on the way saves the reader a walk of its own.
	if d, ok := stream.As[stream.CheckDeferrer](in); ok && d.DeferChecks() {
		r.checks = d
	}
	if opts.Meta != nil {
		r.refs = refCounts(plan, opts.Meta)
	}
	for id, mp := range plan.Metrics {
		if mp != nil {
			r.acts[id] = newAct(mp)
		}
	}
	return r
}

// refCounts counts, per input instance domain, the output metrics that use
// it, as pmlogrewrite does before it writes anything.
func refCounts(plan *rules.Plan, meta *format.Metadata) map[stream.InDomID]int {
	refs := map[stream.InDomID]int{}
	for _, d := range meta.Descs {
		if d.InDom != stream.InDomNull {
			refs[d.InDom]++
		}
	}
	for _, mp := range plan.Metrics {
		switch {
		case mp.Changes&rules.ChangeDelete != 0:
			if mp.Old.InDom != stream.InDomNull {
				refs[mp.Old.InDom]--
			}
		case mp.Changes&rules.ChangeInDom != 0:
			if mp.Old.InDom != stream.InDomNull {
				refs[mp.Old.InDom]--
			}
			if n := mp.New.InDom; n != stream.InDomNull {
				if _, ok := refs[n]; ok {
					refs[n]++
				} else {
					for _, ip := range plan.InDoms {
						if ip.New == n {
							if _, ok := refs[ip.Old]; ok {
								refs[ip.Old]++
							}
							break
						}
					}
				}
			}
		}
	}
	return refs
}

// Next implements stream.Iterator.
func (r *Rewriter) Next() bool {
	for {
		if r.outI < len(r.out) {
			r.cur = r.out[r.outI]
			r.outI++
			return true
		}
		clear(r.out)
		r.out, r.outI = r.out[:0], 0
		if r.err != nil || r.finished {
			return false
		}
		if !r.in.Next() {
			r.err = r.in.Err()
			r.finish()
			return false
		}
		if err := r.handle(r.in.At()); err != nil {
			r.err = err
			return false
		}
	}
}

// At implements stream.Iterator.
func (r *Rewriter) At() stream.Record { return r.cur }

// ResultSpacer is an output that lets results be encoded in place:
// format.Writer.ResultSpace.
type ResultSpacer interface {
	ResultSpace(size int) []byte
}

// EncodeInto has r encode the bodies of the results it changes in the
// room out offers, when it offers any (format.Writer.ResultSpace), so that
// out writes them without a copy. The caller must write each result r
// hands out before it calls Next again, and nothing else in between.
func (r *Rewriter) EncodeInto(out ResultSpacer) { r.space = out }

// Err implements stream.Iterator.
func (r *Rewriter) Err() error { return r.err }

// DataRecords returns the number of data records (results and marks)
// handed out so far.
func (r *Rewriter) DataRecords() int { return r.nData }

// IndexHints returns where pmlogrewrite's temporal index entries go; it
// is complete once Next has returned false without an error.
func (r *Rewriter) IndexHints() []IndexHint { return r.hints }

func (r *Rewriter) finish() {
	r.finished = true
	if r.haveData && !r.lastIdxed {
		r.hints = append(r.hints, IndexHint{T: r.lastT, Data: r.lastData, Meta: -1})
	}
	// pmlogrewrite stops at the last data record: metadata after it is
	// never written.
	r.pend, r.phead = nil, 0
}

func (r *Rewriter) shiftT(t stream.Timestamp) stream.Timestamp {
	if r.shift == nil {
		return t
	}
	return r.shift.Apply(t)
}

func (r *Rewriter) emitMeta(rec stream.Record) {
	r.out = append(r.out, rec)
	r.metaOut++
}

func (r *Rewriter) handle(rec stream.Record) error {
	switch v := rec.(type) {
	case *stream.Label:
		r.label = *v
		g := &r.plan.Global
		if r.outVer == 0 {
			r.outVer = v.Version
		}
		if g.Hostname != nil {
			r.label.Hostname = *g.Hostname
		}
		if g.TimeZone != nil {
			r.label.Timezone = *g.TimeZone
		}
		if g.ZoneInfo != nil {
			r.label.Zoneinfo = *g.ZoneInfo
		}
		if g.Features != nil {
			r.label.Features = *g.Features
		}
		r.label.Start = r.shiftT(v.Start)
		r.out = append(r.out, &r.label)
	case *stream.Desc, *stream.InDom, *stream.LabelSet, *stream.Text:
		r.pend = append(r.pend, stream.CloneRecord(rec))
	case *stream.Result:
		return r.data(v, v.T)
	case *stream.Mark:
		return r.data(nil, v.T)
	default:
		return fmt.Errorf("rewrite: unexpected %s record", rec.Kind())
	}
	return nil
}

// data handles one data record: the metadata it releases, then itself.
func (r *Rewriter) data(res *stream.Result, t stream.Timestamp) error {
	if r.outVer == 0 {
		r.outVer = 2
		if res != nil && res.Version >= 3 {
			r.outVer = 3
		}
	}
	metaBefore := r.metaOut
	dataBefore := r.nData
	if idx := r.opts.Index; r.tiIdx < len(idx) && idx[r.tiIdx].T == t {
		r.needti = true
		r.tiIdx++
	}
	st := r.shiftT(t)
	if !r.started {
		r.newLabels(st)
	}
	if err := r.release(res, t); err != nil {
		return err
	}
	if !r.started {
		r.started = true
		r.needti = true
	}
	hint := r.needti
	r.needti = false
	if hint {
		r.hints = append(r.hints, IndexHint{T: st, Data: dataBefore, Meta: metaBefore})
	}
	r.haveData, r.lastT, r.lastData, r.lastIdxed = true, st, dataBefore, hint
	if res == nil {
		r.needti = true // an entry at the record after a <mark>
		r.mark.T = st
		r.out = append(r.out, &r.mark)
		r.nData++
		return nil
	}
	keep, err := r.result(res, st)
	if err != nil {
		return err
	}
	if keep {
		r.out = append(r.out, &r.res)
		r.nData++
	}
	return nil
}

// release hands out the held metadata that pmlogrewrite writes before the
// data record res (nil for a <mark>) at time t.
func (r *Rewriter) release(res *stream.Result, t stream.Timestamp) error {
	for r.phead < len(r.pend) {
		rec := r.pend[r.phead]
		switch v := rec.(type) {
		case *stream.Desc:
			if !r.seenEvent {
				if v.Type == stream.TypeEvent || v.Type == stream.TypeHighresEvent {
					r.seenEvent = true
				} else if !holds(res, v.PMID) && !(r.opts.KeepDescriptors && r.undescribed(res)) {
					return nil
				}
			}
			if r.described != nil {
				r.described[v.PMID] = true
			}
			r.doDesc(v)
		case *stream.InDom:
			if v.T.After(t) {
				return nil
			}
			r.needti = true
			if err := r.doInDom(v); err != nil {
				return err
			}
		case *stream.LabelSet:
			if v.T.After(t) {
				return nil
			}
			r.needti = true
			r.doLabelSet(v)
		case *stream.Text:
			r.needti = true
			r.doText(v)
		}
		r.pend[r.phead] = nil
		r.phead++
	}
	r.pend, r.phead = r.pend[:0], 0
	return nil
}

// undescribed reports whether res holds a metric whose descriptor is
// still held back: one pmlogrewrite's order would let out without it.
func (r *Rewriter) undescribed(res *stream.Result) bool {
	if res == nil {
		return false
	}
	it := res.VSets()
	for it.Next() {
		p := it.VSet().PMID
		if r.described[p] {
			continue
		}
		for _, rec := range r.pend[r.phead:] {
			if d, ok := rec.(*stream.Desc); ok && d.PMID == p {
				return true
			}
		}
	}
	return false
}

func holds(res *stream.Result, id stream.PMID) bool {
	if res == nil {
		return false
	}
	it := res.VSets()
	for it.Next() {
		if it.VSet().PMID == id {
			return true
		}
	}
	return false
}

func (r *Rewriter) doDesc(d *stream.Desc) {
	d.T = r.shiftT(d.T)
	// libpcp reads names as C strings: pmlogrewrite writes a name padded
	// with NULs (as in some old archives) without the padding.
	for i, n := range d.Names {
		if k := strings.IndexByte(n, 0); k >= 0 {
			d.Names[i] = n[:k]
		}
	}
	mp := r.plan.Metric(d.PMID)
	if mp == nil || mp.Changes == 0 {
		r.emitMeta(d)
		return
	}
	if mp.Changes&rules.ChangeDelete != 0 {
		if r.opts.TraceMeta != nil {
			fmt.Fprintf(r.opts.TraceMeta, "Delete: pmDesc for %s\n", d.PMID)
		}
		return
	}
	if r.opts.TraceMeta != nil {
		fmt.Fprintf(r.opts.TraceMeta, "Rewrite: pmDesc for %s\n", d.PMID)
	}
	if mp.Changes&rules.ChangePMID != 0 {
		d.PMID = mp.New.PMID
	}
	if mp.Changes&rules.ChangeName != 0 {
		d.Names = mp.New.Names
	}
	if mp.Changes&rules.ChangeType != 0 {
		d.Type = mp.New.Type
	}
	if mp.Changes&rules.ChangeInDom != 0 {
		d.InDom = mp.New.InDom
	}
	if mp.Changes&rules.ChangeSem != 0 {
		d.Sem = mp.New.Sem
	}
	if mp.Changes&rules.ChangeUnits != 0 {
		d.Units = mp.New.Units
	}
	r.emitMeta(d)
}

func (r *Rewriter) fullInDom(t stream.Timestamp, id stream.InDomID, set *stream.InstanceSet) *stream.InDom {
	enc := stream.InDomFull
	if r.outVer < 3 {
		enc = stream.InDomV2
	}
	return &stream.InDom{T: t, InDom: id, Encoding: enc, Insts: set.Insts, Names: set.Names}
}

func (r *Rewriter) doInDom(d *stream.InDom) error {
	set, err := r.tracker.Apply(d)
	if err != nil {
		return fmt.Errorf("rewrite: %w", err)
	}
	if r.refs != nil {
		if n, ok := r.refs[d.InDom]; ok && n <= 0 {
			if r.opts.TraceMeta != nil {
				fmt.Fprintf(r.opts.TraceMeta, "Delete: InDom: %s: no output metrics use this\n", d.InDom)
			}
			return nil
		}
	}
	t := r.shiftT(d.T)
	id := d.InDom
	ip := r.plan.InDom(id)
	if ip != nil && ip.Duplicate {
		r.emitMeta(r.fullInDom(t, id, set))
	}
	if ip != nil {
		if r.opts.TraceMeta != nil {
			ip.TraceInsts(r.opts.TraceMeta, set.Insts)
		}
		set = ip.Apply(set)
		id = ip.New
	}
	if len(set.Insts) > 0 {
		r.emitMeta(r.fullInDom(t, id, set))
	}
	return nil
}

func (r *Rewriter) doText(t *stream.Text) {
	t.T = r.shiftT(t.T)
	tp := r.plan.Text(t)
	if tp != nil {
		if r.opts.TraceMeta != nil {
			tp.TraceText(r.opts.TraceMeta, t)
		}
		if tp.Delete {
			return
		}
		if tp.ChangeID {
			t.Ident = tp.NewIdent
		}
		if tp.NewText != nil {
			t.Text = *tp.NewText
		}
	}
	r.emitMeta(t)
}

// newLabels writes the NEW labels, at the time of the first data record:
// one label set per object (context, domain, cluster, metric, indom or
// instance), in the order the plan first names the object, holding every
// label added to it with names in order, as pmlogrewrite gathers them (its
// __pmAddLabels keeps a set sorted by name).
func (r *Rewriter) newLabels(t stream.Timestamp) {
	type object struct {
		typ, ident uint32
		inst       int32
	}
	var order []object
	labs := make(map[object][]label)
	for _, n := range r.plan.New {
		o := object{n.Type, n.Ident, n.Inst}
		if _, ok := labs[o]; !ok {
			order = append(order, o)
		}
		labs[o] = append(labs[o], label{name: n.Name, value: n.Value, flags: uint8(n.Type)})
	}
	for _, o := range order {
		l := labs[o]
		sort.SliceStable(l, func(i, j int) bool { return l[i].name < l[j].name })
		r.emitMeta(&stream.LabelSet{T: t, Type: o.typ, Ident: o.ident, Sets: []stream.OneLabelSet{buildSet(o.inst, l)}})
	}
}

// ---------------------------------------------------------------------------
// results

// ErrValue wraps a value that cannot be converted.
var ErrValue = errors.New("value conversion")

// ConvError is a value that its metric's new type cannot hold (a type
// clause): the error says it our way; the rest is what pmlogrewrite says
// and shows of it (its "extracting value" error and the result it was
// rewriting, job.go).
type ConvError struct {
	err      error // ours
	Name     string
	PMID     stream.PMID
	From, To stream.Type
	Why      error // rules.ErrSign or rules.ErrTrunc
	// Result is (a copy of) the input result being rewritten; Set the
	// value set (its position in Result) and Done how many of its values
	// were converted before this one.
	Result    *stream.Result
	Set, Done int
}

func (e *ConvError) Error() string { return e.err.Error() }
func (e *ConvError) Unwrap() error { return e.err }

// metricAct is what the engine does with the value sets of one input
// metric that the plan names; compiled once, in New.
type metricAct struct {
	mp    *rules.MetricPlan
	kind  actKind
	pmid  stream.PMID // of the output value set
	scale rules.Scale // for ChangeRescale
}

type actKind uint8

const (
	// actCopy: the values stay as they are (the metric's descriptor
	// changes, or its PMID): the value set is copied whole, its pointers
	// moved (stream.VSet.AppendRebased).
	actCopy actKind = iota
	// actDelete: the value set is dropped.
	actDelete
	// actValues: values are picked, renumbered or computed (rewriteSet).
	actValues
)

func newAct(mp *rules.MetricPlan) *metricAct {
	a := &metricAct{mp: mp, pmid: mp.Old.PMID, scale: rules.Scale{Mult: 1, Div: 1}}
	if mp.Changes&rules.ChangePMID != 0 {
		a.pmid = mp.New.PMID
	}
	if mp.Changes&rules.ChangeRescale != 0 {
		if s, err := rules.ScaleFor(mp.Old.Units, mp.New.Units); err == nil {
			a.scale = s
		}
	}
	switch {
	case mp.Changes&rules.ChangeDelete != 0:
		a.kind = actDelete
	case mp.Changes&(rules.ChangeRescale|rules.ChangeType|rules.ChangeValue|rules.ChangeStrValue) != 0,
		mp.Changes&rules.ChangeInDom != 0 && mp.Output != rules.OutputAll,
		mp.InstMap != nil:
		a.kind = actValues
	}
	return a
}

// layout is the sequence of metrics of a result, with what to do with
// each: consecutive results of an archive almost always hold the same
// metrics in the same order, so the plan is looked up per metric only when
// a result's layout is new.
type layout struct {
	pmids   []stream.PMID
	acts    []*metricAct // nil: no rule names the metric
	touched bool         // some act is not nil
	used    uint64
}

// maxLayouts is how many layouts are remembered (pmlogger's archives
// alternate between a few: discrete metrics are logged once in a while).
const maxLayouts = 4

// layoutOf returns the layout of res, from the cache when it is there.
// It leaves the offsets of res's value sets in r.offs (stream.Result.Frame;
// Reframe, since they are mostly the last result's).
func (r *Rewriter) layoutOf(res *stream.Result) (*layout, error) {
	var err error
	if r.offs, err = res.Reframe(r.offs); err != nil {
		return nil, err
	}
	n := len(r.offs) - 1
	var cand *layout
	for _, l := range r.layouts {
		if len(l.pmids) == n && (cand == nil || l.used > cand.used) {
			cand = l
		}
	}
	r.tick++
	var b *layout // being built, when cand does not fit
	body := res.Body
	for i, off := range r.offs[:n] {
		id := stream.PMID(binary.BigEndian.Uint32(body[off:]))
		if b == nil {
			if cand != nil && cand.pmids[i] == id {
				continue
			}
			b = r.spareLayout(cand)
			if cand != nil {
				b.pmids = append(b.pmids, cand.pmids[:i]...)
				b.acts = append(b.acts, cand.acts[:i]...)
			}
		}
		b.pmids = append(b.pmids, id)
		b.acts = append(b.acts, r.acts[id])
	}
	if b == nil {
		if cand == nil { // no value sets, and no such layout yet
			b = r.spareLayout(nil)
		} else {
			cand.used = r.tick
			return cand, nil
		}
	}
	for _, a := range b.acts {
		if a != nil {
			b.touched = true
			break
		}
	}
	b.used = r.tick
	return b, nil
}

// spareLayout returns an empty layout in the cache: a new one, or the
// least recently used one other than keep.
func (r *Rewriter) spareLayout(keep *layout) *layout {
	if len(r.layouts) < maxLayouts {
		l := &layout{}
		r.layouts = append(r.layouts, l)
		return l
	}
	var v *layout
	for _, l := range r.layouts {
		if l != keep && (v == nil || l.used < v.used) {
			v = l
		}
	}
	clear(v.acts)
	v.pmids, v.acts, v.touched = v.pmids[:0], v.acts[:0], false
	return v
}

// result rewrites res into r.res; false when nothing is left to write.
//
// When the input defers its checks (r.checks), every pointer value of res
// is checked here before res is used: by AppendSetsRebased for the runs
// copied as they are, by decoding for the values computed, by VSet.Check
// for the rest (sets deleted, values an indom rule drops); by the input's
// own check when none of those applies. On any error the input's check
// comes first, so that a damaged record is reported as the reader would
// report it.
func (r *Rewriter) result(res *stream.Result, t stream.Timestamp) (bool, error) {
	keep, err := r.rewriteResult(res, t)
	if err != nil && r.checks != nil {
		if cerr := r.checks.CheckResult(); cerr != nil {
			return false, cerr
		}
	}
	return keep, err
}

func (r *Rewriter) rewriteResult(res *stream.Result, t stream.Timestamp) (bool, error) {
	lay, err := r.layoutOf(res)
	if err != nil {
		return false, fmt.Errorf("result at %s: %w", t, err)
	}
	if !lay.touched {
		if r.checks != nil {
			if err := r.checks.CheckResult(); err != nil {
				return false, err
			}
		}
		r.res.T, r.res.Version, r.res.Body = t, res.Version, res.Body
		return true, nil
	}
	e := &r.enc
	e.reset()
	offs := r.offs
	run := -1 // the run of value sets copied as they are, in e.sets
	for i, a := range lay.acts {
		if a == nil || a.kind == actCopy {
			if run < 0 {
				e.sets = append(e.sets, outSet{run: true, from: int(offs[i]), set0: i, p0: len(e.patches), p1: len(e.patches)})
				run = len(e.sets) - 1
			}
			s := &e.sets[run]
			s.to, s.n = int(offs[i+1]), s.n+1
			if a != nil && a.pmid != lay.pmids[i] {
				e.patches = append(e.patches, pmidPatch{at: int(offs[i]), pmid: a.pmid})
				s.p1 = len(e.patches)
			}
			continue
		}
		run = -1
		vs := res.VSetAt(int(offs[i]))
		if a.kind == actDelete {
			if r.checks != nil {
				if err := vs.Check(); err != nil {
					return false, fmt.Errorf("result at %s: %w", t, err)
				}
			}
			continue
		}
		if err := r.rewriteSet(&vs, a, t); err != nil {
			if ce, ok := err.(*ConvError); ok {
				ce.Result, ce.Set = stream.CloneRecord(res).(*stream.Result), i
			}
			return false, err
		}
	}
	if len(e.sets) == 0 {
		return false, nil
	}
	r.res.T, r.res.Version = t, res.Version
	// Never into r.res.Body: after a pass-through it aliases the input's
	// buffer.
	dst, inPlace := r.buf[:0], false
	if r.space != nil {
		// Straight into the writer's buffer, when it has room.
		if sp := r.space.ResultSpace(len(res.Body) + len(res.Body)/4); sp != nil {
			dst, inPlace = sp, true
		}
	}
	out, err := e.encode(dst, res, offs, lay)
	if err != nil {
		return false, fmt.Errorf("result at %s: %w", t, err)
	}
	if !inPlace {
		r.buf = out // maybe grown
	}
	if e.unsure && r.checks != nil {
		if err := r.checks.CheckResult(); err != nil {
			return false, err
		}
	}
	r.res.Body = out
	return true, nil
}

// rewriteSet applies a metric's plan to one value set, in pmlogrewrite's
// order (see rules.MetricPlan).
func (r *Rewriter) rewriteSet(vs *stream.VSet, a *metricAct, t stream.Timestamp) error {
	mp := a.mp
	e := &r.enc
	pmid := a.pmid
	if vs.NumVal <= 0 {
		e.sets = append(e.sets, outSet{pmid: pmid, numval: vs.NumVal})
		return nil
	}
	oldT := mp.Old.Type
	fail := func(inst int32, err error) error {
		in := "singular"
		if inst != stream.InstNull {
			in = fmt.Sprintf("instance %d", inst)
		}
		return fmt.Errorf("metric %s (%s), %s, at %s: %w", metricName(mp), mp.Old.PMID, in, t.Time().Format("2006-01-02 15:04:05.000000000 UTC"), err)
	}
	// Gather the values; numbers are decoded only when something computes.
	compute := mp.Changes&(rules.ChangeRescale|rules.ChangeType|rules.ChangeValue) != 0
	reduce := mp.Changes&rules.ChangeInDom != 0 && mp.Output != rules.OutputAll
	start := len(e.vals)
	s := outSet{pmid: pmid, valfmt: vs.ValFmt, typ: oldT, first: start}
	pick, fresh := -1, false
	if compute && !reduce && mp.InstMap == nil && mp.Value == nil && r.opts.TraceValues == nil {
		if done, err := r.wordsSet(vs, a, fail); done || err != nil {
			return err
		}
	}
	var pnum rules.Num
	if reduce {
		if r.checks != nil && mp.Output != rules.OutputSum && mp.Output != rules.OutputAvg &&
			mp.Output != rules.OutputMin && mp.Output != rules.OutputMax {
			// Only the value picked is read: the others are checked here.
			if err := vs.Check(); err != nil {
				return fmt.Errorf("result at %s: %w", t, err)
			}
		}
		switch mp.Output {
		case rules.OutputFirst:
			pick = 0
		case rules.OutputLast:
			pick = vs.Values() - 1
		case rules.OutputInst:
			for i := 0; i < vs.Values(); i++ {
				if vs.Inst(i) == mp.PickInst {
					pick = i
					break
				}
			}
		default:
			r.nums = r.nums[:0]
			if r.decode64(vs, oldT) {
				for _, w := range r.words {
					r.nums = append(r.nums, num64(w, oldT))
				}
			}
			for i := len(r.nums); i < vs.Values(); i++ {
				n, err := r.num(vs, i, oldT)
				if err != nil {
					return fail(vs.Inst(i), err)
				}
				r.nums = append(r.nums, n)
			}
			pick, pnum = rules.Reduce(mp.Output, r.nums)
			fresh = mp.Output == rules.OutputSum || mp.Output == rules.OutputAvg
		}
		if pick >= 0 {
			v, err := rawVal(vs, pick)
			if err != nil {
				return fail(vs.Inst(pick), err)
			}
			v.inst = mp.OutputInstance(v.inst)
			if fresh {
				v.fresh, v.num = true, pnum
			}
			e.vals = append(e.vals, v)
		}
	} else if compute && mp.InstMap == nil && r.decodeAll(vs, oldT) {
		// Every value is computed: decoded straight to a number.
	} else {
		e.vals = e.vals[:start]
		for i := 0; i < vs.Values(); i++ {
			v, err := rawVal(vs, i)
			if err != nil {
				return fail(vs.Inst(i), err)
			}
			e.vals = append(e.vals, v)
		}
	}
	// Instance renumbering and deletion from the indom rule.
	if ip := mp.InstMap; ip != nil {
		w := start
		for k := start; k < len(e.vals); k++ {
			v := e.vals[k]
			n, ok := ip.MapInst(v.inst)
			if !ok {
				continue
			}
			v.inst = n
			e.vals[w] = v
			w++
		}
		e.vals = e.vals[:w]
	}
	if mp.Changes&rules.ChangeStrValue != 0 && !compute && !fresh {
		replaceStrings(e.vals[start:], mp.StrValue)
	}
	if compute || fresh {
		newT := oldT
		if mp.Changes&rules.ChangeType != 0 {
			newT = mp.New.Type
		}
		rescale := mp.Changes&rules.ChangeRescale != 0
		tr := r.opts.TraceValues
		if fresh {
			tr = nil // (a value an OUTPUT clause computed: no such trace)
		}
		if tr != nil && rescale {
			// pmlogrewrite rescales the set's values, then retypes them
			for k := start; k < len(e.vals); k++ {
				v := &e.vals[k]
				n, err := v.num, error(nil)
				if !v.fresh {
					n, err = numOf(v, oldT)
				}
				if err == nil {
					traceRescale(tr, n, a.scale.Apply(n), mp.Old.Units, mp.New.Units)
				}
			}
		}
		for k := start; k < len(e.vals); k++ {
			v := &e.vals[k]
			n := v.num
			if !v.fresh {
				var err error
				if n, err = numOf(v, oldT); err != nil {
					return fail(v.inst, err)
				}
			}
			if rescale {
				n = a.scale.Apply(n)
			}
			if newT != oldT {
				// (the error names the value before conversion: Retype's
				// result is not it)
				m, err := rules.Retype(n, newT)
				if tr != nil {
					traceExtract(tr, n, m, newT, err)
				}
				if err != nil {
					return &ConvError{err: fail(v.inst, fmt.Errorf("%s to PM_TYPE_%s: %w", n, rules.TypeName(newT), err)),
						Name: metricName(mp), PMID: mp.Old.PMID, From: oldT, To: newT, Why: err, Done: k - start}
				}
				n = m
			}
			if mp.Value != nil {
				x, err := r.evalValue(mp, pmid, newT, v.inst, n, t)
				if err != nil {
					return fail(v.inst, err)
				}
				if n, err = rules.Retype(rules.Float64(x), newT); err != nil {
					return fail(v.inst, fmt.Errorf("%v to PM_TYPE_%s: %w", x, rules.TypeName(newT), err))
				}
			}
			v.fresh, v.num = true, n
		}
		s.typ = newT
	}
	s.n = len(e.vals) - start
	s.numval = int32(s.n)
	e.sets = append(e.sets, s)
	return nil
}

// decodeAll appends every value of vs to r.enc.vals as a number of type t,
// for a set whose values are all recomputed; false (with some values
// appended) when one does not decode: the caller then takes the slow way,
// which reports the error it would always have reported.
func (r *Rewriter) decodeAll(vs *stream.VSet, t stream.Type) bool {
	e := &r.enc
	if r.decode64(vs, t) {
		for i, w := range r.words {
			e.vals = append(e.vals, outVal{inst: vs.Inst(i), fresh: true, num: num64(w, t)})
		}
		return true
	}
	for i := 0; i < vs.Values(); i++ {
		n, err := r.num(vs, i, t)
		if err != nil {
			return false
		}
		e.vals = append(e.vals, outVal{inst: vs.Inst(i), fresh: true, num: n})
	}
	return true
}

// wordsSet is rewriteSet's quick way for a set of 64-bit values (64, U64,
// DOUBLE) rescaled or retyped to a 64-bit type, every value computed the
// same way: the values are read in one pass into r.words, converted there,
// and encoded from e.words. It reports false, having done nothing, for any
// other set.
func (r *Rewriter) wordsSet(vs *stream.VSet, a *metricAct, fail func(int32, error) error) (bool, error) {
	mp := a.mp
	oldT, newT := mp.Old.Type, mp.Old.Type
	if mp.Changes&rules.ChangeType != 0 {
		newT = mp.New.Type
	}
	if (newT != stream.Type64 && newT != stream.TypeU64 && newT != stream.TypeDouble) || !r.decode64(vs, oldT) {
		return false, nil
	}
	rescale := mp.Changes&rules.ChangeRescale != 0
	for i, w := range r.words {
		n := num64(w, oldT)
		if rescale {
			n = a.scale.Apply(n)
		}
		if newT != oldT {
			m, err := rules.Retype(n, newT)
			if err != nil {
				return true, &ConvError{err: fail(vs.Inst(i), fmt.Errorf("%s to PM_TYPE_%s: %w", n, rules.TypeName(newT), err)),
					Name: metricName(mp), PMID: mp.Old.PMID, From: oldT, To: newT, Why: err, Done: i}
			}
			n = m
		}
		r.words[i] = bits64(n)
	}
	e := &r.enc
	e.sets = append(e.sets, outSet{pmid: a.pmid, numval: vs.NumVal, typ: newT, words: true,
		first: len(e.words), n: len(r.words), src: *vs})
	e.words = append(e.words, r.words...)
	return true, nil
}

// bits64 is the encoding of n, a number of a 64-bit type.
func bits64(n rules.Num) uint64 {
	switch n.Type {
	case stream.Type64:
		return uint64(n.I)
	case stream.TypeDouble:
		return math.Float64bits(n.F)
	}
	return n.U
}

// decode64 reads the values of a set of a 64-bit type into r.words in one
// pass (stream.VSet.Words64); false for any other set, or when a value
// does not read that way.
func (r *Rewriter) decode64(vs *stream.VSet, t stream.Type) bool {
	if t != stream.Type64 && t != stream.TypeU64 && t != stream.TypeDouble {
		return false
	}
	var ok bool
	r.words, ok = vs.Words64(r.words[:0])
	return ok
}

// num64 is the number of type t (64, U64, DOUBLE) whose encoding is w.
func num64(w uint64, t stream.Type) rules.Num {
	switch t {
	case stream.Type64:
		return rules.Num{Type: t, I: int64(w)}
	case stream.TypeU64:
		return rules.Num{Type: t, U: w}
	}
	return rules.Num{Type: t, F: math.Float64frombits(w)}
}

func metricName(mp *rules.MetricPlan) string {
	if len(mp.Old.Names) > 0 {
		return mp.Old.Names[0]
	}
	return mp.Old.PMID.String()
}

func (r *Rewriter) num(vs *stream.VSet, i int, t stream.Type) (rules.Num, error) {
	v, err := vs.Value(i)
	if err != nil {
		return rules.Num{}, err
	}
	return rules.NumFromValue(v, t)
}

func (r *Rewriter) evalValue(mp *rules.MetricPlan, pmid stream.PMID, t stream.Type, inst int32, n rules.Num, ts stream.Timestamp) (float64, error) {
	env := &r.env
	env.Name = metricName(mp)
	env.Metric = env.Name
	env.PMID = pmid
	env.Type = t
	env.Instance = int(inst)
	env.IName = ""
	if inst != stream.InstNull && mp.Old.InDom != stream.InDomNull {
		if set := r.tracker.Current(mp.Old.InDom); set != nil {
			env.IName, _ = set.Lookup(inst)
		}
	}
	env.Value = n.Float()
	env.Time = ts.Float()
	env.Labels = nil
	if mp.Value.UsesLabels {
		env.Labels = r.vlabs.lookup(mp.Old.PMID, mp.Old.InDom, inst)
	}
	return mp.Value.Eval(&r.vm, env)
}

// numOf decodes a raw value of type t.
func numOf(v *outVal, t stream.Type) (rules.Num, error) {
	sv := stream.Value{Insitu: v.blk == nil, Word: v.word, VType: v.vtype, Payload: v.blk}
	return rules.NumFromValue(sv, t)
}

// ---------------------------------------------------------------------------
// encoding

type outVal struct {
	inst  int32
	word  uint32 // insitu value
	blk   []byte // value block payload (vlen-4 bytes), nil when insitu
	vtype uint8  // value block type
	fresh bool   // num holds the value to encode
	num   rules.Num
}

// outSet is a value set of the result being encoded: one computed by
// rewriteSet, or a run of the input's value sets copied as they are.
type outSet struct {
	pmid     stream.PMID
	numval   int32 // < 0: error code
	valfmt   uint32
	typ      stream.Type // of fresh values
	first, n int         // e.vals[first:first+n]; for a run, n is its number of sets

	// A run: the input's value sets set0 .. set0+n-1, whose headers are
	// Body[from:to]; PMIDs changed by e.patches[p0:p1]. blocks is where
	// their value blocks lie in the input, once encode has found them
	// back to back; slow when it has not (e.slow[first:first+n] then
	// holds the sets, copied one by one).
	// words: a set of 64-bit values made by wordsSet, e.words[first:
	// first+n], instances as in src.
	words bool
	src   stream.VSet

	run      bool
	from, to int
	set0     int
	p0, p1   int
	blocks   stream.Span
	slow     bool
}

// pmidPatch is a value set of a run whose PMID changes: the header at
// offset at of the input's body gets pmid.
type pmidPatch struct {
	at   int
	pmid stream.PMID
}

type encoder struct {
	sets    []outSet
	vals    []outVal
	patches []pmidPatch
	slow    []stream.VSet
	words   []uint64
	unsure  bool // a run was copied set by set, whose pointers are not all checked
}

func (e *encoder) reset() {
	clear(e.slow) // drop the references to the input's buffer
	clear(e.sets)
	e.sets, e.vals, e.patches, e.slow, e.words = e.sets[:0], e.vals[:0], e.patches[:0], e.slow[:0], e.words[:0]
	e.unsure = false
}

// replaceStrings runs the VALUE clauses' substitutions on string values
// (a value block's bytes up to its first NUL, as libpcp reads a string)
// and gives each changed value a new block, NUL-terminated as libpcp
// writes strings.
func replaceStrings(vals []outVal, rs []*rules.Replace) {
	for k := range vals {
		v := &vals[k]
		if v.blk == nil {
			continue // insitu: not a string
		}
		b := v.blk
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		if n, ok := rules.ApplyAll(rs, string(b)); ok {
			v.blk = append([]byte(n), 0)
		}
	}
}

func rawVal(vs *stream.VSet, i int) (outVal, error) {
	inst, w := vs.RawPair(i)
	v := outVal{inst: inst, word: w}
	if vs.ValFmt == stream.ValInsitu {
		return v, nil
	}
	val, err := vs.Value(i)
	if err != nil {
		return v, err
	}
	v.blk, v.vtype = val.Payload, val.VType
	if v.blk == nil {
		v.blk = []byte{}
	}
	return v, nil
}

func freshLen(t stream.Type) int {
	switch t {
	case stream.Type32, stream.TypeU32:
		return 0
	case stream.TypeFloat:
		return 8
	}
	return 12
}

// encode lays the result out as __pmEncodeResult does, with pointers for
// a record of res's version: the value sets, then the value blocks in the
// same order, each padded with '~'. A run of value sets copied as they are
// is copied in two pieces, its headers (with their pointers moved by one
// difference) and its blocks, when its blocks lie back to back in the
// input, as PCP writes them; set by set otherwise. offs and lay are res's
// value set offsets and layout.
func (e *encoder) encode(dst []byte, res *stream.Result, offs []int32, lay *layout) ([]byte, error) {
	start := len(dst)
	version := res.Version
	size, nsets := 4, 0
	for i := range e.sets {
		s := &e.sets[i]
		switch {
		case s.run:
			size += s.to - s.from
			nsets += s.n
		case s.numval > 0:
			size += 12 + 8*s.n
			nsets++
		default:
			size += 8
			nsets++
		}
	}
	ptr := stream.PointerBase(version) + uint32(size/4) // word of the next block
	dst = binary.BigEndian.AppendUint32(dst, uint32(nsets))
	for i := range e.sets {
		s := &e.sets[i]
		if s.run {
			h := len(dst)
			var ok bool
			dst, s.blocks, ptr, ok = res.AppendSetsRebased(dst, s.from, s.to, ptr, '~')
			if ok {
				for _, p := range e.patches[s.p0:s.p1] {
					binary.BigEndian.PutUint32(dst[h+p.at-s.from:], uint32(p.pmid))
				}
				continue
			}
			// Not PCP's layout: set by set, each with its own pointers.
			s.slow, s.first, e.unsure = true, len(e.slow), true
			for k := s.set0; k < s.set0+s.n; k++ {
				e.slow = append(e.slow, res.VSetAt(int(offs[k])))
				vs := &e.slow[len(e.slow)-1]
				pmid := vs.PMID
				if a := lay.acts[k]; a != nil {
					pmid = a.pmid
				}
				var err error
				if dst, ptr, err = vs.AppendRebased(dst, pmid, ptr); err != nil {
					return dst[:start], err
				}
			}
			continue
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(s.pmid))
		dst = binary.BigEndian.AppendUint32(dst, uint32(s.numval))
		if s.numval <= 0 {
			continue
		}
		if s.words {
			dst = binary.BigEndian.AppendUint32(dst, stream.ValDptr)
			for k := 0; k < s.n; k++ {
				dst = binary.BigEndian.AppendUint32(dst, uint32(s.src.Inst(k)))
				dst = binary.BigEndian.AppendUint32(dst, ptr)
				ptr += 3
			}
			continue
		}
		fresh := s.n > 0 && e.vals[s.first].fresh
		fmtw := s.valfmt
		if fresh {
			fmtw = stream.ValDptr
			if freshLen(s.typ) == 0 {
				fmtw = stream.ValInsitu
			}
		}
		dst = binary.BigEndian.AppendUint32(dst, fmtw)
		for k := s.first; k < s.first+s.n; k++ {
			v := &e.vals[k]
			dst = binary.BigEndian.AppendUint32(dst, uint32(v.inst))
			switch {
			case fresh && fmtw == stream.ValInsitu:
				if s.typ == stream.Type32 {
					dst = binary.BigEndian.AppendUint32(dst, uint32(int32(v.num.I)))
				} else {
					dst = binary.BigEndian.AppendUint32(dst, uint32(v.num.U))
				}
			case fresh:
				dst = binary.BigEndian.AppendUint32(dst, ptr)
				ptr += uint32(freshLen(s.typ) / 4)
			case fmtw == stream.ValInsitu:
				dst = binary.BigEndian.AppendUint32(dst, v.word)
			default:
				dst = binary.BigEndian.AppendUint32(dst, ptr)
				ptr += uint32((4 + len(v.blk) + 3) / 4)
			}
		}
	}
	for i := range e.sets {
		s := &e.sets[i]
		if s.run {
			if !s.slow {
				dst = append(dst, res.Body[s.blocks.From:s.blocks.To]...)
				continue
			}
			for k := s.first; k < s.first+s.n; k++ {
				var err error
				if dst, err = e.slow[k].AppendBlocks(dst, '~'); err != nil {
					return dst[:start], err
				}
			}
			continue
		}
		if s.numval <= 0 {
			continue
		}
		if s.words {
			hdr := uint32(s.typ)<<24 | 12
			for _, w := range e.words[s.first : s.first+s.n] {
				dst = binary.BigEndian.AppendUint32(dst, hdr)
				dst = binary.BigEndian.AppendUint64(dst, w)
			}
			continue
		}
		fresh := s.n > 0 && e.vals[s.first].fresh
		for k := s.first; k < s.first+s.n; k++ {
			v := &e.vals[k]
			switch {
			case fresh:
				n := freshLen(s.typ)
				if n == 0 {
					continue
				}
				dst = binary.BigEndian.AppendUint32(dst, uint32(s.typ)<<24|uint32(n))
				switch s.typ {
				case stream.TypeFloat:
					dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(v.num.F)))
				case stream.TypeDouble:
					dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(v.num.F))
				case stream.Type64:
					dst = binary.BigEndian.AppendUint64(dst, uint64(v.num.I))
				default:
					dst = binary.BigEndian.AppendUint64(dst, v.num.U)
				}
			case s.valfmt == stream.ValInsitu:
			default:
				dst = binary.BigEndian.AppendUint32(dst, uint32(v.vtype)<<24|uint32(4+len(v.blk)))
				dst = append(dst, v.blk...)
				for (len(dst)-start)%4 != 0 {
					dst = append(dst, '~')
				}
			}
		}
	}
	if got, want := len(dst)-start, int(ptr-stream.PointerBase(version))*4; got != want {
		return dst[:start], fmt.Errorf("internal error: rewritten result is %d bytes, its pointers say %d", got, want)
	}
	return dst, nil
}

// traceRescale prints libpcp's -Dvalue lines for one value pmlogrewrite
// rescales: pmExtractValue of it in its own type, then pmConvScale.
func traceRescale(w io.Writer, n, scaled rules.Num, from, to stream.Units) {
	fmt.Fprintf(w, "pmExtractValue:  %s [%s] -> %s [%s]\n", pcpAtom(n), rules.TypeName(n.Type), pcpAtom(n), rules.TypeName(n.Type))
	fmt.Fprintf(w, "pmConvScale: %s [%s]%s -> %s [%s]%s\n", pcpAtom(n), from, unitsDefault(from), pcpAtom(scaled), to, unitsDefault(to))
}

// traceExtract prints libpcp's -Dvalue line for a value pmlogrewrite
// retypes (pmExtractValue from its type to the new one).
func traceExtract(w io.Writer, n, m rules.Num, to stream.Type, err error) {
	out := "Error: " + rules.UpperFirst(fmt.Sprint(err))
	if err == nil {
		out = pcpAtom(m)
	}
	fmt.Fprintf(w, "pmExtractValue:  %s [%s] -> %s [%s]\n", pcpAtom(n), rules.TypeName(n.Type), out, rules.TypeName(to))
}

// pcpAtom is a number as libpcp's pmAtomStr prints it.
func pcpAtom(n rules.Num) string {
	switch n.Type {
	case stream.Type32, stream.Type64:
		return strconv.FormatInt(n.I, 10)
	case stream.TypeU32, stream.TypeU64:
		return strconv.FormatUint(n.U, 10)
	}
	return fmt.Sprintf("%e", n.F)
}

// unitsDefault is what pmConvScale's trace adds for dimensionless units,
// which it takes as a count.
func unitsDefault(u stream.Units) string {
	if u.DimSpace() != 0 || u.DimTime() != 0 || u.DimCount() != 0 {
		return ""
	}
	return fmt.Sprintf(" defaults to [%s]", u|stream.Units(1)<<20)
}
