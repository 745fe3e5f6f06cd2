package dump

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/pcptools/pcptools/stream"
)

// The machine-readable views: JSON lines (one object per record) and CSV
// (one row per value). docs/dump-formats.md is their specification.

// exporter holds what both formats share: the resolved metadata, the
// reporting zone, the window and the metric selection.
type exporter struct {
	w    *bufio.Writer
	b    []byte
	d    *dumper // for metadata, names and instance lookups
	win  window
	sel  *selector
	tbuf []byte // the current record's formatted time
	ebuf []byte // and its epoch seconds
	// cur is the iterator each walks (where the current record was read);
	// unread, the metrics a value of which could not be read (Samples
	// says so once per metric).
	cur    stream.Iterator
	unread map[stream.PMID]bool
}

func newExporter(w io.Writer, a archive, opts Options) (*exporter, error) {
	opts = opts.normalize()
	d := &dumper{
		w:       bufio.NewWriterSize(w, 256<<10),
		opts:    opts,
		a:       a,
		lab:     a.label(),
		metrics: map[stream.PMID]*metricInfo{},
		warn:    io.Discard,
		growing: isStream(a),
	}
	if opts.Warn != nil {
		d.warn = opts.Warn
	}
	if d.prog = opts.Prog; d.prog == "" {
		d.prog = "pcpcat"
	}
	d.vers = d.lab.Version
	d.prec = 9
	d.start = d.lab.Start
	loc, _, err := chooseZone(opts, d.lab)
	if err != nil {
		return nil, err
	}
	d.loc = loc
	d.tcache.loc = loc
	m, err := a.meta()
	if err != nil {
		return nil, err
	}
	d.meta = newPCPMeta(m)
	if d.meta.descErr != nil {
		return nil, d.meta.descErr
	}
	d.startMeta = m
	e := &exporter{w: d.w, d: d}
	if e.win, err = d.window(); err != nil {
		return nil, err
	}
	if len(opts.Metrics) > 0 {
		pmids, err := d.lookupMetrics()
		if err != nil {
			return nil, err
		}
		e.sel = newSelector(pmids)
	}
	return e, nil
}

// each walks the records in the window and calls f for each (metadata
// records always, results and marks inside the window and selection).
func (e *exporter) each(withMeta bool, f func(rec stream.Record) error) error {
	// The reader emits every metadata record even when it skips data.
	it := e.d.a.records(&e.win.start)
	defer it.Close()
	e.cur = it
	origin := e.win.start
	for it.Next() {
		rec := it.At()
		if e.d.opts.OnRecord != nil {
			e.d.opts.OnRecord(rec)
		}
		switch r := rec.(type) {
		case *stream.Result, *stream.Mark:
			t := rec.Time()
			if t.Before(origin) {
				continue
			}
			origin = t
			if e.win.bounded && t.After(e.win.end) {
				return it.Err()
			}
			if e.sel != nil {
				res, _ := r.(*stream.Result)
				if !e.sel.pick(res, e.d.opts.Marks) {
					continue
				}
			}
		default:
			if e.d.growing {
				if err := e.d.growAt(it, rec); err != nil {
					return err
				}
			}
			if !withMeta {
				continue
			}
		}
		if err := f(rec); err != nil {
			return err
		}
	}
	return it.Err()
}

