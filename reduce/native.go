package reduce

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// Native mode: one pass over the archive's records, one state per
// metric-instance, one result per interval that holds samples. See
// docs/pcpreduce.md, "Native mode" and "Layout of a reduced archive".

// value kinds of a metric in native mode
const (
	kSkip = iota
	kInstant
	kDiscrete
	kCounter
	kString
)

type nMetric struct {
	desc  *stream.Desc
	kind  int
	out   stream.Type // the type written under the metric's own name
	float bool        // values read as float64 (FLOAT, DOUBLE)
	agg   []stream.PMID
	insts map[int32]*nInst
	byPos []*nInst // the instance at each position of the last value set
	// pending are the instances of the interval being written (by the
	// writer: snapshot indexes)
	pending []int32
}

type nInst struct {
	m    *nMetric
	inst int32
	// running state, across intervals
	have   bool
	prevT  int64 // ns
	prevF  float64
	prevU  uint64
	monoU  uint64
	monoF  float64
	gapped bool // a <mark> since the last sample
	// the current interval
	touched bool
	acc     accum
	in      mergeInput // re-reduction: the input interval being merged
	lastS   string
}

// accum is what one interval keeps of one metric-instance.
type accum struct {
	n                    uint64
	min, max, sum, sumsq float64
	wsum, covered        float64 // time-weighted sum, seconds covered
	last                 float64
	minRate, maxRate     float64
	rates, resets        uint64
	lastU                uint64 // counters: monotone value
	lastMonoF            float64
	lastDU               uint64  // discrete: the last value, as 64 bits
	lastDF               float64 // and as a float64 (valOf)
}

type native struct {
	opts    *Options
	what    string // the inputs, in messages
	w       toolio.Sink
	version int  // of the output
	labeled bool // the output has its label
	// now is the time of the last record of the input that has one of
	// its own (a label, result, <mark>, instance domain or label set):
	// what a descriptor's aggregates are stamped with. A descriptor in a
	// stream carries that time too, but its frame's time is not checked
	// (an archive's descriptors have none), so a damaged one must not
	// date the label sets made from it.
	now     stream.Timestamp
	step    int64 // ns
	base    int64 // ns: interval ends are base + k*step
	metrics map[stream.PMID]*nMetric
	used    map[uint32]map[uint32]bool // PMID clusters of the input, per domain
	alloc   map[uint32]*[2]uint32      // per domain: the cluster and next item for aggregates
	// late: the input's metadata comes as it is read (a stream without a
	// METADATA frame): used knew only the metrics before the first data
	// record when the aggregates' clusters were chosen, and a metric
	// described later must not land on one (ours: the aggregates' PMIDs).
	late        bool
	ours        map[stream.PMID]bool
	curEnd      int64
	haveCur     bool
	touched     []*nInst
	mark        bool  // a <mark> inside the current interval
	lastOut     int64 // ns of the last data record written
	rb          stream.ResultBuilder
	res         stream.Result
	src         string
	reduced     bool                   // the input is a reduced archive
	inAgg       map[stream.PMID]aggRef // its aggregate metrics
	byName      map[string]*nMetric    // its metrics by name
	order       []*nMetric             // scratch for writeInterval
	writerState                        // pipeline.go
	written     int                    // results written
	// a <mark> waiting for the next result (Options.IgnoreMarks), and
	// the last input result's time (ns)
	pendingMark              stream.Timestamp
	markPending, haveLastRes bool
	lastRes                  int64
	done                     bool // -s reached
	// the sampling seen, for warnSampling
	recs        int           // input results in the current interval
	perInterval map[int]int   // intervals by the number of input results in them
	intervals   int           // intervals in perInterval
	firstRecs   int           // input results in the first interval
	lastRecs    int           // and in the last
	gaps        map[int64]int // gaps between input results (ms, no <mark> between)
	prevRec     int64         // ns of the last input result
	havePrev    bool
	// loc says where the input's current record was read; said, the
	// warnings about the input already given, shared by every output
	// (one reduction's -t outputs read the same input: a metric's warning
	// is said once, not once per output).
	loc  stream.Locator
	said *said
}

// said is what one reduction's outputs have said about its input: the
// metrics a value of which could not be read as their type (said once
// each, the values left out), and the per-metric warnings given.
type said struct {
	unread map[stream.PMID]bool
	text   map[string]bool
}

