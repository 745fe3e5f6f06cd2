// Package logimport writes PCP archives from data that knows nothing of
// PCP: the LOGIMPORT services of libpcp_import (pmiStart, pmiAddMetric,
// pmiAddInstance, pmiPutValue, pmiWrite, ...) in Go's idiom. The package
// is named for the C library's LOGIMPORT(3) (import is a Go keyword).
//
// An Importer is made by Create (an archive, written through format's
// writer: temporary files renamed into place at End, v2 or v3, zstd) or by
// New (any record sink, such as the record stream on a pipe). Metrics and
// instances are declared, values put by name or through a Handle, and
// Write makes a record of them at a timestamp. The archive it writes has
// the same records in the same order as libpcp_import 6.0.3 writes for the
// same calls: metadata when first needed, instance domains again when an
// instance was added, help text and labels after the result they follow,
// and a temporal index entry where libpcp_import puts one.
//
// Differences from libpcp_import, on purpose: the default archive version
// is 3 (pcp.conf's PCP_ARCHIVE_VERSION decides in PCP; Debian's says 2),
// the default timezone is "UTC" (PCP takes the importing process's own),
// errors are Go errors wrapping the sentinels in errors.go, and a PMID of
// 0 as well as stream.PMIDNull asks for an automatic one (PCP takes 0 as
// 0.0.0).
package logimport

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Domain is the PMDA domain of the PMIDs and instance domains that
// libpcp_import assigns (PMI_DOMAIN).
const Domain = 245

// Options configure an archive.
type Options struct {
	Version  int    // 2 or 3; 0 means 3
	Hostname string // "" means this machine's name, as PCP
	Timezone string // "" means "UTC"
	Zoneinfo string // v3 only; libpcp_import 6.0.3 leaves it empty
	// Zstd, Overwrite and NoSync are format.WriterOptions'.
	Zstd, Overwrite, NoSync bool
}

// Metric is a metric's definition, pmiAddMetric's arguments.
type Metric struct {
	Name  string
	PMID  stream.PMID // 0 or stream.PMIDNull: one assigned in domain 245
	Type  stream.Type
	InDom stream.InDomID // stream.InDomNull for a singular metric
	Sem   stream.Sem
	Units stream.Units
}

// Sink receives the records of an archive. *format.Writer is one.
type Sink interface {
	Write(stream.Record) error
}

type metric struct {
	desc     stream.Desc
	metaDone bool
}

type indom struct {
	id       stream.InDomID
	insts    []int32
	names    []string
	metaDone bool
}

type text struct {
	typ, id  uint32
	content  string
	metaDone bool
}

type labelSet struct {
	typ, id uint32
	inst    int32
	labels  []labelKV
}

type labelKV struct {
	name, value string // value is JSON text
	flags       uint8
}

// pendSet is the value set of one metric in the record being built.
type pendSet struct {
	m    int
	vals []pendVal
	err  int32
}

// pendVal is a value put for the next record: a number as its 64 bits
// (see valBits), a string as itself. Smaller than a stream.Val, as a
// sheet's hundred values a row are copied in and out.
type pendVal struct {
	inst int32
	bits uint64
	s    string
}

// valBits is the 64 bits that stand for v's number in a metric of type
// typ: an integer's, or a float's (math.Float64bits).
func valBits(typ stream.Type, v stream.Val) uint64 {
	switch typ {
	case stream.Type32, stream.Type64:
		return uint64(v.I)
	case stream.TypeU32, stream.TypeU64:
		return v.U
	case stream.TypeFloat, stream.TypeDouble:
		return math.Float64bits(v.F)
	}
	return 0
}

// val is the stream.Val of a pending value of a metric of type typ.
func (p pendVal) val(typ stream.Type) stream.Val {
	v := stream.Val{Inst: p.inst}
	switch typ {
	case stream.Type32, stream.Type64:
		v.I = int64(p.bits)
	case stream.TypeU32, stream.TypeU64:
		v.U = p.bits
	case stream.TypeFloat, stream.TypeDouble:
		v.F = math.Float64frombits(p.bits)
	default:
		v.S = p.s
	}
	return v
}

