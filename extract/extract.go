// Package extract merges, windows and selects PCP archives: what
// pmlogextract does, as a stream.Iterator whose records a format.Writer
// (or the pipe) takes.
//
//	inputs ──▶ metadata store (all .meta, read first) ──┐
//	       ──▶ data, one record ahead per input ──▶ pick the earliest ──▶ lazy metadata + record
//
// The rules are PCP 6.0.3 pmlogextract's (see docs/compatibility.md for
// where and why they differ): ties between inputs go to the input named
// first; records with equal timestamps are all kept; a <mark> goes 1 ms
// after the end of an input when another input continues, unless the pmcd
// pid and sequence number in the logger's epilogue and the next input's
// prologue show there was no gap (-m: always); metadata is written just
// before the first record that needs it, instance domains and label sets
// stamped with that record's time.
package extract

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Input is one input: an archive, or a record stream.
type Input struct {
	Name string
	// Archive is an input archive: its metadata is read first, its data
	// volumes then read (from the window's start, with the index).
	Archive *format.Archive
	// Stream is an input record stream (used when Archive is nil): its
	// metadata is taken as it comes, before the data that needs it.
	Stream stream.Iterator
}

// Options are pmlogextract's options.
type Options struct {
	Select        *Selection // nil: every metric
	Start, End    stream.Timestamp
	HasStart      bool
	HasEnd        bool
	Daily         bool // -w: repeat the Start..End window every day
	Samples       int  // -s: stop after this many records (marks count); 0: no limit
	AlwaysMark    bool // -m
	SkipConflicts bool // -x
	FirstTZ       bool // -f: the timezone of the first input, not the last
	// CarryDiscrete gives a window (Start) the values its discrete
	// metrics had at its start: the latest values seen before it, in the
	// records read before the window (those at the start of each input,
	// where pmlogger logs its once-only metrics, and those between the
	// index entry the read starts from and the window), as one result
	// stamped with the window's start. pmlogextract drops them, and a
	// metric logged once (hinv.ncpu, kernel.uname.release) vanishes.
	CarryDiscrete bool
	Version       int // 0: the highest input version
	// LogEnd, when HasLogEnd, is the end of the inputs (see Bounds); reading
	// stops past it, as pmlogextract's does.
	LogEnd    stream.Timestamp
	HasLogEnd bool
	Warn      func(error)
}

// Bounds returns the earliest label start of the archives, and the latest
// archive end (ok false when no archive has data).
func Bounds(archives []*format.Archive) (start, end stream.Timestamp, ok bool, err error) {
	for i, a := range archives {
		if a == nil {
			continue
		}
		s := a.Label().Start
		if i == 0 || s.Before(start) {
			start = s
		}
		e, has, err := a.End()
		if err != nil {
			return start, end, ok, err
		}
		if has && (!ok || e.After(end)) {
			end, ok = e, true
		}
	}
	return start, end, ok, nil
}

type inState int

const (
	stNeed   inState = iota // the next record is to be read
	stResult                // res holds the next result (or an input <mark> when mark)
	stEOF                   // at the end; a <mark> may be due
	stDone
)

type input struct {
	name    string
	it      stream.Iterator
	closer  interface{ Close() error }
	inline  bool // metadata arrives in the data stream
	label   stream.Label
	state   inState
	mark    bool // the pending record is an input <mark>
	res     stream.Result
	buf     []byte
	last    stream.Timestamp // of the last data record read
	pid     int64
	seqnum  int64
	idx     int
	hasData bool
	head    *format.Archive // to read the start of, for CarryDiscrete
}

// Extractor is the merged output, a stream.Iterator: the output label,
// then metadata and data records. Records are valid until the next Next.
type Extractor struct {
	opts      Options
	ins       []*input
	store     *metaStore
	label     stream.Label
	out       []stream.Record
	outPos    int
	cur       stream.Record
	err       error
	done      bool
	started   bool // a data record was written (pmlogextract's !first_datarec)
	written   int
	current   stream.Timestamp
	winS      stream.Timestamp
	winE      stream.Timestamp
	mark      stream.Mark
	noSel     bool
	labelSent bool
	carry     map[stream.PMID]*carried // CarryDiscrete's values
	carried   bool                     // they were written
	joined    stream.Result
}

