package logimport

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pcptools/pcptools/stream"
)

// JSONReader reads the JSON lines `pcpcat --json` writes (docs/dump-formats.md)
// back into records: a stream.Iterator, to be copied to an archive or the
// record stream. What JSON does not carry is not invented: a label's
// "optional" and "compound" flags are lost (labels get the flags of their
// set's type), and
// event values and values written as raw bytes are refused.
type JSONReader struct {
	sc      *bufio.Scanner
	name    string
	line    int
	version int
	cur     stream.Record
	err     error
	rb      stream.ResultBuilder
	res     stream.Result
	// the type name fastResult read last, and its type
	lastTypeName string
	lastType     stream.Type
	noFast       bool // tests: every line through encoding/json
}

// NewJSONReader reads JSON lines from r; name is used in messages.
func NewJSONReader(r io.Reader, name string) *JSONReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	return &JSONReader{sc: sc, name: name}
}

// At returns the current record; a Result is valid until the next Next.
func (j *JSONReader) At() stream.Record { return j.cur }

// Err returns the error that stopped Next, naming the file and line.
func (j *JSONReader) Err() error { return j.err }

type jValue struct {
	Inst  *int32          `json:"inst"`
	Value json.RawMessage `json:"value"`
}

type jMetric struct {
	PMID   string   `json:"pmid"`
	Type   string   `json:"type"`
	Values []jValue `json:"values"`
	Error  *string  `json:"error"`
	Code   *int32   `json:"code"`
}

type jRec struct {
	Kind      string      `json:"kind"`
	Epoch     json.Number `json:"epoch"`
	Version   int         `json:"version"`
	Hostname  string      `json:"hostname"`
	Timezone  string      `json:"timezone"`
	Zoneinfo  string      `json:"zoneinfo"`
	PID       int32       `json:"pid"`
	Features  uint32      `json:"features"`
	PMID      string      `json:"pmid"`
	Names     []string    `json:"names"`
	Type      string      `json:"type"`
	InDom     *string     `json:"indom"`
	Semantics string      `json:"semantics"`
	Units     *string     `json:"units"`
	Encoding  string      `json:"encoding"`
	Instances []jInst     `json:"instances"`
	Deleted   []int32     `json:"deleted"`
	Ident     *string     `json:"ident"`
	Sets      []jSet      `json:"sets"`
	Class     string      `json:"class"`
	Text      string      `json:"text"`
	Metrics   []jMetric   `json:"metrics"`
}

type jInst struct {
	Inst int32  `json:"inst"`
	Name string `json:"name"`
}

type jSet struct {
	Inst       *int32          `json:"inst"`
	Labels     json.RawMessage `json:"labels"`
	LabelsText *string         `json:"labels_text"`
}

func (j *JSONReader) fail(format string, args ...any) bool {
	j.err = fmt.Errorf("%s:%d: %s", j.name, j.line, fmt.Sprintf(format, args...))
	j.cur = nil
	return false
}

// Next reads the next record.
func (j *JSONReader) Next() bool {
	if j.err != nil {
		return false
	}
	for j.sc.Scan() {
		j.line++
		b := bytes.TrimSpace(j.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if rec, ok := j.fastResult(b); ok && !j.noFast {
			j.cur = rec
			return true
		}
		var r jRec
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&r); err != nil {
			var se *json.SyntaxError
			var te *json.UnmarshalTypeError
			switch {
			case errors.As(err, &se):
				return j.fail("column %d: %v", se.Offset, err)
			case errors.As(err, &te):
				return j.fail("column %d: %v", te.Offset, err)
			case errors.Is(err, io.ErrUnexpectedEOF):
				return j.fail("column %d: the line ends inside a JSON value", len(b)+1)
			}
			return j.fail("%v", err)
		}
		t, err := parseEpoch(string(r.Epoch))
		if err != nil {
			return j.fail("epoch: %v", err)
		}
		rec, err := j.record(&r, t)
		if err != nil {
			return j.fail("%s record: %v", r.Kind, err)
		}
		j.cur = rec
		return true
	}
	if err := j.sc.Err(); err != nil {
		return j.fail("%v", err)
	}
	j.cur = nil
	return false
}