// say writes a warning about the input once, however many outputs meet it.
func (n *native) say(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if n.said.text[msg] {
		return
	}
	n.said.text[msg] = true
	io.WriteString(n.opts.Stderr, msg)
}

// Output is one output of a native reduction: its name and interval. An
// empty Name writes the record stream (docs/stream.md) on Options.Stdout.
type Output struct {
	Name     string
	Interval time.Duration
}

// RunNative reduces input in native mode into one archive per output, in
// one pass. Nothing is written unless every output is complete.
func RunNative(input string, outputs []Output, opts Options) error {
	return RunNativeInputs([]string{input}, outputs, opts)
}

// RunNativeInputs reduces the archives inputs names, all of one host, read
// as one in time order (stream.Concat: a <mark> after each archive that
// another follows, as libpcp's multi-archive contexts have it), into one
// output per element of outputs, in one pass. An input may also be a
// directory of archives or a comma-separated list of them. Archives of
// different hosts are an error naming both. Nothing is written unless
// every output is complete (a stream output ends in an error frame).
func RunNativeInputs(inputs []string, outputs []Output, opts Options) (err error) {
	opts.defaults()
	if err := checkOutputs(outputs); err != nil {
		return err
	}
	if len(inputs) == 0 {
		return fmt.Errorf("no input archive")
	}
	warn := func(err error) { fmt.Fprintf(opts.Stderr, "%s: warning: %v\n", opts.Prog, err) }
	as, names, err := openNativeInputs(inputs, warn)
	if err != nil {
		return err
	}
	meta, err := unionMeta(as)
	if err != nil {
		return err
	}
	a := as[0]
	lab := a.Label()
	from, to, err := nativeWindow(as, &opts)
	if err != nil {
		return err
	}
	version := lab.Version
	for _, x := range as {
		version = max(version, x.Label().Version)
	}
	src := lab.Hostname + ":" + filepath.Base(a.Base())
	if len(as) > 1 {
		src += ".." + filepath.Base(as[len(as)-1].Base())
	}
	var it stream.Iterator
	if len(as) == 1 {
		rit := a.Records()
		defer rit.Close()
		it = rit
	} else if overlap(as) {
		// Archives that overlap in time (two loggers of one host, say)
		// are read as pcpextract merges them: their records in time
		// order, those of one time in one record.
		ins := make([]extract.Input, len(as))
		for i, x := range as {
			ins[i] = extract.Input{Name: names[i], Archive: x}
		}
		e, err := extract.New(ins, extract.Options{Warn: warn})
		if err != nil {
			return err
		}
		defer e.Close()
		it = e
	} else {
		its := make([]stream.Iterator, len(as))
		for i, x := range as {
			rit := x.Records()
			defer rit.Close()
			its[i] = rit
		}
		it = stream.Concat(names, its...)
	}
	return runNative(meta, it, nativeRun{lab: lab, version: version, src: src, from: from, to: to,
		size: toolio.DataSize(as), what: strings.Join(inputs, ", ")}, outputs, opts)
}

// RunNativeStream reduces a record stream whose whole metadata came up
// front (a METADATA frame, docs/stream.md): meta, and it, the stream's
// records from its label on. It is read as it arrives, with nothing
// spilled; -S and -T apply when they need no end (pcptime.NeedsEnd: an
// absolute time, an offset from the start), and are refused otherwise.
func RunNativeStream(meta *format.Metadata, it stream.Iterator, outputs []Output, opts Options) error {
	return runNativeStream(meta, it, outputs, opts, false)
}

// RunNativeStreamLate is RunNativeStream for a stream without a METADATA
// frame (pcpextract's, pcprewrite's): head is its metadata before the
// first data record, and the rest comes in it, before the data that needs
// it, so nothing is spilled. The aggregates' PMIDs are chosen from clusters
// that no metric described so far uses; a metric described later whose
// PMID is one of them is an error (none of PCP's agents use the clusters
// near 4095 the aggregates take). Reduced archives are not taken this way
// (CanStreamLate).
func RunNativeStreamLate(head *format.Metadata, it stream.Iterator, outputs []Output, opts Options) error {
	return runNativeStream(head, it, outputs, opts, true)
}

