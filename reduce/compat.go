package reduce

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// flushEvery is how far pmlogreduce lets a volume grow between two index
// entries.
const flushEvery = 100000

// stamp is a time as libpcp's interpolation keeps its clock: nanoseconds
// may reach exactly 1e9 without carrying (libpcp normalises only above).
type stamp struct{ sec, nsec int64 }

func (s stamp) after(t stream.Timestamp) bool {
	return s.sec > t.Sec || s.sec == t.Sec && s.nsec > int64(t.Nsec)
}

func (s stamp) ts() stream.Timestamp { return stream.Timestamp{Sec: s.sec, Nsec: int32(s.nsec)} }

// compat is one pmlogreduce run.
type compat struct {
	opts    *Options
	a       *format.Archive
	lv      dump.LibpcpView // the input reader's warnings that libpcp acts on
	label   stream.Label
	version int
	meta    *archiveMeta
	metrics []*metric
	byPMID  map[stream.PMID]*metric
	bySlot  []*metric // byPMID by value set position, last seen (metricAt)
	all     []*instState
	ts      *tsub
	start   stream.Timestamp
	cur     *cursor

	consumed int64 // seq of the last record consumed
	lastMark int64 // seq of the last <mark> consumed
	markSeen bool  // a <mark> was consumed at this step
	// pmlogreduce's scan resumes where libpcp's index lookup puts it, and
	// an entry at exactly the resume time can put it past records (the
	// final entry of an archive points at the end): the records before
	// (skipVol, skipOff) are consumed without being scanned.
	tindex   []format.IndexEntry
	skipping bool
	skipVol  int32
	skipOff  int64

	w        *format.Writer
	indoms   *indomCursor
	written  map[stream.InDomID][]int32 // instances last written per domain
	unbound  []*instState
	nUnbound int
	marks    []markAt // buffered <mark>s, oldest first (consumed ones dropped lazily)
	allMarks []markAt // every <mark> of the archive (from the first pass)
	// <mark>s libpcp's interpolation passes over, as it does when
	// $PCP_IGNORE_MARK_RECORDS is set (Options.IgnoreMarks): they are
	// still copied to the output (pmlogreduce's own scan copies them),
	// but bound no interpolation and hide no counter.
	ignored map[int64]bool
	sets    []outSet
	body    []byte
	pay     []byte
}

type markAt struct {
	seq int64
	rel float64
}

type outSet struct {
	pmid   stream.PMID
	numval int32
	valfmt uint32
	vals   []outVal
}

type outVal struct {
	inst int32
	v    val
}

func (c *compat) warn(err error) {
	fmt.Fprintf(c.opts.Stderr, "%s: warning: %v\n", c.opts.Prog, err)
}

// ErrCorrupt marks damage met while reading the records (pmlogreduce:
// "pmFetch failed: Corrupted record in a PCP archive log").
var ErrCorrupt = errors.New("corrupted archive")

// readWarn takes the input reader's warnings as libpcp does, which says
// nothing of them, noting those it acts on (dump.LibpcpView).
func (c *compat) readWarn(err error) { c.lv.Note(err) }

func (c *compat) rel(t stream.Timestamp) float64 {
	return c.ts.sub(t.Sec, int64(t.Nsec), c.start.Sec, int64(c.start.Nsec))
}

