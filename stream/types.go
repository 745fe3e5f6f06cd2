// Package stream models a PCP archive as an ordered sequence of typed
// records, and provides the pull iterator, the k-way merge by timestamp and
// the filters that the tools compose.
//
//	files ──format.Reader──▶ stream.Iterator ──filters/Merge──▶ format.Writer ──▶ files
//	                              │                                    ▲
//	                              └────────── pipe (stdin/stdout) ─────┘
//
// A record is one of Label, Desc, InDom, LabelSet, Text, Result or Mark. All
// carry a timestamp: the time at which they take effect. Metadata that has no
// timestamp on disk (descriptors and help text) takes the time of the record
// before it, so that a stream is always non-decreasing in time and a
// descriptor always precedes the first result that needs it.
//
// Results stay in PCP's own encoding (the body of a data-volume record) until
// something asks for a value; a filter that only looks at timestamps or
// passes records along never decodes them, and the writer copies their bytes.
//
// Designs rejected:
//   - One Go struct per value set, decoded eagerly: simple, but allocates per
//     value and makes a copy 10x slower than cp on large archives.
//   - Channels between stages (as Miller once did): a pull iterator needs no
//     goroutines, has no buffering to tune and keeps errors in one place.
//   - Resolving delta instance domains in the reader: the on-disk form is kept
//     so that a copy is byte-identical; InDomTracker resolves when asked.
package stream

import (
	"fmt"
	"strconv"
	"time"
)

// Timestamp is a point in time with nanosecond resolution, as v3 archives
// store it (v2 archives store microseconds).
type Timestamp struct {
	Sec  int64
	Nsec int32
}

// Compare returns -1, 0 or +1.
func (t Timestamp) Compare(u Timestamp) int {
	switch {
	case t.Sec < u.Sec:
		return -1
	case t.Sec > u.Sec:
		return 1
	case t.Nsec < u.Nsec:
		return -1
	case t.Nsec > u.Nsec:
		return 1
	}
	return 0
}

// Before reports whether t is strictly before u.
func (t Timestamp) Before(u Timestamp) bool { return t.Compare(u) < 0 }

// After reports whether t is strictly after u.
func (t Timestamp) After(u Timestamp) bool { return t.Compare(u) > 0 }

// Add returns t+d.
func (t Timestamp) Add(d time.Duration) Timestamp {
	ns := int64(t.Nsec) + int64(d%time.Second)
	s := t.Sec + int64(d/time.Second)
	for ns < 0 {
		ns += 1e9
		s--
	}
	for ns >= 1e9 {
		ns -= 1e9
		s++
	}
	return Timestamp{Sec: s, Nsec: int32(ns)}
}

// Sub returns t-u.
func (t Timestamp) Sub(u Timestamp) time.Duration {
	// In int64: nanoseconds decoded from a damaged file may be far outside
	// 0..999999999, and their difference would overflow int32.
	return time.Duration(t.Sec-u.Sec)*time.Second + time.Duration(int64(t.Nsec)-int64(u.Nsec))
}

// Time converts to a time.Time in UTC.
func (t Timestamp) Time() time.Time { return time.Unix(t.Sec, int64(t.Nsec)).UTC() }

// Float returns seconds since the epoch as a float64.
func (t Timestamp) Float() float64 { return float64(t.Sec) + float64(t.Nsec)/1e9 }

// FromTime converts a time.Time.
func FromTime(tm time.Time) Timestamp {
	return Timestamp{Sec: tm.Unix(), Nsec: int32(tm.Nanosecond())}
}

// FitsV2 reports whether t can be stored in a v2 archive (32-bit seconds,
// microseconds) without loss.
func (t Timestamp) FitsV2() bool {
	return t.Sec >= -1<<31 && t.Sec < 1<<31 && t.Nsec%1000 == 0
}

// String formats t as seconds since the epoch with nine decimals. Before
// the epoch the seconds are rounded down and the nanoseconds count up from
// them ({-1, 750000000} is -0.25 s), so the sign goes in front of both.
func (t Timestamp) String() string {
	if t.Sec < 0 && t.Nsec > 0 && t.Nsec < 1e9 {
		return "-" + strconv.FormatUint(uint64(-(t.Sec+1)), 10) + "." + fmt.Sprintf("%09d", 1e9-t.Nsec)
	}
	return strconv.FormatInt(t.Sec, 10) + "." + fmt.Sprintf("%09d", t.Nsec)
}

