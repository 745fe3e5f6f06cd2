// Package rules holds the rewriting rules of pcprewrite: one model of every
// clause pmlogrewrite(1) understands, two front ends that produce it (the
// pmlogrewrite configuration language, and our own line-oriented language
// whose selectors and values are expr-lang expressions), and the compiler
// that resolves a set of rules against one archive's metadata into a Plan.
//
//	pmlogrewrite config ──ParsePmlogrewrite──┐
//	                                          ├─▶ *Config ──Compile(meta)──▶ *Plan ──▶ engine
//	expr rules ─────────────ParseExpr────────┘
//
// The Plan says, per PMID and per instance domain of the input archive,
// exactly what changes; the record-stream engine (elsewhere) only looks up
// the plan and applies it, with the pure value helpers of this package
// (ConvScale, Retype, Reduce).
//
// Designs rejected:
//   - Resolving rules while parsing, as pmlogrewrite does (its parser looks
//     names up in the open archive): it ties the parser to one archive and
//     makes error positions depend on the archive. Here parsing is pure and
//     Compile does everything that needs metadata, so one parsed Config can
//     be compiled against many archives.
//   - A generated (yacc) parser: pmlogrewrite's lexer switches start
//     conditions as it reads keywords, which a hand-written lexer driven by
//     the parser reproduces directly and with better error positions.
//   - Keeping the expr front end's selectors as a separate "filter" stage:
//     they compile to the same MetricRule/InDomRule with a predicate in
//     place of a literal selector, so conflict checks and the plan are
//     shared.
package rules

import (
	"fmt"
	"sort"

	"github.com/pcptools/pcptools/stream"
)

// Pos is a position in a rules file. Line and Col are 1-based; Col counts
// characters (runes), not bytes.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsValid reports whether p was set.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Error is a syntax or semantic error in the rules. Other, when valid, is
// the position of the earlier rule that the one at Pos conflicts with.
type Error struct {
	Pos   Pos
	Msg   string
	Other Pos
	// PCP, when set, is pmlogrewrite's own wording of the error, and
	// Semantic says which of its two kinds it is: a semantic error
	// ("Semantic error in configuration file (FILE)" and the text) or a
	// specification error ("[line N] text"). See PCPText.
	PCP      string
	Semantic bool
	PCPLine  int // the line pmlogrewrite names, when not Pos.Line
	// Warnings are those Compile found before the error (pmlogrewrite
	// prints them first).
	Warnings []Warning
}

// PCPText is the error as pmlogrewrite 6.0.3 prints it (without the final
// newline); with no wording of pmlogrewrite's, ours in its frame.
func (e *Error) PCPText() string {
	text := e.PCP
	if text == "" {
		text = e.Msg // no wording of pmlogrewrite's: ours, in its frame
	}
	if e.Semantic {
		return fmt.Sprintf("Semantic error in configuration file (%s)\n%s", e.Pos.File, text)
	}
	line := e.Pos.Line
	if e.PCPLine > 0 {
		line = e.PCPLine
	}
	return fmt.Sprintf("Specification error in configuration file (%s)\n[line %d] %s", e.Pos.File, line, text)
}

func (e *Error) Error() string {
	if e.Other.IsValid() {
		return fmt.Sprintf("%s: %s (conflicts with %s)", e.Pos, e.Msg, e.Other)
	}
	return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
}

// Warning is a non-fatal remark (pmlogrewrite -w): a rule that does not
// apply to the archive, or that changes nothing.
type Warning struct {
	Pos Pos
	Msg string
	// Always: printed whether or not warnings were asked for (-w), as
	// pmlogrewrite prints what its parser notices; the others are rules
	// that do not apply to the archive.
	Always bool
	// PCP is pmlogrewrite's wording of the warning ("" when it has none,
	// or does not warn), and PCPLine the line it names when that is not
	// Pos.Line (its parser reports where its lexer has got to).
	PCP     string
	PCPLine int
}

func (w Warning) String() string { return fmt.Sprintf("%s: warning: %s", w.Pos, w.Msg) }