// carried is the latest value set of a discrete metric before the window.
type carried struct {
	t   stream.Timestamp
	res stream.Result // holding that one value set
}

var (
	pmidPID    = stream.PMID(2<<22 | 0<<10 | 23)
	pmidSeqnum = stream.PMID(2<<22 | 0<<10 | 24)
)

// ErrAllEmpty is returned when no input has any data.
var ErrAllEmpty = errors.New("every input archive is empty: no output")

// New prepares the merge: it opens every input, checks their labels and
// reads the metadata of the archives.
func New(inputs []Input, opts Options) (*Extractor, error) {
	e := &Extractor{opts: opts, winS: opts.Start, winE: opts.End}
	names := make([]string, 0, len(inputs))
	for _, in := range inputs {
		names = append(names, in.Name)
	}
	e.store = newMetaStore(names, opts.Select, opts.SkipConflicts, opts.Warn)
	var metaIts []stream.CloserIterator
	defer func() {
		for _, m := range metaIts {
			if m != nil {
				m.Close()
			}
		}
	}()
	for i, in := range inputs {
		st := &input{name: in.Name, idx: i, pid: -1, seqnum: -1}
		if in.Archive != nil {
			a := in.Archive
			st.label = a.Label()
			_, has, err := a.End()
			if err != nil {
				return nil, err
			}
			if !has {
				e.warn(fmt.Errorf("%s: empty archive (no data): skipped", in.Name))
				st.state = stDone
				metaIts = append(metaIts, nil)
				e.ins = append(e.ins, st)
				continue
			}
			// Memory stays flat in the number of inputs: their read
			// buffers share 8 MiB (between 64 KiB and 1 MiB each).
			buf := min(max((8<<20)/len(inputs), 64<<10), 1<<20)
			ropts := []format.RecordsOption{format.DataOnly(), format.BufferSize(buf)}
			if opts.HasStart {
				ropts = append(ropts, format.From(opts.Start))
			}
			it := a.Records(ropts...)
			st.it, st.closer = it, it
			if opts.CarryDiscrete && opts.HasStart {
				st.head = a
			}
			metaIts = append(metaIts, a.Records(format.MetaOnly()))
		} else {
			if in.Stream == nil {
				return nil, fmt.Errorf("%s: no archive and no stream", in.Name)
			}
			st.it, st.inline = in.Stream, true
			if !in.Stream.Next() {
				if err := in.Stream.Err(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("%s: empty stream", in.Name)
			}
			l, ok := in.Stream.At().(*stream.Label)
			if !ok {
				return nil, fmt.Errorf("%s: the stream does not start with a label", in.Name)
			}
			st.label = *l
			metaIts = append(metaIts, nil)
		}
		e.ins = append(e.ins, st)
	}
	if err := e.makeLabel(); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.readMeta(metaIts); err != nil {
		e.Close()
		return nil, err
	}
	e.noSel = opts.Select == nil
	if opts.CarryDiscrete && opts.HasStart {
		e.carry = map[stream.PMID]*carried{}
		for _, in := range e.ins {
			if in.head != nil && in.state != stDone {
				if err := e.readHead(in); err != nil {
					e.Close()
					return nil, err
				}
			}
		}
	}
	return e, nil
}

// readHead notes the discrete values in the records at the start of an
// input (up to its second index entry: the first 100 kB or so, where
// pmlogger logs the metrics it logs once), when they precede the window.
func (e *Extractor) readHead(in *input) error {
	limit := e.winS
	if idx, _ := in.head.Index(); len(idx) > 1 && idx[1].T.Before(limit) {
		limit = idx[1].T
	}
	it := in.head.Records(format.DataOnly(), format.BufferSize(64<<10))
	defer it.Close()
	for it.Next() {
		r, ok := it.At().(*stream.Result)
		if !ok {
			continue
		}
		if !r.T.Before(limit) {
			break
		}
		if err := e.noteCarry(r); err != nil {
			return fmt.Errorf("%s: %w", in.name, err)
		}
	}
	return it.Err()
}

// noteCarry keeps the value sets of discrete metrics of r, a record
// before the window, when they are the latest seen.
func (e *Extractor) noteCarry(r *stream.Result) error {
	it := r.VSets()
	for it.Next() {
		p := it.VSet().PMID
		d := e.store.descs[p]
		if d == nil || d.d.Sem != stream.SemDiscrete || !e.pick(p).Keep {
			continue
		}
		c := e.carry[p]
		if c == nil {
			c = &carried{}
			e.carry[p] = c
		} else if r.T.Before(c.t) {
			continue
		}
		one := func(q stream.PMID) stream.Pick {
			if q != p {
				return stream.Pick{}
			}
			return e.pick(q)
		}
		body, _, err := r.AppendSelected(c.res.Body[:0], one)
		if err != nil {
			return err
		}
		c.t, c.res = r.T, stream.Result{T: e.winS, Version: r.Version, Body: body}
	}
	return it.Err()
}

// carryResult builds the one result of the carried values, at the
// window's start.
func (e *Extractor) carryResult() (*stream.Result, error) {
	pmids := make([]stream.PMID, 0, len(e.carry))
	for p := range e.carry {
		pmids = append(pmids, p)
	}
	slices.Sort(pmids)
	version := uint8(3)
	if e.label.Version == 2 {
		version = 2
	}
	parts := make([]*stream.Result, 0, len(pmids))
	for _, p := range pmids {
		r := &e.carry[p].res
		if (r.Version >= 3) != (version >= 3) {
			body, err := r.AppendBody(nil, version)
			if err != nil {
				return nil, err
			}
			r = &stream.Result{T: r.T, Version: version, Body: body}
		}
		parts = append(parts, r)
	}
	body, err := stream.JoinResults(e.joined.Body[:0], version, parts)
	if err != nil {
		return nil, err
	}
	e.joined = stream.Result{T: e.winS, Version: version, Body: body}
	return &e.joined, nil
}

func (e *Extractor) warn(err error) {
	if e.opts.Warn != nil {
		e.opts.Warn(err)
	}
}

// makeLabel builds the output label from the inputs' labels.
func (e *Extractor) makeLabel() error {
	var first, last *input
	maxv := 0
	for _, in := range e.ins {
		if in.state == stDone {
			continue
		}
		if first == nil {
			first = in
		}
		last = in
		maxv = max(maxv, in.label.Version)
	}
	if first == nil {
		return ErrAllEmpty
	}
	v := e.opts.Version
	if v == 0 {
		v = maxv
	}
	if v != 2 && v != 3 {
		return fmt.Errorf("output version %d: only 2 and 3 exist", v)
	}
	for _, in := range e.ins {
		if in.state == stDone {
			continue
		}
		if in.label.Version > v {
			return fmt.Errorf("%s is a version %d archive: the output cannot be version %d (a v3 archive does not fit in v2)", in.name, in.label.Version, v)
		}
		if in.label.Hostname != first.label.Hostname {
			return fmt.Errorf("inputs of different hosts: %s is of host %q, %s of host %q (merge hosts into a folio with --folio)", first.name, first.label.Hostname, in.name, in.label.Hostname)
		}
	}
	tz := last
	if e.opts.FirstTZ {
		tz = first
	}
	for _, in := range e.ins {
		if in.state != stDone && in.label.Timezone != tz.label.Timezone {
			e.warn(fmt.Errorf("timezone mismatch: %s has %q, %s (used) has %q", in.name, in.label.Timezone, tz.name, tz.label.Timezone))
		}
	}
	start := first.label.Start
	for _, in := range e.ins {
		if in.state != stDone && in.label.Start.Before(start) {
			start = in.label.Start
		}
	}
	e.label = stream.Label{Version: v, PID: int32(os.Getpid()), Start: start, Vol: -1,
		Hostname: first.label.Hostname, Timezone: tz.label.Timezone, Zoneinfo: tz.label.Zoneinfo}
	if v == 2 {
		e.label.Zoneinfo = ""
	}
	return nil
}

// readMeta reads the metadata of every archive input, one wanted record
// from each input in turn, as pmlogextract does (the order decides which
// help text wins and how label sets are found).
func (e *Extractor) readMeta(its []stream.CloserIterator) error {
	left := 0
	for _, it := range its {
		if it != nil {
			left++
		}
	}
	for left > 0 {
		for i, it := range its {
			if it == nil {
				continue
			}
			for {
				if !it.Next() {
					if err := it.Err(); err != nil {
						return err
					}
					it.Close()
					its[i] = nil
					left--
					break
				}
				rec := it.At()
				if _, ok := rec.(*stream.Label); ok {
					continue
				}
				wanted, err := e.store.add(i, rec)
				if err != nil {
					return err
				}
				if wanted {
					break
				}
			}
		}
	}
	if len(e.store.skipList) > 0 {
		e.warn(fmt.Errorf("these metrics are left out of the output: %v", e.store.skipList))
	}
	return nil
}

// Label returns the output label (its start is the earliest input's; a
// writer with StartAtFirstRecord moves it to the first record).
func (e *Extractor) Label() stream.Label { return e.label }

// Skipped returns the metrics left out because of conflicts (-x).
func (e *Extractor) Skipped() []stream.PMID { return e.store.skipList }

// At implements stream.Iterator.
func (e *Extractor) At() stream.Record { return e.cur }

// Err implements stream.Iterator.
func (e *Extractor) Err() error { return e.err }

// Close releases the inputs.
func (e *Extractor) Close() error {
	var first error
	for _, in := range e.ins {
		if in.closer != nil {
			if err := in.closer.Close(); err != nil && first == nil {
				first = err
			}
			in.closer = nil
		}
	}
	return first
}

// Next implements stream.Iterator.
func (e *Extractor) Next() bool {
	if e.err != nil {
		return false
	}
	if !e.labelSent {
		e.labelSent = true
		e.cur = &e.label
		return true
	}
	for e.outPos >= len(e.out) {
		e.out, e.outPos = e.out[:0], 0
		if e.done {
			e.cur = nil
			return false
		}
		if err := e.step(); err != nil {
			e.err = err
			e.cur = nil
			return false
		}
	}
	e.cur = e.out[e.outPos]
	e.outPos++
	return true
}

// refill reads the next wanted data record of in.
func (e *Extractor) refill(in *input) error {
	for {
		if !in.it.Next() {
			if err := in.it.Err(); err != nil {
				return err
			}
			if e.started {
				in.state = stEOF
			} else {
				in.state = stDone
			}
			return nil
		}
		switch r := in.it.At().(type) {
		case *stream.Label:
			continue
		case *stream.Mark:
			in.last = r.T
			if e.opts.HasStart && r.T.Before(e.winS) {
				continue
			}
			in.res.T, in.res.Version = r.T, uint8(in.label.Version)
			in.res.Body = in.res.Body[:0]
			in.mark, in.state = true, stResult
			return nil
		case *stream.Result:
			in.last = r.T
			if r.NumPMID() == 5 {
				in.prologue(r)
			}
			if e.opts.HasStart && r.T.Before(e.winS) {
				if e.carry != nil {
					if err := e.noteCarry(r); err != nil {
						return fmt.Errorf("%s: %w", in.name, err)
					}
				}
				continue
			}
			in.res.T, in.res.Version = r.T, r.Version
			if e.noSel && len(e.store.skip) == 0 {
				// No copy: the body stays valid until this input's
				// iterator moves on, which is after it is written.
				in.res.Body = r.Body
			} else {
				var n int
				var err error
				in.buf, n, err = r.AppendSelected(in.buf[:0], e.pick)
				if err != nil {
					return fmt.Errorf("%s: result at %s: %w", in.name, r.T, err)
				}
				if n == 0 {
					continue
				}
				in.res.Body = in.buf
			}
			in.mark, in.state = false, stResult
			in.hasData = true
			return nil
		default:
			if in.inline {
				if _, err := e.store.add(in.idx, r); err != nil {
					return err
				}
			}
		}
	}
}

func (e *Extractor) pick(p stream.PMID) stream.Pick {
	if e.store.skip[p] {
		return stream.Pick{}
	}
	if e.opts.Select == nil {
		return stream.Pick{Keep: true}
	}
	return e.opts.Select.pick[p]
}

// prologue notes pmcd's pid and sequence number from a pmlogger prologue
// or epilogue record (5 metrics, pmcd.pid and pmcd.seqnum among them).
func (in *input) prologue(r *stream.Result) {
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.NumVal < 1 || (vs.PMID != pmidPID && vs.PMID != pmidSeqnum) {
			continue
		}
		v, err := vs.Value(0)
		if err != nil {
			continue
		}
		if vs.PMID == pmidPID {
			if u, err := v.Uint64(stream.TypeU64); err == nil {
				in.pid = int64(u)
			}
		} else if u, err := v.Uint64(stream.TypeU32); err == nil {
			in.seqnum = int64(uint32(u))
		}
	}
}