// PMID identifies a metric: domain (9 bits), cluster (12 bits), item (10 bits).
type PMID uint32

// PMIDNull is PM_ID_NULL.
const PMIDNull PMID = 0xffffffff

// NewPMID builds a PMID from its fields.
func NewPMID(domain, cluster, item uint32) PMID {
	return PMID((domain&0x1ff)<<22 | (cluster&0xfff)<<10 | item&0x3ff)
}

// Domain returns the PMDA domain of p.
func (p PMID) Domain() uint32 { return uint32(p) >> 22 & 0x1ff }

// Cluster returns the cluster of p.
func (p PMID) Cluster() uint32 { return uint32(p) >> 10 & 0xfff }

// Item returns the item of p.
func (p PMID) Item() uint32 { return uint32(p) & 0x3ff }

// String formats p as PCP does: "d.c.i", or "PM_ID_NULL".
func (p PMID) String() string {
	if p == PMIDNull {
		return "PM_ID_NULL"
	}
	return fmt.Sprintf("%d.%d.%d", p.Domain(), p.Cluster(), p.Item())
}

// InDomID identifies an instance domain: domain (9 bits), serial (22 bits).
type InDomID uint32

// InDomNull is PM_INDOM_NULL.
const InDomNull InDomID = 0xffffffff

// NewInDomID builds an instance domain identifier.
func NewInDomID(domain, serial uint32) InDomID {
	return InDomID((domain&0x1ff)<<22 | serial&0x3fffff)
}

// Domain returns the PMDA domain of d.
func (d InDomID) Domain() uint32 { return uint32(d) >> 22 & 0x1ff }

// Serial returns the serial number of d.
func (d InDomID) Serial() uint32 { return uint32(d) & 0x3fffff }

// String formats d as "d.s" or "PM_INDOM_NULL".
func (d InDomID) String() string {
	if d == InDomNull {
		return "PM_INDOM_NULL"
	}
	return fmt.Sprintf("%d.%d", d.Domain(), d.Serial())
}

// InstNull is PM_IN_NULL, the instance of a singular metric.
const InstNull int32 = -1

// Type is a metric value type (PM_TYPE_*).
type Type int32

// Value types.
const (
	TypeNoSupport    Type = -1
	Type32           Type = 0
	TypeU32          Type = 1
	Type64           Type = 2
	TypeU64          Type = 3
	TypeFloat        Type = 4
	TypeDouble       Type = 5
	TypeString       Type = 6
	TypeAggregate    Type = 7
	TypeAggStatic    Type = 8
	TypeEvent        Type = 9
	TypeHighresEvent Type = 10
	TypeUnknown      Type = 255
)

// typeNames are PCP's short names of the types (as pmlogrewrite's
// configuration and PCP's messages spell them).
var typeNames = map[Type]string{TypeNoSupport: "NOSUPPORT", Type32: "32", TypeU32: "U32", Type64: "64",
	TypeU64: "U64", TypeFloat: "FLOAT", TypeDouble: "DOUBLE", TypeString: "STRING", TypeAggregate: "AGGREGATE",
	TypeAggStatic: "AGGREGATE_STATIC", TypeEvent: "EVENT", TypeHighresEvent: "HIGHRES_EVENT", TypeUnknown: "UNKNOWN"}

// Defined reports whether PCP defines the type (NOSUPPORT and UNKNOWN
// included): a descriptor of any other type is damaged.
func (t Type) Defined() bool {
	_, ok := typeNames[t]
	return ok
}

// Numeric reports whether values of the type are numbers (32, U32, 64,
// U64, FLOAT, DOUBLE): the types PCP's tools do arithmetic on.
func (t Type) Numeric() bool {
	switch t {
	case Type32, TypeU32, Type64, TypeU64, TypeFloat, TypeDouble:
		return true
	}
	return false
}