// CanStreamLate reports whether a stream without a METADATA frame, whose
// metadata before its first data record is head, can be reduced as it
// arrives (RunNativeStreamLate): not when head says it is pcpreduce's
// output, whose aggregate metrics are matched with their metrics from the
// whole metadata first.
func CanStreamLate(head *format.Metadata) bool { return !isReduced(head) }

func runNativeStream(meta *format.Metadata, it stream.Iterator, outputs []Output, opts Options, late bool) error {
	opts.defaults()
	if err := checkOutputs(outputs); err != nil {
		return err
	}
	lab := meta.Label
	from, to := lab.Start, stream.Timestamp{Sec: math.MaxInt64}
	if opts.Start != "" || opts.Finish != "" {
		if pcptime.NeedsEnd(opts.Start, opts.Finish) {
			return errors.New("-S or -T counted from the archive's end needs the end: spill the stream first")
		}
		loc, err := pcptime.ChooseZone(opts.ArchiveZone, opts.Zone, lab.Timezone, lab.Zoneinfo)
		if err != nil {
			return fmt.Errorf("cannot set the timezone: %w", err)
		}
		win, err := pcptime.ParseWindow(opts.Start, opts.Finish, "", "", lab.Start, to, loc)
		if err != nil {
			return fmt.Errorf("invalid time window: %v", err)
		}
		from, to = win.Start, win.End
	}
	return runNative(meta, it, nativeRun{lab: lab, version: lab.Version, src: lab.Hostname + ":standard input",
		from: from, to: to, what: "standard input", late: late}, outputs, opts)
}

// checkOutputs refuses no output, and an interval that is not positive.
func checkOutputs(outputs []Output) error {
	if len(outputs) == 0 {
		return fmt.Errorf("no output archive")
	}
	for _, o := range outputs {
		if o.Interval <= 0 {
			return fmt.Errorf("-t %v: %w", o.Interval, ErrInterval)
		}
	}
	return nil
}

// nativeRun is what runNative needs to know of its inputs.
type nativeRun struct {
	lab      stream.Label
	version  int
	src      string // the reduce_source label: host and archive names
	from, to stream.Timestamp
	size     int64  // the data volumes' bytes, for the progress display
	what     string // the inputs, in messages
	late     bool   // the metadata comes with the records (RunNativeStreamLate)
}