// PCPText is the warning as pmlogrewrite 6.0.3 prints it (two lines, without
// the final newline); with no wording of pmlogrewrite's, ours in its frame.
func (w Warning) PCPText() string {
	text := w.PCP
	if text == "" {
		text = w.Msg // no wording of pmlogrewrite's: ours, in its frame
	}
	line := w.Pos.Line
	if w.PCPLine > 0 {
		line = w.PCPLine
	}
	return fmt.Sprintf("Warning [%s, line %d]\n%s", w.Pos.File, line, text)
}

// AtLine sets the line pmlogrewrite names: it reports some warnings once
// its parser has read the token after the rule, on the next line.
func (w *Warning) AtLine(line int) *Warning {
	w.PCPLine = line
	return w
}

// As sets pmlogrewrite's wording of the warning.
func (w *Warning) As(format string, args ...any) *Warning {
	w.PCP = fmt.Sprintf(format, args...)
	return w
}

// Config is a parsed set of rules, in source order within each kind.
type Config struct {
	Globals []*GlobalRule
	InDoms  []*InDomRule
	Metrics []*MetricRule
	Texts   []*TextRule
	Labels  []*LabelRule
	// Values holds per-value expressions (expr front end only).
	Values []*ValueRule
	// Warnings found while parsing (out-of-range minutes, NEW with a
	// selector, ...).
	Warnings []Warning
	// Files are the configuration files read, in order.
	Files []string
}

// Append adds the rules of c2 after those of c.
func (c *Config) Append(c2 *Config) {
	c.Globals = append(c.Globals, c2.Globals...)
	c.InDoms = append(c.InDoms, c2.InDoms...)
	c.Metrics = append(c.Metrics, c2.Metrics...)
	c.Texts = append(c.Texts, c2.Texts...)
	c.Labels = append(c.Labels, c2.Labels...)
	c.Values = append(c.Values, c2.Values...)
	c.Warnings = append(c.Warnings, c2.Warnings...)
	c.Files = append(c.Files, c2.Files...)
}

// SortPCP puts warnings in the order pmlogrewrite prints them: it checks
// each clause against the archive as it parses it, so its warnings come
// file by file (files in the order read), by line within each file. The
// sort is stable: within a line, what the parser noticed comes first (the
// compiler puts the parser's warnings first), then the clauses in order.
func SortPCP(ws []Warning, files []string) {
	rank := map[string]int{}
	for i, f := range files {
		if _, ok := rank[f]; !ok {
			rank[f] = i
		}
	}
	fileRank := func(f string) int {
		if r, ok := rank[f]; ok {
			return r
		}
		return len(files)
	}
	sort.SliceStable(ws, func(a, b int) bool {
		pa, pb := ws[a].Pos, ws[b].Pos
		if ra, rb := fileRank(pa.File), fileRank(pb.File); ra != rb {
			return ra < rb
		}
		return pa.Line < pb.Line
	})
}

// ---------------------------------------------------------------------------
// Global rules

// GlobalKind says what a global clause changes.
type GlobalKind uint8

// Global clauses.
const (
	GlobalHostname GlobalKind = iota + 1
	GlobalTimeZone
	GlobalZoneInfo
	GlobalFeatures
	GlobalTime
)

var globalNames = [...]string{"?", "hostname", "timezone", "zoneinfo", "features", "time"}

func (k GlobalKind) String() string {
	if int(k) < len(globalNames) {
		return globalNames[k]
	}
	return "?"
}

// TimeShift is the TIME clause: Neg says the shift is backwards; Sec and
// Nsec are the magnitude. (pmlogrewrite 6.0.3 keeps a negated Sec and a
// positive Nsec, and so never applies a shift of less than one second;
// Apply does.)
type TimeShift struct {
	Neg  bool
	Sec  int64
	Nsec int32
}

// Nanos returns the signed shift in nanoseconds.
func (s TimeShift) Nanos() int64 {
	n := s.Sec*1e9 + int64(s.Nsec)
	if s.Neg {
		return -n
	}
	return n
}

// IsZero reports whether the shift changes nothing.
func (s TimeShift) IsZero() bool { return s.Sec == 0 && s.Nsec == 0 }