// Importer builds one archive. Its methods are not safe for concurrent use.
type Importer struct {
	opts    Options
	sink    Sink
	fw      *format.Writer // nil when writing to a plain sink
	base    string
	metrics []metric
	byName  map[string]int
	byPMID  map[stream.PMID]int
	indoms  []*indom
	texts   []text
	labels  []labelSet

	pend    []pendSet
	pendIdx []int32 // metric index -> index in pend + 1; 0: none

	started  bool
	ended    bool
	last     stream.Timestamp // last_stamp
	stamp    stream.Timestamp // the time of the last write of any kind
	flush    int64            // data offset past which an index entry is due
	builder  stream.ResultBuilder
	tmpl     resultTemplate
	result   stream.Result
	autoPMID int
}

// Create starts an archive at base (base.meta, base.0, base.index are
// written under temporary names and renamed into place by End).
func Create(base string, opts Options) (*Importer, error) {
	im, err := newImporter(nil, opts)
	if err != nil {
		return nil, err
	}
	w, err := format.Create(base, format.WriterOptions{Version: im.opts.Version, Zstd: opts.Zstd,
		Overwrite: opts.Overwrite, NoSync: opts.NoSync, ManualIndex: true})
	if err != nil {
		return nil, err
	}
	im.fw, im.sink, im.base = w, w, base
	return im, nil
}

// New starts an archive whose records go to sink (a record stream, for
// instance); no temporal index is made. End calls sink's Close() error
// and Abort its Abort(error), when it has them.
func New(sink Sink, opts Options) (*Importer, error) {
	im, err := newImporter(sink, opts)
	if err != nil {
		return nil, err
	}
	return im, nil
}

func newImporter(sink Sink, opts Options) (*Importer, error) {
	if opts.Version == 0 {
		opts.Version = 3
	}
	if opts.Version != 2 && opts.Version != 3 {
		return nil, fmt.Errorf("version %d: %w", opts.Version, ErrBadVersion)
	}
	if opts.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		opts.Hostname = h
	}
	if opts.Timezone == "" {
		opts.Timezone = "UTC"
	}
	im := &Importer{opts: opts, sink: sink, byName: map[string]int{}, byPMID: map[stream.PMID]int{},
		flush: 100000}
	im.builder.Version = uint8(opts.Version) // results built in the archive's layout
	return im, nil
}

// ValidName reports whether name follows the rules of the PMNS that
// libpcp_import enforces.
func ValidName(name string) bool {
	alpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	if name == "" || !alpha(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		c, prev := name[i], name[i-1]
		if !alpha(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' {
			return false
		}
		if prev == '.' && !alpha(c) {
			return false
		}
	}
	return name[len(name)-1] != '.'
}