func runCompat(input, output string, opts *Options) (err error) {
	if st, err := os.Stat(input); err == nil && st.IsDir() {
		return fmt.Errorf("%s: a directory of archives (a multi-archive context) is not supported: name one archive", input)
	}
	c := &compat{opts: opts, ts: newTsub(), byPMID: map[stream.PMID]*metric{},
		written: map[stream.InDomID][]int32{}, consumed: -1, lastMark: -1}
	c.a, err = format.Open(input, format.WithWarn(c.readWarn))
	if err == nil && c.lv.IndexErr != nil {
		err = c.lv.IndexErr
	}
	if err == nil {
		err = dump.LibpcpRefusal(c.a) // libpcp will not open it
	}
	if err != nil {
		return fmt.Errorf("cannot open archive %q (ctx_a): %s", input, dump.LibpcpOpenError(err))
	}
	c.label = c.a.Label()
	c.version = c.label.Version
	c.start = c.label.Start
	end, ok, err := c.a.End()
	if err == nil && c.lv.LosesEnd(c.a) {
		err = errors.New(dump.ErrStrLogRec)
	}
	if err != nil {
		return fmt.Errorf("cannot get end of archive (%s): %s", input, dump.LibpcpOpenError(err))
	}
	if !ok {
		if c.a.LabelsOnly() {
			// libpcp will not open an archive with no data record
			return fmt.Errorf("cannot open archive %q (ctx_a): %s", input, dump.LibpcpOpenError(dump.NoDataError(c.a)))
		}
		return fmt.Errorf("cannot open archive %q: it holds no data", input)
	}
	if c.meta, err = loadMeta(c.a); err != nil {
		var fe *format.FormatError
		if errors.As(err, &fe) && strings.HasSuffix(fe.File, ".meta") {
			// (libpcp loads the metadata when it opens the archive)
			return fmt.Errorf("cannot open archive %q (ctx_a): %s", input, dump.ErrStrLogRec)
		}
		return err
	}
	loc, err := pcptime.ChooseZone(opts.ArchiveZone, opts.Zone, c.label.Timezone, c.label.Zoneinfo)
	if err != nil {
		return fmt.Errorf("cannot set the timezone: %w", err)
	}
	if note := pcptime.ZoneNote(opts.ArchiveZone, opts.Zone, c.label.Hostname); note != "" {
		fmt.Fprint(opts.Stdout, note)
	}
	usec := func(t stream.Timestamp) stream.Timestamp { t.Nsec -= t.Nsec % 1000; return t }
	win, err := pcptime.ParseWindow(opts.Start, opts.Finish, "", opts.Align, usec(c.start), usec(end), loc)
	if err != nil {
		return fmt.Errorf("Invalid time window specified: %v", err)
	}
	winStart, winEnd := usec(win.Start), usec(win.End)
	endRel := c.rel(end)
	if opts.Trace {
		// pmCtime of the window's ends, whole seconds, in the reporting zone.
		ctime := func(t stream.Timestamp) string {
			return time.Unix(t.Sec, 0).In(loc).Format("Mon Jan _2 15:04:05 2006")
		}
		fmt.Fprintf(opts.Stderr, "Start time: %s\nEnd time: %s\n", ctime(winStart), ctime(winEnd))
	}

	if c.a.IndexUnsound() && libpcpFetchFails(input, winStart) {
		// pmlogreduce's fetches, positioned by a temporal index we do not
		// trust (badti-4: an entry at offset 1), meet damage ours do not
		return ErrCorrupt
	}
	c.setup()
	c.w, err = format.Create(output, format.WriterOptions{Version: c.version, KeepVolumes: true,
		DeltaInDoms: true, ManualIndex: true, NoSync: opts.NoSync, Warn: c.warn})
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			c.w.Abort()
			panic(r)
		}
		if err != nil {
			c.w.Abort()
		}
	}()
	if err := c.lastValues(); err != nil {
		return err
	}
	c.cur = newCursor(c.a, c.rel)
	c.cur.onPull = c.index
	c.tindex, _ = c.a.Index()
	defer c.cur.close()
	c.indoms = &indomCursor{it: c.a.Records(format.MetaOnly()), tracker: stream.NewInDomTracker()}
	defer c.indoms.it.Close()
	if err := c.writeHeader(winStart); err != nil {
		return err
	}
	if err := c.loop(winStart, winEnd, endRel); err != nil {
		return err
	}
	return c.w.Close()
}

// lastValues is a first pass over the data: the last value of each
// metric-instance, and the <mark>s. Without it, every instance that stops
// being logged (a process that exits) would send the look-ahead to the
// end of the archive, once per instance.
func (c *compat) lastValues() error {
	it := c.a.Records(format.DataOnly())
	defer it.Close()
	var seq int64
	// The time of the records either side of each <mark> (-1: none), for
	// PCP_IGNORE_MARK_RECORDS's gap.
	var marks []markAt
	var prior, next []float64
	prev := -1.0
	for it.Next() {
		var rel float64
		switch r := it.At().(type) {
		case *stream.Mark:
			rel = c.rel(r.T)
		case *stream.Result:
			rel = c.rel(r.T)
		default:
			continue
		}
		if n := len(next); n > 0 && next[n-1] == -2 {
			next[n-1] = rel
		}
		if _, ok := it.At().(*stream.Mark); ok {
			marks = append(marks, markAt{seq, rel})
			prior, next = append(prior, prev), append(next, -2)
		}
		prev = rel
		switch r := it.At().(type) {
		case *stream.Mark:
		case *stream.Result:
			vi := r.VSets()
			for k := 0; vi.Next(); k++ {
				vs := vi.VSet()
				m := c.metricAt(k, vs.PMID)
				if vs.NumVal <= 0 || m == nil || m.skip {
					continue
				}
				for i := 0; i < int(vs.NumVal); i++ {
					if st := m.lookup(i, vs.Inst(i)); st != nil {
						st.lastSeq = seq
					}
				}
			}
			if err := vi.Err(); err != nil {
				return err
			}
		default:
			continue
		}
		seq++
	}
	gap := c.opts.IgnoreMarks.Seconds()
	for i, m := range marks {
		if c.opts.IgnoreAllMarks || gap > 0 && prior[i] >= 0 && next[i] >= 0 && next[i]-prior[i] <= gap {
			if c.ignored == nil {
				c.ignored = map[int64]bool{}
			}
			c.ignored[m.seq] = true
			continue
		}
		c.allMarks = append(c.allMarks, m)
	}
	return it.Err()
}