func runNative(meta *format.Metadata, it stream.Iterator, in nativeRun, outputs []Output, opts Options) (err error) {
	warn := func(err error) { fmt.Fprintf(opts.Stderr, "%s: warning: %v\n", opts.Prog, err) }
	lab, from, to, src := in.lab, in.from, in.to, in.src
	version := in.version
	if opts.Zstd {
		version = 3
	}
	var ns_ []*native
	defer func() {
		if err != nil {
			for _, n := range ns_ {
				n.stopWriter()
				n.w.Abort(err)
			}
		}
	}()
	shared := &said{unread: map[stream.PMID]bool{}, text: map[string]bool{}}
	for _, o := range outputs {
		n := &native{opts: &opts, what: in.what, metrics: map[stream.PMID]*nMetric{}, step: int64(o.Interval),
			version: version, perInterval: map[int]int{}, gaps: map[int64]int{}, late: in.late, said: shared}
		if err := n.pickDomain(meta); err != nil {
			return err
		}
		if opts.AlignTo > 0 {
			n.base = floorDiv(ns(lab.Start), int64(opts.AlignTo)) * int64(opts.AlignTo)
		}
		n.src = src
		if n.reduced {
			n.src = n.inputSource(meta, n.src)
		}
		n.w, err = toolio.OpenOutput(o.Name, format.WriterOptions{Version: version, NoSync: opts.NoSync,
			Zstd: opts.Zstd, VolumeRecords: opts.VolSamples, Overwrite: opts.Overwrite, Warn: warn}, opts.Stdout)
		if err != nil {
			return err
		}
		ns_ = append(ns_, n)
		if pipelined() {
			n.startWriter()
		}
	}
	pr := toolio.StartProgress(opts.Stderr, in.size, opts.NoProgress)
	defer pr.Done(false) // a run that fails; Done(true) comes first on success
	it = toolio.Showing(it, pr)
	if loc, ok := stream.As[stream.Locator](it); ok {
		for _, n := range ns_ {
			n.loc = loc
		}
	}
	for it.Next() {
		r := it.At()
		if k := r.Kind(); k == stream.KindResult || k == stream.KindMark {
			if t := r.Time(); t.Before(from) || t.After(to) {
				continue
			}
		}
		for _, n := range ns_ {
			if n.done {
				continue
			}
			if err := n.record(r); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, n := range ns_ {
		if err := n.finish(); err != nil {
			return err
		}
		if n.written == 0 {
			return fmt.Errorf("%s: no samples to reduce", in.what)
		}
	}
	for _, n := range ns_ {
		if err := n.stopWriter(); err != nil {
			return err
		}
		if err := n.w.Close(); err != nil {
			return err
		}
	}
	pr.Done(true)
	for _, n := range ns_ {
		n.warnSampling()
	}
	return nil
}

// openNativeInputs opens the inputs (archives, directories of archives,
// comma-separated lists), reads an archive named twice once, sorts them by
// their labels' start times, and refuses archives of different hosts.
func openNativeInputs(inputs []string, warn func(error)) ([]*format.Archive, []string, error) {
	var as []*format.Archive
	var names []string
	add := func(a *format.Archive, name string) {
		if i := toolio.Repeated(as, a); i >= 0 {
			toolio.WarnRepeat(warn, name, as[i], names[i], a)
			return
		}
		as, names = append(as, a), append(names, name)
	}
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			dir, err := format.OpenDir(in, format.WithWarn(warn))
			if err != nil {
				return nil, nil, fmt.Errorf("cannot open archives in %q: %w", in, err)
			}
			for _, a := range dir {
				add(a, a.Base())
			}
			continue
		}
		a, err := format.Open(in, format.WithWarn(warn))
		if err == nil || !strings.Contains(in, ",") {
			if err != nil {
				return nil, nil, fmt.Errorf("cannot open archive %q: %w", in, err)
			}
			add(a, in)
			continue
		}
		for _, p := range strings.Split(in, ",") {
			a, err := format.Open(p, format.WithWarn(warn))
			if err != nil {
				return nil, nil, fmt.Errorf("cannot open archive %q: %w", p, err)
			}
			add(a, p)
		}
	}
	for i := 1; i < len(as); i++ {
		if h0, h := as[0].Label().Hostname, as[i].Label().Hostname; h != h0 {
			return nil, nil, fmt.Errorf("%s (host %q) and %s (host %q): archives of different hosts cannot be reduced as one: reduce each host apart, or all of them with --folio",
				names[0], h0, names[i], h)
		}
	}
	idx := make([]int, len(as))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return as[idx[i]].Label().Start.Before(as[idx[j]].Label().Start) })
	sa, sn := make([]*format.Archive, len(as)), make([]string, len(as))
	for i, k := range idx {
		sa[i], sn[i] = as[k], names[k]
	}
	return sa, sn, nil
}

// overlap says whether an archive of as (in order of start) has data at
// or before the end of the one before it: what stream.Concat refuses.
func overlap(as []*format.Archive) bool {
	for i := 1; i < len(as); i++ {
		end, ok, err := as[i-1].End()
		if err != nil || !ok {
			continue
		}
		if t, ok := firstData(as[i]); ok && !t.After(end) {
			return true
		}
	}
	return false
}

// firstData is the time of an archive's first result or <mark>.
func firstData(a *format.Archive) (stream.Timestamp, bool) {
	it := a.Records(format.DataOnly())
	defer it.Close()
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Result:
			return r.T, true
		case *stream.Mark:
			return r.T, true
		}
	}
	return stream.Timestamp{}, false
}

// unionMeta is the metadata of the archives as one: every descriptor (the
// first of each PMID) and every label set.
func unionMeta(as []*format.Archive) (*format.Metadata, error) {
	if len(as) == 1 {
		return as[0].Meta()
	}
	u := &format.Metadata{ByPMID: map[stream.PMID]*stream.Desc{}}
	for _, a := range as {
		m, err := a.Meta()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Base(), err)
		}
		for _, d := range m.Descs {
			if _, ok := u.ByPMID[d.PMID]; !ok {
				u.ByPMID[d.PMID] = d
				u.Descs = append(u.Descs, d)
			}
		}
		u.LabelSets = append(u.LabelSets, m.LabelSets...)
	}
	return u, nil
}