// Apply shifts a timestamp.
func (s TimeShift) Apply(t stream.Timestamp) stream.Timestamp {
	sec, nsec := t.Sec, int64(t.Nsec)
	if s.Neg {
		sec -= s.Sec
		nsec -= int64(s.Nsec)
	} else {
		sec += s.Sec
		nsec += int64(s.Nsec)
	}
	for nsec < 0 {
		nsec += 1e9
		sec--
	}
	for nsec >= 1e9 {
		nsec -= 1e9
		sec++
	}
	return stream.Timestamp{Sec: sec, Nsec: int32(nsec)}
}

func (s TimeShift) String() string {
	sign := "+"
	if s.Neg {
		sign = "-"
	}
	return fmt.Sprintf("%s%d.%09d", sign, s.Sec, s.Nsec)
}

// GlobalClause is one clause of a GLOBAL rule.
type GlobalClause struct {
	Pos      Pos
	Kind     GlobalKind
	Str      string // hostname, timezone, zoneinfo
	Features uint32
	Time     TimeShift
	PCPLine  int // the line pmlogrewrite names for the clause (0: Pos.Line)
}

// GlobalRule is GLOBAL { ... }.
type GlobalRule struct {
	Pos     Pos
	Clauses []GlobalClause
}

// ---------------------------------------------------------------------------
// Selectors and targets

// IDKind says how a metric (or indom, or cluster) is selected.
type IDKind uint8

// Selector kinds. For instance domains only IDExact and IDStar2 (d.*) are
// used; for clusters IDExact (d.c) and IDStar2 (d.*).
const (
	IDName    IDKind = iota // metric name
	IDExact                 // d.c.i (or d.s)
	IDStar1                 // d.c.* (item wildcard)
	IDStar2                 // d.*.* (cluster and item wildcard), d.* for indoms
	IDDynamic               // selected by a predicate (expr front end)
)

// MetricID selects metrics: by name, by PMID, or by PMID with wildcards.
// Pred is set (with Kind IDDynamic) by the expr front end.
type MetricID struct {
	Kind                  IDKind
	Name                  string
	Domain, Cluster, Item uint32
	Pred                  MetricPredicate
	Src                   string // source text of the selector, for messages
}

// MatchPMID reports whether p matches a numeric selector.
func (m MetricID) MatchPMID(p stream.PMID) bool {
	switch m.Kind {
	case IDExact:
		return p == stream.NewPMID(m.Domain, m.Cluster, m.Item)
	case IDStar1:
		return p.Domain() == m.Domain && p.Cluster() == m.Cluster
	case IDStar2:
		return p.Domain() == m.Domain
	}
	return false
}

func (m MetricID) String() string {
	switch m.Kind {
	case IDName:
		return m.Name
	case IDExact:
		return fmt.Sprintf("%d.%d.%d", m.Domain, m.Cluster, m.Item)
	case IDStar1:
		return fmt.Sprintf("%d.%d.*", m.Domain, m.Cluster)
	case IDStar2:
		return fmt.Sprintf("%d.*.*", m.Domain)
	}
	return m.Src
}

// PMIDTarget is the new PMID of a PMID ->, METRIC -> or ITEM -> clause. A
// '*' keeps that field of the old PMID: StarItem for d.c.*, StarCluster
// (and StarItem) for d.*.*.
type PMIDTarget struct {
	Domain, Cluster, Item uint32
	StarCluster, StarItem bool
}

// Resolve returns the new PMID for old.
func (t PMIDTarget) Resolve(old stream.PMID) stream.PMID {
	c, i := t.Cluster, t.Item
	if t.StarCluster {
		c = old.Cluster()
	}
	if t.StarItem {
		i = old.Item()
	}
	return stream.NewPMID(t.Domain, c, i)
}

func (t PMIDTarget) String() string {
	switch {
	case t.StarCluster:
		return fmt.Sprintf("%d.*.*", t.Domain)
	case t.StarItem:
		return fmt.Sprintf("%d.%d.*", t.Domain, t.Cluster)
	}
	return fmt.Sprintf("%d.%d.%d", t.Domain, t.Cluster, t.Item)
}

