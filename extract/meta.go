package extract

import (
	"fmt"
	"github.com/pcptools/pcptools/internal/pcphash"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// The metadata store holds every metadata record of every input, and
// hands out, just before a result, the records that result needs and that
// have not been written yet: pmlogextract's lazy metadata. What is kept
// and what is chosen follows PCP 6.0.3's pmlogextract:
//
//   - descriptors: one per PMID; a later one must agree (names, type,
//     instance domain, semantics, units), and a name may not move to
//     another PMID; a conflict is an error, or with -x the metric is left
//     out of the output;
//   - instance domains: every version of every input (deltas resolved per
//     input), sorted by time; a result gets the latest version at or before
//     its time, written once, with the result's time;
//   - label sets: per type and identifier the one a lookup in PCP's hash
//     table finds (see pcphash: which of several sets added under one key
//     that is depends on the table's growth history), written once when a result at or after its
//     time needs it, with the result's time;
//   - help texts: one per object and kind, the last read wins (a change is
//     a warning).
type metaStore struct {
	sel   *Selection
	skipX bool // -x: conflicts drop the metric instead of failing
	names []string
	warn  func(error)

	descs    map[stream.PMID]*descEnt
	byName   map[string]stream.PMID
	skip     map[stream.PMID]bool
	skipList []stream.PMID
	indoms   map[stream.InDomID]*indomEnt
	labels   map[uint32]*pcphash.Hash[*labelEnt]
	texts    map[[2]uint32]*textEnt
	trackers []*stream.InDomTracker
	// due caches, per metric, the earliest time at which metadata of its
	// may next be due: before it, a result needs nothing written for it.
	due map[stream.PMID]stream.Timestamp
	// pmids is forResult's list of a result's metrics (reused).
	pmids []stream.PMID
	// dueSlots caches due in front of the map: a result lists the same
	// metrics record after record, and this lookup runs for every value
	// set of every record.
	dueSlots [1024]dueSlot
	// atPos caches due by a metric's position in the result, in front of
	// dueSlots: records list the same metrics in the same order, and
	// metrics that share a slot of dueSlots (a few dozen of the bench
	// archive's 480) took the map every record, 6% of a merge's time.
	// An entry may hold an older due time of its metric than the map
	// (setDue updates only the position it was called for): an earlier
	// time, so the cost is a call of forMetric that finds nothing new.
	atPos []dueSlot
}

type dueSlot struct {
	p   stream.PMID
	t   stream.Timestamp
	set bool
}

func dueSlotOf(p stream.PMID) int { return int(uint32(p) * 2654435761 >> 22) }

// dueOf returns the due time of p, if known.
func (m *metaStore) dueOf(p stream.PMID) (stream.Timestamp, bool) {
	if s := &m.dueSlots[dueSlotOf(p)]; s.set && s.p == p {
		return s.t, true
	}
	t, ok := m.due[p]
	if ok {
		m.dueSlots[dueSlotOf(p)] = dueSlot{p: p, t: t, set: true}
	}
	return t, ok
}

// clearDue forgets every due time: metadata that arrives in the middle of
// a stream (an input whose metadata is inline) can make metadata due
// earlier than computed.
func (m *metaStore) clearDue() {
	if len(m.due) == 0 {
		return
	}
	clear(m.due)
	m.dueSlots = [len(m.dueSlots)]dueSlot{}
	clear(m.atPos)
}

func (m *metaStore) setDue(p stream.PMID, t stream.Timestamp) {
	m.due[p] = t
	m.dueSlots[dueSlotOf(p)] = dueSlot{p: p, t: t, set: true}
}

// dueByPosition turns atPos on (tests compare with it off).
var dueByPosition = true

// never is later than any timestamp.
var never = stream.Timestamp{Sec: math.MaxInt64}

type descEnt struct {
	d       *stream.Desc
	from    int
	written bool
}

type indomEnt struct {
	vers   []*indomVer
	sorted bool
}

type indomVer struct {
	rec     *stream.InDom // full (deltas resolved)
	written bool
}

type labelEnt struct {
	rec     *stream.LabelSet
	written bool
}

type textEnt struct {
	rec     *stream.Text
	from    int
	written bool
}

func newMetaStore(names []string, sel *Selection, skipX bool, warn func(error)) *metaStore {
	m := &metaStore{sel: sel, skipX: skipX, names: names, warn: warn,
		descs: map[stream.PMID]*descEnt{}, byName: map[string]stream.PMID{}, skip: map[stream.PMID]bool{},
		indoms: map[stream.InDomID]*indomEnt{}, labels: map[uint32]*pcphash.Hash[*labelEnt]{},
		texts: map[[2]uint32]*textEnt{}, due: map[stream.PMID]stream.Timestamp{}}
	for range names {
		m.trackers = append(m.trackers, stream.NewInDomTracker())
	}
	return m
}

// ConflictError is a metadata conflict between inputs.
// UndescribedError is a result holding a metric that no input describes.
type UndescribedError struct {
	T    stream.Timestamp
	PMID stream.PMID
}

func (e *UndescribedError) Error() string {
	return fmt.Sprintf("result at %s: no descriptor for metric %s in any input", e.T, e.PMID)
}

type ConflictError struct {
	PMID   stream.PMID
	Name   string
	What   string
	First  string // the input of the metadata already seen
	Second string // the input that disagrees
	// Where is where the disagreeing record was read ("A.meta: offset
	// N"), when both records are of one input: damage in that archive,
	// which libpcp and pmlogextract refuse too.
	Where string
	// PCP is pmlogextract's words for it, after its "Error: " or
	// "Warning: " ("metric PMID 60.18.0: name changed from a to b!").
	PCP string
}

func (e *ConflictError) Error() string {
	if e.Where != "" {
		return fmt.Sprintf("%s: metric %s (%s): %s within one archive (use -x to leave such metrics out)", e.Where, e.Name, e.PMID, e.What)
	}
	return fmt.Sprintf("metric %s (%s): %s between %s and %s (use -x to leave such metrics out)", e.Name, e.PMID, e.What, e.First, e.Second)
}

// SkipWarning says that a metric is left out for a conflict (-x).
type SkipWarning struct{ *ConflictError }

func (w *SkipWarning) Error() string {
	return strings.TrimSuffix(w.ConflictError.Error(), " (use -x to leave such metrics out)") + ": the metric is left out"
}

// SkippedWarning lists the metrics -x left out, at the end of the
// metadata.
type SkippedWarning struct{ PMIDs []stream.PMID }

func (w *SkippedWarning) Error() string {
	return fmt.Sprintf("these metrics are left out of the output: %v", w.PMIDs)
}

// pcpNames are a metric's names as pmlogextract prints them.
func pcpNames(names []string) string {
	if len(names) == 0 {
		return "<noname>"
	}
	return strings.Join(names, ", ")
}

// pcpSem is a semantics as pmlogextract prints it.
func pcpSem(s stream.Sem) string {
	switch s {
	case stream.SemCounter, stream.SemInstant, stream.SemDiscrete:
		return s.String()
	}
	return fmt.Sprintf("unknown (%d)", int32(s))
}

func (m *metaStore) skipMetric(p stream.PMID) {
	if !m.skip[p] {
		m.skip[p] = true
		m.skipList = append(m.skipList, p)
	}
}

func (m *metaStore) conflict(p stream.PMID, name, what, pcp string, from, to int, it stream.Iterator) error {
	err := &ConflictError{PMID: p, Name: name, What: what, First: m.names[from], Second: m.names[to], PCP: pcp}
	if from == to {
		if err.Where = stream.Where(it); err.Where == "" {
			err.Where = m.names[to]
		}
	}
	if !m.skipX {
		return err
	}
	if m.warn != nil {
		m.warn(&SkipWarning{err})
	}
	m.skipMetric(p)
	return nil
}

// at prefixes err with where from read its current record, or with input
// i's name.
func (m *metaStore) at(i int, from stream.Iterator, err error) error {
	if w := stream.Where(from); w != "" {
		return fmt.Errorf("%s: %w", w, err)
	}
	return fmt.Errorf("%s: %w", m.names[i], err)
}

// add takes one metadata record of input i. It reports whether the record
// was wanted (pmlogextract reads past unwanted ones in the same turn).
//
// from is the iterator that read rec: an error in rec names where it was
// read when from can say (stream.Locator), else the input.
func (m *metaStore) add(i int, rec stream.Record, from stream.Iterator) (bool, error) {
	switch r := rec.(type) {
	case *stream.Desc:
		if m.sel != nil && !m.sel.wantPMID(r.PMID) || m.skip[r.PMID] {
			return false, nil
		}
		return true, m.addDesc(i, r, from)
	case *stream.InDom:
		if m.sel != nil && !m.sel.wantInDom(r.InDom) {
			// Keep the delta chain of the input intact all the same.
			if _, err := m.trackers[i].Apply(r); err != nil {
				return false, m.at(i, from, err)
			}
			return false, nil
		}
		set, err := m.trackers[i].Apply(r)
		if err != nil {
			return true, m.at(i, from, err)
		}
		enc := r.Encoding
		if enc == stream.InDomDelta {
			enc = stream.InDomFull
		}
		// The tracker's set is its own copy and is never changed (Apply
		// makes a new one each time), so the store shares it; and where
		// the instances are those of the version before (the same
		// domain in input after input: hourly archives of one host),
		// it shares that version's, so that a merge of many inputs
		// holds one copy of a domain, not one per input.
		full := &stream.InDom{T: r.T, InDom: r.InDom, Encoding: enc, Insts: set.Insts, Names: set.Names}
		e := m.indoms[r.InDom]
		if e == nil {
			e = &indomEnt{}
			m.indoms[r.InDom] = e
		} else if last := e.vers[len(e.vers)-1].rec; slices.Equal(last.Insts, full.Insts) && slices.Equal(last.Names, full.Names) {
			full.Insts, full.Names = last.Insts, last.Names
		}
		e.vers = append(e.vers, &indomVer{rec: full})
		e.sorted = false
		m.clearDue()
		return true, nil
	case *stream.LabelSet:
		if m.sel != nil && !m.wantLabel(r) {
			return false, nil
		}
		h := m.labels[r.Type]
		if h == nil {
			h = &pcphash.Hash[*labelEnt]{}
			m.labels[r.Type] = h
		}
		h.Add(r.Ident, &labelEnt{rec: stream.CloneRecord(r).(*stream.LabelSet)})
		m.clearDue()
		return true, nil
	case *stream.Text:
		if m.sel != nil && !m.wantText(r) {
			return false, nil
		}
		k := [2]uint32{r.Type, r.Ident}
		if e, ok := m.texts[k]; ok {
			if e.rec.Text != r.Text && m.warn != nil {
				what, kind := "metric "+stream.PMID(r.Ident).String(), "one-line"
				if r.Type&stream.TextInDom != 0 {
					what = "instance domain " + stream.InDomID(r.Ident).String()
				}
				if r.Type&stream.TextHelp != 0 {
					kind = "help"
				}
				m.warn(fmt.Errorf("%s: the %s text of %s differs from %s's: the later is used", m.names[i], kind, what, m.names[e.from]))
			}
			e.rec, e.from = stream.CloneRecord(r).(*stream.Text), i
			return true, nil
		}
		m.texts[k] = &textEnt{rec: stream.CloneRecord(r).(*stream.Text), from: i}
		return true, nil
	}
	return false, nil
}

func (m *metaStore) wantLabel(r *stream.LabelSet) bool {
	for _, p := range m.sel.pmids {
		switch r.Type {
		case stream.LabelContext:
			return true
		case stream.LabelDomain:
			// pmlogextract compares the domain of the label's identifier
			// (a bare domain number) with the metric's domain, so domain
			// label sets never survive a -c selection: kept as it does.
			if stream.PMID(r.Ident).Domain() == p.Domain() {
				return true
			}
		case stream.LabelCluster:
			q := stream.PMID(r.Ident)
			if q.Domain() == p.Domain() && q.Cluster() == p.Cluster() {
				return true
			}
		case stream.LabelItem:
			if stream.PMID(r.Ident) == p {
				return true
			}
		case stream.LabelInDom, stream.LabelInstances:
			if m.sel.indoms[stream.InDomID(r.Ident)] {
				return true
			}
		}
	}
	return r.Type == stream.LabelContext
}

func (m *metaStore) wantText(r *stream.Text) bool {
	if r.Type&stream.TextPMID != 0 {
		return m.sel.wantPMID(stream.PMID(r.Ident))
	}
	return m.sel.wantInDom(stream.InDomID(r.Ident))
}

func firstName(names []string) string {
	if len(names) == 0 {
		return "<noname>"
	}
	return names[0]
}

func (m *metaStore) addDesc(i int, d *stream.Desc, it stream.Iterator) error {
	// A name already given to another PMID: that other metric conflicts
	// (once, however many of its names are given).
	var others []stream.PMID
	for _, n := range d.Names {
		if p, ok := m.byName[n]; ok && p != d.PMID && !slices.Contains(others, p) {
			others = append(others, p)
			old := m.descs[p]
			pcp := fmt.Sprintf("metric %s: PMID changed from %s to %s!", pcpNames(old.d.Names), p, d.PMID)
			if err := m.conflict(p, n, fmt.Sprintf("the name is also given to %s", d.PMID), pcp, old.from, i, it); err != nil {
				return err
			}
		}
	}
	old, ok := m.descs[d.PMID]
	if !ok {
		c := stream.CloneRecord(d).(*stream.Desc)
		m.descs[d.PMID] = &descEnt{d: c, from: i}
		for _, n := range d.Names {
			m.byName[n] = d.PMID
		}
		return nil
	}
	o := old.d
	name := firstName(o.Names)
	// The message is built only for a conflict: this runs for every
	// descriptor of every input.
	// what gives our words and pmlogextract's.
	check := func(bad bool, what func() (string, string)) error {
		if !bad {
			return nil
		}
		ours, pcp := what()
		return m.conflict(d.PMID, name, ours, pcp, old.from, i, it)
	}
	if err := check(!sameNames(o.Names, d.Names), func() (string, string) {
		return fmt.Sprintf("names change from %q to %q", o.Names, d.Names),
			fmt.Sprintf("metric PMID %s: name changed from %s to %s!", d.PMID, pcpNames(o.Names), pcpNames(d.Names))
	}); err != nil {
		return err
	}
	on := pcpNames(o.Names)
	if err := check(o.Type != d.Type, func() (string, string) {
		return fmt.Sprintf("type changes from %s to %s", o.Type, d.Type),
			fmt.Sprintf("metric %s: type changed from %s to %s!", on, o.Type, d.Type)
	}); err != nil {
		return err
	}
	if err := check(o.InDom != d.InDom, func() (string, string) {
		return fmt.Sprintf("instance domain changes from %s to %s", o.InDom, d.InDom),
			fmt.Sprintf("metric %s: indom changed from %s to %s!", on, o.InDom, d.InDom)
	}); err != nil {
		return err
	}
	if err := check(o.Sem != d.Sem, func() (string, string) {
		return fmt.Sprintf("semantics change from %s to %s", o.Sem, d.Sem),
			fmt.Sprintf("metric %s: semantics changed from %s to %s!", on, pcpSem(o.Sem), pcpSem(d.Sem))
	}); err != nil {
		return err
	}
	return check(o.Units != d.Units, func() (string, string) {
		return fmt.Sprintf("units change from %q to %q", o.Units, d.Units),
			fmt.Sprintf("metric %s: units changed from %s to %s!", on, o.Units, d.Units)
	})
}

// sameNames: every name of each list is in the other (repeats allowed).
func sameNames(a, b []string) bool {
	for _, n := range a {
		if !slices.Contains(b, n) {
			return false
		}
	}
	for _, n := range b {
		if !slices.Contains(a, n) {
			return false
		}
	}
	return len(a) > 0 && len(b) > 0 || len(a) == len(b)
}

// forResult appends to out the metadata result r needs at time now, in
// pmlogextract's order, marking it written. It reports whether an instance
// domain was among it.
func (m *metaStore) forResult(out []stream.Record, r *stream.Result, now stream.Timestamp) ([]stream.Record, error) {
	var err error
	if m.pmids, err = r.AppendPMIDs(m.pmids[:0]); err != nil {
		return out, err
	}
	if len(m.atPos) < len(m.pmids) {
		m.atPos = append(m.atPos, make([]dueSlot, len(m.pmids)-len(m.atPos))...)
	}
	pos := m.atPos[:len(m.pmids)]
	for j, p := range m.pmids {
		if s := &pos[j]; dueByPosition && s.set && s.p == p {
			if now.Before(s.t) {
				continue
			}
		} else if d, ok := m.dueOf(p); ok {
			pos[j] = dueSlot{p: p, t: d, set: true}
			if now.Before(d) {
				continue
			}
		}
		if out, err = m.forMetric(out, p, now); err != nil {
			return out, err
		}
		d := m.nextDue(p, now)
		m.setDue(p, d)
		pos[j] = dueSlot{p: p, t: d, set: true}
	}
	return out, nil
}

// forMetric appends the metadata of metric p due at now.
func (m *metaStore) forMetric(out []stream.Record, p stream.PMID, now stream.Timestamp) ([]stream.Record, error) {
	{
		de := m.descs[p]
		if de == nil {
			return out, &UndescribedError{T: now, PMID: p}
		}
		if !de.written {
			de.written = true
			out = append(out, de.d)
		}
		out = m.label(out, stream.LabelItem, uint32(p), now)
		out = m.label(out, stream.LabelDomain, p.Domain(), now)
		out = m.label(out, stream.LabelCluster, uint32(p)&^0x3ff, now)
		out = m.text(out, stream.TextPMID|stream.TextOneline, uint32(p))
		out = m.text(out, stream.TextPMID|stream.TextHelp, uint32(p))
		id := de.d.InDom
		if id == stream.InDomNull {
			return out, nil
		}
		e := m.indoms[id]
		var v *indomVer
		switch {
		case e == nil || len(e.vers) == 0:
			// No record of the domain: its labels and texts still go out.
		case len(e.vers) == 1:
			v = e.vers[0]
		default:
			e.sortVers()
			v = closest(e.vers, now)
			if v == nil {
				return out, nil
			}
		}
		if v != nil {
			if v.written {
				return out, nil
			}
			v.written = true
			c := *v.rec
			c.T = now
			out = append(out, &c)
		}
		out = m.label(out, stream.LabelInDom, uint32(id), now)
		out = m.label(out, stream.LabelInstances, uint32(id), now)
		out = m.text(out, stream.TextInDom|stream.TextOneline, uint32(id))
		out = m.text(out, stream.TextInDom|stream.TextHelp, uint32(id))
	}
	return out, nil
}

// nextDue returns the earliest time after now at which forMetric could
// write anything for p: when a label set not yet written comes into force,
// or when another version of its instance domain may be chosen.
func (m *metaStore) nextDue(p stream.PMID, now stream.Timestamp) stream.Timestamp {
	due := never
	soon := func(t stream.Timestamp) {
		if t.Before(due) {
			due = t
		}
	}
	label := func(typ, ident uint32) {
		if h := m.labels[typ]; h != nil {
			if n := h.Search(ident); n != nil && !n.Data.written && n.Data.rec.T.After(now) {
				soon(n.Data.rec.T)
			}
		}
	}
	label(stream.LabelItem, uint32(p))
	label(stream.LabelDomain, p.Domain())
	label(stream.LabelCluster, uint32(p)&^0x3ff)
	de := m.descs[p]
	if de == nil || de.d.InDom == stream.InDomNull {
		return due
	}
	id := de.d.InDom
	label(stream.LabelInDom, uint32(id))
	label(stream.LabelInstances, uint32(id))
	if e := m.indoms[id]; e != nil && len(e.vers) > 1 {
		// The versions are in time order (forMetric sorted them): the
		// first at or after now is the one that matters, found by
		// bisection, since a merge of thousands of archives has as
		// many versions of each domain, and this runs for every
		// metric of every result whose metadata is due.
		e.sortVers()
		i, _ := slices.BinarySearchFunc(e.vers, now, func(v *indomVer, t stream.Timestamp) int { return v.rec.T.Compare(t) })
		if i < len(e.vers) {
			if t := e.vers[i].rec.T; t == now {
				// Which of several versions stamped now the search
				// finds can change just after now: look again.
				soon(now.Add(time.Nanosecond))
			} else {
				soon(t)
			}
		}
	}
	return due
}

// sortVers puts the versions in time order (stable: of equal times, in
// the order they were read).
func (e *indomEnt) sortVers() {
	if !e.sorted {
		slices.SortStableFunc(e.vers, func(a, b *indomVer) int { return a.rec.T.Compare(b.rec.T) })
		e.sorted = true
	}
}

// closest finds the version in force at t with pmlogextract's binary
// search (which of several versions with one timestamp it lands on
// matters: the others are then never written); nil when t is before all.
func closest(vs []*indomVer, t stream.Timestamp) *indomVer {
	first, last := 0, len(vs)-1
	count := last
	middle := (first + last) / 2
	previous := middle
	c := -1
	for first <= last {
		c = vs[middle].rec.T.Compare(t)
		if c == 0 {
			return vs[middle]
		}
		previous = middle
		if c < 0 {
			if middle == count {
				break
			}
			first = middle + 1
		} else {
			if middle == 0 {
				break
			}
			last = middle - 1
		}
		middle = (first + last) / 2
	}
	if previous != middle {
		c = vs[middle].rec.T.Compare(t)
	}
	if c < 0 {
		return vs[middle]
	}
	return nil
}

// label appends the label set of (typ, ident) if it is due at now.
func (m *metaStore) label(out []stream.Record, typ, ident uint32, now stream.Timestamp) []stream.Record {
	h := m.labels[typ]
	if h == nil {
		return out
	}
	n := h.Search(ident)
	if n == nil || n.Data.written || n.Data.rec.T.After(now) {
		return out
	}
	e := n.Data
	e.written = true
	c := *e.rec
	c.T = now
	return append(out, &c)
}

func (m *metaStore) text(out []stream.Record, typ, ident uint32) []stream.Record {
	e := m.texts[[2]uint32{typ, ident}]
	if e == nil || e.written {
		return out
	}
	e.written = true
	return append(out, e.rec)
}