func (j *JSONReader) record(r *jRec, t stream.Timestamp) (stream.Record, error) {
	switch r.Kind {
	case "label":
		if r.Version != 2 && r.Version != 3 {
			return nil, fmt.Errorf("version %d", r.Version)
		}
		j.version = r.Version
		return &stream.Label{Version: r.Version, PID: r.PID, Start: t, Features: r.Features,
			Hostname: r.Hostname, Timezone: r.Timezone, Zoneinfo: r.Zoneinfo}, nil
	case "mark":
		return &stream.Mark{T: t}, nil
	}
	if j.version == 0 {
		return nil, fmt.Errorf("no label record before it")
	}
	switch r.Kind {
	case "desc":
		return descOf(r, t)
	case "indom":
		return j.indomOf(r, t)
	case "labelset":
		return labelSetOf(r, t)
	case "text":
		return textOf(r, t)
	case "result":
		return j.resultOf(r, t)
	}
	return nil, fmt.Errorf("unknown kind %q", r.Kind)
}

func descOf(r *jRec, t stream.Timestamp) (stream.Record, error) {
	pmid, err := ParsePMID(r.PMID)
	if err != nil {
		return nil, err
	}
	typ, err := ParseType(r.Type)
	if err != nil {
		return nil, err
	}
	indom := stream.InDomNull
	if r.InDom != nil {
		if indom, err = ParseInDom(*r.InDom); err != nil {
			return nil, err
		}
	}
	sem, err := ParseSem(r.Semantics)
	if err != nil {
		return nil, err
	}
	var u stream.Units
	if r.Units != nil {
		if u, err = ParseUnits(*r.Units); err != nil {
			return nil, err
		}
	}
	return &stream.Desc{T: t, PMID: pmid, Type: typ, InDom: indom, Sem: sem, Units: u, Names: r.Names}, nil
}

func (j *JSONReader) indomOf(r *jRec, t stream.Timestamp) (stream.Record, error) {
	if r.InDom == nil {
		return nil, fmt.Errorf("no indom")
	}
	id, err := ParseInDom(*r.InDom)
	if err != nil {
		return nil, err
	}
	d := &stream.InDom{T: t, InDom: id}
	switch r.Encoding {
	case "full":
		d.Encoding = stream.InDomFull
		if j.version == 2 {
			d.Encoding = stream.InDomV2
		}
		for _, in := range r.Instances {
			d.Insts = append(d.Insts, in.Inst)
			d.Names = append(d.Names, in.Name)
		}
	case "delta":
		d.Encoding = stream.InDomDelta
		type ent struct {
			inst int32
			name string
			del  bool
		}
		var es []ent
		for _, in := range r.Instances {
			es = append(es, ent{in.Inst, in.Name, false})
		}
		for _, in := range r.Deleted {
			es = append(es, ent{inst: in, del: true})
		}
		slices.SortStableFunc(es, func(a, b ent) int { return cmp.Compare(a.inst, b.inst) })
		for _, e := range es {
			d.Insts = append(d.Insts, e.inst)
			d.Names = append(d.Names, e.name)
			d.Deleted = append(d.Deleted, e.del)
		}
	default:
		return nil, fmt.Errorf("encoding %q", r.Encoding)
	}
	return d, nil
}

var labelTypes = map[string]uint32{"context": stream.LabelContext, "domain": stream.LabelDomain,
	"cluster": stream.LabelCluster, "pmid": stream.LabelItem, "item": stream.LabelItem,
	"indom": stream.LabelInDom, "instances": stream.LabelInstances}

func labelSetOf(r *jRec, t stream.Timestamp) (stream.Record, error) {
	typ, ok := labelTypes[r.Type]
	if !ok {
		return nil, fmt.Errorf("label type %q", r.Type)
	}
	ls := &stream.LabelSet{T: t, Type: typ, Ident: uint32(stream.PMIDNull)}
	if typ != stream.LabelContext {
		if r.Ident == nil {
			return nil, fmt.Errorf("no ident")
		}
		s := *r.Ident
		var err error
		switch typ {
		case stream.LabelDomain:
			var n uint64
			n, err = strconv.ParseUint(s, 10, 32)
			ls.Ident = uint32(n)
		case stream.LabelCluster:
			var p stream.PMID
			p, err = ParsePMID(s + ".0")
			ls.Ident = uint32(p)
		case stream.LabelItem:
			var p stream.PMID
			p, err = ParsePMID(s)
			ls.Ident = uint32(p)
		default:
			var d stream.InDomID
			d, err = ParseInDom(s)
			ls.Ident = uint32(d)
		}
		if err != nil {
			return nil, fmt.Errorf("ident %q: %v", s, err)
		}
	}
	for _, s := range r.Sets {
		inst := stream.InstNull
		if s.Inst != nil {
			inst = *s.Inst
		}
		text := string(s.Labels)
		if s.LabelsText != nil {
			text = *s.LabelsText
		}
		one, err := oneLabelSet(inst, text, uint8(typ))
		if err != nil {
			return nil, err
		}
		ls.Sets = append(ls.Sets, one)
	}
	return ls, nil
}

