package dump

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// The value view (-m, -s, -M, -r) and pmdumplog's expansion of event
// records.

// window is the part of the time window the value view uses.
type window struct {
	start stream.Timestamp
	end   stream.Timestamp
	// bounded is set when -S or -T was given: only then does pmdumplog
	// stop at end.
	bounded bool
}

// window resolves -S and -T against the archive's bounds.
func (d *dumper) window() (window, error) {
	w := window{start: d.lab.Start}
	needEnd := d.opts.Start != "" || d.opts.Finish != "" || d.opts.Reverse
	if !needEnd {
		return w, nil
	}
	end, ok, err := d.archiveEnd()
	if err != nil {
		return w, err
	}
	if !ok {
		end = stream.Timestamp{Sec: math.MaxInt32}
	}
	w.end = end
	if d.opts.Start == "" && d.opts.Finish == "" {
		return w, nil
	}
	pw, err := pcptime.ParseWindow(d.opts.Start, d.opts.Finish, "", "", d.lab.Start, end, d.loc)
	if err != nil {
		return w, err
	}
	w.start, w.end, w.bounded = pw.Start, pw.End, true
	return w, nil
}

// metricInfo is what printing a value set needs about its metric, built
// on first sight.
type metricInfo struct {
	head     []byte // "    d.c.i (names):"
	csvName  []byte // the metric column of CSV rows, built on first use
	jsonHead []byte // `{"pmid":...,"name":...,"type":...` of JSON, likewise
	names    []string
	desc     *stream.Desc
	typ      stream.Type
	indom    stream.InDomID
	list     *indomList // nil when the domain has no records (names print as ???)
	isEvent  bool
}

func (d *dumper) metric(p stream.PMID) *metricInfo {
	if mi, ok := d.metrics[p]; ok {
		return mi
	}
	mi := &metricInfo{names: d.meta.names(p), indom: stream.InDomNull, typ: -2}
	b := append([]byte(nil), "    "...)
	b = appendPMID(b, p)
	b = append(b, " ("...)
	b = appendNames(b, mi.names)
	b = append(b, "):"...)
	mi.head = b
	if desc, ok := d.meta.byPMID[p]; ok {
		mi.desc = desc
		mi.typ = desc.Type
		mi.indom = desc.InDom
		if desc.InDom != stream.InDomNull {
			mi.list = d.meta.indomsBy[desc.InDom]
		}
		mi.isEvent = desc.Type == stream.TypeEvent || desc.Type == stream.TypeHighresEvent
	}
	d.metrics[p] = mi
	return mi
}

// dumpValues prints the data records (-m), in time order or, with -r,
// backwards.
func (d *dumper) dumpValues(w window, pmids []stream.PMID) error {
	// Backwards, pmdumplog stops at the window start: nothing before it
	// is needed either way.
	var from *stream.Timestamp
	if !d.opts.Reverse || w.bounded {
		from = &w.start
	}
	tr := d.opts.TraceLog
	var it stream.CloserIterator
	libpcp := tr != nil && d.opts.LibpcpReads
	if libpcp {
		// libpcp's own fetches: each Next is one, traced as it goes
		it = tr.Records()
	} else {
		it = d.a.records(from)
	}
	defer it.Close()
	d.src = it
	var sel *selector
	if len(pmids) > 0 {
		sel = newSelector(pmids)
	}
	if d.opts.Reverse {
		if libpcp {
			return d.dumpBackwards(it, w, sel)
		}
		return d.dumpReverse(it, w, sel)
	}
	if libpcp || tr.quietly() {
		// the iterator fetches; or nobody watches libpcp's fetches
		tr = nil
	}
	pdu := d.opts.TracePDU && !libpcp // (else traced as libpcp reads)
	origin := w.start
	for it.Next() {
		rec := it.At()
		var res *stream.Result
		switch r := rec.(type) {
		case *stream.Result:
			res = r
		case *stream.Mark:
		default:
			if d.growing {
				if err := d.growAt(it, rec); err != nil {
					return err
				}
			}
			continue
		}
		t := rec.Time()
		if pdu {
			d.tracePDU(rec, origin)
		}
		// libpcp skips what lies before the position it last returned,
		// so records that go back in time are not shown.
		if t.Before(origin) {
			continue
		}
		origin = t
		tr.Fetch()
		if sel != nil && !sel.pick(res, d.opts.Marks) {
			continue
		}
		if w.bounded && t.After(w.end) {
			return it.Err()
		}
		if err := d.dumpRecord(t, res, sel); err != nil {
			return err
		}
	}
	// pmdumplog's last fetch, the one that fails, after the last record
	tr.Drain()
	return it.Err()
}

