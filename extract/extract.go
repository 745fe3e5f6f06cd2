// Package extract merges, windows and selects PCP archives: what
// pmlogextract does, as a stream.Iterator whose records a format.Writer
// (or the pipe) takes.
//
//	inputs ──▶ metadata store (all .meta, read first) ─────────────────────────┐
//	       ──▶ data, one record ahead per input ──▶ heap: the earliest ──▶ window, limit ──▶ lazy metadata + record
//
// Memory and open files stay flat in the number of inputs (thousands of
// hourly archives merge in a few tens of MiB). Each input is read up to
// its first record to merge (as pmlogextract reads every input before
// it writes anything) and then parked: its iterator is closed, and only
// the time of that record, the heap's key, is kept. When the record is
// due the input is opened again and read up to it, and it stays open
// until its end, when its file, mapping and buffer go at once. The
// pending record's time is exact, not a guess from the label (records
// that precede their label's start, or go back in time, come out where
// they always did), and the second read repeats the first: the same
// records skipped, the same pmcd pid and sequence number noted for the
// <mark> rule, which looks at the next input's prologue even while that
// input is parked. Inputs open together (copies of one archive, all
// overlapping) read through buffers that share 2 MiB, not mappings (the
// kernel maps 64 KiB around each fault of a mapping) and without a
// checker goroutine each.
//
// The heap orders the inputs with a record pending, and those whose
// end <mark> is pending (1 ms after their last record), by time, ties
// to the input named first: what pmlogextract's scan of every input
// for the earliest record picks.
//
// The rules are PCP 6.0.3 pmlogextract's (see docs/compatibility.md for
// where and why they differ): ties between inputs go to the input named
// first; records with equal timestamps are all kept; a <mark> goes 1 ms
// after the end of an input when another input continues, unless the pmcd
// pid and sequence number in the logger's epilogue and the next input's
// prologue show there was no gap (-m: always); metadata is written just
// before the first record that needs it, instance domains and label sets
// stamped with that record's time.
//
// Designs rejected:
//   - Guessing when an input's data starts from its label, and opening
//     it then: a record before the label's start (a damaged archive)
//     would come out later than pmlogextract writes it. Reading each
//     input twice, the first time only up to its first record, costs
//     one more open of each and keeps the order exact.
//   - Reading every .meta whole before the merge, one at a time, to hold
//     no file open: pmlogextract reads one record of each in turn, and
//     that order decides which help text wins and which of several label
//     sets a lookup finds. The .meta files are read in turn as before,
//     through small buffers, each closed at its end.
//   - A daily window (-w) with parked inputs: moving the window skips
//     records again, which a second read would not repeat; it keeps
//     every input open, as before.
package extract

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pipe"
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
	// StopAt, when set, is asked about an error reading an input's
	// records: when it returns true the input ends there, as libpcp ends
	// the read of a volume at a record it calls corrupted (pmlogextract
	// goes on with its other inputs), having said so itself.
	StopAt func(error) bool
}

// stopAt reports whether an input's read error ends only that input.
func (o *Options) stopAt(err error) bool { return o.StopAt != nil && o.StopAt(err) }

// Bounds returns the earliest label start of the archives, and the latest
// archive end (ok false when no archive has data).
func Bounds(archives []*format.Archive) (start, end stream.Timestamp, ok bool, err error) {
	format.FindEnds(archives)
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
	name   string
	it     stream.Iterator
	closer interface{ Close() error }
	inline bool // metadata arrives in the data stream
	warmed bool // its first volume was warmed (warmNext)
	label  stream.Label
	state  inState
	mark   bool // the pending record is an input <mark>
	res    stream.Result
	buf    []byte
	// raw: where res lies in its input volume, when its body is the
	// reader's, unchanged (rawOK; see RawRecord)
	raw     format.RawRecord
	rawOK   bool
	last    stream.Timestamp // of the last data record read
	pid     int64
	seqnum  int64
	idx     int
	hasData bool
	head    *format.Archive // to read the start of, for CarryDiscrete
	// arch is an archive input's archive, opened (in.it) when the merge
	// first needs a record of it and closed at its end; ropts are the
	// options of its Records.
	arch  *format.Archive
	ropts []format.RecordsOption
	rbuf  []byte // the read buffer lent to it (Extractor.bufs)
	// parked: the pending record (res.T, mark) is known, but the
	// iterator that read it is closed, holding no file, mapping or
	// buffer; unpark reads it again when the record is due.
	parked bool
}