// InDomPattern selects instance domains: d.s, or d.* (Star).
type InDomPattern struct {
	Domain, Serial uint32
	Star           bool
	Pred           InDomPredicate // expr front end; overrides the fields
	Src            string
}

// Match reports whether id matches.
func (p InDomPattern) Match(id stream.InDomID) bool {
	if id == stream.InDomNull {
		return false
	}
	if p.Star {
		return id.Domain() == p.Domain
	}
	return id == stream.NewInDomID(p.Domain, p.Serial)
}

func (p InDomPattern) String() string {
	if p.Pred != nil {
		return p.Src
	}
	if p.Star {
		return fmt.Sprintf("%d.*", p.Domain)
	}
	return fmt.Sprintf("%d.%d", p.Domain, p.Serial)
}

// InDomTarget is the new instance domain of an INDOM -> clause: d.s, d.*
// (keep the old serial) or NULL.
type InDomTarget struct {
	Null           bool
	Domain, Serial uint32
	StarSerial     bool
}

// Resolve returns the new instance domain for old.
func (t InDomTarget) Resolve(old stream.InDomID) stream.InDomID {
	if t.Null {
		return stream.InDomNull
	}
	s := t.Serial
	if t.StarSerial {
		s = old.Serial()
	}
	return stream.NewInDomID(t.Domain, s)
}

func (t InDomTarget) String() string {
	switch {
	case t.Null:
		return "NULL"
	case t.StarSerial:
		return fmt.Sprintf("%d.*", t.Domain)
	}
	return fmt.Sprintf("%d.%d", t.Domain, t.Serial)
}

// ---------------------------------------------------------------------------
// Instance domain rules

// InDomOp is the operation of an indom clause.
type InDomOp uint8

// Indom clause operations.
const (
	InDomChangeID   InDomOp = iota + 1 // INDOM -> [DUPLICATE] d.s|d.*
	InDomRename                        // INAME "old" -> "new"
	InDomDeleteName                    // INAME "old" -> DELETE
	InDomRenumber                      // INST n -> m
	InDomDeleteInst                    // INST n -> DELETE
	InDomRedact                        // INAME REDACT (PCP 6.1)
	InDomReplace                       // INAME REPLACE /re/ -> "new" (PCP 6.1)
)

// InDomClause is one clause of an INDOM rule.
type InDomClause struct {
	Pos       Pos
	Op        InDomOp
	Target    InDomTarget // InDomChangeID
	Duplicate bool        // InDomChangeID
	OldName   string      // InDomRename, InDomDeleteName
	NewName   string      // InDomRename
	OldInst   int32       // InDomRenumber, InDomDeleteInst
	NewInst   int32       // InDomRenumber
	Change    *Replace    // InDomReplace
	// Dyn (expr front end) computes Target per instance domain.
	Dyn InDomValue
}

// InDomRule is INDOM d.s|d.* { ... }.
type InDomRule struct {
	Pos     Pos
	Match   InDomPattern
	Clauses []InDomClause
}

// ---------------------------------------------------------------------------
// Metric rules

// MetricOp is the operation of a metric clause.
type MetricOp uint8

// Metric clause operations.
const (
	MetricDelete MetricOp = iota + 1
	MetricPMID
	MetricName
	MetricType // TYPE -> T, or TYPE IF T -> T when IfType is set
	MetricSem
	MetricUnits
	MetricInDom
	MetricStrValue // VALUE [REPLACE] /re/ -> "new" (PCP 6.1)
)

var metricOpNames = [...]string{"?", "delete", "pmid", "name", "type", "sem", "units", "indom", "value"}

func (o MetricOp) String() string {
	if int(o) < len(metricOpNames) {
		return metricOpNames[o]
	}
	return "?"
}

// OutputKind is the pick of an INDOM -> clause (OUTPUT ...).
type OutputKind uint8