func (e *exporter) finish(err error) error {
	e.flush()
	if ferr := e.w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (e *exporter) flush() {
	e.w.Write(e.b)
	e.b = e.b[:0]
}

func (e *exporter) maybeFlush() {
	if len(e.b) >= 64<<10 {
		e.flush()
	}
}

// setTime formats t once for all the lines of a record.
func (e *exporter) setTime(t stream.Timestamp) {
	e.tbuf = time.Unix(t.Sec, int64(t.Nsec)).In(e.d.loc).AppendFormat(e.tbuf[:0], time.RFC3339Nano)
	e.ebuf = appendEpoch(e.ebuf[:0], t)
}

// appendEpoch appends seconds since the epoch with nine decimals.
func appendEpoch(b []byte, t stream.Timestamp) []byte {
	sec, ns := t.Sec, int64(t.Nsec)
	if sec < 0 && ns > 0 {
		b = append(b, '-')
		sec = -sec - 1
		ns = 1e9 - ns
		b = strconv.AppendInt(b, sec, 10)
	} else {
		b = strconv.AppendInt(b, sec, 10)
	}
	b = append(b, '.')
	return appendPadInt(b, ns, 9)
}

// jsonArchive is JSON for any archive source.
func jsonArchive(w io.Writer, a archive, opts Options) error {
	e, err := newExporter(w, a, opts)
	if err != nil {
		return err
	}
	err = e.each(true, func(rec stream.Record) error {
		if l, ok := rec.(*stream.Label); ok && l.Vol > 0 {
			// The label of a further volume of the same archive.
			return nil
		}
		e.setTime(rec.Time())
		b := append(e.b, `{"kind":"`...)
		b = append(b, rec.Kind().String()...)
		b = append(b, `","time":"`...)
		b = append(b, e.tbuf...)
		b = append(b, `","epoch":`...)
		b = append(b, e.ebuf...)
		e.b = b
		switch r := rec.(type) {
		case *stream.Label:
			e.jsonLabel(r)
		case *stream.Desc:
			e.jsonDesc(r)
		case *stream.InDom:
			e.jsonInDom(r)
		case *stream.LabelSet:
			e.jsonLabelSet(r)
		case *stream.Text:
			e.jsonText(r)
		case *stream.Result:
			if err := e.jsonResult(r); err != nil {
				return err
			}
		}
		e.b = append(e.b, "}\n"...)
		e.maybeFlush()
		return nil
	})
	return e.finish(err)
}

func (e *exporter) jsonLabel(l *stream.Label) {
	b := append(e.b, `,"version":`...)
	b = strconv.AppendInt(b, int64(l.Version), 10)
	b = append(b, `,"hostname":`...)
	b = appendJSONString(b, l.Hostname)
	b = append(b, `,"timezone":`...)
	b = appendJSONString(b, l.Timezone)
	if l.Zoneinfo != "" {
		b = append(b, `,"zoneinfo":`...)
		b = appendJSONString(b, l.Zoneinfo)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(l.PID), 10)
	b = append(b, `,"features":`...)
	b = strconv.AppendUint(b, uint64(l.Features), 10)
	e.b = b
}

func (e *exporter) jsonDesc(d *stream.Desc) {
	b := append(e.b, `,"pmid":"`...)
	b = appendPMID(b, d.PMID)
	b = append(b, `","names":[`...)
	for i, n := range d.Names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, n)
	}
	b = append(b, `],"type":"`...)
	b = append(b, typeName(d.Type)...)
	b = append(b, `","indom":`...)
	b = appendJSONInDom(b, d.InDom)
	b = append(b, `,"semantics":"`...)
	b = append(b, semName(d.Sem)...)
	b = append(b, `","units":`...)
	b = appendJSONString(b, d.Units.String())
	e.b = b
}