// Extractor is the merged output, a stream.Iterator: the output label,
// then metadata and data records. Records are valid until the next Next.
type Extractor struct {
	lastPick  *input // whose result was put out last
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
	// The merge: h holds every input with a record or an end <mark>
	// pending (nEOF of them the latter), need those to read on before
	// the next pick (the one just written, or a daily window's drops).
	h      inputHeap
	nEOF   int
	need   []*input
	primed bool // every input has been read up to its first record
	// priming is true while prime reads the first records
	priming bool
	lazy    bool // archive inputs are parked after their first record
	open    int  // archive inputs with an iterator open
	many    bool // so many inputs that a crowd of them open reads buffered
	// crowdBuf is the buffer size of an input in such a crowd.
	crowdBuf int
	// bufs are read buffers of crowdBuf bytes not lent to an input: the
	// inputs of a crowd are opened and closed in turn (parked, finished)
	// and reuse them rather than make one each time.
	bufs [][]byte
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

// EmptyWarning says that an input with no data record is left out.
type EmptyWarning struct{ Name string }

func (w *EmptyWarning) Error() string { return w.Name + ": empty archive (no data): skipped" }

// ErrAllEmpty is returned when no input has any data.
var ErrAllEmpty = errors.New("every input archive is empty: no output")

// New prepares the merge: it opens every input, checks their labels and
// reads the metadata of the archives.
func New(inputs []Input, opts Options) (*Extractor, error) {
	e := &Extractor{opts: opts, winS: opts.Start, winE: opts.End}
	// Memory stays flat in the number of inputs: the read buffers (or
	// the resident part of a mapped volume) share 8 MiB, between 4 KiB
	// and 1 MiB each. The .meta buffers of readMeta, which reads every
	// .meta at once, and the data buffers of many inputs (see refill)
	// share 512 KiB: they hold a few records each.
	buf := min(max((8<<20)/max(len(inputs), 1), 4<<10), 1<<20)
	e.crowdBuf = min(max((512<<10)/max(len(inputs), 1), 4<<10), 64<<10)
	metaBuf := e.crowdBuf
	ropts := []format.RecordsOption{format.DataOnly(), format.BufferSize(buf)}
	if opts.HasStart {
		ropts = append(ropts, format.From(opts.Start))
	}
	// Parking needs every input's records to be read again exactly as
	// they were, with no effect but the pmcd pid and sequence number
	// (see park). A daily window moves its start, and what the second
	// read skips with it: it keeps every input open. The carried values
	// (CarryDiscrete) are no obstacle: the records before the window
	// that they come from are read by readHead, and From keeps them out
	// of the data an archive's iterator gives.
	e.lazy = !opts.Daily
	e.many = len(inputs) > manyInputs
	names := make([]string, 0, len(inputs))
	for _, in := range inputs {
		names = append(names, in.Name)
	}
	e.store = newMetaStore(names, opts.Select, opts.SkipConflicts, opts.Warn)
	var archives []*format.Archive
	for _, in := range inputs {
		archives = append(archives, in.Archive)
	}
	format.FindEnds(archives)
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
				e.warn(&EmptyWarning{in.Name})
				st.state = stDone
				metaIts = append(metaIts, nil)
				e.ins = append(e.ins, st)
				continue
			}
			st.arch, st.ropts = a, ropts
			if opts.CarryDiscrete && opts.HasStart {
				st.head = a
			}
			metaIts = append(metaIts, a.Records(format.MetaOnly(), format.BufferSize(metaBuf)))
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
			if ms, ok := stream.As[pipe.MetadataSource](in.Stream); ok {
				if recs, ok := ms.Metadata(); ok {
					// The producer sent the whole metadata up front
					// (docs/stream.md, METADATA): read it as an
					// archive's, in .meta order, and check that the
					// stream brings nothing more.
					st.inline = false
					st.it = pipe.Announced(in.Stream, recs)
					metaIts[len(metaIts)-1] = sliceCloser{stream.FromSlice(recs)}
				}
			}
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

// HostMismatch is the error for inputs of different hosts: the first
// input's, and the first input of another.
type HostMismatch struct {
	First, FirstHost, Other, OtherHost string
}

func (e *HostMismatch) Error() string {
	return fmt.Sprintf("inputs of different hosts: %s is of host %q, %s of host %q (merge hosts into a folio with --folio)", e.First, e.FirstHost, e.Other, e.OtherHost)
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
	tz := last
	if e.opts.FirstTZ {
		tz = first
	}
	// input by input, as pmlogextract checks them: a timezone unlike the
	// output's is said of each input before it, a host unlike the
	// first's stops at that input
	for _, in := range e.ins {
		if in.state == stDone {
			continue
		}
		if in.label.Version > v {
			return fmt.Errorf("%s is a version %d archive: the output cannot be version %d (a v3 archive does not fit in v2)", in.name, in.label.Version, v)
		}
		if in.label.Hostname != first.label.Hostname {
			return &HostMismatch{First: first.name, FirstHost: first.label.Hostname, Other: in.name, OtherHost: in.label.Hostname}
		}
		if in.label.Timezone != tz.label.Timezone {
			e.warn(&TZMismatch{Used: tz.name, UsedTZ: tz.label.Timezone, Other: in.name, OtherTZ: in.label.Timezone})
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

// sliceCloser is a stream.CloserIterator over records in memory.
type sliceCloser struct{ *stream.SliceIterator }

func (sliceCloser) Close() error { return nil }

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
					if err := it.Err(); err != nil && !e.opts.stopAt(err) {
						return err
					}
					it.Close()
					its[i] = nil
					left--
					// Its instance domains are resolved: the
					// tracker's copies of them can go.
					e.store.trackers[i] = nil
					break
				}
				rec := it.At()
				if _, ok := rec.(*stream.Label); ok {
					continue
				}
				wanted, err := e.store.add(i, rec, it)
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
		e.warn(&SkippedWarning{e.store.skipList})
	}
	return nil
}

// TZMismatch warns that an input's timezone is not the one the output
// takes (the last input's, or with -f the first's).
type TZMismatch struct{ Used, UsedTZ, Other, OtherTZ string }

func (w *TZMismatch) Error() string {
	return fmt.Sprintf("timezone mismatch: %s has %q, %s (used) has %q", w.Other, w.OtherTZ, w.Used, w.UsedTZ)
}

// Label returns the output label (its start is the earliest input's; a
// writer with StartAtFirstRecord moves it to the first record).
func (e *Extractor) Label() stream.Label { return e.label }

// Skipped returns the metrics left out because of conflicts (-x).
func (e *Extractor) Skipped() []stream.PMID { return e.store.skipList }

// At implements stream.Iterator.
func (e *Extractor) At() stream.Record { return e.cur }

// RawRecord implements format.RawSource: for an input's result put out
// as its reader gave it (no metrics selected out of it), where it lies.
func (e *Extractor) RawRecord(rec stream.Record) (format.RawRecord, bool) {
	in := e.lastPick
	if in == nil || !in.rawOK || rec != stream.Record(&in.res) {
		return format.RawRecord{}, false
	}
	return in.raw, true
}

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

func (e *Extractor) pick(p stream.PMID) stream.Pick {
	if e.store.skip[p] {
		return stream.Pick{}
	}
	if e.opts.Select == nil {
		return stream.Pick{Keep: true}
	}
	return e.opts.Select.pick[p]
}

func (e *Extractor) step() error {
	if e.opts.Samples > 0 && e.written >= e.opts.Samples {
		e.done = true
		return nil
	}
	if !e.primed {
		if err := e.prime(); err != nil {
			return err
		}
	}
	if len(e.need) > 0 {
		// In input order, as pmlogextract reads them: a stream's
		// metadata and the warnings come in that order.
		if len(e.need) > 1 {
			slices.SortFunc(e.need, func(a, b *input) int { return a.idx - b.idx })
		}
		for _, in := range e.need {
			if err := e.refill(in); err != nil {
				return err
			}
			e.pushIfPending(in)
		}
		clear(e.need)
		e.need = e.need[:0]
	}
	pick := e.h.top()
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
		e.h.pop()
		e.nEOF--
		pick.state = stDone
		if !e.opts.AlwaysMark && e.noGap(pick) {
			return nil
		}
		// Another input goes on (the heap holds the inputs with a
		// record pending, and those with their end <mark>).
		if len(e.h) > e.nEOF {
			e.mark.T = now
			e.out = append(e.out, &e.mark)
			e.written++
		}
		return nil
	}
	if pick.parked {
		if err := e.unpark(pick); err != nil {
			return err
		}
		e.warmNext()
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
	e.h.pop()
	pick.state = stNeed
	e.need = append(e.need, pick)
	if pick.mark {
		e.mark.T = now
		e.out = append(e.out, &e.mark)
		e.written++
		return nil
	}
	var err error
	e.out, err = e.store.forResult(e.out, &pick.res, now)
	if err != nil {
		// The input's iterator still has the record current: say where
		// it was read.
		where := pick.name
		if w := stream.Where(pick.it); w != "" {
			where = w
		}
		return fmt.Errorf("%s: %w", where, err)
	}
	e.out = append(e.out, &pick.res)
	e.lastPick = pick
	e.written++
	return nil
}

// noGap reports whether the input that ended and the input whose record
// comes next were logged by the same pmcd with no restart in between: the
// pid and sequence number of the epilogue of one equal those of the
// prologue of the other. The next input is the one whose pending record
// is earliest (the first named of equal ones), ends pending aside; a
// parked input's pid and sequence number are those read up to its
// pending record, as they would be had it stayed open.
func (e *Extractor) noGap(ended *input) bool {
	if ended.pid == -1 || ended.seqnum == -1 {
		return false
	}
	var next *input
	for _, h := range e.h {
		in := h.in
		if in == ended || in.state != stResult {
			continue
		}
		if next == nil || in.res.T.Before(next.res.T) || in.res.T == next.res.T && in.idx < next.idx {
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
	kept := e.h[:0]
	for _, h := range e.h {
		if in := h.in; in.state == stResult && in.res.T.Before(e.winS) {
			in.state = stNeed
			e.need = append(e.need, in)
			continue
		}
		kept = append(kept, h)
	}
	clear(e.h[len(kept):])
	e.h = kept
	e.h.init()
	e.mark.T = e.current.Add(time.Millisecond)
	e.current = e.mark.T
	e.out = append(e.out, &e.mark)
	e.written++
}