// oneLabelSet indexes a label set's JSON text as libpcp does: an entry per
// name, sorted by name.
func oneLabelSet(inst int32, text string, flags uint8) (stream.OneLabelSet, error) {
	one := stream.OneLabelSet{Inst: inst, JSON: text}
	if text == "{}" {
		one.JSON = ""
		return one, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return one, fmt.Errorf("labels %q: not a JSON object", text)
	}
	for dec.More() {
		keyEnd := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return one, fmt.Errorf("labels %q: %v", text, err)
		}
		name, _ := tok.(string)
		nameStart := strings.IndexByte(text[keyEnd:], '"') + keyEnd + 1
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return one, fmt.Errorf("labels %q: %v", text, err)
		}
		valEnd := int(dec.InputOffset())
		valStart := valEnd - len(raw)
		if len(name) > 255 || valStart > 0xffff || len(raw) > 0xffff {
			return one, fmt.Errorf("labels %q: too long", text)
		}
		f := flags
		one.Labels = append(one.Labels, stream.LabelEntry{Name: uint16(nameStart), NameLen: uint8(len(name)),
			Flags: f, Value: uint16(valStart), ValueLen: uint16(len(raw))})
	}
	slices.SortStableFunc(one.Labels, func(a, b stream.LabelEntry) int {
		return strings.Compare(text[a.Name:int(a.Name)+int(a.NameLen)], text[b.Name:int(b.Name)+int(b.NameLen)])
	})
	one.NLabels = int32(len(one.Labels))
	return one, nil
}

func textOf(r *jRec, t stream.Timestamp) (stream.Record, error) {
	tx := &stream.Text{T: t, Text: r.Text}
	switch {
	case r.PMID != "":
		p, err := ParsePMID(r.PMID)
		if err != nil {
			return nil, err
		}
		tx.Type, tx.Ident = stream.TextPMID, uint32(p)
	case r.InDom != nil:
		d, err := ParseInDom(*r.InDom)
		if err != nil {
			return nil, err
		}
		tx.Type, tx.Ident = stream.TextInDom, uint32(d)
	default:
		return nil, fmt.Errorf("neither pmid nor indom")
	}
	switch r.Class {
	case "oneline":
		tx.Type |= stream.TextOneline
	case "help":
		tx.Type |= stream.TextHelp
	default:
		return nil, fmt.Errorf("class %q", r.Class)
	}
	return tx, nil
}

func (j *JSONReader) resultOf(r *jRec, t stream.Timestamp) (stream.Record, error) {
	if len(r.Metrics) == 0 {
		return &stream.Mark{T: t}, nil
	}
	j.rb.Reset()
	var vals []stream.Val
	for _, m := range r.Metrics {
		pmid, err := ParsePMID(m.PMID)
		if err != nil {
			return nil, err
		}
		if m.Code != nil {
			j.rb.AddError(pmid, *m.Code)
			continue
		}
		if m.Type == "" {
			return nil, fmt.Errorf("metric %s has no type: no descriptor", m.PMID)
		}
		typ, err := ParseType(m.Type)
		if err != nil {
			return nil, err
		}
		vals = vals[:0]
		for _, v := range m.Values {
			val, err := jsonValue(typ, v.Value)
			if err != nil {
				return nil, fmt.Errorf("metric %s: %v", m.PMID, err)
			}
			val.Inst = stream.InstNull
			if v.Inst != nil {
				val.Inst = *v.Inst
			}
			vals = append(vals, val)
		}
		j.rb.Add(pmid, typ, vals...)
	}
	if err := j.rb.Build(t, &j.res); err != nil {
		return nil, err
	}
	return &j.res, nil
}

func jsonValue(typ stream.Type, raw json.RawMessage) (stream.Val, error) {
	var v stream.Val
	s := string(raw)
	bits := 64
	if typ == stream.Type32 || typ == stream.TypeU32 || typ == stream.TypeFloat {
		bits = 32
	}
	var err error
	switch typ {
	case stream.Type32, stream.Type64:
		v.I, err = strconv.ParseInt(s, 10, bits)
		return v, err
	case stream.TypeU32, stream.TypeU64:
		v.U, err = strconv.ParseUint(s, 10, bits)
		return v, err
	case stream.TypeFloat, stream.TypeDouble:
		switch s {
		case `"NaN"`:
			v.F = math.NaN()
		case `"Infinity"`:
			v.F = math.Inf(1)
		case `"-Infinity"`:
			v.F = math.Inf(-1)
		default:
			v.F, err = strconv.ParseFloat(s, bits)
		}
		return v, err
	case stream.TypeString:
		err = json.Unmarshal(raw, &v.S)
		return v, err
	case stream.TypeAggregate, stream.TypeAggStatic:
		var h struct {
			Hex *string `json:"hex"`
		}
		if err := json.Unmarshal(raw, &h); err != nil || h.Hex == nil {
			return v, fmt.Errorf("value %s: want {\"hex\": ...}", s)
		}
		b, err := hex.DecodeString(*h.Hex)
		v.B = b
		return v, err
	}
	return v, fmt.Errorf("values of type %s cannot be imported from JSON", typ)
}