// metricAt is byPMID for the k-th value set of a result, trying first the
// metric that was k-th last time.
func (c *compat) metricAt(k int, p stream.PMID) *metric {
	if k < len(c.bySlot) {
		if m := c.bySlot[k]; m != nil && m.pmid == p {
			return m
		}
	}
	m := c.byPMID[p]
	if m != nil {
		for len(c.bySlot) <= k {
			c.bySlot = append(c.bySlot, nil)
		}
		c.bySlot[k] = m
	}
	return m
}

// setup builds the per-metric, per-instance state from the metadata.
func (c *compat) setup() {
	for _, f := range c.meta.order {
		d := c.meta.descs[f.pmid]
		m := &metric{fetchEntry: f, desc: d, outType: d.Type, valfmt: -1, lastNum: -1, byInst: map[int32]*instState{}}
		if d.Sem == stream.SemCounter && (d.Type == stream.Type32 || d.Type == stream.TypeU32) {
			m.promote = true
			m.outType = stream.Type64
			if d.Type == stream.TypeU32 {
				m.outType = stream.TypeU64
			}
		}
		if _, ok := c.byPMID[f.pmid]; !ok {
			c.byPMID[f.pmid] = m
		} else {
			continue // a second name of a skipped metric: one state in libpcp
		}
		c.metrics = append(c.metrics, m)
		if f.skip {
			continue
		}
		var list []int32
		var info *indomInfo
		if d.InDom == stream.InDomNull {
			list = []int32{stream.InstNull}
		} else if info = c.meta.indoms[d.InDom]; info != nil {
			list = hashOrder(info.union)
		}
		m.indomInfo = info
		for _, v := range list {
			st := &instState{inst: v, pSeq: -1, lastSeq: -1}
			if info != nil && info.big {
				if t, ok := info.birth[v]; ok {
					st.hasBirth, st.birth = true, c.rel(t)
				}
				if t, ok := info.death[v]; ok {
					st.hasDeath, st.death = true, c.rel(t)
				}
			}
			m.insts = append(m.insts, st)
			m.byInst[v] = st
			c.all = append(c.all, st)
		}
		m.singular = m.byInst[stream.InstNull]
	}
}