// key is when an input's pending record sorts: its time, or for a pending
// end-of-input <mark>, the mark's time.
func (in *input) key() stream.Timestamp {
	if in.state == stEOF {
		return in.last.Add(time.Millisecond)
	}
	return in.res.T
}

func (e *Extractor) step() error {
	if e.opts.Samples > 0 && e.written >= e.opts.Samples {
		e.done = true
		return nil
	}
	for _, in := range e.ins {
		if in.state == stNeed {
			if err := e.refill(in); err != nil {
				return err
			}
		}
	}
	var pick *input
	for _, in := range e.ins {
		if in.state != stResult && in.state != stEOF {
			continue
		}
		if pick == nil || in.key().Before(pick.key()) {
			pick = in
		}
	}
	if pick == nil {
		e.done = true
		return nil
	}
	now := pick.key()
	if e.opts.HasLogEnd && now.After(e.opts.LogEnd) {
		e.done = true
		return nil
	}
	if e.opts.HasEnd && now.After(e.winE) {
		if !e.opts.Daily {
			e.done = true
			return nil
		}
		e.rollWindow()
		return nil
	}
	e.current = now
	if pick.state == stEOF {
		pick.state = stDone
		if !e.opts.AlwaysMark && e.noGap(pick) {
			return nil
		}
		for _, in := range e.ins {
			if in != pick && (in.state == stResult || in.state == stNeed) {
				e.mark.T = now
				e.out = append(e.out, &e.mark)
				e.written++
				return nil
			}
		}
		return nil
	}
	if !e.started && len(e.carry) > 0 && !e.carried && e.winS.Before(now) {
		// The values of discrete metrics at the window's start go first.
		e.carried = true
		r, err := e.carryResult()
		if err != nil {
			return err
		}
		e.started = true
		e.out = e.store.label(e.out, stream.LabelContext, uint32(stream.InDomNull), e.winS)
		if e.out, err = e.store.forResult(e.out, r, e.winS); err != nil {
			return err
		}
		e.out = append(e.out, r)
		e.written++
		return nil // the picked record stays pending
	}
	e.started = true
	e.out = e.store.label(e.out, stream.LabelContext, uint32(stream.InDomNull), now)
	pick.state = stNeed
	if pick.mark {
		e.mark.T = now
		e.out = append(e.out, &e.mark)
		e.written++
		return nil
	}
	var err error
	e.out, err = e.store.forResult(e.out, &pick.res, now)
	if err != nil {
		return fmt.Errorf("%s: %w", pick.name, err)
	}
	e.out = append(e.out, &pick.res)
	e.written++
	return nil
}