// nativeWindow is the -S/-T window (all of the archives without them).
func nativeWindow(as []*format.Archive, opts *Options) (from, to stream.Timestamp, err error) {
	lab := as[0].Label()
	var end stream.Timestamp
	var any bool
	for _, a := range as {
		e, ok, err := a.End()
		if err != nil {
			return from, to, fmt.Errorf("%s: %w", a.Base(), err)
		}
		if ok && (!any || e.After(end)) {
			end, any = e, true
		}
	}
	if !any {
		return from, to, fmt.Errorf("cannot open archive %q: it holds no data", as[0].Base())
	}
	loc, err := pcptime.ChooseZone(opts.ArchiveZone, opts.Zone, lab.Timezone, lab.Zoneinfo)
	if err != nil {
		return from, to, fmt.Errorf("cannot set the timezone: %w", err)
	}
	win, err := pcptime.ParseWindow(opts.Start, opts.Finish, "", "", lab.Start, end, loc)
	if err != nil {
		return from, to, fmt.Errorf("invalid time window: %v", err)
	}
	return win.Start, win.End, nil
}

// pickDomain notes the PMID clusters the input uses in each domain: the
// aggregate metrics take clusters it does not use, from 4095 down, in the
// domain of the metric's instance domain (or of the metric), as PCP's
// checks want a metric and its instance domain in one domain.
func (n *native) pickDomain(meta *format.Metadata) error {
	n.used = map[uint32]map[uint32]bool{}
	n.alloc = map[uint32]*[2]uint32{}
	n.detectReduced(meta)
	for _, d := range meta.Descs {
		if _, ok := n.inAgg[d.PMID]; ok {
			continue
		}
		dom := d.PMID.Domain()
		if n.used[dom] == nil {
			n.used[dom] = map[uint32]bool{}
		}
		n.used[dom][d.PMID.Cluster()] = true
	}
	return nil
}

// newPMID allocates an aggregate metric's PMID in domain dom.
func (n *native) newPMID(dom uint32) (stream.PMID, error) {
	a := n.alloc[dom]
	if a == nil || a[1] > 0x3ff || n.used[dom][a[0]] {
		c := uint32(4096)
		if a != nil {
			c = a[0]
		}
		for c--; c > 0 && n.used[dom][c]; c-- {
		}
		if c == 0 {
			return 0, fmt.Errorf("PMID domain %d has no free cluster for the aggregate metrics", dom)
		}
		a = &[2]uint32{c, 0}
		n.alloc[dom] = a
	}
	id := stream.NewPMID(dom, a[0], a[1])
	a[1]++
	if n.late {
		if n.ours == nil {
			n.ours = map[stream.PMID]bool{}
		}
		n.ours[id] = true
	}
	return id, nil
}

// lateDesc notes the cluster of a metric described after the aggregates'
// clusters were chosen (late), so that no aggregate is given a PMID
// there; one whose PMID an aggregate already has is an error.
func (n *native) lateDesc(d *stream.Desc) error {
	if n.ours[d.PMID] {
		return fmt.Errorf("metric %s (PMID %s), described after the first data record, has the PMID pcpreduce gave an aggregate metric: write the stream to an archive (pcpextract -o) and reduce that", d.Names[0], d.PMID)
	}
	dom := d.PMID.Domain()
	if n.used[dom] == nil {
		n.used[dom] = map[uint32]bool{}
	}
	n.used[dom][d.PMID.Cluster()] = true
	return nil
}