// writeHeader writes the label and the descriptors, as pmlogreduce does
// before its first fetch.
func (c *compat) writeHeader(winStart stream.Timestamp) error {
	l := stream.Label{Version: c.version, PID: int32(os.Getpid()), Start: winStart, Vol: -1,
		Hostname: c.label.Hostname, Timezone: c.label.Timezone}
	if err := c.w.Write(&l); err != nil {
		return err
	}
	done := map[stream.PMID]bool{}
	for _, f := range c.meta.order {
		d := c.meta.descs[f.pmid]
		if f.skip {
			fmt.Fprintf(c.opts.Stderr, "%s: %s: Warning: skipping %s metric\n", c.opts.Prog, f.name, d.Type)
			continue
		}
		if done[f.pmid] {
			continue
		}
		done[f.pmid] = true
		m := c.byPMID[f.pmid]
		out := &stream.Desc{T: winStart, PMID: d.PMID, Type: m.outType, InDom: d.InDom, Sem: d.Sem,
			Units: d.Units, Names: c.meta.names[f.pmid]}
		if c.opts.Trace {
			c.traceDesc(d, out)
		}
		if err := c.w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// traceDesc is pmlogreduce's -D appl0 trace of one metric: its names,
// the descriptor read and the one written, and for a metric with an
// instance domain the address of pmlogreduce's record of that domain
// (any address: PCP's QA filters it out; one per domain here, as there).
func (c *compat) traceDesc(in, out *stream.Desc) {
	b := []byte("metric: \"")
	b = append(b, strings.Join(out.Names, " or ")...)
	b = fmt.Appendf(b, "\" (%s)\ninput descriptor:\n", in.PMID)
	b = dump.AppendDesc(b, in)
	b = append(b, "output descriptor (added to archive):\n"...)
	b = dump.AppendDesc(b, out)
	if in.InDom != stream.InDomNull {
		b = fmt.Appendf(b, "    indom %s -> (%#x)\n", in.InDom, 0x5000_0000+uint64(in.InDom)*64)
	}
	c.opts.Stderr.Write(b)
}

// loop is pmlogreduce's main loop: a fetch per interval until the window
// or the archive ends or -s records are written.
func (c *compat) loop(winStart, winEnd stream.Timestamp, endRel float64) error {
	iv := c.opts.Interval.Truncate(time.Microsecond)
	dsec, dnsec := int64(iv/time.Second), int64(iv%time.Second)
	t := stamp{winStart.Sec, int64(winStart.Nsec)}
	written := 0
	flushAt := int64(flushEvery)
	current := winStart
	for c.opts.Samples < 0 || written < c.opts.Samples {
		treq := c.ts.sub(t.sec, t.nsec, c.start.Sec, int64(c.start.Nsec))
		if treq < -0.001 || treq > endRel+0.001 {
			break // libpcp's end of log
		}
		if t.after(winEnd) {
			break
		}
		_, metaOff, _, err := c.w.Offsets()
		if err != nil {
			return err
		}
		needti := written == 0
		if err := c.consume(t); err != nil {
			return err
		}
		if err := c.fetch(treq); err != nil {
			return err
		}
		// The interpolation context's clock moves on at the fetch, and
		// pmlogreduce asks for instance domains by it.
		next := stamp{t.sec + dsec, t.nsec + dnsec}
		for next.nsec > 1e9 {
			next.sec++
			next.nsec -= 1e9
		}
		if len(c.sets) > 0 {
			if c.opts.VolSamples > 0 && written > 0 && written%c.opts.VolSamples == 0 {
				vol, _, _, err := c.w.Offsets()
				if err != nil {
					return err
				}
				l := stream.Label{Version: c.version, Vol: vol + 1, Hostname: c.label.Hostname}
				if err := c.w.Write(&l); err != nil {
					return err
				}
				fmt.Fprintf(c.opts.Stderr, "%s: New log volume %d, at %s\n", c.opts.Prog, vol+1, printStamp(t.ts()))
				needti = true
				flushAt = flushEvery
			}
			changed, err := c.doInDoms(t, next)
			if err != nil {
				return err
			}
			needti = needti || changed
			res, err := c.encode(t.ts())
			if err != nil {
				return err
			}
			if err := c.w.Write(res); err != nil {
				return err
			}
			written++
			current = t.ts()
			vol, _, data, err := c.w.Offsets()
			if err != nil {
				return err
			}
			if data > flushAt {
				needti = true
			}
			if needti {
				recLen := int64(format.DataHeaderSize(c.version) + len(res.Body) + 4)
				c.w.AddIndex(format.IndexEntry{T: current, Vol: vol, MetaOff: metaOff, DataOff: data - recLen})
			}
			if data > flushAt {
				flushAt = data + flushEvery
			}
		}
		t = next
	}
	vol, meta, data, err := c.w.Offsets()
	if err != nil {
		return err
	}
	c.w.AddIndex(format.IndexEntry{T: current, Vol: vol, MetaOff: meta, DataOff: data})
	return nil
}

// printStamp formats a time as libpcp's __pmPrintTimestamp does.
func printStamp(t stream.Timestamp) string {
	tm := t.Time().Local()
	return fmt.Sprintf("%02d:%02d:%02d.%09d", tm.Hour(), tm.Minute(), tm.Second(), t.Nsec)
}

// consume is pmlogreduce's scan of the interval: every record up to t
// updates the interpolation state and the "seen" flags, and every <mark>
// read is copied to the output, including one just past t (read again,
// and copied again, by the next scan).
func (c *compat) consume(t stamp) error {
	for _, st := range c.all {
		st.seen = false
	}
	c.markSeen = false
	for {
		d := c.cur.peek(0)
		if d == nil {
			return c.cur.err
		}
		scanned := !c.skipping || d.vol > c.skipVol || d.vol == c.skipVol && d.off >= c.skipOff
		if scanned {
			c.skipping = false
		}
		if d.mark && scanned {
			if err := c.w.Write(&stream.Mark{T: d.t}); err != nil {
				return err
			}
		}
		if t.after(d.t) || t.sec == d.t.Sec && t.nsec == int64(d.t.Nsec) {
			if err := c.take(d, scanned); err != nil {
				return err
			}
			c.cur.pop()
			continue
		}
		if scanned {
			c.resume(d)
		}
		return nil
	}
}

// resume finds where pmlogreduce's next scan starts: it asks libpcp for
// the first record at or after the time of d (in microseconds), and
// libpcp, finding a temporal index entry at exactly that time, starts at
// the entry's offset.
func (c *compat) resume(d *drec) {
	origin := d.t
	origin.Nsec -= origin.Nsec % 1000
	for _, e := range c.tindex {
		switch e.T.Compare(origin) {
		case -1:
			continue
		case 0:
			if e.Vol > d.vol || e.Vol == d.vol && e.DataOff > d.off {
				c.skipping, c.skipVol, c.skipOff = true, e.Vol, e.DataOff
			}
		}
		return
	}
}

// take applies one record at or before the step.
func (c *compat) take(d *drec, scanned bool) error {
	c.consumed = d.seq
	if d.mark {
		if !c.ignored[d.seq] {
			c.lastMark = d.seq
			c.markSeen = true
		}
		return nil
	}
	it := d.res.VSets()
	for k := 0; it.Next(); k++ {
		vs := it.VSet()
		if vs.NumVal <= 0 {
			continue
		}
		m := c.metricAt(k, vs.PMID)
		if m == nil {
			return fmt.Errorf("%s: record at %s: metric %s has no descriptor in the namespace (pmlogreduce fails on this too)", c.a.Base(), d.t, vs.PMID)
		}
		if err := m.checkValfmt(vs, d, c.a.Base()); err != nil {
			return err
		}
		if m.skip {
			continue
		}
		for i := 0; i < int(vs.NumVal); i++ {
			inst := vs.Inst(i)
			st := m.exact(i, inst)
			if st != nil && scanned {
				if !st.created {
					st.created, st.init = true, true
				}
				st.seen = true
			}
			if st == nil {
				if st = m.singular; st == nil {
					continue
				}
			}
			st.futHead(d.seq)
			if err := st.pVal.setAt(vs, i); err != nil {
				return fmt.Errorf("%s: record at %s: %w", c.a.Base(), d.t, err)
			}
			st.pSeq, st.pT = d.seq, d.rel
		}
	}
	return it.Err()
}

// checkValfmt makes libpcp's check that a metric's values are encoded as
// its type says, and the same way throughout.
func (m *metric) checkValfmt(vs *stream.VSet, d *drec, base string) error {
	f := int32(vs.ValFmt)
	if m.valfmt == -1 {
		ok := false
		switch m.desc.Type {
		case stream.Type32, stream.TypeU32:
			ok = vs.ValFmt == stream.ValInsitu
		case stream.TypeFloat:
			ok = vs.ValFmt <= stream.ValSptr
		default:
			ok = vs.ValFmt == stream.ValDptr || vs.ValFmt == stream.ValSptr
		}
		if !ok {
			return fmt.Errorf("%s: record at %s: metric %s: value format %d does not suit type %s: %w", base, d.t, m.pmid, f, m.desc.Type, ErrCorrupt)
		}
		m.valfmt = f
		return nil
	}
	if m.valfmt != f {
		return fmt.Errorf("%s: record at %s: metric %s: value format changes from %d to %d: %w", base, d.t, m.pmid, m.valfmt, f, ErrCorrupt)
	}
	return nil
}

// fetch computes libpcp's interpolated result at treq and applies
// pmlogreduce's rewrite to it, leaving the value sets to write in c.sets.
func (c *compat) fetch(treq float64) error {
	// Which instant and counter instances need the first event after the
	// step, and do not know it yet.
	c.unbound = c.unbound[:0]
	for _, m := range c.metrics {
		if m.skip || m.desc.Sem == stream.SemDiscrete {
			continue
		}
		for _, st := range m.insts {
			if !c.priorIsValue(st) || st.pT == treq || c.nextValid(st) || outside(st, treq) {
				continue
			}
			if st.pSeq >= st.lastSeq {
				// Never logged again: the next event is the next <mark>,
				// or the end.
				for len(c.allMarks) > 0 && c.allMarks[0].seq <= c.consumed {
					c.allMarks = c.allMarks[1:]
				}
				if len(c.allMarks) > 0 {
					st.nKind, st.nSeq, st.nT = nextMark, c.allMarks[0].seq, c.allMarks[0].rel
				} else {
					st.nKind = nextEOF
				}
				continue
			}
			st.inU = true
			c.unbound = append(c.unbound, st)
		}
	}
	c.nUnbound = len(c.unbound)
	if c.nUnbound > 0 {
		if err := c.lookAhead(); err != nil {
			return err
		}
	}
	c.sets = c.sets[:0]
	for _, m := range c.metrics {
		if m.skip {
			continue
		}
		m.evaluate(c, treq)
		if err := c.rewrite(m, treq); err != nil {
			return err
		}
	}
	return nil
}

func (c *compat) priorIsValue(st *instState) bool {
	return st.pSeq >= 0 && st.pSeq > c.lastMark
}

func (c *compat) nextValid(st *instState) bool {
	return st.nKind == nextEOF || st.nKind != nextUnknown && st.nSeq > c.consumed
}

// outside: libpcp does not look for bounds of an instance of a big
// instance domain before it is born or after it has died.
func outside(st *instState, treq float64) bool {
	return st.hasBirth && treq < st.birth || st.hasDeath && treq > st.death
}

// lookAhead finds the first event after the step for every instance in
// c.unbound: among the buffered records (each instance keeps references to
// its values in them), then in records read into the buffer, then, once
// the buffer is full, with a second reader that keeps nothing.
func (c *compat) lookAhead() error {
	for len(c.marks) > 0 && c.marks[0].seq <= c.consumed {
		c.marks = c.marks[1:]
	}
	var mark *markAt
	if len(c.marks) > 0 {
		mark = &c.marks[0]
	}
	for _, st := range c.unbound {
		h := st.futHead(c.consumed)
		switch {
		case h != nil && (mark == nil || h.seq < mark.seq):
			st.nKind, st.nSeq, st.nT = nextValue, h.seq, h.d.rel
			if err := h.value(&st.nVal); err != nil {
				return fmt.Errorf("%s: record at %s: %w", c.a.Base(), h.d.t, err)
			}
		case mark != nil:
			st.nKind, st.nSeq, st.nT = nextMark, mark.seq, mark.rel
		default:
			continue
		}
		st.inU = false
		c.nUnbound--
	}
	for c.nUnbound > 0 {
		if c.cur.full() {
			var rerr error
			reachedEnd, err := c.cur.scanAhead(func(d *drec) bool {
				if rerr = c.resolveFar(d); rerr != nil {
					return false
				}
				return c.nUnbound > 0
			})
			if err == nil {
				err = rerr
			}
			if err != nil {
				return err
			}
			if reachedEnd {
				c.resolveEOF()
			}
			return nil
		}
		if !c.cur.pull() { // c.index resolves what the record holds
			if c.cur.err != nil {
				return c.cur.err
			}
			c.resolveEOF()
		}
	}
	return nil
}

// index takes note of a record entering the look-ahead buffer: its
// values for each instance, its <mark>; and resolves the instances being
// looked for.
func (c *compat) index(d *drec) error {
	if d.mark {
		if !c.ignored[d.seq] {
			c.marks = append(c.marks, markAt{d.seq, d.rel})
			c.resolveMark(d)
		}
		return nil
	}
	it := d.res.VSets()
	for k, off := 0, it.Offset(); it.Next(); k, off = k+1, it.Offset() {
		vs := it.VSet()
		if vs.NumVal <= 0 {
			continue
		}
		m := c.metricAt(k, vs.PMID)
		if m == nil {
			continue
		}
		if err := m.checkValfmt(vs, d, c.a.Base()); err != nil {
			return err
		}
		if m.skip {
			continue
		}
		for i := 0; i < int(vs.NumVal); i++ {
			st := m.lookup(i, vs.Inst(i))
			if st == nil {
				continue
			}
			st.fut = append(st.fut, futRef{seq: d.seq, d: d, off: int32(off), i: int32(i)})
			if st.inU {
				if err := st.nVal.setAt(vs, i); err != nil {
					return fmt.Errorf("%s: record at %s: %w", c.a.Base(), d.t, err)
				}
				st.inU = false
				st.nKind, st.nSeq, st.nT = nextValue, d.seq, d.rel
				c.nUnbound--
			}
		}
	}
	return it.Err()
}

func (c *compat) resolveMark(d *drec) {
	if c.nUnbound == 0 {
		return
	}
	for _, st := range c.unbound {
		if st.inU {
			st.inU = false
			st.nKind, st.nSeq, st.nT = nextMark, d.seq, d.rel
		}
	}
	c.nUnbound = 0
}

// resolveFar is index for a record read by the second reader: nothing is
// kept but the answers.
func (c *compat) resolveFar(d *drec) error {
	if d.mark {
		if !c.ignored[d.seq] {
			c.resolveMark(d)
		}
		return nil
	}
	it := d.res.VSets()
	for k := 0; it.Next(); k++ {
		vs := it.VSet()
		if vs.NumVal <= 0 {
			continue
		}
		m := c.metricAt(k, vs.PMID)
		if m == nil {
			continue
		}
		if err := m.checkValfmt(vs, d, c.a.Base()); err != nil {
			return err
		}
		if m.skip {
			continue
		}
		for i := 0; i < int(vs.NumVal); i++ {
			st := m.lookup(i, vs.Inst(i))
			if st == nil || !st.inU {
				continue
			}
			if err := st.nVal.setAt(vs, i); err != nil {
				return fmt.Errorf("%s: record at %s: %w", c.a.Base(), d.t, err)
			}
			st.inU = false
			st.nKind, st.nSeq, st.nT = nextValue, d.seq, d.rel
			c.nUnbound--
		}
	}
	return it.Err()
}

func (c *compat) resolveEOF() {
	for _, st := range c.unbound {
		if st.inU {
			st.inU = false
			st.nKind = nextEOF
		}
	}
	c.nUnbound = 0
}

// evaluate decides, as __pmLogFetchInterp does, which instances have a
// value at treq (inresult) and how many (numval, or PM_ERR_TYPE for a
// counter of a type that cannot be interpolated).
func (m *metric) evaluate(c *compat, treq float64) {
	if m.desc.Type == stream.TypeNoSupport {
		// libpcp marks "not in the archive" with type -1, NOSUPPORT's
		// number.
		m.numval, m.lastNum = errPMIDLog, errPMIDLog
		return
	}
	m.numval = len(m.insts)
	// libpcp walks its "want" list, built newest first.
	for i := len(m.insts) - 1; i >= 0; i-- {
		st := m.insts[i]
		st.inresult = true
		if !c.priorIsValue(st) {
			st.inresult = false
			m.numval--
			continue
		}
		if m.desc.Sem == stream.SemDiscrete {
			if st.hasBirth && st.birth > treq || st.hasDeath && treq > st.death {
				st.inresult = false
				m.numval--
			}
			continue
		}
		if st.pT != treq && !(st.nKind == nextValue && c.nextValid(st) && st.nT >= treq) {
			st.inresult = false
			m.numval--
			continue
		}
		if m.desc.Sem == stream.SemCounter {
			if !m.desc.Type.Numeric() {
				m.numval = errType
			} else if c.markSeen && m.lastNum > 0 {
				st.inresult = false
				m.numval--
			}
		}
	}
	m.lastNum = m.numval
}

// rewrite is pmlogreduce's rewrite() for one metric: values of instances
// not seen in the interval (and written before) are dropped, a value set
// left empty is dropped, one with no values from libpcp is kept, 32-bit
// counters become 64-bit.
func (c *compat) rewrite(m *metric, treq float64) error {
	if m.numval <= 0 {
		c.sets = append(c.sets, outSet{pmid: m.pmid, numval: int32(m.numval)})
		return nil
	}
	var set *outSet
	n := len(c.sets)
	if n < cap(c.sets) {
		c.sets = c.sets[:n+1]
		set = &c.sets[n]
		set.vals = set.vals[:0]
	} else {
		c.sets = append(c.sets, outSet{})
		set = &c.sets[n]
	}
	set.pmid = m.pmid
	set.valfmt = stream.ValDptr
	if !m.promote && (m.desc.Type == stream.Type32 || m.desc.Type == stream.TypeU32 ||
		m.desc.Type == stream.TypeFloat && m.valfmt == stream.ValInsitu) {
		set.valfmt = stream.ValInsitu
	}
	for _, st := range m.insts {
		if !st.inresult {
			continue
		}
		if !st.created {
			return fmt.Errorf("%s: metric %s (%s) instance %d: libpcp interpolates a value that pmlogreduce's scan of the records never saw (a singular metric logged under an instance, or records hidden by the temporal index): pmlogreduce fails on this too", c.a.Base(), m.name, m.pmid, st.inst)
		}
		if !st.seen && !st.init {
			continue
		}
		k := len(set.vals)
		if k < cap(set.vals) {
			set.vals = set.vals[:k+1]
		} else {
			set.vals = append(set.vals, outVal{})
		}
		ov := &set.vals[k]
		ov.inst = st.inst
		if !m.interpolate(st, treq, &ov.v) {
			set.vals = set.vals[:k]
			continue
		}
		if m.promote {
			var w uint64
			if m.desc.Type == stream.Type32 {
				w = uint64(int64(int32(ov.v.word)))
			} else {
				w = uint64(ov.v.word)
			}
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], w)
			ov.v.blk = appendBlock(ov.v.blk[:0], m.outType, b[:])
		}
		st.init = false
	}
	set.numval = int32(len(set.vals))
	if set.numval == 0 {
		c.sets = c.sets[:n]
	}
	return nil
}