// String returns PCP's short name of the type (U64, DOUBLE, ...), or
// type(N) for a number PCP does not define.
func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Sem is a metric's semantics (PM_SEM_*).
type Sem int32

// String returns the semantics' name (counter, instant, discrete), or
// sem(N) for a number PCP does not define.
func (s Sem) String() string {
	switch s {
	case SemCounter:
		return "counter"
	case SemInstant:
		return "instant"
	case SemDiscrete:
		return "discrete"
	}
	return "sem(" + strconv.Itoa(int(s)) + ")"
}

// Semantics.
const (
	SemCounter  Sem = 1
	SemInstant  Sem = 3
	SemDiscrete Sem = 4
)

// Units is pmUnits packed as on disk: dimSpace:4 dimTime:4 dimCount:4
// scaleSpace:4 scaleTime:4 scaleCount:4, from the most significant bit,
// then the byte PCP 6.0.3 calls pad and PCP 7.2 extraUnit:5 extraScale:3
// (temperature, voltage, current, power). Every tool keeps that byte as it
// was; String prints it as PCP 7.2 does.
type Units uint32

// NewUnits packs the six fields of pmUnits.
func NewUnits(dimSpace, dimTime, dimCount int, scaleSpace, scaleTime uint, scaleCount int) Units {
	return Units(uint32(dimSpace&0xf)<<28 | uint32(dimTime&0xf)<<24 | uint32(dimCount&0xf)<<20 |
		uint32(scaleSpace&0xf)<<16 | uint32(scaleTime&0xf)<<12 | uint32(scaleCount&0xf)<<8)
}

func signed4(v uint32) int {
	v &= 0xf
	if v&0x8 != 0 {
		return int(v) - 16
	}
	return int(v)
}

// DimSpace returns the space dimension.
func (u Units) DimSpace() int { return signed4(uint32(u) >> 28) }

// DimTime returns the time dimension.
func (u Units) DimTime() int { return signed4(uint32(u) >> 24) }

// DimCount returns the count dimension.
func (u Units) DimCount() int { return signed4(uint32(u) >> 20) }

// ScaleSpace returns the space scale (PM_SPACE_*).
func (u Units) ScaleSpace() uint { return uint(uint32(u) >> 16 & 0xf) }

// ScaleTime returns the time scale (PM_TIME_*).
func (u Units) ScaleTime() uint { return uint(uint32(u) >> 12 & 0xf) }

// ScaleCount returns the count scale exponent (signed).
func (u Units) ScaleCount() int { return signed4(uint32(u) >> 8) }

// ExtraUnit returns PCP 7.2's extra unit (PM_UNIT_TEMPERATURE 1,
// PM_UNIT_VOLTAGE 2, PM_UNIT_CURRENT 3, PM_UNIT_POWER 4; negative: its
// inverse), 0 for none and in every archive before 7.2.
func (u Units) ExtraUnit() int {
	v := int(uint32(u) >> 3 & 0x1f)
	if v&0x10 != 0 {
		v -= 32
	}
	return v
}

// ExtraScale returns PCP 7.2's scale of the extra unit (PM_TEMPERATURE_C
// 1, ...).
func (u Units) ExtraScale() uint { return uint(uint32(u) & 0x7) }

// Kind says which record a Record is.
type Kind uint8

// Record kinds.
const (
	KindLabel Kind = iota + 1
	KindDesc
	KindInDom
	KindLabelSet
	KindText
	KindResult
	KindMark
)