func (n *native) record(r stream.Record) error {
	switch r := r.(type) {
	case *stream.Label:
		n.now = r.Start
	case *stream.Result, *stream.Mark, *stream.InDom, *stream.LabelSet:
		n.now = r.Time()
	}
	switch r := r.(type) {
	case *stream.Label:
		if n.labeled {
			// The label of a further archive of several read as one.
			return nil
		}
		n.labeled = true
		l := *r
		l.Version = n.version
		if err := n.emit(&l); err != nil || n.reduced {
			// A reduced input has the context labels to merge with.
			return err
		}
		return n.emit(n.contextLabels(nil, r.Start))
	case *stream.Desc:
		return n.desc(r)
	case *stream.InDom:
		return n.emit(r)
	case *stream.Text:
		if n.isInputAgg(r) {
			return nil
		}
		return n.emit(r)
	case *stream.LabelSet:
		if n.isInputAgg(r) {
			return nil
		}
		if r.Type&stream.LabelTypeMask == stream.LabelContext {
			return n.emit(n.contextLabels(r, r.T))
		}
		return n.emit(r)
	case *stream.Mark:
		switch {
		case n.opts.IgnoreAllMarks:
			return nil
		case n.opts.IgnoreMarks > 0:
			// decided when the next result shows the gap
			if !n.markPending {
				n.pendingMark, n.markPending = r.T, true
			}
			return nil
		}
		return n.markAt(r.T)
	case *stream.Result:
		t := ns(r.T)
		if n.markPending {
			n.markPending = false
			if !n.haveLastRes || t-n.lastRes > int64(n.opts.IgnoreMarks) {
				if err := n.markAt(n.pendingMark); err != nil {
					return err
				}
			}
		}
		n.lastRes, n.haveLastRes = t, true
		return n.result(r)
	}
	return nil
}

// finish ends the reduction: a <mark> still waiting for the result after
// it has none, and stands; then the last interval.
func (n *native) finish() error {
	if n.markPending {
		n.markPending = false
		if err := n.markAt(n.pendingMark); err != nil {
			return err
		}
	}
	return n.flush()
}

func ns(t stream.Timestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }

func tsOf(v int64) stream.Timestamp {
	return stream.Timestamp{Sec: floorDiv(v, 1e9), Nsec: int32(v - floorDiv(v, 1e9)*1e9)}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// endOf is the end of the interval holding t: intervals are (end-step, end].
func (n *native) endOf(t int64) int64 {
	k := floorDiv(t-n.base+n.step-1, n.step)
	return n.base + k*n.step
}

func (n *native) markAt(t stream.Timestamp) error {
	n.havePrev = false
	for _, m := range n.metrics {
		for _, st := range m.insts {
			st.gapped = true
		}
	}
	if n.haveCur && ns(t) <= n.curEnd {
		n.mark = true
		return nil
	}
	if err := n.flush(); err != nil {
		return err
	}
	return n.writeMark(ns(t))
}

func (n *native) writeMark(t int64) error {
	if t < n.lastOut {
		t = n.lastOut
	}
	n.lastOut = t
	return n.emit(&stream.Mark{T: tsOf(t)})
}

func (n *native) result(r *stream.Result) error {
	t := ns(r.T)
	if end := n.endOf(t); !n.haveCur || end != n.curEnd {
		if n.haveCur && end < n.curEnd {
			return fmt.Errorf("%s: records go back in time", r.T)
		}
		if err := n.flush(); err != nil {
			return err
		}
		n.curEnd, n.haveCur = end, true
	}
	n.sampled(t)
	if n.reduced {
		return n.resultReduced(r, t)
	}
	vi := r.VSets()
	for vi.Next() {
		vs := vi.VSet()
		m := n.metrics[vs.PMID]
		if m == nil || m.kind == kSkip || vs.NumVal <= 0 {
			continue
		}
		for i := 0; i < int(vs.NumVal); i++ {
			v, err := vs.Value(i)
			if err != nil {
				return fmt.Errorf("%s%s: metric %s: %w", n.where(), r.T, m.desc.Names[0], err)
			}
			st := n.instanceAt(m, i, vs.Inst(i))
			if err := st.add(t, v); errors.Is(err, stream.ErrValueType) {
				n.unreadable(st, r.T, err)
			} else if err != nil {
				return fmt.Errorf("%s%s: metric %s: %w", n.where(), r.T, m.desc.Names[0], err)
			}
		}
	}
	return vi.Err()
}

// where is the place of the input's current record, "FILE: offset N: ",
// or "" when its reader cannot say.
func (n *native) where() string {
	if n.loc != nil {
		if f, off, ok := n.loc.Where(); ok {
			return fmt.Sprintf("%s: offset %d: ", f, off)
		}
	}
	return ""
}

// unreadable leaves out a value of st's metric that cannot be read as its
// type (damage: a value block of another type), which every other reader
// reads on past, and says so once per metric, with its place. An instance
// taken into the interval for it alone is taken out again.
func (n *native) unreadable(st *nInst, t stream.Timestamp, err error) {
	if k := len(n.touched) - 1; st.acc.n == 0 && k >= 0 && n.touched[k] == st {
		st.touched, n.touched = false, n.touched[:k]
	}
	m := st.m
	if n.said.unread[m.desc.PMID] {
		return
	}
	n.said.unread[m.desc.PMID] = true
	fmt.Fprintf(n.opts.Stderr, "%s: warning: %s%s (PMID %s): a value at %s: %v (%s): left out of the reduction, as is any later one that cannot be read\n",
		n.opts.Prog, n.where(), m.desc.Names[0], m.desc.PMID, t, err, m.desc.Type)
}

// instance is the state of one metric-instance, taken into the current
// interval.
func (n *native) instance(m *nMetric, inst int32) *nInst {
	st := m.insts[inst]
	if st == nil {
		st = &nInst{m: m, inst: inst}
		m.insts[inst] = st
	}
	if !st.touched {
		st.touched = true
		st.acc = accum{}
		n.touched = append(n.touched, st)
	}
	return st
}

// instanceAt is instance, with a guess: the instance at position i of a
// metric's value sets is usually the same from one record to the next.
func (n *native) instanceAt(m *nMetric, i int, inst int32) *nInst {
	if i < len(m.byPos) {
		if st := m.byPos[i]; st != nil && st.inst == inst {
			if !st.touched {
				st.touched = true
				st.acc = accum{}
				n.touched = append(n.touched, st)
			}
			return st
		}
	} else {
		m.byPos = append(m.byPos, make([]*nInst, i+1-len(m.byPos))...)
	}
	st := n.instance(m, inst)
	m.byPos[i] = st
	return st
}

// number reads a numeric value: as a float64, and as the 64 bits of an
// integer.
func (m *nMetric) number(v stream.Value) (f float64, u uint64, err error) {
	if m.float {
		f, err = v.Float64(m.desc.Type)
		return f, 0, err
	}
	u, err = v.Uint64(m.desc.Type)
	f = float64(int64(u))
	if m.desc.Type == stream.TypeU32 || m.desc.Type == stream.TypeU64 {
		f = float64(u)
	}
	return f, u, err
}

// add takes one sample at t (ns) into the instance's interval.
func (st *nInst) add(t int64, v stream.Value) error {
	m, a := st.m, &st.acc
	if m.kind == kString {
		if v.Insitu {
			return stream.ErrValueType
		}
		st.lastS = strings.TrimRight(string(v.Payload), "\x00")
		a.n++
		return nil
	}
	f, u, err := m.number(v)
	if err != nil {
		return err
	}
	dt := 0.0
	if st.have && !st.gapped && t > st.prevT {
		dt = float64(t-st.prevT) / 1e9
	}
	a.n++
	if a.n == 1 || f < a.min {
		a.min = f
	}
	if a.n == 1 || f > a.max {
		a.max = f
	}
	a.sum += f
	a.sumsq += f * f
	a.last = f
	switch m.kind {
	case kInstant:
		a.wsum += f * dt
		a.covered += dt
	case kDiscrete:
		a.covered += dt
		a.lastDU, a.lastDF = u, f
	case kCounter:
		st.counter(t, f, u, dt)
	}
	st.prevT, st.prevF, st.prevU, st.have, st.gapped = t, f, u, true, false
	return nil
}

// counter advances the monotone value: a 32-bit counter that goes down
// wrapped (unless a <mark> came between), any other decrease is a reset
// (the counter restarted from zero).
func (st *nInst) counter(t int64, f float64, u uint64, dt float64) {
	m, a := st.m, &st.acc
	var inc float64
	signed := m.desc.Type == stream.Type32 || m.desc.Type == stream.Type64
	switch {
	case !st.have:
		st.monoU, st.monoF = u, f
	case m.float && f >= st.prevF:
		inc = f - st.prevF
		st.monoF += inc
	case m.float:
		inc = f
		st.monoF += f
		a.resets++
	case u >= st.prevU && !signed || signed && int64(u) >= int64(st.prevU):
		inc = float64(u - st.prevU)
		st.monoU += u - st.prevU
	case (m.desc.Type == stream.TypeU32 || m.desc.Type == stream.Type32) && !st.gapped:
		d := uint64(uint32(u) - uint32(st.prevU))
		inc = float64(d)
		st.monoU += d
	default:
		inc = float64(u)
		st.monoU += u
		a.resets++
	}
	a.lastU, a.lastMonoF = st.monoU, st.monoF
	if dt > 0 {
		r := inc / dt / m.timeScale()
		if a.rates == 0 || r < a.minRate {
			a.minRate = r
		}
		if a.rates == 0 || r > a.maxRate {
			a.maxRate = r
		}
		a.rates++
		a.covered += dt
	}
}

// timeScale converts a counter of time (dimension time 1) into seconds.
func (m *nMetric) timeScale() float64 {
	if m.desc.Units.DimTime() != 1 {
		return 1
	}
	return timeScales[min(m.desc.Units.ScaleTime(), 5)]
}

var timeScales = [6]float64{1e9, 1e6, 1e3, 1, 1.0 / 60, 1.0 / 3600}

func valOf(t stream.Type, u uint64, f float64) stream.Val {
	switch t {
	case stream.TypeFloat, stream.TypeDouble:
		return stream.Val{F: f}
	case stream.Type32, stream.Type64:
		return stream.Val{I: int64(u)}
	}
	return stream.Val{U: u}
}

// flush writes the current interval's result (and a <mark> seen in it).
func (n *native) flush() error {
	if !n.haveCur || n.done {
		n.haveCur = false
		return nil
	}
	n.haveCur = false
	if n.recs > 0 {
		n.perInterval[n.recs]++
		if n.intervals == 0 {
			n.firstRecs = n.recs
		}
		n.lastRecs = n.recs
		n.intervals++
		n.recs = 0
	}
	if len(n.touched) > 0 {
		snaps := n.snapshot()
		n.lastOut = n.curEnd
		n.written++
		n.done = n.opts.Samples >= 0 && n.written >= n.opts.Samples
		if err := n.writeSnaps(snaps, n.curEnd); err != nil {
			return err
		}
	}
	if n.mark {
		n.mark = false
		return n.writeMark(n.curEnd)
	}
	return nil
}

// maxGaps bounds the distinct gaps warnSampling keeps (in ms): beyond, the
// sampling is irregular enough that the first ones tell it.
const maxGaps = 10000

// sampled notes an input result at t (ns) for warnSampling.
func (n *native) sampled(t int64) {
	n.recs++
	if n.havePrev && t > n.prevRec {
		g := (t - n.prevRec + 5e5) / 1e6
		if _, ok := n.gaps[g]; ok || len(n.gaps) < maxGaps {
			n.gaps[g]++
		}
	}
	n.prevRec, n.havePrev = t, true
}

// warnSampling warns when the median number of input results per output
// interval (the first and last left out, partial, when there are 3 or
// more) is below 2: the interval is then about the sampling interval or
// shorter, and the output (8 values per instant metric-instance and
// interval) is about as large as the input or larger.
func (n *native) warnSampling() {
	if n.intervals >= 3 {
		// The first and last intervals are partial.
		n.perInterval[n.firstRecs]--
		n.perInterval[n.lastRecs]--
	}
	med := medianOf(n.perInterval)
	if med >= 2 || med < 0 {
		return
	}
	seen := "once"
	if g := medianOf(n.gaps); g > 0 {
		seen = "every " + FormatInterval(time.Duration(g)*time.Millisecond)
	}
	fmt.Fprintf(n.opts.Stderr, "%s: warning: -t %s: the input is sampled %s, a median of %d sample per interval: "+
		"the output is about as large as the input or larger; choose an interval of 10 samples or more\n",
		n.opts.Prog, FormatInterval(time.Duration(n.step)), seen, med)
}

// medianOf is the median key of a histogram (key → count), the upper of
// the two middle ones; -1 when it is empty.
func medianOf[K int | int64](h map[K]int) K {
	keys := make([]K, 0, len(h))
	total := 0
	for k, c := range h {
		keys = append(keys, k)
		total += c
	}
	if total == 0 {
		return -1
	}
	slices.Sort(keys)
	seen := 0
	for _, k := range keys {
		seen += h[k]
		if 2*seen > total {
			return k
		}
	}
	return keys[len(keys)-1]
}

// FormatInterval writes an interval as -t takes it: 10s, 5m, 1h30m, 250ms.
func FormatInterval(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