// encode lays the value sets out as __pmEncodeResult does: the sets, then
// the value blocks in order, each padded with '~' to a 4-byte boundary.
func (c *compat) encode(t stream.Timestamp) (*stream.Result, error) {
	base := stream.PointerBase(uint8(c.version))
	size := 4
	for i := range c.sets {
		s := &c.sets[i]
		size += 8
		if s.numval > 0 {
			size += 4 + 8*len(s.vals)
		}
	}
	b := binary.BigEndian.AppendUint32(c.body[:0], uint32(len(c.sets)))
	off := size
	blocks := c.pay[:0]
	for i := range c.sets {
		s := &c.sets[i]
		b = binary.BigEndian.AppendUint32(b, uint32(s.pmid))
		b = binary.BigEndian.AppendUint32(b, uint32(s.numval))
		if s.numval <= 0 {
			continue
		}
		b = binary.BigEndian.AppendUint32(b, s.valfmt)
		for j := range s.vals {
			v := &s.vals[j]
			b = binary.BigEndian.AppendUint32(b, uint32(v.inst))
			if s.valfmt == stream.ValInsitu {
				b = binary.BigEndian.AppendUint32(b, v.v.word)
				continue
			}
			if len(v.v.blk) < 4 {
				return nil, errors.New("internal error: a value block without a header")
			}
			b = binary.BigEndian.AppendUint32(b, base+uint32(off/4))
			blocks = append(blocks, v.v.blk...)
			for len(blocks)%4 != 0 {
				blocks = append(blocks, '~')
			}
			off = size + len(blocks)
		}
	}
	b = append(b, blocks...)
	c.body, c.pay = b, blocks
	return &stream.Result{T: t, Version: uint8(c.version), Body: b}, nil
}