// dumpReverse reads the window into memory and prints it backwards, as
// pmdumplog -r does when it reads the archive from its end.
func (d *dumper) dumpReverse(it stream.Iterator, w window, sel *selector) error {
	var recs []stream.Record
	for it.Next() {
		switch it.At().(type) {
		case *stream.Result, *stream.Mark:
			recs = append(recs, stream.CloneRecord(it.At()))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	tr := d.opts.TraceLog
	if tr.quietly() {
		tr = nil
	}
	origin := w.end
	done := stream.Timestamp{}
	if w.bounded {
		done = w.start
	}
	first := true
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		t := rec.Time()
		if d.opts.TracePDU {
			d.tracePDU(rec, origin)
		}
		if t.After(origin) {
			continue
		}
		origin = t
		tr.Fetch()
		if stop, err := d.dumpBack(rec, done, sel, &first); stop || err != nil {
			return err
		}
	}
	tr.Drain()
	return nil
}

// dumpBack prints one record of a reverse dump: the header before the
// first shown, and nothing from the first before done on (stop).
func (d *dumper) dumpBack(rec stream.Record, done stream.Timestamp, sel *selector, first *bool) (stop bool, err error) {
	t := rec.Time()
	res, _ := rec.(*stream.Result)
	if sel != nil && !sel.pick(res, d.opts.Marks) {
		return false, nil
	}
	if *first {
		*first = false
		d.b = append(d.b, "\nLog finished at "...)
		d.b = pcptime.AppendCtime(d.b, stream.Timestamp{Sec: t.Sec}, d.loc)
		d.b = append(d.b, " - dump in reverse order\n"...)
	}
	if t.Before(done) {
		return true, nil
	}
	return false, d.dumpRecord(t, res, sel)
}

// dumpBackwards prints the records of it, which come backwards already
// (libpcp's fetches in reverse), as pmdumplog -r does.
func (d *dumper) dumpBackwards(it stream.Iterator, w window, sel *selector) error {
	done := stream.Timestamp{}
	if w.bounded {
		done = w.start
	}
	first := true
	for it.Next() {
		if stop, err := d.dumpBack(it.At(), done, sel, &first); stop || err != nil {
			return err
		}
	}
	return it.Err()
}

// selector keeps the value sets of the metrics named on the command line,
// in the order they were named, as pmdumplog's cherry-picking does.
type selector struct {
	pmids  []stream.PMID
	slot   map[stream.PMID]int // first position of each PMID
	picked []stream.VSet
	have   []bool
}

func newSelector(pmids []stream.PMID) *selector {
	s := &selector{pmids: pmids, slot: map[stream.PMID]int{}, picked: make([]stream.VSet, len(pmids)), have: make([]bool, len(pmids))}
	for i, p := range pmids {
		if _, ok := s.slot[p]; !ok {
			s.slot[p] = i
		}
	}
	return s
}

// pick selects from res (nil for a mark) and reports whether there is
// anything to print.
func (s *selector) pick(res *stream.Result, marks bool) bool {
	if res == nil {
		return marks
	}
	for i := range s.have {
		s.have[i] = false
	}
	n := 0
	it := res.VSets()
	for it.Next() {
		vs := it.VSet()
		if i, ok := s.slot[vs.PMID]; ok {
			if !s.have[i] {
				n++
			}
			s.picked[i] = *vs
			s.have[i] = true
		}
	}
	return n > 0
}

// dumpRecord prints one record (a result, or a mark when res is nil).
func (d *dumper) dumpRecord(t stream.Timestamp, res *stream.Result, sel *selector) error {
	b := append(d.b, '\n')
	if res == nil {
		if d.opts.Sizes {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(d.headerSize()), 10)
			b = append(b, " bytes]\n"...)
		}
		b = d.appendStamp(b, t)
		d.b = append(b, "  <mark>\n"...)
		d.maybeFlush()
		return nil
	}
	if sel != nil {
		n := 0
		for i := range sel.have {
			if sel.have[i] {
				n++
			}
		}
		if d.opts.Sizes {
			size := d.headerSize()
			for i := range sel.have {
				if sel.have[i] {
					size += vsetSize(&sel.picked[i])
				}
			}
			b = appendSize(b, size)
		}
		b = d.appendStamp(b, t)
		b = appendMetricCount(b, n)
		d.b = b
		for i := range sel.have {
			if sel.have[i] {
				d.dumpVSet(t, &sel.picked[i])
			}
		}
		d.maybeFlush()
		return nil
	}
	if d.opts.Sizes {
		size := d.headerSize()
		it := res.VSets()
		for it.Next() {
			size += vsetSize(it.VSet())
		}
		if err := it.Err(); err != nil {
			return err
		}
		b = appendSize(b, size)
	}
	b = d.appendStamp(b, t)
	b = appendMetricCount(b, res.NumPMID())
	d.b = b
	it := res.VSets()
	for it.Next() {
		d.dumpVSet(t, it.VSet())
	}
	d.maybeFlush()
	return it.Err()
}