// AddMetric defines a metric and returns its PMID (assigned, when m.PMID is
// 0 or stream.PMIDNull, as PCP does: 245.(n>>10).(n%1024) for the n-th
// metric defined).
func (im *Importer) AddMetric(m Metric) (stream.PMID, error) {
	if im.ended {
		return 0, ErrEnded
	}
	if !ValidName(m.Name) {
		return 0, fmt.Errorf("metric %q: %w", m.Name, ErrBadMetricName)
	}
	if _, ok := im.byName[m.Name]; ok {
		return 0, fmt.Errorf("metric %q: %w", m.Name, ErrDupMetricName)
	}
	if m.PMID == 0 {
		m.PMID = stream.PMIDNull
	}
	if _, ok := im.byPMID[m.PMID]; ok && m.PMID != stream.PMIDNull {
		return 0, fmt.Errorf("metric %q: PMID %s: %w", m.Name, m.PMID, ErrDupMetricID)
	}
	switch m.Type {
	case stream.Type32, stream.TypeU32, stream.Type64, stream.TypeU64, stream.TypeFloat, stream.TypeDouble, stream.TypeString:
	default:
		return 0, fmt.Errorf("metric %q: type %s: %w", m.Name, m.Type, ErrBadType)
	}
	switch m.Sem {
	case stream.SemCounter, stream.SemInstant, stream.SemDiscrete:
	default:
		return 0, fmt.Errorf("metric %q: %s: %w", m.Name, m.Sem, ErrBadSem)
	}
	if m.PMID == stream.PMIDNull {
		n := len(im.metrics) + 1
		if n >= 1<<22 {
			return 0, fmt.Errorf("metric %q: no PMID left to assign: %w", m.Name, ErrDupMetricID)
		}
		m.PMID = stream.NewPMID(Domain, uint32(n>>10), uint32(n%1024))
		if _, ok := im.byPMID[m.PMID]; ok {
			// PCP would write two metrics with one PMID here; refuse.
			return 0, fmt.Errorf("metric %q: assigned PMID %s: %w", m.Name, m.PMID, ErrDupMetricID)
		}
	}
	im.byName[m.Name] = len(im.metrics)
	im.byPMID[m.PMID] = len(im.metrics)
	im.metrics = append(im.metrics, metric{desc: stream.Desc{PMID: m.PMID, Type: m.Type, InDom: m.InDom,
		Sem: m.Sem, Units: m.Units, Names: []string{m.Name}}})
	return m.PMID, nil
}

func (im *Importer) findInDom(id stream.InDomID) *indom {
	for _, d := range im.indoms {
		if d.id == id {
			return d
		}
	}
	return nil
}

// sameInstName applies PCP's rule: names are the same up to the first
// space (the space included), or wholly when there is none.
func sameInstName(a, b string) bool {
	if i := strings.IndexByte(a, ' '); i >= 0 {
		return len(b) > i && a[:i+1] == b[:i+1]
	}
	return a == b
}

// AddInstance adds an instance to an instance domain; the domain is
// written again before the next record of a metric that uses it.
func (im *Importer) AddInstance(id stream.InDomID, name string, inst int32) error {
	if im.ended {
		return ErrEnded
	}
	d := im.findInDom(id)
	if d == nil {
		d = &indom{id: id}
		im.indoms = append(im.indoms, d)
	}
	for j, n := range d.names {
		if sameInstName(name, n) {
			return fmt.Errorf("instance domain %s: instance %q: %w", id, name, ErrDupInstName)
		}
		if d.insts[j] == inst {
			return fmt.Errorf("instance domain %s: instance %d: %w", id, inst, ErrDupInstID)
		}
	}
	d.metaDone = false
	d.insts = append(d.insts, inst)
	d.names = append(d.names, name)
	return nil
}

// Handle names a metric and instance, for putting values without looking
// names up.
type Handle struct {
	m    int32 // index+1; 0 is no handle
	inst int32
}

// Handle returns the handle of a metric's instance ("" for a singular
// metric).
func (im *Importer) Handle(name, inst string) (Handle, error) {
	m, ok := im.byName[name]
	if !ok {
		return Handle{}, fmt.Errorf("metric %q: %w", name, ErrUnknownMetric)
	}
	desc := &im.metrics[m].desc
	if desc.InDom == stream.InDomNull {
		if inst != "" {
			return Handle{}, fmt.Errorf("metric %q instance %q: %w", name, inst, ErrInstNotNull)
		}
		return Handle{m: int32(m) + 1, inst: stream.InstNull}, nil
	}
	if inst == "" {
		return Handle{}, fmt.Errorf("metric %q: %w", name, ErrInstNull)
	}
	d := im.findInDom(desc.InDom)
	if d == nil {
		return Handle{}, fmt.Errorf("metric %q: instance domain %s: %w", name, desc.InDom, ErrUnknownInDom)
	}
	for j, n := range d.names {
		if sameInstName(inst, n) {
			return Handle{m: int32(m) + 1, inst: d.insts[j]}, nil
		}
	}
	return Handle{}, fmt.Errorf("metric %q instance %q: %w", name, inst, ErrUnknownInst)
}