// doInDoms is pmlogreduce's doindom(): for each value set written, the
// metric's instance domain as libpcp has it at the interpolation clock
// (one interval on), written at the step when its instances differ from
// what was last written.
func (c *compat) doInDoms(t, clock stamp) (bool, error) {
	if err := c.indoms.advance(clock); err != nil {
		return false, err
	}
	changed := false
	for i := range c.sets {
		s := &c.sets[i]
		if s.numval <= 0 {
			continue
		}
		m := c.byPMID[s.pmid]
		id := m.desc.InDom
		if id == stream.InDomNull {
			continue
		}
		set := c.indoms.tracker.Current(id)
		if set == nil {
			return false, fmt.Errorf("%s.meta: instance domain %s of metric %s: no instance domain record at or before %s (pmlogreduce fails on this too)", c.a.Base(), id, m.pmid, clock.ts())
		}
		insts, names := sortedInDom(set)
		if slices.Equal(insts, c.written[id]) {
			continue
		}
		c.written[id] = insts
		if c.opts.Trace {
			fmt.Fprintf(c.opts.Stderr, "Add metadata: indom %s for metric %s\n", id, s.pmid)
		}
		enc := stream.InDomFull
		if c.version == 2 {
			enc = stream.InDomV2
		}
		if err := c.w.Write(&stream.InDom{T: t.ts(), InDom: id, Encoding: enc, Insts: insts, Names: names}); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// sortedInDom returns a domain's instances as libpcp keeps them: sorted by
// number (a stable insertion sort).
func sortedInDom(set *stream.InstanceSet) ([]int32, []string) {
	idx := make([]int, len(set.Insts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := set.Insts[a], set.Insts[b]
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	insts := make([]int32, len(idx))
	names := make([]string, len(idx))
	for k, i := range idx {
		insts[k], names[k] = set.Insts[i], set.Names[i]
	}
	return insts, names
}

// indomCursor follows the instance domain records of the .meta file up to
// a time, resolving deltas.
type indomCursor struct {
	it      stream.CloserIterator
	tracker *stream.InDomTracker
	pend    *stream.InDom
	done    bool
}

func (ic *indomCursor) advance(to stamp) error {
	for {
		if ic.pend == nil {
			if ic.done {
				return nil
			}
			for ic.pend == nil && ic.it.Next() {
				if d, ok := ic.it.At().(*stream.InDom); ok {
					ic.pend = stream.CloneRecord(d).(*stream.InDom)
				}
			}
			if ic.pend == nil {
				ic.done = true
				return ic.it.Err()
			}
		}
		if to.after(ic.pend.T) || to.sec == ic.pend.T.Sec && to.nsec == int64(ic.pend.T.Nsec) {
			if _, err := ic.tracker.Apply(ic.pend); err != nil {
				return err
			}
			ic.pend = nil
			continue
		}
		return nil
	}
}

// libpcpFetchFails reports whether libpcp's first fetch of the archive
// input from the window's start fails, read as libpcp reads it (its
// reading emulated: dump.LogTrace, as pmlogsummary's drop-in reads a
// damaged index): pmSetMode positions it by the temporal index. (Later
// fetches, and pmlogreduce's scans back and forth, are not emulated: its
// failures there, as on QA archive binning, stay a difference.)
func libpcpFetchFails(input string, from stream.Timestamp) bool {
	tr := dump.NewLogTrace(input, io.Discard)
	defer tr.Close()
	if !tr.Open() {
		return false
	}
	tr.SetTime(from, false)
	it := tr.Records()
	defer it.Close()
	return !it.Next() && it.Err() != nil
}