func appendSize(b []byte, n int) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, " bytes]\n"...)
}

func appendMetricCount(b []byte, n int) []byte {
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(n), 10)
	if n == 1 {
		return append(b, " metric\n"...)
	}
	return append(b, " metrics\n"...)
}

// headerSize is a data record's size without its value sets: length
// words, timestamp and numpmid.
func (d *dumper) headerSize() int {
	if d.vers == 3 {
		return 24
	}
	return 20
}

// vsetSize is the on-disk size of one value set with its value blocks.
func vsetSize(vs *stream.VSet) int {
	n := 8
	if vs.NumVal <= 0 {
		return n
	}
	n += 4 + 8*int(vs.NumVal)
	if vs.ValFmt != stream.ValInsitu {
		for i := 0; i < int(vs.NumVal); i++ {
			v, err := vs.Value(i)
			if err != nil {
				continue
			}
			n += (len(v.Payload) + 4 + 3) &^ 3
		}
	}
	return n
}

// dumpVSet prints one value set.
func (d *dumper) dumpVSet(t stream.Timestamp, vs *stream.VSet) {
	mi := d.metric(vs.PMID)
	b := d.b
	if vs.NumVal == 0 {
		b = append(b, mi.head...)
		d.b = append(b, " No values returned!\n"...)
		return
	}
	if vs.NumVal < 0 {
		b = append(b, mi.head...)
		b = append(b, ' ')
		b = appendErrStr(b, vs.NumVal)
		d.b = append(b, '\n')
		return
	}
	typ, indom := mi.typ, mi.indom
	if mi.desc == nil {
		// pmdumplog guesses for a metric it has no descriptor for.
		indom = stream.InDomNull
		if vs.ValFmt == stream.ValInsitu {
			typ = stream.Type32
		} else {
			typ = stream.TypeAggregate
		}
	}
	var ver *indomVersion
	if indom != stream.InDomNull && mi.list != nil {
		ver = mi.list.atCached(t)
	}
	n := int(vs.NumVal)
	hint := 0
	for j := 0; j < n; j++ {
		inst, _ := vs.RawPair(j)
		if mi.isEvent && mi.desc != nil {
			d.b = b
			d.dumpEvent(t, mi, vs, j, ver)
			b = d.b
			continue
		}
		if j == 0 {
			b = append(b, mi.head...)
			if n > 1 {
				b = append(b, "\n       "...)
			}
		} else {
			b = append(b, "       "...)
		}
		if indom != stream.InDomNull {
			b = append(b, " inst ["...)
			b = strconv.AppendInt(b, int64(inst), 10)
			if ver != nil {
				if name, ok := ver.nameHint(inst, &hint); ok {
					b = append(b, " or \""...)
					b = append(b, name...)
					b = append(b, "\"]"...)
				} else {
					b = append(b, " or ???]"...)
				}
			} else {
				b = append(b, " or ???]"...)
			}
		}
		b = append(b, " value "...)
		v, err := vs.Value(j)
		if err != nil {
			// The reader validated the record; a pointer that does not
			// resolve here is damage libpcp would have refused.
			b = append(b, "?\n"...)
			continue
		}
		b = appendValue(b, typ, v)
		b = append(b, '\n')
	}
	d.b = b
}

// nameHint is name for values that usually come in instance order: it
// tries the slot after the one found last (*hint) before searching.
func (v *indomVersion) nameHint(inst int32, hint *int) (string, bool) {
	h := *hint
	if v.sorted && h < len(v.insts) && v.insts[h] == inst && (h == 0 || v.insts[h-1] != inst) {
		*hint = h + 1
		return v.names[h], true
	}
	if i, ok := v.find(inst); ok {
		*hint = i + 1
		return v.names[i], true
	}
	return "", false
}

