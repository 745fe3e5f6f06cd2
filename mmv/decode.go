package mmv

import (
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Error is damage found in an MMV file: the file, the byte offset of the
// field at fault, and what is wrong with it.
type Error struct {
	File   string
	Offset uint64
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Msg) }

// ErrInFlux is wrapped by the error Read returns when a file's generation
// numbers never settled: the file was being written the whole time.
var ErrInFlux = fmt.Errorf("file is being written (generation numbers differ or are zero)")

// File is one decoded MMV file.
type File struct {
	Version    int
	Generation uint64
	Flags      uint32
	Process    int32
	Cluster    uint32
	Indoms     []Indom
	Metrics    []Metric
	Values     []Value
	Labels     []Label

	lastIndom int    // indomOf's cache
	valOff    uint64 // where the value section starts (Refresh)
}

// Indom is an instance domain and its instances.
type Indom struct {
	Serial      uint32
	Instances   []Instance
	Short, Help string
}

// Instance is one instance of an instance domain.
type Instance struct {
	Indom    uint32 // serial of its instance domain
	Internal int32
	External string
}

// Metric is one metric's description.
type Metric struct {
	Name        string
	Item        uint32
	Type        uint32
	Semantics   uint32
	Units       stream.Units
	Indom       uint32 // 0: no instance domain
	Short, Help string
	// HasShort and HasHelp say the texts are present, perhaps empty
	// (pmdammv serves an empty text; it has none for a zero offset).
	HasShort, HasHelp bool
}

// Value is one value slot: the metric and instance it belongs to, and its
// contents as stored.
type Value struct {
	Metric   int // index in File.Metrics
	Instance int // index in the metric's Indom's Instances, or -1
	Bits     uint64
	Extra    int64
	String   string // TypeString: the string slot's text
}

// Label is one v3 label: a JSON object with one name.
type Label struct {
	Flags    uint32 // PM_LABEL_* type and PM_LABEL_OPTIONAL
	Identity uint32 // cluster, indom serial or item
	Internal int32  // instance, or -1
	JSON     string
}

// Float returns the value as a number, at now for elapsed timers.
func (v Value) Float(typ uint32, now time.Time) float64 {
	switch typ {
	case TypeI32:
		return float64(int32(v.Bits))
	case TypeU32:
		return float64(uint32(v.Bits))
	case TypeI64:
		return float64(int64(v.Bits))
	case TypeU64:
		return float64(v.Bits)
	case TypeFloat:
		return float64(math.Float32frombits(uint32(v.Bits)))
	case TypeDouble:
		return math.Float64frombits(v.Bits)
	case TypeElapsed:
		return float64(elapsed(int64(v.Bits), v.Extra, now))
	}
	return 0
}

// Read reads and decodes the MMV file, as pmdammv does: while the file's
// two generation numbers differ or are zero it is being written, and is
// read again after wait, at most tries times in all.
func Read(name string, tries int, wait time.Duration) (*File, error) {
	for i := 0; ; i++ {
		data, err := ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := Decode(name, data)
		if err == nil || !isInFlux(err) || i+1 >= tries {
			return f, err
		}
		time.Sleep(wait)
	}
}

type fluxError struct{ e *Error }

func (e fluxError) Error() string { return e.e.Error() }
func (e fluxError) Unwrap() error { return ErrInFlux }

func isInFlux(err error) bool { _, ok := err.(fluxError); return ok }

type decoder struct {
	name string
	b    buf
	f    *File
	// where section entries start, for checking the offsets that refer
	// to them
	metricOff, instOff uint64
	instOwner          [][2]int // per instance entry: indom index, index within it
	indomAt            map[uint64]int
	sections           [][2]uint64
}

func (d *decoder) errf(off uint64, format string, a ...any) error {
	return &Error{File: d.name, Offset: off, Msg: fmt.Sprintf(format, a...)}
}

// Decode decodes the bytes of the MMV file named name. It trusts no
// offset or count: any that points outside the file, or at the wrong kind
// of entry, is an *Error.
func Decode(name string, data []byte) (*File, error) {
	d := &decoder{name: name, b: buf(data), f: &File{},
		indomAt: map[uint64]int{}}
	if err := d.header(); err != nil {
		return nil, err
	}
	return d.f, nil
}