// noGap reports whether the input that ended and the input whose record
// comes next were logged by the same pmcd with no restart in between: the
// pid and sequence number of the epilogue of one equal those of the
// prologue of the other.
func (e *Extractor) noGap(ended *input) bool {
	if ended.pid == -1 || ended.seqnum == -1 {
		return false
	}
	var next *input
	for _, in := range e.ins {
		if in == ended || in.state != stResult {
			continue
		}
		if next == nil || in.res.T.Before(next.res.T) {
			next = in
		}
	}
	return next != nil && next.pid == ended.pid && next.seqnum == ended.seqnum
}

// rollWindow moves a daily window (-w) on by a day, drops what is pending
// before it, and writes a <mark> for the gap.
func (e *Extractor) rollWindow() {
	day := 24 * time.Hour
	e.winS, e.winE = e.winS.Add(day), e.winE.Add(day)
	if e.opts.HasLogEnd && e.winS.After(e.opts.LogEnd) {
		e.done = true
		return
	}
	for _, in := range e.ins {
		if in.state == stResult && in.res.T.Before(e.winS) {
			in.state = stNeed
		}
	}
	e.mark.T = e.current.Add(time.Millisecond)
	e.current = e.mark.T
	e.out = append(e.out, &e.mark)
	e.written++
}