// appendInst appends `N or "name"`, or `N or ???` when the instance is
// not in the version of its domain in force.
func appendInst(b []byte, ver *indomVersion, inst int32) []byte {
	b = strconv.AppendInt(b, int64(inst), 10)
	if ver != nil {
		if name, ok := ver.name(inst); ok {
			b = append(b, " or \""...)
			b = append(b, name...)
			return append(b, '"')
		}
	}
	return append(b, " or ???"...)
}

// atCached is at with a one-entry cache: consecutive value sets of one
// record, and usually consecutive records, ask for the same version.
func (l *indomList) atCached(t stream.Timestamp) *indomVersion {
	if l.cacheOK && t == l.cacheT {
		return l.cacheV
	}
	v := l.at(t)
	l.cacheOK, l.cacheT, l.cacheV = true, t, v
	return v
}

// Event records: the layout of PCP's pmEventArray and pmHighResEventArray
// inside a value block (after the block's own type and length word):
//
//	nrecords:4, then per record
//	  v1: sec:4 usec:4   highres: sec:8 nsec:8
//	  flags:4 nparams:4, then per parameter
//	    pmid:4 type:8|len:24 value (len-4 bytes, padded to 4)
const (
	eventFlagMissed = 1 << 31
)

// eventParam is one parameter of an event record as pmdumplog sees it
// after libpcp's unpacking.
type eventParam struct {
	pmid    stream.PMID
	special int // 1: the anonymous event.flags, 2: event.missed
	typ     stream.Type
	val     stream.Value
}

type eventRecord struct {
	sec, nsec int64
	flags     uint32
	params    []eventParam
}

// checkEvents validates an event array as libpcp's check_event_records
// does, returning false when libpcp would refuse to unpack it.
func checkEvents(p []byte, vtype uint8, highres bool) bool {
	want := uint8(stream.TypeEvent)
	hdr := 8 // the timestamp
	if highres {
		want = uint8(stream.TypeHighresEvent)
		hdr = 16
	}
	if vtype != want || len(p) < 4 {
		return false
	}
	nrec := int32(binary.BigEndian.Uint32(p))
	if nrec < 0 {
		return false
	}
	pos := 4
	for r := 0; r < int(nrec); r++ {
		if pos+hdr+8 > len(p) {
			return false
		}
		flags := binary.BigEndian.Uint32(p[pos+hdr:])
		nparams := int32(binary.BigEndian.Uint32(p[pos+hdr+4:]))
		pos += hdr + 8
		if flags&eventFlagMissed != 0 {
			if flags != eventFlagMissed {
				return false
			}
			nparams = 0
		}
		for i := 0; i < int(nparams); i++ {
			if pos+8 > len(p) {
				return false
			}
			plen := int(binary.BigEndian.Uint32(p[pos+4:]) & 0xffffff)
			size := 4 + (plen+3)&^3
			if pos+size > len(p) {
				return false
			}
			pos += size
		}
	}
	return true
}

