package logimport

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// PutText adds help text for a metric (typ stream.TextPMID, id its PMID)
// or an instance domain (stream.TextInDom); class is stream.TextOneline or
// stream.TextHelp. It is written with the next Write.
func (im *Importer) PutText(typ, class, id uint32, content string) error {
	if im.ended {
		return ErrEnded
	}
	switch {
	case typ != stream.TextPMID && typ != stream.TextInDom:
		return fmt.Errorf("text type %d: %w", typ, ErrBadTextType)
	case class != stream.TextOneline && class != stream.TextHelp:
		return fmt.Errorf("text class %d: %w", class, ErrBadTextClass)
	case id == uint32(stream.PMIDNull):
		return ErrBadTextID
	case content == "":
		return ErrEmptyText
	}
	for _, t := range im.texts {
		if t.typ == typ|class && t.id == id && t.content == content {
			return fmt.Errorf("text for %d: %w", id, ErrDupText)
		}
	}
	im.texts = append(im.texts, text{typ: typ | class, id: id, content: content})
	return nil
}

// PutLabel adds a label name:value to the label set of (type, id, inst);
// flags is a stream.Label* type, optionally with stream.LabelOptional.
// The value is a JSON string unless it is true, false or null. It is
// written with the next Write.
func (im *Importer) PutLabel(flags, id uint32, inst int32, name, value string) error {
	if im.ended {
		return ErrEnded
	}
	typ := flags & stream.LabelTypeMask
	switch typ {
	case stream.LabelContext, stream.LabelDomain, stream.LabelInDom, stream.LabelCluster, stream.LabelItem:
	case stream.LabelInstances:
		if inst == stream.InstNull {
			return ErrBadLabelInst
		}
	default:
		return fmt.Errorf("label type %#x: %w", flags, ErrBadLabelType)
	}
	if id == uint32(stream.PMIDNull) && typ != stream.LabelContext {
		return ErrBadLabelID
	}
	if name == "" {
		return ErrEmptyLabelName
	}
	if value == "" {
		return ErrEmptyLabelVal
	}
	if !ValidLabelName(name) {
		return fmt.Errorf("label name %q: %w", name, ErrAddLabel)
	}
	l := slices.IndexFunc(im.labels, func(s labelSet) bool {
		return s.typ == typ && s.id == id && (typ != stream.LabelInstances || s.inst == inst)
	})
	if l < 0 {
		im.labels = append(im.labels, labelSet{typ: typ, id: id, inst: stream.InstNull})
		l = len(im.labels) - 1
	}
	ls := &im.labels[l]
	if typ == stream.LabelInstances {
		ls.inst = inst
	}
	switch strings.ToLower(value) {
	case "true", "false", "null":
	default:
		value = `"` + value + `"` // as pmiPutLabel: no escaping
	}
	if !json.Valid([]byte(value)) {
		return fmt.Errorf("label %s value %s: %w", name, value, ErrAddLabel)
	}
	kv := labelKV{name: name, value: value, flags: uint8(flags)}
	if i := slices.IndexFunc(ls.labels, func(o labelKV) bool { return o.name == name }); i >= 0 {
		ls.labels[i] = kv
	} else {
		ls.labels = append(ls.labels, kv)
	}
	return nil
}

// ValidLabelName reports whether name is a label name PCP accepts: an
// alphabetic first, then alphanumerics and underscores.
func ValidLabelName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0 || c == '_' && i > 0) {
			return false
		}
	}
	return name != ""
}

func (ls *labelSet) record(t stream.Timestamp) (*stream.LabelSet, error) {
	labs := slices.Clone(ls.labels)
	slices.SortFunc(labs, func(a, b labelKV) int { return cmp.Compare(a.name, b.name) })
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range labs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(l.name))
		b.WriteByte(':')
		b.WriteString(l.value)
	}
	b.WriteByte('}')
	one, err := oneLabelSet(ls.inst, b.String(), 0)
	if err != nil {
		return nil, err
	}
	for i := range one.Labels {
		one.Labels[i].Flags = labs[i].flags // both in name order
	}
	return &stream.LabelSet{T: t, Type: ls.typ, Ident: ls.id, Sets: []stream.OneLabelSet{one}}, nil
}

// Write makes a record of the values put since the last Write, at t, and
// writes the help text and labels put since then after it. t may equal the
// previous record's time but not be before it.
func (im *Importer) Write(t stream.Timestamp) error {
	if im.ended {
		return ErrEnded
	}
	if len(im.pend) == 0 && !im.textPending() && len(im.labels) == 0 {
		return ErrNoData
	}
	if t.Before(im.last) {
		return fmt.Errorf("%s is before %s: %w", t, im.last, ErrBadTimestamp)
	}
	if im.opts.Version == 2 && !t.FitsV2() {
		t.Nsec -= t.Nsec % 1000
	}
	im.last = t
	if len(im.pend) > 0 {
		err := im.putResult(t)
		for _, p := range im.pend {
			im.pendIdx[p.m] = 0
		}
		im.pend = im.pend[:0]
		if err != nil {
			return err
		}
	}
	return im.putMeta(t)
}