// Output picks. OutputAll means no OUTPUT clause.
const (
	OutputAll OutputKind = iota
	OutputFirst
	OutputLast
	OutputInst  // OUTPUT INST n
	OutputIName // OUTPUT INAME "name"
	OutputMin
	OutputMax
	OutputSum
	OutputAvg
)

var outputNames = [...]string{"all", "first", "last", "inst", "iname", "min", "max", "sum", "avg"}

func (k OutputKind) String() string {
	if int(k) < len(outputNames) {
		return outputNames[k]
	}
	return "?"
}

// Output is an OUTPUT clause.
type Output struct {
	Kind  OutputKind
	Inst  int32  // OutputInst
	IName string // OutputIName
}

// MetricClause is one clause of a METRIC rule. Dyn, set by the expr front
// end, computes the clause's value per metric at compile time (it returns
// a string for names, a stream.Type, Sem, Units, PMIDTarget or InDomTarget).
type MetricClause struct {
	Pos     Pos
	Op      MetricOp
	PMID    PMIDTarget
	Name    string
	Type    stream.Type
	IfType  stream.Type // TYPE IF; TypeNoSupport when absent
	HasIf   bool
	Sem     stream.Sem
	Units   stream.Units
	Rescale bool
	InDom   InDomTarget
	Output  Output
	Change  *Replace // MetricStrValue
	Dyn     MetricValue
	// PCPLine and RuleEnd are lines pmlogrewrite's warnings name: the line
	// its parser has reached when it acts on the clause (the next token's
	// when the clause may go on: units without RESCALE, indom without
	// OUTPUT; 0 for Pos.Line) and when it ends the rule (the line of the
	// token after the closing brace).
	PCPLine int
	RuleEnd int
}

// MetricRule is METRIC id { ... }.
type MetricRule struct {
	Pos     Pos
	Match   MetricID
	Clauses []MetricClause
}

// ---------------------------------------------------------------------------
// Text rules

// TextOp is the operation of a text clause.
type TextOp uint8

// Text clause operations.
const (
	TextDelete TextOp = iota + 1
	TextChange        // TEXT -> "new"
	TextMetric        // METRIC -> d.c.i
	TextInDom         // INDOM -> d.s
)

// TextClause is one clause of a TEXT rule.
type TextClause struct {
	Pos   Pos
	Op    TextOp
	Text  string
	PMID  PMIDTarget
	InDom InDomTarget
	// Dyn (expr front end) computes PMID or InDom per help text.
	Dyn TextValue
}

// TextRule is TEXT METRIC id [types] ["content"] { ... } or TEXT INDOM
// d.s [types] ["content"] { ... }. Types is a combination of
// stream.TextOneline and stream.TextHelp (ONELINE when none given).
// Content, when set, selects only texts equal to it (as pmlogrewrite
// 6.0.3 compares, despite its manual saying "containing").
type TextRule struct {
	Pos     Pos
	IsInDom bool
	Metric  MetricID
	InDom   InDomPattern
	Types   uint32
	Content *string
	Pred    TextPredicate // expr front end: selects any text
	Clauses []TextClause
}

// ---------------------------------------------------------------------------
// Label rules

// LabelOp is the operation of a label clause.
type LabelOp uint8

// Label clause operations.
const (
	LabelDelete    LabelOp = iota + 1
	LabelRename            // LABEL -> "name"
	LabelValue             // VALUE -> json
	LabelNew               // NEW "name" json
	LabelDomain            // DOMAIN -> n
	LabelCluster           // CLUSTER -> d.c | d.*
	LabelItem              // ITEM -> d.c.i (with '*')
	LabelInDom             // INDOM -> d.s | d.*
	LabelInstances         // INSTANCES -> d.s | d.*
	LabelInstance          // INSTANCE -> n
)

// LabelClause is one clause of a LABEL rule. Names are label names without
// quotes; values are JSON text ("str", 12, true, false, null).
type LabelClause struct {
	Pos      Pos
	Op       LabelOp
	Name     string
	Value    string
	Domain   uint32
	Cluster  ClusterTarget
	PMID     PMIDTarget
	InDom    InDomTarget
	Instance int32
}