// unpackEvents unpacks an event array the way pmUnpackEventRecords does:
// non-zero flags become a first parameter (the anonymous metric
// event.flags), a "missed" record becomes flags and a count
// (event.missed). ok is false where libpcp would fail (a parameter of an
// unsupported type).
func unpackEvents(p []byte, highres bool) (recs []eventRecord, ok bool) {
	nrec := int(int32(binary.BigEndian.Uint32(p)))
	pos := 4
	for r := 0; r < nrec; r++ {
		var er eventRecord
		if highres {
			er.sec = int64(binary.BigEndian.Uint64(p[pos:]))
			er.nsec = int64(binary.BigEndian.Uint64(p[pos+8:]))
			pos += 16
		} else {
			er.sec = int64(int32(binary.BigEndian.Uint32(p[pos:])))
			er.nsec = int64(int32(binary.BigEndian.Uint32(p[pos+4:]))) * 1000
			pos += 8
		}
		er.flags = binary.BigEndian.Uint32(p[pos:])
		nparams := int(int32(binary.BigEndian.Uint32(p[pos+4:])))
		pos += 8
		count := nparams
		switch {
		case er.flags&eventFlagMissed != 0:
			count = 2
		case er.flags != 0:
			count = nparams + 1
		}
		for i := 0; i < count; i++ {
			if i == 0 && er.flags != 0 {
				er.params = append(er.params, eventParam{special: 1, typ: stream.TypeU32,
					val: stream.Value{Insitu: true, Word: er.flags}})
				continue
			}
			if i == 1 && er.flags&eventFlagMissed != 0 {
				er.params = append(er.params, eventParam{special: 2, typ: stream.TypeU32,
					val: stream.Value{Insitu: true, Word: uint32(nparams)}})
				continue
			}
			pmid := stream.PMID(binary.BigEndian.Uint32(p[pos:]))
			w := binary.BigEndian.Uint32(p[pos+4:])
			typ := stream.Type(w >> 24)
			plen := int(w & 0xffffff)
			body := p[pos+8 : pos+4+max(plen, 4)]
			pos += 4 + (plen+3)&^3
			ep := eventParam{pmid: pmid, typ: typ}
			switch typ {
			case stream.Type32, stream.TypeU32:
				var word uint32
				if len(body) >= 4 {
					word = binary.BigEndian.Uint32(body)
				}
				ep.val = stream.Value{Insitu: true, Word: word}
			case stream.Type64, stream.TypeU64, stream.TypeDouble:
				ep.val = stream.Value{VType: uint8(typ), Payload: fixedLen(body, 8)}
			case stream.TypeFloat:
				ep.val = stream.Value{VType: uint8(typ), Payload: fixedLen(body, 4)}
			case stream.TypeAggregate, stream.TypeString, stream.TypeAggStatic:
				ep.val = stream.Value{VType: uint8(typ), Payload: body}
			default:
				return recs, false
			}
			er.params = append(er.params, ep)
		}
		recs = append(recs, er)
	}
	return recs, true
}

// fixedLen returns b cut or zero-extended to n bytes (libpcp copies n
// bytes whatever the parameter's length says).
func fixedLen(b []byte, n int) []byte {
	if len(b) >= n {
		return b[:n]
	}
	out := make([]byte, n)
	copy(out, b)
	return out
}

// dumpEvent prints value j of an event metric as pmdumplog's dump_event.
// eventWarning says that the event records of metric p in the current
// record cannot be unpacked: in pmdumplog's words under its name, with the
// file and offset of the record under ours.
func (d *dumper) eventWarning(p stream.PMID) {
	where := ""
	if d.prog != "pmdumplog" && !d.opts.Reverse {
		if w := stream.Where(d.src); w != "" {
			where = w + ": "
		}
	}
	fmt.Fprintf(d.warn, "%s: %scannot unpack event records of metric %s\n", d.prog, where, appendPMID(nil, p))
}

func (d *dumper) dumpEvent(t stream.Timestamp, mi *metricInfo, vs *stream.VSet, j int, ver *indomVersion) {
	inst, _ := vs.RawPair(j)
	b := append(d.b, mi.head[:len(mi.head)-2]...) // without "):"
	if mi.indom != stream.InDomNull {
		b = append(b, '[')
		b = appendInst(b, ver, inst)
		b = append(b, "])"...)
	} else {
		b = append(b, ')')
	}
	b = append(b, ": "...)
	highres := mi.typ == stream.TypeHighresEvent
	v, err := vs.Value(j)
	if vs.ValFmt == stream.ValInsitu || err != nil || !checkEvents(v.Payload, v.VType, highres) {
		// libpcp reports the damage on stderr and pmdumplog leaves the
		// line unfinished.
		d.eventWarning(vs.PMID)
		d.b = b
		return
	}
	recs, ok := unpackEvents(v.Payload, highres)
	if !ok {
		d.eventWarning(vs.PMID)
		d.b = b
		return
	}
	if len(recs) == 0 {
		d.b = append(b, "No event records\n"...)
		return
	}
	nmissed := 0
	for _, r := range recs {
		if len(r.params) == 2 && r.params[0].special == 1 && r.flags&eventFlagMissed != 0 && r.params[1].special == 2 {
			nmissed += int(int32(r.params[1].val.Word))
		}
	}
	b = strconv.AppendInt(b, int64(len(recs)), 10)
	if nmissed > 0 {
		b = append(b, " (and "...)
		b = strconv.AppendInt(b, int64(nmissed), 10)
		b = append(b, " missed)"...)
	}
	if len(recs)+nmissed == 1 {
		b = append(b, " event record\n"...)
	} else {
		b = append(b, " event records\n"...)
	}
	for r, er := range recs {
		b = append(b, "        --- event record ["...)
		b = strconv.AppendInt(b, int64(r), 10)
		b = append(b, "] timestamp "...)
		if highres {
			b = d.appendHighResStamp(b, er.sec, er.nsec)
		} else {
			b = d.appendTimeval(b, er.sec, er.nsec/1000)
		}
		if len(er.params) == 0 {
			b = append(b, " ---\n\t          No parameters\n"...)
			continue
		}
		var flags uint32
		for p := range er.params {
			b = d.appendEventParam(b, &er.params[p], p, &flags)
		}
	}
	d.b = b
}