// parseEpoch reads seconds since the epoch with up to nine decimals.
func parseEpoch(s string) (stream.Timestamp, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) > 9 || ip == "" {
		return stream.Timestamp{}, fmt.Errorf("%q: want seconds with at most nine decimals", s)
	}
	sec, err := strconv.ParseInt(ip, 10, 64)
	if err != nil {
		return stream.Timestamp{}, fmt.Errorf("%q: %v", s, err)
	}
	var ns int64
	if fp != "" {
		if ns, err = strconv.ParseInt(fp+strings.Repeat("0", 9-len(fp)), 10, 64); err != nil || fp[0] == '-' || fp[0] == '+' {
			return stream.Timestamp{}, fmt.Errorf("%q: bad fraction", s)
		}
	}
	if !neg {
		return stream.Timestamp{Sec: sec, Nsec: int32(ns)}, nil
	}
	if ns == 0 {
		return stream.Timestamp{Sec: -sec}, nil
	}
	return stream.Timestamp{Sec: -sec - 1, Nsec: int32(1e9 - ns)}, nil
}

// ParsePMID reads "domain.cluster.item".
func ParsePMID(s string) (stream.PMID, error) {
	f := strings.Split(s, ".")
	if len(f) != 3 {
		return 0, fmt.Errorf("PMID %q: want domain.cluster.item", s)
	}
	var n [3]uint64
	lim := [3]int{9, 12, 10}
	for i := range f {
		v, err := strconv.ParseUint(f[i], 10, lim[i])
		if err != nil {
			return 0, fmt.Errorf("PMID %q: %v", s, err)
		}
		n[i] = v
	}
	return stream.NewPMID(uint32(n[0]), uint32(n[1]), uint32(n[2])), nil
}

// ParseInDom reads "domain.serial".
func ParseInDom(s string) (stream.InDomID, error) {
	ds, ss, ok := strings.Cut(s, ".")
	d, err1 := strconv.ParseUint(ds, 10, 9)
	n, err2 := strconv.ParseUint(ss, 10, 22)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("instance domain %q: want domain.serial", s)
	}
	return stream.NewInDomID(uint32(d), uint32(n)), nil
}

var typeByName = map[string]stream.Type{"32": stream.Type32, "U32": stream.TypeU32, "64": stream.Type64,
	"U64": stream.TypeU64, "FLOAT": stream.TypeFloat, "DOUBLE": stream.TypeDouble, "STRING": stream.TypeString,
	"AGGREGATE": stream.TypeAggregate, "AGGREGATE_STATIC": stream.TypeAggStatic, "EVENT": stream.TypeEvent,
	"HIGHRES_EVENT": stream.TypeHighresEvent, "NO_SUPPORT": stream.TypeNoSupport, "NOSUPPORT": stream.TypeNoSupport,
	"UNKNOWN": stream.TypeUnknown}

// ParseType reads a type name as pmTypeStr writes it (U64, DOUBLE, ...),
// case-insensitively.
func ParseType(s string) (stream.Type, error) {
	if t, ok := typeByName[strings.ToUpper(s)]; ok {
		return t, nil
	}
	return 0, fmt.Errorf("unknown type %q", s)
}

// ParseSem reads counter, instant or discrete.
func ParseSem(s string) (stream.Sem, error) {
	switch strings.ToLower(s) {
	case "counter":
		return stream.SemCounter, nil
	case "instant":
		return stream.SemInstant, nil
	case "discrete":
		return stream.SemDiscrete, nil
	case "???":
		return 0, fmt.Errorf("semantics that PCP does not define cannot be imported from JSON (it does not say which)")
	}
	return 0, fmt.Errorf("unknown semantics %q", s)
}

var (
	unitsMu    sync.Mutex
	unitsCache = map[string]stream.Units{}
)