// WriteTime is Write at a time.Time.
func (im *Importer) WriteTime(t time.Time) error { return im.Write(stream.FromTime(t)) }

func (im *Importer) textPending() bool {
	for _, t := range im.texts {
		if !t.metaDone {
			return true
		}
	}
	return false
}

func (im *Importer) start(t stream.Timestamp) error {
	if im.started {
		return nil
	}
	im.started = true
	zi := ""
	if im.opts.Version == 3 {
		zi = im.opts.Zoneinfo
	}
	return im.sink.Write(&stream.Label{Version: im.opts.Version, PID: int32(os.Getpid()), Start: t,
		Hostname: im.opts.Hostname, Timezone: im.opts.Timezone, Zoneinfo: zi})
}

func (im *Importer) offsets() (vol int32, meta, data int64, err error) {
	if im.fw == nil {
		return 0, 0, 0, nil
	}
	return im.fw.Offsets()
}

func (im *Importer) index(t stream.Timestamp, meta int64) error {
	if im.fw == nil {
		return nil
	}
	vol, m, data, err := im.fw.Offsets()
	if err != nil {
		return err
	}
	if meta < 0 {
		meta = m
	}
	im.fw.AddIndex(format.IndexEntry{T: t, Vol: vol, MetaOff: meta, DataOff: data})
	im.flush = data + 100000
	return nil
}

func (im *Importer) putResult(t stream.Timestamp) error {
	im.stamp = t
	if err := im.start(t); err != nil {
		return err
	}
	_, oldMeta, _, err := im.offsets()
	if err != nil {
		return err
	}
	needti := false
	for i := range im.pend {
		p := &im.pend[i]
		if err := im.checkMetric(p.m, t, &needti); err != nil {
			return err
		}
		if len(p.vals) > 1 {
			slices.SortFunc(p.vals, func(a, b pendVal) int { return cmp.Compare(a.inst, b.inst) })
		}
	}
	if !im.tmpl.apply(im.pend, &im.result, t) {
		if err := im.build(t); err != nil {
			return err
		}
		im.tmpl.capture(im.pend, im.metrics, &im.result)
	}
	_, _, data, err := im.offsets()
	if err != nil {
		return err
	}
	tsz := int64(8)
	if im.opts.Version == 3 {
		tsz = 12
	}
	if needti || data+4+tsz+int64(len(im.result.Body))+4 > im.flush {
		if err := im.index(t, oldMeta); err != nil {
			return err
		}
	}
	return im.sink.Write(&im.result)
}

// build makes im.result from the pending values with the builder.
func (im *Importer) build(t stream.Timestamp) error {
	im.builder.Reset()
	for i := range im.pend {
		p := &im.pend[i]
		m := &im.metrics[p.m]
		if p.err != 0 {
			im.builder.AddError(m.desc.PMID, p.err)
			continue
		}
		switch m.desc.Type {
		case stream.TypeDouble, stream.Type64, stream.TypeU64:
			im.builder.OpenBits(m.desc.PMID, m.desc.Type)
			for _, v := range p.vals {
				im.builder.PutBits(v.inst, v.bits)
			}
		default:
			im.builder.Open(m.desc.PMID, m.desc.Type)
			for _, v := range p.vals {
				im.builder.Put(v.val(m.desc.Type))
			}
		}
	}
	return im.builder.Build(t, &im.result)
}

func (im *Importer) checkMetric(mi int, t stream.Timestamp, needti *bool) error {
	m := &im.metrics[mi]
	if !m.metaDone {
		d := m.desc
		d.T = t
		if err := im.sink.Write(&d); err != nil {
			return err
		}
		m.metaDone = true
		*needti = true
	}
	if m.desc.InDom != stream.InDomNull {
		return im.checkInDom(m.desc.InDom, t, needti)
	}
	return nil
}

func (im *Importer) checkInDom(id stream.InDomID, t stream.Timestamp, needti *bool) error {
	d := im.findInDom(id)
	if d == nil || d.metaDone {
		return nil
	}
	enc := stream.InDomFull
	if im.opts.Version == 2 {
		enc = stream.InDomV2
	}
	rec := &stream.InDom{T: t, InDom: id, Encoding: enc, Insts: slices.Clone(d.insts), Names: slices.Clone(d.names)}
	if err := im.sink.Write(rec); err != nil {
		return err
	}
	d.metaDone = true
	*needti = true
	return nil
}