// ClusterTarget is d.c or d.* (keep the old cluster).
type ClusterTarget struct {
	Domain, Cluster uint32
	StarCluster     bool
}

// LabelTarget says which label sets a label rule selects.
type LabelTarget struct {
	Type    uint32        // stream.LabelContext, LabelDomain, ...
	Domain  uint32        // LabelDomain
	Cluster ClusterTarget // LabelCluster: StarCluster selects d.*
	Metric  MetricID      // LabelItem
	InDom   InDomPattern  // LabelInDom, LabelInstances
	// Instance selection for LabelInstances: AnyInst, else by InstName
	// (HasInstName) or by Inst.
	AnyInst     bool
	Inst        int32
	InstName    string
	HasInstName bool
}

// LabelRule is LABEL target [instance] ["name"|*] [value|*] { ... }.
// Name and Value are nil when not given or '*'. Name is without quotes;
// Value is JSON text.
type LabelRule struct {
	Pos     Pos
	Target  LabelTarget
	Name    *string
	Value   *string
	Pred    LabelPredicate // expr front end
	Clauses []LabelClause
}

// ---------------------------------------------------------------------------
// Value rules (expr front end)

// ValueRule computes new values for the metrics it selects.
type ValueRule struct {
	Pos   Pos
	Match MetricID
	Expr  *ValueExpr
}

// ---------------------------------------------------------------------------
// Hooks for the expr front end. Compile calls them once per candidate.

// MetricPredicate selects metrics from their metadata.
type MetricPredicate interface {
	MatchMetric(m *MetricInfo) (bool, error)
}

// MetricValue computes the value of a clause for one metric.
type MetricValue interface {
	EvalMetric(m *MetricInfo) (any, error)
}

// InDomPredicate selects instance domains.
type InDomPredicate interface {
	MatchInDom(id stream.InDomID, set *stream.InstanceSet) (bool, error)
}

// InDomValue computes the new identifier of an instance domain.
type InDomValue interface {
	EvalInDom(id stream.InDomID, set *stream.InstanceSet) (any, error)
}

// TextValue computes the new identifier of a help text.
type TextValue interface {
	EvalText(t *stream.Text) (any, error)
}

// TextPredicate selects help texts.
type TextPredicate interface {
	MatchText(t *stream.Text) (bool, error)
}

// LabelPredicate selects labels: one name:value of one label set.
type LabelPredicate interface {
	MatchLabel(l *LabelInfo) (bool, error)
}

// MetricInfo is what selectors see of a metric.
type MetricInfo struct {
	Desc  *stream.Desc
	Name  string // the name being matched (first name when matching by PMID)
	Names []string
}

// LabelInfo is what label selectors see of one label.
type LabelInfo struct {
	Type  uint32
	Ident uint32
	Inst  int32
	Name  string
	Value string // JSON text
}

// ---------------------------------------------------------------------------
// Names of enumerations, shared by both front ends.

var typeNames = map[string]stream.Type{
	"32": stream.Type32, "U32": stream.TypeU32, "64": stream.Type64,
	"U64": stream.TypeU64, "FLOAT": stream.TypeFloat, "DOUBLE": stream.TypeDouble,
}

// TypeName returns the pmlogrewrite spelling of a numeric type.
func TypeName(t stream.Type) string { return t.String() }

var semNames = map[string]stream.Sem{
	"COUNTER": stream.SemCounter, "INSTANT": stream.SemInstant, "DISCRETE": stream.SemDiscrete,
}

// SemName returns the name of a semantics value.
func SemName(s stream.Sem) string { return s.String() }

var spaceNames = map[string]uint{"0": 0, "BYTE": 0, "KBYTE": 1, "MBYTE": 2, "GBYTE": 3, "TBYTE": 4, "PBYTE": 5, "EBYTE": 6}
var timeNames = map[string]uint{"0": 0, "NSEC": 0, "USEC": 1, "MSEC": 2, "SEC": 3, "MIN": 4, "HOUR": 5}

// UpperFirst is s with its first letter in upper case (pmlogrewrite's
// messages begin so; ours, for the same text, in lower case).
func UpperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