var kindNames = [...]string{"?", "label", "desc", "indom", "labelset", "text", "result", "mark"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Record is one element of a stream. The concrete types are *Label, *Desc,
// *InDom, *LabelSet, *Text, *Result and *Mark.
type Record interface {
	Kind() Kind
	Time() Timestamp
}

// Label is the archive label: it opens every archive, and a stream that
// concatenates archives carries one per archive.
type Label struct {
	Version  int // 2 or 3
	PID      int32
	Start    Timestamp
	Vol      int32 // as found in the file the label came from: 0..N, -1 meta, -2 index
	Features uint32
	Hostname string
	Timezone string
	Zoneinfo string // v3 only
}

// Kind implements Record.
func (*Label) Kind() Kind { return KindLabel }

// Time implements Record.
func (l *Label) Time() Timestamp { return l.Start }

// Desc is a metric descriptor with its names.
type Desc struct {
	T     Timestamp
	PMID  PMID
	Type  Type
	InDom InDomID
	Sem   Sem
	Units Units
	Names []string
}

// Kind implements Record.
func (*Desc) Kind() Kind { return KindDesc }

// Time implements Record.
func (d *Desc) Time() Timestamp { return d.T }

// InDomEncoding says how an instance domain record was (or is to be) encoded.
type InDomEncoding uint8

// Instance domain encodings.
const (
	InDomV2    InDomEncoding = 2 // TYPE_INDOM_V2, full, v2 timestamp
	InDomFull  InDomEncoding = 5 // TYPE_INDOM, full, v3 timestamp
	InDomDelta InDomEncoding = 6 // TYPE_INDOM_DELTA: changes against the previous record
)

// InDom is an instance domain record as it is on disk. For a delta record
// Insts lists the added and deleted instances in instance order, Deleted
// marks the deletions (their names are empty); for a full record Deleted is
// nil and Insts/Names are the whole domain in on-disk order. Use
// InDomTracker to resolve deltas.
type InDom struct {
	T        Timestamp
	InDom    InDomID
	Encoding InDomEncoding
	Insts    []int32
	Names    []string
	Deleted  []bool
}

// Kind implements Record.
func (*InDom) Kind() Kind { return KindInDom }

// Time implements Record.
func (d *InDom) Time() Timestamp { return d.T }

// Label types (PM_LABEL_*), used in LabelSet.Type and in label flags.
const (
	LabelContext   uint32 = 1 << 0
	LabelDomain    uint32 = 1 << 1
	LabelInDom     uint32 = 1 << 2
	LabelCluster   uint32 = 1 << 3
	LabelItem      uint32 = 1 << 4
	LabelInstances uint32 = 1 << 5
	LabelCompound  uint8  = 1 << 6
	LabelOptional  uint8  = 1 << 7
	// LabelTypeMask keeps the PM_LABEL_* type bits of a label set's type
	// or a label's flags, dropping compound and optional.
	LabelTypeMask = ^uint32(LabelCompound | LabelOptional)
)

// LabelEntry is one name:value pair of a label set, as offsets into the
// set's JSON (pmLabel).
type LabelEntry struct {
	Name     uint16
	NameLen  uint8
	Flags    uint8
	Value    uint16
	ValueLen uint16
}

// OneLabelSet is one pmLabelSet: the labels of one instance (or of the
// whole object, with Inst == InstNull).
type OneLabelSet struct {
	Inst    int32
	JSON    string
	NLabels int32 // as stored; negative is a PCP error code and Labels is empty
	Labels  []LabelEntry
}

// LabelSet is a label set record: the sets for one (type, ident).
type LabelSet struct {
	T     Timestamp
	V2    bool   // encoded as TYPE_LABEL_V2 on input
	Type  uint32 // PM_LABEL_CONTEXT, _DOMAIN, ...
	Ident uint32 // PMID, domain, cluster, indom, or PM_ID_NULL for context
	Sets  []OneLabelSet
}

// Kind implements Record.
func (*LabelSet) Kind() Kind { return KindLabelSet }

// Time implements Record.
func (l *LabelSet) Time() Timestamp { return l.T }

// Text types (PM_TEXT_*), combined in Text.Type.
const (
	TextOneline uint32 = 1
	TextHelp    uint32 = 2
	TextPMID    uint32 = 4
	TextInDom   uint32 = 8
)

// Text is a help text record.
type Text struct {
	T     Timestamp
	Type  uint32 // TextOneline|TextHelp combined with TextPMID|TextInDom
	Ident uint32 // PMID or InDomID
	Text  string
}

// Kind implements Record.
func (*Text) Kind() Kind { return KindText }

// Time implements Record.
func (t *Text) Time() Timestamp { return t.T }

// Mark is a <mark> record: a gap in the data (numpmid 0 on disk).
type Mark struct {
	T Timestamp
}

// Kind implements Record.
func (*Mark) Kind() Kind { return KindMark }

// Time implements Record.
func (m *Mark) Time() Timestamp { return m.T }