// putMeta writes pending text and labels, as _pmi_put_text and
// _pmi_put_label do.
func (im *Importer) putMeta(t stream.Timestamp) error {
	if !im.textPending() && len(im.labels) == 0 {
		return nil
	}
	im.stamp = t
	if err := im.start(t); err != nil {
		return err
	}
	needti := false
	for i := range im.texts {
		tp := &im.texts[i]
		if tp.metaDone {
			continue
		}
		if err := im.checkFor(tp.typ&stream.TextPMID != 0, tp.typ&stream.TextInDom != 0, tp.id, t, &needti); err != nil {
			return err
		}
		if err := im.sink.Write(&stream.Text{T: t, Type: tp.typ, Ident: tp.id, Text: tp.content}); err != nil {
			return err
		}
		tp.metaDone = true
	}
	if needti {
		if err := im.index(t, -1); err != nil {
			return err
		}
	}
	needti = false
	for i := range im.labels {
		ls := &im.labels[i]
		if err := im.checkFor(ls.typ == stream.LabelItem, ls.typ == stream.LabelInDom || ls.typ == stream.LabelInstances, ls.id, t, &needti); err != nil {
			return err
		}
		rec, err := ls.record(t)
		if err != nil {
			return err
		}
		if err := im.sink.Write(rec); err != nil {
			return err
		}
	}
	im.labels = im.labels[:0]
	if needti {
		return im.index(t, -1)
	}
	return nil
}

func (im *Importer) checkFor(isPMID, isInDom bool, id uint32, t stream.Timestamp, needti *bool) error {
	switch {
	case isPMID:
		if mi, ok := im.byPMID[stream.PMID(id)]; ok {
			return im.checkMetric(mi, t, needti)
		}
	case isInDom:
		return im.checkInDom(stream.InDomID(id), t, needti)
	}
	return nil
}

// PutMark writes a <mark> record 1 ms after the last record, as
// pmiPutMark does; before any record it does nothing.
func (im *Importer) PutMark() error {
	if im.ended {
		return ErrEnded
	}
	if im.last == (stream.Timestamp{}) || !im.started {
		return nil
	}
	return im.sink.Write(&stream.Mark{T: im.last.Add(time.Millisecond)})
}

// End finishes the archive: the final temporal index entry, then (for
// Create) the files renamed into place. An archive with no record is not
// written: End returns ErrNoData.
func (im *Importer) End() error {
	if im.ended {
		return ErrEnded
	}
	im.ended = true
	if !im.started {
		im.Abort()
		return fmt.Errorf("nothing was written: %w", ErrNoData)
	}
	if im.fw == nil {
		if c, ok := im.sink.(interface{ Close() error }); ok {
			return c.Close()
		}
		return nil
	}
	if err := im.index(im.stamp, -1); err != nil {
		im.fw.Abort()
		return err
	}
	return im.fw.Close()
}

// Abort drops the archive: nothing is left under its name.
func (im *Importer) Abort() {
	im.ended = true
	if im.fw != nil {
		im.fw.Abort()
	} else if a, ok := im.sink.(interface{ Abort(error) }); ok {
		a.Abort(errors.New("import abandoned"))
	}
}

// parseValue parses text for a type as libpcp_import does (strtol,
// strtoul, strtoll, strtoull, strtof, strtod on the whole text).
func parseValue(typ stream.Type, s string) (stream.Val, error) {
	var v stream.Val
	switch typ {
	case stream.Type32, stream.Type64:
		n, err := cInt(s)
		if typ == stream.Type32 {
			n = int64(int32(n))
		}
		v.I = n
		return v, err
	case stream.TypeU32, stream.TypeU64:
		n, err := cUint(s)
		if typ == stream.TypeU32 {
			n = uint64(uint32(n))
		}
		v.U = n
		return v, err
	case stream.TypeFloat, stream.TypeDouble:
		if s == "" {
			return v, nil // strtod of nothing is 0, and nothing is left over
		}
		f, err := strconv.ParseFloat(trimSpace(s), 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				err = nil
			}
		}
		if typ == stream.TypeFloat {
			f = float64(float32(f))
		}
		v.F = f
		return v, err
	case stream.TypeString:
		v.S = s
		return v, nil
	}
	return v, ErrBadType
}

// trimSpace drops the leading white space C's strto* functions skip
// (isspace in the C locale).
func trimSpace(s string) string {
	for len(s) > 0 {
		switch s[0] {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			s = s[1:]
		default:
			return s
		}
	}
	return s
}

// cInt is strtoll in base 10 over the whole text: leading white space, a
// sign, digits, clamped on overflow; nothing at all is 0.
func cInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	t := trimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("%q: not a number", s)
	}
	neg := t[0] == '-'
	if neg || t[0] == '+' {
		t = t[1:]
		if t == "" || t[0] == '-' || t[0] == '+' {
			return 0, fmt.Errorf("%q: not a number", s)
		}
	}
	u, err := cUint(t)
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return math.MinInt64, nil
		}
		return -int64(u), nil
	}
	if u > math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return int64(u), nil
}

// cUint is strtoull in base 10: a leading minus negates (wrapping), as C's.
func cUint(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	t := trimSpace(s)
	neg := false
	if t[0] == '-' || t[0] == '+' {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, fmt.Errorf("no digits in %q", s)
	}
	var n uint64
	over := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: not a number", s)
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			over = true
		}
		n = n*10 + d
	}
	if over {
		n = math.MaxUint64
	}
	if neg {
		n = -n
	}
	return n, nil
}