// PutValue puts a value, given as text, for a metric's instance ("" for a
// singular metric) into the record being built, parsed for the metric's
// type as libpcp_import parses it.
func (im *Importer) PutValue(name, inst, value string) error {
	h, err := im.Handle(name, inst)
	if err != nil {
		return err
	}
	return im.PutHandle(h, value)
}

// PutHandle is PutValue through a handle.
func (im *Importer) PutHandle(h Handle, value string) error {
	m, err := im.checkHandle(h)
	if err != nil {
		return err
	}
	v, perr := parseValue(m.desc.Type, value)
	return im.put(h, pendVal{inst: h.inst, bits: valBits(m.desc.Type, v), s: v.S}, perr, value)
}

func (im *Importer) checkHandle(h Handle) (*metric, error) {
	if im.ended {
		return nil, ErrEnded
	}
	if h.m <= 0 || int(h.m) > len(im.metrics) {
		return nil, ErrBadHandle
	}
	return &im.metrics[h.m-1], nil
}

// PutInt, PutUint, PutFloat and PutString put a typed value through a
// handle, with no parsing: the value is converted to the metric's type as
// a Go conversion does.
func (im *Importer) PutInt(h Handle, v int64) error {
	return im.putTyped(h, stream.Val{I: v, U: uint64(v), F: float64(v)})
}

// PutUint: see PutInt.
func (im *Importer) PutUint(h Handle, v uint64) error {
	return im.putTyped(h, stream.Val{I: int64(v), U: v, F: float64(v)})
}

// PutFloat: see PutInt.
func (im *Importer) PutFloat(h Handle, v float64) error {
	return im.putTyped(h, stream.Val{I: int64(v), U: uint64(v), F: v})
}

// PutString: see PutInt; for a numeric metric the text is parsed.
func (im *Importer) PutString(h Handle, v string) error {
	return im.PutHandle(h, v)
}

func (im *Importer) putTyped(h Handle, v stream.Val) error {
	m, err := im.checkHandle(h)
	if err != nil {
		return err
	}
	if m.desc.Type == stream.TypeString {
		return im.PutHandle(h, fmt.Sprint(v.F))
	}
	return im.put(h, pendVal{inst: h.inst, bits: valBits(m.desc.Type, v)}, nil, "")
}

func (im *Importer) put(h Handle, v pendVal, perr error, text string) error {
	mi := int(h.m - 1)
	m := &im.metrics[mi]
	for len(im.pendIdx) <= mi {
		im.pendIdx = append(im.pendIdx, 0)
	}
	if pi := int(im.pendIdx[mi]) - 1; pi >= 0 {
		p := &im.pend[pi]
		if m.desc.InDom == stream.InDomNull {
			return fmt.Errorf("metric %s: %w", m.desc.Names[0], ErrDupValue)
		}
		if p.err != 0 {
			return fmt.Errorf("metric %s: an earlier value did not parse: %w", m.desc.Names[0], ErrConv)
		}
		for _, o := range p.vals {
			if o.inst == v.inst {
				return fmt.Errorf("metric %s instance %d: %w", m.desc.Names[0], v.inst, ErrDupValue)
			}
		}
		if perr != nil {
			return fmt.Errorf("metric %s: value %q: %w", m.desc.Names[0], text, ErrConv)
		}
		p.vals = append(p.vals, v)
		return nil
	}
	n := len(im.pend)
	if n < cap(im.pend) {
		im.pend = im.pend[:n+1]
		im.pend[n] = pendSet{m: mi, vals: im.pend[n].vals[:0]} // reuse the storage
	} else {
		im.pend = append(im.pend, pendSet{m: mi})
	}
	ps := &im.pend[n]
	if perr != nil {
		// As libpcp_import: the value set is kept, with PM_ERR_CONV.
		ps.err = pmErrConv
	} else {
		ps.vals = append(ps.vals, v)
	}
	im.pendIdx[mi] = int32(n) + 1
	if perr != nil {
		return fmt.Errorf("metric %s: value %q: %w", m.desc.Names[0], text, ErrConv)
	}
	return nil
}