func (d *decoder) header() error {
	b, f := d.b, d.f
	if len(b) < headerSize {
		return d.errf(0, "%d bytes: too small for an MMV header (%d bytes)", len(b), headerSize)
	}
	if string(b[:4]) != "MMV\x00" {
		return d.errf(0, "bad magic %q, want \"MMV\\x00\"", b[:4])
	}
	v := b.i32(4)
	if v < 1 || v > 3 {
		return d.errf(4, "version %d not supported (1, 2 or 3)", v)
	}
	f.Version = int(v)
	g1, g2 := b.u64(8), b.u64(16)
	if g1 != g2 || g1 == 0 {
		return fluxError{e: &Error{File: d.name, Offset: 8, Msg: fmt.Sprintf("generation numbers %d/%d: %v", g1, g2, ErrInFlux)}}
	}
	f.Generation = g1
	tocs := b.i32(24)
	f.Flags, f.Process = b.u32(28), b.i32(32)
	cl := b.i32(36)
	if cl < 0 || cl > 1<<12-1 {
		return d.errf(36, "cluster %d is not a valid cluster ID (0..4095)", cl)
	}
	f.Cluster = uint32(cl)
	if tocs < 1 {
		return d.errf(24, "invalid table of contents count %d", tocs)
	}
	if !b.has(headerSize, uint64(tocs)*tocSize) {
		return d.errf(24, "%d TOC entries do not fit in the file's %d bytes", tocs, len(b))
	}
	d.sections = append(d.sections, [2]uint64{0, headerSize + uint64(tocs)*tocSize})
	// Sections are decoded in dependency order: indoms, instances,
	// metrics, strings-free values, labels.
	type sect struct {
		at, off uint64
		count   int32
	}
	byType := map[uint32]sect{}
	for i := uint64(0); i < uint64(tocs); i++ {
		at := headerSize + i*tocSize
		typ, count, off := b.u32(at), b.i32(at+4), b.u64(at+8)
		if typ < TOCIndoms || typ > TOCLabels || (typ == TOCLabels && f.Version < 3) {
			return d.errf(at, "TOC[%d]: unknown section type %d", i, typ)
		}
		if _, dup := byType[typ]; dup {
			return d.errf(at, "TOC[%d]: a second section of type %d", i, typ)
		}
		if count < 0 {
			return d.errf(at+4, "TOC[%d]: negative entry count %d", i, count)
		}
		byType[typ] = sect{at, off, count}
	}
	steps := []struct {
		typ  uint32
		size uint64
		fn   func(off uint64, n int) error
	}{
		{TOCIndoms, indomSize, d.indoms},
		{TOCInstances, d.instSize(), d.instances},
		{TOCMetrics, d.metricSize(), d.metrics},
		{TOCStrings, stringSize, func(uint64, int) error { return nil }},
		{TOCValues, valueSize, d.values},
		{TOCLabels, labelSize, d.labels},
	}
	for _, s := range steps {
		t, ok := byType[s.typ]
		if !ok || t.count == 0 {
			continue
		}
		n := uint64(t.count) * s.size
		if !b.has(t.off, n) {
			return d.errf(t.at+8, "section of %d entries at offset %d runs past the end of the file (%d bytes)", t.count, t.off, len(b))
		}
		for _, o := range d.sections {
			if t.off < o[1] && o[0] < t.off+n {
				return d.errf(t.at+8, "section at offset %d (%d bytes) overlaps the header, the TOC or another section", t.off, n)
			}
		}
		d.sections = append(d.sections, [2]uint64{t.off, t.off + n})
		if err := s.fn(t.off, int(t.count)); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) instSize() uint64 {
	if d.f.Version == 1 {
		return instance1Size
	}
	return instance2Size
}

func (d *decoder) metricSize() uint64 {
	if d.f.Version == 1 {
		return metric1Size
	}
	return metric2Size
}

// str returns the string slot whose offset is stored at ref (0: none).
func (d *decoder) str(ref uint64, what string) (string, error) {
	s := d.b.u64(ref)
	if s == 0 {
		return "", nil
	}
	if !d.b.has(s, stringSize) {
		return "", d.errf(ref, "%s: string offset %d past the end of the file", what, s)
	}
	return d.b.cstr(s, stringSize-1), nil
}

func (d *decoder) texts(ref uint64, what string) (short, help string, err error) {
	if short, err = d.str(ref, what+" short text"); err != nil {
		return
	}
	help, err = d.str(ref+8, what+" help text")
	return
}

func (d *decoder) indoms(off uint64, n int) error {
	for i := range n {
		at := off + uint64(i)*indomSize
		in := Indom{Serial: d.b.u32(at)}
		var err error
		if in.Short, in.Help, err = d.texts(at+16, fmt.Sprintf("indom %d", in.Serial)); err != nil {
			return err
		}
		d.indomAt[at] = len(d.f.Indoms)
		d.f.Indoms = append(d.f.Indoms, in)
	}
	return nil
}

func (d *decoder) instances(off uint64, n int) error {
	size := d.instSize()
	d.instOff = off
	d.instOwner = make([][2]int, 0, n)
	for i := range n {
		at := off + uint64(i)*size
		ref := d.b.u64(at)
		x, ok := d.indomAt[ref]
		if !ok {
			return d.errf(at, "instance %d: indom offset %d is not an instance domain", i, ref)
		}
		in := Instance{Indom: d.f.Indoms[x].Serial, Internal: d.b.i32(at + 12)}
		if d.f.Version == 1 {
			in.External = d.b.cstr(at+16, nameMax-1)
		} else {
			s, err := d.str(at+16, fmt.Sprintf("instance %d name", i))
			if err != nil {
				return err
			}
			if d.b.u64(at+16) == 0 {
				return d.errf(at+16, "instance %d: no name", i)
			}
			in.External = s
		}
		ind := &d.f.Indoms[x]
		d.instOwner = append(d.instOwner, [2]int{x, len(ind.Instances)})
		ind.Instances = append(ind.Instances, in)
	}
	return nil
}

func (d *decoder) metrics(off uint64, n int) error {
	size, item := metricLayout(int32(d.f.Version))
	d.metricOff = off
	d.f.Metrics = make([]Metric, 0, n)
	for i := range n {
		at := off + uint64(i)*size
		var m Metric
		if d.f.Version == 1 {
			m.Name = d.b.cstr(at, nameMax-1)
		} else {
			s, err := d.str(at, fmt.Sprintf("metric %d name", i))
			if err != nil {
				return err
			}
			m.Name = s
		}
		if m.Name == "" {
			return d.errf(at, "metric %d: empty name", i)
		}
		f := at + item
		m.Item, m.Type, m.Semantics = d.b.u32(f), d.b.u32(f+4), d.b.u32(f+8)
		m.Units = stream.Units(d.b.u32(f + 12))
		if ind := d.b.i32(f + 16); ind != inNull {
			m.Indom = uint32(ind)
		}
		if typeName(m.Type) == "?" {
			return d.errf(f+4, "metric %s: unknown type %d", m.Name, m.Type)
		}
		var err error
		if m.Short, m.Help, err = d.texts(f+24, "metric "+m.Name); err != nil {
			return err
		}
		m.HasShort, m.HasHelp = d.b.u64(f+24) != 0, d.b.u64(f+32) != 0
		d.f.Metrics = append(d.f.Metrics, m)
	}
	return nil
}

// entry returns the index of the entry of size bytes at ref in a section
// of n entries starting at off.
func entry(ref, off, size uint64, n int) (int, bool) {
	if ref < off || (ref-off)%size != 0 || (ref-off)/size >= uint64(n) {
		return 0, false
	}
	return int((ref - off) / size), true
}

func (d *decoder) values(off uint64, n int) error {
	d.f.valOff = off
	d.f.Values = make([]Value, 0, n)
	msize := d.metricSize()
	for i := range n {
		at := off + uint64(i)*valueSize
		ref := d.b.u64(at + 16)
		mi, ok := entry(ref, d.metricOff, msize, len(d.f.Metrics))
		if !ok {
			return d.errf(at+16, "value %d: metric offset %d is not a metric", i, ref)
		}
		m := d.f.Metrics[mi]
		v := Value{Metric: mi, Instance: -1, Bits: d.b.u64(at), Extra: d.b.i64(at + 8)}
		if m.Indom != 0 {
			iref := d.b.u64(at + 24)
			k, ok := entry(iref, d.instOff, d.instSize(), len(d.instOwner))
			ii := [2]int{}
			if ok {
				ii = d.instOwner[k]
			}
			if !ok {
				return d.errf(at+24, "value %d of %s: instance offset %d is not an instance", i, m.Name, iref)
			}
			if d.f.Indoms[ii[0]].Serial != m.Indom {
				return d.errf(at+24, "value %d of %s: instance of indom %d, metric's indom is %d", i, m.Name, d.f.Indoms[ii[0]].Serial, m.Indom)
			}
			v.Instance = ii[1]
		}
		if m.Type == TypeString {
			s := uint64(v.Extra)
			if v.Extra <= 0 || !d.b.has(s, stringSize) {
				return d.errf(at+8, "value %d of %s: string offset %d past the end of the file", i, m.Name, v.Extra)
			}
			v.String = d.b.cstr(s, stringSize-1)
		}
		d.f.Values = append(d.f.Values, v)
	}
	return nil
}

func (d *decoder) labels(off uint64, n int) error {
	for i := range n {
		at := off + uint64(i)*labelSize
		d.f.Labels = append(d.f.Labels, Label{Flags: d.b.u32(at), Identity: d.b.u32(at + 4),
			Internal: d.b.i32(at + 8), JSON: d.b.cstr(at+12, labelMax-1)})
	}
	return nil
}

// ProcessAlive reports whether the process that wrote a file with
// FlagProcess still lives (the file's values are exported only then).
func (f *File) ProcessAlive() bool {
	if f.Flags&FlagProcess == 0 {
		return true
	}
	if f.Process <= 0 {
		return false
	}
	err := syscall.Kill(int(f.Process), 0)
	return err == nil || err == syscall.EPERM
}