// appendEventParam prints one unpacked parameter as pmdumplog's
// dump_parameter.
func (d *dumper) appendEventParam(b []byte, ep *eventParam, index int, flags *uint32) []byte {
	var names []string
	switch ep.special {
	case 1:
		names = []string{"event.flags"}
	case 2:
		names = []string{"event.missed"}
	default:
		names = d.meta.names(ep.pmid)
	}
	if len(names) > 0 {
		if index == 0 {
			if ep.special == 1 {
				*flags = ep.val.Word
				b = append(b, " flags 0x"...)
				b = appendHex(b, *flags)
				b = append(b, " ("...)
				b = appendEventFlags(b, *flags)
				return append(b, ") ---\n"...)
			}
			b = append(b, " ---\n"...)
		}
		if *flags&eventFlagMissed != 0 && index == 1 && ep.special == 2 {
			b = append(b, "        ==> "...)
			b = strconv.AppendInt(b, int64(int32(ep.val.Word)), 10)
			return append(b, " missed event records\n"...)
		}
		b = append(b, "        "...)
		b = appendEventPMID(b, ep)
		b = append(b, " ("...)
		b = appendNames(b, names)
		b = append(b, "):"...)
	} else {
		b = append(b, "        PMID: "...)
		b = appendEventPMID(b, ep)
		b = append(b, ':')
	}
	var typ stream.Type
	switch ep.special {
	case 1, 2:
		typ = stream.TypeU32
	default:
		desc, ok := d.meta.byPMID[ep.pmid]
		if !ok {
			b = append(b, " pmLookupDesc: "...)
			b = appendErrStr(b, -pmErrBase-33) // PM_ERR_PMID_LOG
			return append(b, '\n')
		}
		typ = desc.Type
	}
	b = append(b, " value "...)
	b = appendValue(b, typ, ep.val)
	return append(b, '\n')
}

// appendEventPMID prints a parameter's PMID; the anonymous metrics have
// libpcp's dynamic PMIDs for derived metrics.
func appendEventPMID(b []byte, ep *eventParam) []byte {
	switch ep.special {
	case 1:
		return append(b, "511.0.1"...)
	case 2:
		return append(b, "511.0.2"...)
	}
	return appendPMID(b, ep.pmid)
}

// appendEventFlags names event flags as pmEventFlagsStr does.
func appendEventFlags(b []byte, flags uint32) []byte {
	if flags&eventFlagMissed != 0 {
		return append(b, "missed"...)
	}
	first := true
	for i, name := range []string{"point", "start", "end", "id", "parent"} {
		if flags&(1<<uint(i)) != 0 {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, name...)
		}
	}
	return b
}

// appendTimeval prints an event record's time as pmdumplog's dump_timeval:
// microseconds, with -x the date and year and with -xx the offset from the
// archive start (never the epoch seconds).
func (d *dumper) appendTimeval(b []byte, sec, usec int64) []byte {
	x := d.opts.TimeFormat
	if x > 0 {
		d.tcache.fill(sec)
		b = append(b, d.tcache.date...)
		b = append(b, d.tcache.clock[:]...)
		b = append(b, '.')
		b = appendPadInt(b, usec, 6)
		b = append(b, ' ')
		b = append(b, d.tcache.year...)
	} else {
		d.tcache.fill(sec)
		b = append(b, d.tcache.clock[:]...)
		b = append(b, '.')
		b = appendPadInt(b, usec, 6)
	}
	if x >= 2 {
		b = append(b, " ("...)
		b = d.diff.appendDiff(b, sec-d.start.Sec, usec-int64(d.start.Nsec/1000), 1e6, 6)
		b = append(b, ')')
	}
	return b
}

// appendHighResStamp prints HH:MM:SS.nnnnnnnnn (pmPrintHighResStamp).
func (d *dumper) appendHighResStamp(b []byte, sec, nsec int64) []byte {
	d.tcache.fill(sec)
	b = append(b, d.tcache.clock[:]...)
	b = append(b, '.')
	return appendPadInt(b, int64(int32(nsec)), 9)
}