func appendJSONInDom(b []byte, id stream.InDomID) []byte {
	if id == stream.InDomNull {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = appendInDom(b, id)
	return append(b, '"')
}

func (e *exporter) jsonInDom(r *stream.InDom) {
	b := append(e.b, `,"indom":"`...)
	b = appendInDom(b, r.InDom)
	if r.Encoding == stream.InDomDelta {
		b = append(b, `","encoding":"delta","instances":[`...)
	} else {
		b = append(b, `","encoding":"full","instances":[`...)
	}
	first := true
	for i, inst := range r.Insts {
		if r.Deleted != nil && r.Deleted[i] {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"inst":`...)
		b = strconv.AppendInt(b, int64(inst), 10)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, r.Names[i])
		b = append(b, '}')
	}
	b = append(b, ']')
	if r.Encoding == stream.InDomDelta {
		b = append(b, `,"deleted":[`...)
		first = true
		for i, inst := range r.Insts {
			if r.Deleted == nil || !r.Deleted[i] {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = strconv.AppendInt(b, int64(inst), 10)
		}
		b = append(b, ']')
	}
	e.b = b
}

func (e *exporter) jsonLabelSet(r *stream.LabelSet) {
	typ := r.Type & stream.LabelTypeMask
	b := append(e.b, `,"type":"`...)
	b = appendLabelFlags(b[:len(b)], uint8(typ))
	b = append(b, `","ident":`...)
	switch typ {
	case stream.LabelContext:
		b = append(b, "null"...)
	case stream.LabelDomain:
		b = append(b, '"')
		b = strconv.AppendUint(b, uint64(r.Ident), 10)
		b = append(b, '"')
	default:
		b = append(b, '"')
		id := appendLabelIdent(nil, r.Ident, typ)
		for i, c := range id {
			if c == ' ' {
				id = id[i+1:]
				break
			}
		}
		b = append(b, id...)
		b = append(b, '"')
	}
	b = append(b, `,"sets":[`...)
	for i, s := range r.Sets {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if typ == stream.LabelInstances {
			b = append(b, `"inst":`...)
			b = strconv.AppendInt(b, int64(s.Inst), 10)
			b = append(b, ',')
		}
		if s.JSON == "" {
			b = append(b, `"labels":{}`...)
		} else if json.Valid([]byte(s.JSON)) {
			b = append(b, `"labels":`...)
			b = append(b, s.JSON...)
		} else {
			b = append(b, `"labels_text":`...)
			b = appendJSONString(b, s.JSON)
		}
		b = append(b, '}')
	}
	e.b = append(b, ']')
}

func (e *exporter) jsonText(t *stream.Text) {
	b := e.b
	if t.Type&stream.TextInDom != 0 {
		b = append(b, `,"indom":"`...)
		b = appendInDom(b, stream.InDomID(t.Ident))
	} else {
		b = append(b, `,"pmid":"`...)
		b = appendPMID(b, stream.PMID(t.Ident))
	}
	if t.Type&stream.TextHelp != 0 {
		b = append(b, `","class":"help","text":`...)
	} else {
		b = append(b, `","class":"oneline","text":`...)
	}
	e.b = appendJSONString(b, t.Text)
}

func (e *exporter) jsonResult(r *stream.Result) error {
	e.b = append(e.b, `,"metrics":[`...)
	first := true
	emit := func(vs *stream.VSet) {
		if !first {
			e.b = append(e.b, ',')
		}
		first = false
		e.jsonVSet(r.T, vs)
	}
	if e.sel != nil {
		for i := range e.sel.have {
			if e.sel.have[i] {
				emit(&e.sel.picked[i])
			}
		}
	} else {
		it := r.VSets()
		for it.Next() {
			emit(it.VSet())
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
	e.b = append(e.b, ']')
	return nil
}

func (e *exporter) jsonVSet(t stream.Timestamp, vs *stream.VSet) {
	mi := e.d.metric(vs.PMID)
	if mi.jsonHead == nil {
		h := append([]byte(nil), `{"pmid":"`...)
		h = appendPMID(h, vs.PMID)
		h = append(h, `","name":`...)
		if len(mi.names) > 0 {
			h = appendJSONString(h, mi.names[0])
		} else {
			h = append(h, "null"...)
		}
		if mi.desc != nil {
			h = append(h, `,"type":"`...)
			h = append(h, typeName(mi.typ)...)
			h = append(h, '"')
		}
		mi.jsonHead = h
	}
	b := append(e.b, mi.jsonHead...)
	if vs.NumVal < 0 {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, string(appendErrStr(nil, vs.NumVal)))
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(vs.NumVal), 10)
		e.b = append(b, '}')
		return
	}
	b = append(b, `,"values":[`...)
	var ver *indomVersion
	if mi.indom != stream.InDomNull && mi.list != nil {
		ver = mi.list.atCached(t)
	}
	hint := 0
	for j := 0; j < int(vs.NumVal); j++ {
		if j > 0 {
			b = append(b, ',')
		}
		inst, _ := vs.RawPair(j)
		b = append(b, '{')
		if mi.indom != stream.InDomNull {
			b = append(b, `"inst":`...)
			b = strconv.AppendInt(b, int64(inst), 10)
			b = append(b, `,"instance":`...)
			name, ok := "", false
			if ver != nil {
				name, ok = ver.nameHint(inst, &hint)
			}
			if ok {
				b = appendJSONString(b, name)
			} else {
				b = append(b, "null"...)
			}
			b = append(b, ',')
		}
		b = append(b, `"value":`...)
		v, err := vs.Value(j)
		if err != nil {
			b = append(b, "null"...)
		} else {
			b = e.appendJSONValue(b, mi, v)
		}
		b = append(b, '}')
	}
	e.b = append(b, "]}"...)
}

// appendJSONValue appends a value typed by its descriptor: numbers as
// JSON numbers (NaN and infinities as the strings "NaN", "Infinity" and
// "-Infinity"), strings as strings, aggregates as {"hex":...}, event
// arrays as {"records":[...]}, and anything that does not decode as its
// type as {"raw":hex}.
func (e *exporter) appendJSONValue(b []byte, mi *metricInfo, v stream.Value) []byte {
	typ := mi.typ
	if mi.desc == nil {
		return appendRawJSON(b, v)
	}
	switch typ {
	case stream.TypeEvent, stream.TypeHighresEvent:
		return e.appendJSONEvents(b, typ == stream.TypeHighresEvent, v)
	case stream.TypeAggregate, stream.TypeAggStatic:
		if !v.Insitu {
			b = append(b, `{"hex":"`...)
			b = appendHexBytes(b, v.Payload)
			return append(b, `"}`...)
		}
		return appendRawJSON(b, v)
	}
	if !extractOK(typ, v.Insitu, v) {
		return appendRawJSON(b, v)
	}
	return appendJSONTyped(b, typ, v)
}

func appendJSONTyped(b []byte, typ stream.Type, v stream.Value) []byte {
	switch typ {
	case stream.Type32:
		return strconv.AppendInt(b, int64(int32(v.Word)), 10)
	case stream.TypeU32:
		return strconv.AppendUint(b, uint64(v.Word), 10)
	case stream.Type64:
		return strconv.AppendInt(b, int64(binary.BigEndian.Uint64(v.Payload)), 10)
	case stream.TypeU64:
		return strconv.AppendUint(b, binary.BigEndian.Uint64(v.Payload), 10)
	case stream.TypeFloat:
		bits := v.Word
		if !v.Insitu {
			bits = binary.BigEndian.Uint32(v.Payload)
		}
		return appendJSONFloat(b, float64(math.Float32frombits(bits)), 32)
	case stream.TypeDouble:
		return appendJSONFloat(b, math.Float64frombits(binary.BigEndian.Uint64(v.Payload)), 64)
	case stream.TypeString:
		return appendJSONBytes(b, v.Bytes(stream.TypeString))
	}
	return appendRawJSON(b, v)
}

func appendJSONFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

func appendRawJSON(b []byte, v stream.Value) []byte {
	b = append(b, `{"raw":"`...)
	if v.Insitu {
		var w [4]byte
		binary.BigEndian.PutUint32(w[:], v.Word)
		b = appendHexBytes(b, w[:])
	} else {
		b = appendHexBytes(b, v.Payload)
	}
	return append(b, `"}`...)
}

func appendHexBytes(b []byte, p []byte) []byte {
	for _, c := range p {
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

func (e *exporter) appendJSONEvents(b []byte, highres bool, v stream.Value) []byte {
	if v.Insitu || !checkEvents(v.Payload, v.VType, highres) {
		return appendRawJSON(b, v)
	}
	recs, ok := unpackEvents(v.Payload, highres)
	if !ok {
		return appendRawJSON(b, v)
	}
	b = append(b, `{"records":[`...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		ts := stream.Timestamp{Sec: r.sec, Nsec: int32(r.nsec)}
		b = append(b, `{"time":"`...)
		b = time.Unix(ts.Sec, int64(ts.Nsec)).In(e.d.loc).AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","epoch":`...)
		b = appendEpoch(b, ts)
		b = append(b, `,"flags":`...)
		b = strconv.AppendUint(b, uint64(r.flags), 10)
		b = append(b, `,"params":[`...)
		first := true
		for _, p := range r.params {
			if p.special == 1 {
				continue
			}
			if p.special == 2 {
				// Reported as the record's "missed" count instead.
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			pi := e.d.metric(p.pmid)
			b = append(b, `{"pmid":"`...)
			b = appendPMID(b, p.pmid)
			b = append(b, `","name":`...)
			if len(pi.names) > 0 {
				b = appendJSONString(b, pi.names[0])
			} else {
				b = append(b, "null"...)
			}
			b = append(b, `,"type":"`...)
			b = append(b, typeName(p.typ)...)
			b = append(b, `","value":`...)
			switch p.typ {
			case stream.TypeAggregate, stream.TypeAggStatic:
				b = append(b, `{"hex":"`...)
				b = appendHexBytes(b, p.val.Payload)
				b = append(b, `"}`...)
			default:
				b = appendJSONTyped(b, p.typ, p.val)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
		if r.flags&eventFlagMissed != 0 && len(r.params) == 2 {
			b = append(b, `,"missed":`...)
			b = strconv.AppendInt(b, int64(int32(r.params[1].val.Word)), 10)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = appendJSONByte(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

func appendJSONBytes(b []byte, p []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			b = appendJSONByte(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, p[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

func appendJSONByte(b []byte, c byte) []byte {
	switch c {
	case '"':
		return append(b, `\"`...)
	case '\\':
		return append(b, `\\`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	}
	if c < 0x20 || c == 0x7f {
		return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(b, c)
}

// typeName is pmTypeStr.
func typeName(t stream.Type) string {
	switch t {
	case stream.Type32:
		return "32"
	case stream.TypeU32:
		return "U32"
	case stream.Type64:
		return "64"
	case stream.TypeU64:
		return "U64"
	case stream.TypeFloat:
		return "FLOAT"
	case stream.TypeDouble:
		return "DOUBLE"
	case stream.TypeString:
		return "STRING"
	case stream.TypeAggregate:
		return "AGGREGATE"
	case stream.TypeAggStatic:
		return "AGGREGATE_STATIC"
	case stream.TypeEvent:
		return "EVENT"
	case stream.TypeHighresEvent:
		return "HIGHRES_EVENT"
	case stream.TypeNoSupport:
		return "NO_SUPPORT"
	case stream.TypeUnknown:
		return "UNKNOWN"
	}
	return "???"
}

func semName(s stream.Sem) string {
	switch s {
	case stream.SemCounter:
		return "counter"
	case stream.SemInstant:
		return "instant"
	case stream.SemDiscrete:
		return "discrete"
	}
	return "???"
}

// csvArchive writes one CSV row per value: time, metric, instance, value,
// after a header row (see docs/dump-formats.md).
func csvArchive(w io.Writer, a archive, opts Options) error {
	e, err := newExporter(w, a, opts)
	if err != nil {
		return err
	}
	e.b = append(e.b, "time,metric,instance,value\n"...)
	err = e.each(false, func(rec stream.Record) error {
		r, ok := rec.(*stream.Result)
		if !ok {
			return nil
		}
		e.setTime(r.T)
		if e.sel != nil {
			for i := range e.sel.have {
				if e.sel.have[i] {
					e.csvVSet(r.T, &e.sel.picked[i])
				}
			}
		} else {
			it := r.VSets()
			for it.Next() {
				e.csvVSet(r.T, it.VSet())
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
		e.maybeFlush()
		return nil
	})
	return e.finish(err)
}

func (e *exporter) csvVSet(t stream.Timestamp, vs *stream.VSet) {
	if vs.NumVal <= 0 {
		return
	}
	mi := e.d.metric(vs.PMID)
	var ver *indomVersion
	if mi.indom != stream.InDomNull && mi.list != nil {
		ver = mi.list.atCached(t)
	}
	if mi.csvName == nil {
		if len(mi.names) > 0 {
			mi.csvName = appendCSVField([]byte{}, mi.names[0])
		} else {
			mi.csvName = appendPMID([]byte{}, vs.PMID)
		}
	}
	b := e.b
	hint := 0
	for j := 0; j < int(vs.NumVal); j++ {
		b = append(b, e.tbuf...)
		b = append(b, ',')
		b = append(b, mi.csvName...)
		b = append(b, ',')
		inst, _ := vs.RawPair(j)
		if mi.indom != stream.InDomNull || mi.desc == nil && inst != stream.InstNull {
			name, ok := "", false
			if mi.indom != stream.InDomNull && ver != nil {
				name, ok = ver.nameHint(inst, &hint)
			}
			if ok {
				b = appendCSVField(b, name)
			} else {
				b = strconv.AppendInt(b, int64(inst), 10)
			}
		}
		b = append(b, ',')
		v, err := vs.Value(j)
		if err == nil {
			b = e.appendCSVValue(b, mi, v)
		}
		b = append(b, '\n')
	}
	e.b = b
}

// appendCSVValue appends a value: numbers as JSON would print them,
// strings as CSV fields, aggregates and undecodable values in hex, event
// arrays as "[N event records]".
func (e *exporter) appendCSVValue(b []byte, mi *metricInfo, v stream.Value) []byte {
	typ := mi.typ
	if mi.desc == nil {
		return appendCSVRaw(b, v)
	}
	switch typ {
	case stream.TypeEvent, stream.TypeHighresEvent:
		n := 0
		if !v.Insitu && len(v.Payload) >= 4 {
			n = int(int32(binary.BigEndian.Uint32(v.Payload)))
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(n), 10)
		if n == 1 {
			return append(b, " event record]"...)
		}
		return append(b, " event records]"...)
	case stream.TypeAggregate, stream.TypeAggStatic:
		return appendCSVRaw(b, v)
	case stream.TypeString:
		if extractOK(typ, v.Insitu, v) {
			return appendCSVField(b, string(v.Bytes(stream.TypeString)))
		}
	case stream.TypeFloat, stream.TypeDouble:
		if extractOK(typ, v.Insitu, v) {
			var f float64
			bits := 64
			if typ == stream.TypeFloat {
				w := v.Word
				if !v.Insitu {
					w = binary.BigEndian.Uint32(v.Payload)
				}
				f, bits = float64(math.Float32frombits(w)), 32
			} else {
				f = math.Float64frombits(binary.BigEndian.Uint64(v.Payload))
			}
			switch {
			case math.IsNaN(f):
				return append(b, "NaN"...)
			case math.IsInf(f, 1):
				return append(b, "Infinity"...)
			case math.IsInf(f, -1):
				return append(b, "-Infinity"...)
			}
			return strconv.AppendFloat(b, f, 'g', -1, bits)
		}
	default:
		if extractOK(typ, v.Insitu, v) {
			return appendJSONTyped(b, typ, v)
		}
	}
	return appendCSVRaw(b, v)
}

func appendCSVRaw(b []byte, v stream.Value) []byte {
	if v.Insitu {
		var w [4]byte
		binary.BigEndian.PutUint32(w[:], v.Word)
		return appendHexBytes(b, w[:])
	}
	return appendHexBytes(b, v.Payload)
}

// csvSpecial marks the bytes that make a CSV field need quotes.
var csvSpecial = [256]bool{',': true, '"': true, '\n': true, '\r': true}

// appendCSVField quotes a field when RFC 4180 requires it.
func appendCSVField(b []byte, s string) []byte {
	need := s == "" || s[0] == ' ' || s[len(s)-1] == ' '
	for i := 0; i < len(s) && !need; i++ {
		need = csvSpecial[s[i]]
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