// ParseUnits reads units as pmUnitsStr writes them ("Kbyte / sec",
// "count x 10^3", "" for none), for dimensions -4..4: the units whose
// string it is (the smallest encoding when several print alike). "none",
// as pmdumplog -d and pmlogsummary print no units, is none too.
//
// It tries the units the words allow and keeps those that print as s:
// each scale of space and time has its own word (Kbyte, millisec), a
// count's scale follows "x 10", and each dimension is -4..4, not 0 when
// its word is there and 0 when not. Answers are remembered.
func ParseUnits(s string) (stream.Units, error) {
	unitsMu.Lock()
	u, ok := unitsCache[s]
	unitsMu.Unlock()
	if ok {
		return u, nil
	}
	if strings.TrimSpace(s) == "none" {
		return 0, nil
	}
	u, ok = findUnits(s)
	if !ok {
		return 0, fmt.Errorf("units %q not understood", s)
	}
	unitsMu.Lock()
	if len(unitsCache) < 4096 {
		unitsCache[s] = u
	}
	unitsMu.Unlock()
	return u, nil
}

var (
	spaceWords = []string{"byte", "Kbyte", "Mbyte", "Gbyte", "Tbyte", "Pbyte", "Ebyte", "Zbyte", "Ybyte"}
	timeWords  = []string{"nanosec", "microsec", "millisec", "sec", "min", "hour"}
)

func findUnits(s string) (stream.Units, bool) {
	words := map[string]bool{}
	var counts []int // count scales the text allows
	for _, w := range strings.Fields(s) {
		base, rest, _ := strings.Cut(w, "^")
		words[base] = true
		if base == "10" {
			counts = append(counts, 1)
			if n, err := strconv.Atoi(strings.SplitN(rest, "^", 2)[0]); err == nil {
				counts = append(counts, n)
			}
		}
	}
	scales := func(names []string) []int {
		var out []int
		for i, n := range names {
			if words[n] {
				out = append(out, i)
			}
		}
		return out
	}
	dims := func(present bool) []int {
		if !present {
			return []int{0}
		}
		return []int{-4, -3, -2, -1, 1, 2, 3, 4}
	}
	ss, st := scales(spaceWords), scales(timeWords)
	if !words["count"] {
		counts = nil
	}
	if len(counts) == 0 {
		counts = []int{0}
	}
	best, found := stream.Units(0), false
	for _, ds := range dims(len(ss) > 0) {
		for _, dt := range dims(len(st) > 0) {
			for _, dc := range dims(words["count"]) {
				for _, sp := range orZero(ss, ds) {
					for _, tm := range orZero(st, dt) {
						for _, sc := range counts {
							if dc == 0 && sc != 0 || sc < -8 || sc > 7 {
								continue
							}
							u := stream.NewUnits(ds, dt, dc, uint(sp), uint(tm), sc)
							if u.String() == s && (!found || u < best) {
								best, found = u, true
							}
						}
					}
				}
			}
		}
	}
	return best, found
}

// orZero is the scales to try for a dimension: none but 0 when it is 0.
func orZero(scales []int, dim int) []int {
	if dim == 0 || len(scales) == 0 {
		return []int{0}
	}
	return scales
}

// JSONFiles reads the JSON lines of the named files in turn, or of stdin
// when there are none (or the name is "-"). Close releases the files.
type JSONFiles struct {
	names []string
	stdin io.Reader
	open  func(string) (io.ReadCloser, error)
	cur   *JSONReader
	f     io.Closer
	err   error
}

// NewJSONFiles reads names (or stdin) with open.
func NewJSONFiles(names []string, stdin io.Reader, open func(string) (io.ReadCloser, error)) *JSONFiles {
	if len(names) == 0 {
		names = []string{"-"}
	}
	return &JSONFiles{names: names, stdin: stdin, open: open}
}

// Next implements stream.Iterator.
func (m *JSONFiles) Next() bool {
	for m.err == nil {
		if m.cur != nil && m.cur.Next() {
			return true
		}
		if m.cur != nil {
			if m.err = m.cur.Err(); m.err != nil {
				return false
			}
			m.Close()
		}
		if len(m.names) == 0 {
			return false
		}
		name := m.names[0]
		m.names = m.names[1:]
		if name == "-" {
			m.cur = NewJSONReader(m.stdin, "standard input")
			continue
		}
		f, err := m.open(name)
		if err != nil {
			m.err = err
			return false
		}
		m.f, m.cur = f, NewJSONReader(f, name)
	}
	return false
}

// At implements stream.Iterator.
func (m *JSONFiles) At() stream.Record { return m.cur.At() }

// Err implements stream.Iterator.
func (m *JSONFiles) Err() error { return m.err }

// Close closes the file being read.
func (m *JSONFiles) Close() error {
	m.cur = nil
	if m.f != nil {
		err := m.f.Close()
		m.f = nil
		return err
	}
	return nil
}
