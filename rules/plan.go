package rules

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/pcphash"
	"github.com/pcptools/pcptools/stream"
)

// This file resolves a Config against one archive's metadata into a Plan,
// making the checks pmlogrewrite makes while it parses (it parses with the
// archive open) and after (link_entries, check_indoms, check_output in
// pmlogrewrite.c): duplicate and conflicting clauses, a new name already
// in use, a new indom absent from the output, and instance ids or names
// made ambiguous by the rewrite. As in pmlogrewrite, a clause that changes
// nothing for this archive does not count as a change (and so cannot
// conflict); it is a warning.

// CompileOptions are the command-line settings that affect the plan.
type CompileOptions struct {
	// OutputVersion is the output archive version (2 or 3); 0 means the
	// input's. ZONEINFO and FEATURES need 3.
	OutputVersion int
	// Scale is -s: rescale values of every metric whose units change in
	// scale only.
	Scale bool
	// PCPTrace makes Plan.PCPRefTrace's lines (pmlogrewrite -Dappl1).
	PCPTrace bool
}

// MetricChange is a set of changes to one metric.
type MetricChange uint16

// Metric changes (pmlogrewrite's METRIC_* flags).
const (
	ChangePMID MetricChange = 1 << iota
	ChangeName
	ChangeType
	ChangeInDom
	ChangeSem
	ChangeUnits
	ChangeDelete
	ChangeRescale
	ChangeValue // a per-value expression (expr front end)
	// ChangeStrValue: string values rewritten by StrValue's regular
	// expressions (PCP 6.1's VALUE clause).
	ChangeStrValue
)

// MetricPlan says what to do with one metric of the input. Every field of
// New is the output's (equal to Old's when unchanged).
//
// The engine applies, per value set of a result, in this order:
//  1. Changes&ChangeDelete: drop the value set.
//  2. ChangePMID: renumber it (New.PMID).
//  3. ChangeInDom with Output != OutputAll: reduce the values to one
//     (Reduce, in the old type); OutputInst keeps the value of instance
//     PickInst (none: no value). The output value's instance is
//     OutputInstance(picked).
//  4. InstMap != nil: renumber/delete instances (InDomPlan.MapInst).
//  5. ChangeRescale: ConvScale(old type, Old.Units -> New.Units).
//  6. ChangeType: Retype(old type -> New.Type).
//  7. Value != nil: run the per-value expression.
type MetricPlan struct {
	Old     *stream.Desc
	New     stream.Desc
	Changes MetricChange
	// Output is the pick for an indom change: OutputAll (copy every
	// value), OutputFirst, OutputLast, OutputInst (PickInst; INAME is
	// resolved to an instance id here), OutputMin/Max/Sum/Avg.
	Output   OutputKind
	PickInst int32
	// OneInst is the instance given to the single output value when the
	// old indom is NULL and the new one is not (0 unless OUTPUT INST/INAME).
	OneInst int32
	InstMap *InDomPlan
	Value   *ValueExpr
	// StrValue are the VALUE clauses' substitutions, applied in order to
	// each string value (ApplyAll).
	StrValue []*Replace
	// Pos is the first clause that changed the metric, for messages.
	Pos Pos

	clausePos   map[MetricChange]Pos
	name        string
	pickName    string
	hasPickName bool
	ruleEnd     int  // the line pmlogrewrite names in OUTPUT warnings
	seq         int  // creation order, for pmlogrewrite's -v order
	linked      bool // created by link (the metric's indom changes), not by a rule
}

// OutputInstance returns the instance of the single value that an indom
// change with a pick produces from the value of instance picked.
func (m *MetricPlan) OutputInstance(picked int32) int32 {
	switch {
	case m.New.InDom == stream.InDomNull:
		return stream.InstNull
	case m.Old.InDom == stream.InDomNull:
		return m.OneInst
	}
	return picked
}

// InstChange is the change to one instance of an instance domain.
type InstChange struct {
	Delete                 bool
	NewInst                int32 // valid when ChangeInst
	NewName                string
	ChangeInst, ChangeName bool
}

// InDomPlan says what to do with one instance domain of the input.
type InDomPlan struct {
	Old, New stream.InDomID
	// Duplicate: write the rewritten domain as New and keep Old unchanged
	// too (INDOM -> DUPLICATE).
	Duplicate bool
	// Insts is keyed by the old instance id.
	Insts map[int32]*InstChange
	Pos   Pos

	seq       int      // order of creation (pmlogrewrite lists the newest first)
	insts     []int32  // every instance the archive has for Old, first-seen order
	names     []string // the latest name of each
	clausePos map[int32]Pos
	idPos     Pos
}

// Changed reports whether the plan changes anything.
func (p *InDomPlan) Changed() bool { return p.New != p.Old || len(p.Insts) > 0 }

// MapInst returns the output instance id for an input instance, and false
// when the instance is deleted.
func (p *InDomPlan) MapInst(old int32) (int32, bool) {
	if c, ok := p.Insts[old]; ok {
		if c.Delete {
			return 0, false
		}
		if c.ChangeInst {
			return c.NewInst, true
		}
	}
	return old, true
}

// Apply rewrites one version of the instance domain (not in place).
func (p *InDomPlan) Apply(set *stream.InstanceSet) *stream.InstanceSet {
	out := &stream.InstanceSet{T: set.T, Insts: make([]int32, 0, len(set.Insts)), Names: make([]string, 0, len(set.Names))}
	for i, in := range set.Insts {
		name := ""
		if i < len(set.Names) {
			name = set.Names[i]
		}
		if c, ok := p.Insts[in]; ok {
			if c.Delete {
				continue
			}
			if c.ChangeInst {
				in = c.NewInst
			}
			if c.ChangeName {
				name = c.NewName
			}
		}
		out.Insts = append(out.Insts, in)
		out.Names = append(out.Names, name)
	}
	return out
}

// GlobalPlan holds the label changes. Nil pointers mean no change.
type GlobalPlan struct {
	Hostname *string
	TimeZone *string
	ZoneInfo *string
	Features *uint32
	// Shift, when non-nil, moves every timestamp (results, indoms, labels,
	// the label's start, the index).
	Shift *TimeShift

	pos map[GlobalKind]Pos
}

// Changed reports whether any global change applies.
func (g *GlobalPlan) Changed() bool {
	return g.Hostname != nil || g.TimeZone != nil || g.ZoneInfo != nil || g.Features != nil || g.Shift != nil
}

// TextKey identifies a help text: Type is stream.TextOneline or TextHelp
// combined with TextPMID or TextInDom; Ident the PMID or InDomID.
type TextKey struct {
	Type  uint32
	Ident uint32
}

// TextPlan is the change to one help text. When Content is set the plan
// applies only to a text equal to it.
type TextPlan struct {
	Key      TextKey
	Content  *string
	Delete   bool
	NewText  *string
	NewIdent uint32 // valid when ChangeID
	ChangeID bool
	Pos      Pos

	flags   uint8
	flagPos map[uint8]Pos
	active  bool
	oldText string
}

// LabelPlan is the change to the labels of one label set (one instance
// for LabelInstances; Inst is InstNull otherwise). Name and Value, when
// set, restrict it to labels with that name / JSON value.
type LabelPlan struct {
	Type  uint32
	Ident uint32
	Inst  int32
	Name  *string
	Value *string

	Delete      bool
	NewName     *string
	NewValue    *string
	ChangeIdent bool
	NewIdent    uint32
	ChangeInst  bool
	NewInst     int32
	Pos         Pos

	flags   uint8
	flagPos map[uint8]Pos
}

// NewLabel is a label to add (NEW) to the label set of (Type, Ident, Inst).
type NewLabel struct {
	Type  uint32
	Ident uint32
	Inst  int32
	Name  string
	Value string // JSON
	Pos   Pos
}

// Plan is a Config resolved against one archive.
type Plan struct {
	Global  GlobalPlan
	Metrics map[stream.PMID]*MetricPlan
	InDoms  map[stream.InDomID]*InDomPlan
	Texts   []*TextPlan
	Labels  []*LabelPlan
	New     []NewLabel
	// Warnings are what pmlogrewrite -w prints: rules that do not apply to
	// this archive, or change nothing.
	Warnings []Warning

	pcpMetrics []*MetricPlan   // the changed metrics in pmlogrewrite's order
	pcpLabels  []*PCPLabelSpec // pmlogrewrite's label specs, in the order made (pcplabels.go)
	refTrace   string          // PCPRefTrace's (pcptrace.go)
}

// Metric returns the plan for an input PMID, or nil when it is unchanged.
func (p *Plan) Metric(id stream.PMID) *MetricPlan { return p.Metrics[id] }

// InDom returns the plan for an input instance domain, or nil.
func (p *Plan) InDom(id stream.InDomID) *InDomPlan { return p.InDoms[id] }

// Text returns the plan for a help text record, or nil.
func (p *Plan) Text(t *stream.Text) *TextPlan {
	k := TextKey{t.Type, t.Ident}
	var any *TextPlan
	for _, tp := range p.Texts {
		if tp.Key != k {
			continue
		}
		if tp.Content != nil {
			if *tp.Content == t.Text {
				return tp
			}
			continue
		}
		any = tp
	}
	return any
}

// Changes reports whether the plan changes anything in the archive
// (pmlogrewrite -q exits early when it does not).
func (p *Plan) Changes() bool {
	if p.Global.Changed() || len(p.New) > 0 {
		return true
	}
	for _, ip := range p.InDoms {
		if ip.Changed() {
			return true
		}
	}
	for _, mp := range p.Metrics {
		if mp.Changes != 0 || mp.InstMap != nil {
			return true
		}
	}
	for _, tp := range p.Texts {
		if tp.flags != 0 {
			return true
		}
	}
	for _, lp := range p.Labels {
		if lp.flags != 0 {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------

type compiler struct {
	linking bool // in link: metrics started now are linked
	cfg     *Config
	meta    *format.Metadata
	opts    CompileOptions
	plan    *Plan
	names   map[string]*stream.Desc
	// every metric the rules touched, in first-touch order (pmlogrewrite's
	// metric_root, reversed)
	metrics    map[stream.PMID]*MetricPlan
	indomSpec  []*InDomPlan // indom_root, in creation order
	indoms     map[stream.InDomID]*InDomPlan
	outVer     int
	hashOrder  []*stream.Desc // pmidHashOrder's, once computed
	labelOrder [][2]uint32    // labelHashOrder's, once computed
	indomRank  map[uint32]int // indomHashRank's, once computed
	textOrder  []*stream.Text // pcpTexts', once computed
}

// Compile resolves cfg against an archive's metadata. The error is an
// *Error with the position of the offending clause (and, for conflicts,
// of the earlier clause in Other).
func Compile(cfg *Config, meta *format.Metadata, opts CompileOptions) (plan *Plan, err error) {
	c := &compiler{
		cfg: cfg, meta: meta, opts: opts,
		plan:    &Plan{Metrics: map[stream.PMID]*MetricPlan{}, InDoms: map[stream.InDomID]*InDomPlan{}},
		names:   map[string]*stream.Desc{},
		metrics: map[stream.PMID]*MetricPlan{},
		indoms:  map[stream.InDomID]*InDomPlan{},
		outVer:  opts.OutputVersion,
	}
	if c.outVer == 0 {
		c.outVer = meta.Label.Version
	}
	for _, d := range meta.Descs {
		for _, n := range d.Names {
			if _, ok := c.names[n]; !ok {
				c.names[n] = d
			}
			// Some old archives pad names with NULs (vldb-disks has
			// "disk.dev.total\x00\x00..."); libpcp reads names as C
			// strings, so pmlogrewrite finds them without the padding.
			if i := strings.IndexByte(n, 0); i >= 0 {
				t := n[:i]
				if _, ok := c.names[t]; !ok {
					c.names[t] = d
				}
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			e.Warnings = c.plan.Warnings
			plan, err = nil, e
		}
	}()
	c.plan.Warnings = append(c.plan.Warnings, cfg.Warnings...)
	c.globals()
	c.indomRules()
	c.metricRules()
	c.textRules()
	c.labelRules()
	c.valueRules()
	c.link()
	c.checkInDoms()
	c.checkOutput()
	for _, mp := range c.pcpMetricOrder() {
		if mp.Changes != 0 || mp.InstMap != nil {
			c.plan.Metrics[mp.Old.PMID] = mp
			c.plan.pcpMetrics = append(c.plan.pcpMetrics, mp)
		}
	}
	for _, ip := range c.indomSpec {
		if ip.Changed() {
			c.plan.InDoms[ip.Old] = ip
		}
	}
	if opts.PCPTrace {
		c.plan.refTrace = c.refTrace()
	}
	return c.plan, nil
}

// failLine is fail where pmlogrewrite names another line.
func (c *compiler) failLine(pos, other Pos, pcpLine int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	panic(&Error{Pos: pos, Other: other, Msg: msg, PCP: UpperFirst(msg), PCPLine: pcpLine})
}

// fail stops the compile with an error pmlogrewrite finds in its parser
// (a specification error, in its words but for the first letter).
func (c *compiler) fail(pos, other Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	panic(&Error{Pos: pos, Other: other, Msg: msg, PCP: UpperFirst(msg)})
}

// failAs is fail with pmlogrewrite's wording of a specification error.
func (c *compiler) failAs(pos Pos, pcp string, format string, args ...any) {
	panic(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...), PCP: pcp})
}

// warnUnless is warn, unless quiet.
func (c *compiler) warnUnless(quiet bool, pos Pos, format string, args ...any) {
	if !quiet {
		c.warn(pos, format, args...)
	}
}

// warn records a warning; set pmlogrewrite's wording with As on the result
// (before the next warning).
func (c *compiler) warn(pos Pos, format string, args ...any) *Warning {
	c.plan.Warnings = append(c.plan.Warnings, Warning{Pos: pos, Msg: fmt.Sprintf(format, args...)})
	return &c.plan.Warnings[len(c.plan.Warnings)-1]
}

// failPCP is fail with pmlogrewrite's wording of a semantic error.
func (c *compiler) failPCP(pos, other Pos, pcp string, format string, args ...any) {
	panic(&Error{Pos: pos, Other: other, Msg: fmt.Sprintf(format, args...), PCP: pcp, Semantic: true})
}

// ---------------------------------------------------------------------------
// global

func (c *compiler) globals() {
	g := &c.plan.Global
	g.pos = map[GlobalKind]Pos{}
	lab := c.meta.Label
	for _, r := range c.cfg.Globals {
		for _, cl := range r.Clauses {
			if prev, ok := g.pos[cl.Kind]; ok {
				c.failLine(cl.Pos, prev, cl.PCPLine, "duplicate global %s clause", cl.Kind)
			}
			if (cl.Kind == GlobalZoneInfo || cl.Kind == GlobalFeatures) && c.outVer < 3 {
				c.fail(cl.Pos, Pos{}, "global %s clause requires output archive version of 3 or greater", cl.Kind)
			}
			s := cl.Str
			switch cl.Kind {
			case GlobalHostname:
				if lab.Hostname == s {
					c.warn(cl.Pos, "global hostname (%s): no change", s).As("Global hostname (%s): No change", s)
					continue
				}
				g.Hostname = &s
			case GlobalTimeZone:
				if lab.Timezone == s {
					c.warn(cl.Pos, "global timezone (%s): no change", s).As("Global timezone (%s): No change", s)
					continue
				}
				g.TimeZone = &s
			case GlobalZoneInfo:
				if lab.Zoneinfo == s {
					c.warn(cl.Pos, "global zoneinfo (%s): no change", s).As("Global zoneinfo (%s): No change", s)
					continue
				}
				g.ZoneInfo = &s
			case GlobalFeatures:
				if lab.Features == cl.Features {
					c.warn(cl.Pos, "global features (%d): no change", cl.Features).As("Global features (%d): No change", cl.Features)
					continue
				}
				f := cl.Features
				g.Features = &f
			case GlobalTime:
				if cl.Time.IsZero() {
					c.warn(cl.Pos, "global time: no change").As("Global time: No change").AtLine(cl.PCPLine)
					continue
				}
				t := cl.Time
				g.Shift = &t
			}
			g.pos[cl.Kind] = cl.Pos
		}
	}
}

// ---------------------------------------------------------------------------
// instance domains

// startInDom finds or creates the spec of an archive indom (start_indom);
// nil when the archive does not have it.
func (c *compiler) startInDom(id stream.InDomID) *InDomPlan {
	if ip := c.indoms[id]; ip != nil {
		return ip
	}
	vs := c.meta.Resolved[id]
	if len(vs) == 0 {
		return nil
	}
	ip := &InDomPlan{Old: id, New: id, Insts: map[int32]*InstChange{}, clausePos: map[int32]Pos{}}
	// An instance number can come back under another name (a PID used
	// again): libpcp's pmGetInDomArchive, which pmlogrewrite's rules
	// match against, gives each number once, with its latest name.
	at := map[int32]int{}
	for _, v := range vs {
		for i, in := range v.Insts {
			name := ""
			if i < len(v.Names) {
				name = v.Names[i]
			}
			if k, ok := at[in]; ok {
				ip.names[k] = name
				continue
			}
			at[in] = len(ip.insts)
			ip.insts = append(ip.insts, in)
			ip.names = append(ip.names, name)
		}
	}
	ip.seq = len(c.indomSpec)
	c.indoms[id] = ip
	c.indomSpec = append(c.indomSpec, ip)
	return ip
}

// archiveInDoms returns the archive's indoms in a stable order.
func (c *compiler) archiveInDoms() []stream.InDomID {
	ids := make([]stream.InDomID, 0, len(c.meta.Resolved))
	for id := range c.meta.Resolved {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (c *compiler) matchInDoms(pos Pos, m InDomPattern) []*InDomPlan {
	var out []*InDomPlan
	for _, id := range c.archiveInDoms() {
		ok := false
		if m.Pred != nil {
			var err error
			ok, err = m.Pred.MatchInDom(id, c.meta.InstancesAt(id, stream.Timestamp{Sec: 1 << 62}))
			if err != nil {
				c.fail(pos, Pos{}, "%v", err)
			}
		} else {
			ok = m.Match(id)
		}
		if ok {
			out = append(out, c.startInDom(id))
		}
	}
	if len(out) == 0 {
		c.warn(pos, "instance domain %s: not in the archive", m).As("Instance domain %s: Instance domain identifier not defined in the PCP archive log", m)
	}
	return out
}

// instNameEq is PCP's instance-name comparison: names match when equal,
// or equal up to the first space of either (inst_name_eq > 0).
func instNameEq(p, q string) bool {
	if p == "" || q == "" {
		return false
	}
	for i := 0; ; i++ {
		pe, qe := i >= len(p), i >= len(q)
		if pe && qe {
			return true
		}
		if pe || p[i] == ' ' {
			return qe || q[i] == ' '
		}
		if qe || q[i] == ' ' {
			return false
		}
		if p[i] != q[i] {
			return false
		}
	}
}

func (c *compiler) indomRules() {
	for _, r := range c.cfg.InDoms {
		specs := c.matchInDoms(r.Pos, r.Match)
		for _, cl := range r.Clauses {
			for _, ip := range specs {
				c.indomClause(ip, cl)
			}
		}
	}
}

func (c *compiler) indomClause(ip *InDomPlan, cl InDomClause) {
	if cl.Dyn != nil {
		v, err := cl.Dyn.EvalInDom(ip.Old, c.meta.InstancesAt(ip.Old, stream.Timestamp{Sec: 1 << 62}))
		id, ok := v.(stream.InDomID)
		if err != nil || !ok || id == stream.InDomNull {
			c.fail(cl.Pos, Pos{}, "indom %s: new indom: want INDOM(domain, serial), got %v (%v)", ip.Old, v, err)
		}
		cl.Target = InDomTarget{Domain: id.Domain(), Serial: id.Serial()}
	}
	switch cl.Op {
	case InDomChangeID:
		if ip.New != ip.Old {
			c.fail(cl.Pos, ip.idPos, "duplicate indom clause for indom %s", ip.Old)
		}
		n := cl.Target.Resolve(ip.Old)
		if n == ip.Old {
			c.warn(cl.Pos, "instance domain %s: indom: no change", ip.Old).As("Instance domain %s: indom: No change", ip.Old)
		} else {
			ip.New, ip.idPos = n, cl.Pos
			if !ip.Pos.IsValid() {
				ip.Pos = cl.Pos
			}
		}
		if cl.Duplicate {
			ip.Duplicate = true
		}
	case InDomRedact, InDomReplace:
		for i, in := range ip.insts {
			ch := ip.Insts[in]
			if ch != nil && (ch.Delete || ch.ChangeName) {
				c.fail(cl.Pos, ip.clausePos[in], "duplicate or conflicting clauses for instance [%d] %q of indom %s", in, ip.names[i], ip.Old)
			}
			name := fmt.Sprintf("%d [redacted]", in)
			if cl.Op == InDomReplace {
				var ok bool
				if name, ok = cl.Change.Apply(ip.names[i]); !ok {
					continue
				}
			}
			if ch == nil {
				ch = &InstChange{}
				ip.Insts[in] = ch
			}
			ch.ChangeName, ch.NewName = true, name
			if _, ok := ip.clausePos[in]; !ok {
				ip.clausePos[in] = cl.Pos
			}
			if !ip.Pos.IsValid() {
				ip.Pos = cl.Pos
			}
		}
	case InDomRename, InDomDeleteName, InDomRenumber, InDomDeleteInst:
		i := -1
		for k := range ip.insts {
			if cl.Op == InDomRename || cl.Op == InDomDeleteName {
				if instNameEq(ip.names[k], cl.OldName) {
					i = k
					break
				}
			} else if ip.insts[k] == cl.OldInst {
				i = k
				break
			}
		}
		if i < 0 {
			if cl.Op == InDomRename || cl.Op == InDomDeleteName {
				c.warn(cl.Pos, "unknown instance %q in iname clause for indom %s", cl.OldName, ip.Old).As("Unknown instance \"%s\" in iname clause for indom %s", cl.OldName, ip.Old)
			} else {
				c.warn(cl.Pos, "unknown instance %d in inst clause for indom %s", cl.OldInst, ip.Old).As("Unknown instance %d in inst clause for indom %s", cl.OldInst, ip.Old)
			}
			return
		}
		in := ip.insts[i]
		ch := ip.Insts[in]
		del := cl.Op == InDomDeleteName || cl.Op == InDomDeleteInst
		if ch != nil {
			byName := cl.Op == InDomRename || cl.Op == InDomDeleteName
			if del || ch.Delete || (byName && ch.ChangeName) || (!byName && ch.ChangeInst) {
				c.fail(cl.Pos, ip.clausePos[in], "duplicate or conflicting clauses for instance [%d] %q of indom %s", in, ip.names[i], ip.Old)
			}
		}
		if ch == nil {
			ch = &InstChange{}
		}
		switch cl.Op {
		case InDomDeleteName, InDomDeleteInst:
			ch.Delete = true
		case InDomRename:
			if ip.names[i] == cl.NewName {
				c.warn(cl.Pos, "instance domain %s: instance %q: no change", ip.Old, ip.names[i]).As("Instance domain %s: Instance: \"%s\": No change", ip.Old, ip.names[i])
				return
			}
			ch.ChangeName, ch.NewName = true, cl.NewName
		case InDomRenumber:
			if in == cl.NewInst {
				c.warn(cl.Pos, "instance domain %s: instance %d: no change", ip.Old, in).As("Instance domain %s: Instance: %d: No change", ip.Old, in)
				return
			}
			ch.ChangeInst, ch.NewInst = true, cl.NewInst
		}
		ip.Insts[in] = ch
		if _, ok := ip.clausePos[in]; !ok {
			ip.clausePos[in] = cl.Pos
		}
		if !ip.Pos.IsValid() {
			ip.Pos = cl.Pos
		}
	}
}

// ---------------------------------------------------------------------------
// metrics

func (c *compiler) startMetric(d *stream.Desc) *MetricPlan {
	if mp := c.metrics[d.PMID]; mp != nil {
		return mp
	}
	mp := &MetricPlan{Old: d, New: *d, OneInst: 0, PickInst: stream.InstNull, clausePos: map[MetricChange]Pos{}}
	mp.New.Names = append([]string(nil), d.Names...)
	if len(d.Names) > 0 {
		mp.name = d.Names[0]
	} else {
		mp.name = d.PMID.String()
	}
	mp.seq, mp.linked = len(c.metrics), c.linking
	c.metrics[d.PMID] = mp
	return mp
}

// pmidHashOrder is the archive's descriptors in the order a walk of
// libpcp's PMID table (hashpmid) visits them: the table a context fills
// with each PMID's first descriptor, in .meta order.
func (c *compiler) pmidHashOrder() []*stream.Desc {
	if c.hashOrder == nil {
		var h pcphash.Hash[*stream.Desc]
		for _, d := range c.meta.Descs {
			if h.Search(uint32(d.PMID)) == nil {
				h.Add(uint32(d.PMID), d)
			}
		}
		c.hashOrder = []*stream.Desc{}
		h.Walk(func(n *pcphash.Node[*stream.Desc]) { c.hashOrder = append(c.hashOrder, n.Data) })
	}
	return c.hashOrder
}

func (c *compiler) matchMetrics(pos Pos, m MetricID) []*MetricPlan {
	var out []*MetricPlan
	switch m.Kind {
	case IDName:
		d := c.names[m.Name]
		if d == nil {
			c.warn(pos, "metric %s: unknown metric name", m.Name).As("Metric: %s: Unknown metric name", m.Name)
			return nil
		}
		return []*MetricPlan{c.startMetric(d)}
	case IDDynamic:
		for _, d := range c.meta.Descs {
			names := d.Names
			if len(names) == 0 {
				names = []string{""}
			}
			for _, n := range names {
				ok, err := m.Pred.MatchMetric(&MetricInfo{Desc: d, Name: n, Names: d.Names})
				if err != nil {
					c.fail(pos, Pos{}, "metric %s: %v", n, err)
				}
				if ok {
					if c.metrics[d.PMID] == nil || !containsPlan(out, c.metrics[d.PMID]) {
						out = append(out, c.startMetric(d))
					}
					break
				}
			}
		}
	default:
		// pmlogrewrite starts the metrics a wildcard names in the order
		// of libpcp's PMID hash table, then applies the clauses walking
		// its list of metrics (metric_root: newest first), those earlier
		// rules started included: the order of its warnings, errors and
		// -v summary.
		for _, d := range c.pmidHashOrder() {
			if m.MatchPMID(d.PMID) {
				c.startMetric(d)
			}
		}
		for _, mp := range c.metrics {
			if m.MatchPMID(mp.Old.PMID) {
				out = append(out, mp)
			}
		}
		slices.SortFunc(out, func(a, b *MetricPlan) int { return cmp.Compare(b.seq, a.seq) })
	}
	if len(out) == 0 {
		w := c.warn(pos, "metric %s: no such metric in the archive", m)
		if m.Kind == IDExact {
			w.As("Metric %s pmNameID: Unknown or illegal metric identifier", m)
		}
	}
	return out
}

func (c *compiler) metricRules() {
	for _, r := range c.cfg.Metrics {
		mps := c.matchMetrics(r.Pos, r.Match)
		for _, cl := range r.Clauses {
			for i, mp := range mps {
				c.metricClause(mp, cl, i == 0)
			}
		}
	}
}

var opChange = map[MetricOp]MetricChange{
	MetricDelete: ChangeDelete, MetricPMID: ChangePMID, MetricName: ChangeName,
	MetricType: ChangeType, MetricSem: ChangeSem, MetricUnits: ChangeUnits, MetricInDom: ChangeInDom,
	MetricStrValue: ChangeStrValue,
}

func (c *compiler) metricClause(mp *MetricPlan, cl MetricClause, first bool) {
	flag := opChange[cl.Op]
	what := cl.Op.String()
	// the checks of walk_metric
	dupok := cl.Op == MetricType && cl.HasIf || cl.Op == MetricDelete && first || cl.Op == MetricStrValue
	if !dupok && mp.Changes&flag != 0 {
		c.fail(cl.Pos, mp.clausePos[flag], "duplicate %s clause for metric %s", what, mp.name)
	}
	if flag != ChangeDelete {
		if mp.Changes&ChangeDelete != 0 {
			c.fail(cl.Pos, mp.clausePos[ChangeDelete], "conflicting %s clause for deleted metric %s", what, mp.name)
		}
	} else if mp.Changes&^ChangeDelete != 0 {
		c.fail(cl.Pos, mp.Pos, "conflicting delete and other clauses for metric %s", mp.name)
	}
	if cl.Dyn != nil {
		cl = c.evalDyn(mp, cl)
	}
	old := mp.Old
	set := func() {
		mp.Changes |= flag
		if _, ok := mp.clausePos[flag]; !ok {
			mp.clausePos[flag] = cl.Pos
		}
		if !mp.Pos.IsValid() {
			mp.Pos = cl.Pos
		}
	}
	// noChange warns; pcp is pmlogrewrite's wording of format.
	noChange := func(pcp, format string, args ...any) {
		all := append([]any{mp.name, old.PMID}, args...)
		w := c.warn(cl.Pos, "metric %s (%s): "+format, all...).AtLine(cl.PCPLine)
		if pcp != "" {
			w.As("Metric: %s (%s): "+pcp, all...)
		}
	}
	switch cl.Op {
	case MetricDelete:
		set()
	case MetricStrValue:
		if old.Type != stream.TypeString {
			// (pmlogrewrite says so with or without -w)
			c.plan.Warnings = append(c.plan.Warnings, Warning{Pos: cl.Pos, Always: true,
				Msg: fmt.Sprintf("metric %s (%s): type PM_TYPE_%s not STRING, cannot change value", mp.name, old.PMID, TypeName(old.Type))})
			return
		}
		mp.StrValue = append(mp.StrValue, cl.Change)
		set()
	case MetricPMID:
		n := cl.PMID.Resolve(old.PMID)
		if n == old.PMID {
			noChange("pmid: No change", "pmid: no change")
			return
		}
		mp.New.PMID = n
		set()
	case MetricName:
		if cl.Name == mp.name {
			noChange("name: No change", "name: no change")
			return
		}
		if d := c.names[cl.Name]; d != nil {
			c.fail(cl.Pos, Pos{}, "metric name %s already assigned for PMID %s", cl.Name, d.PMID)
		}
		// pmlogrewrite replaces the one name (its pmNameID, our first)
		// and keeps the metric's other names.
		mp.New.Names = replaceName(mp.Old.Names, mp.name, cl.Name)
		set()
	case MetricType:
		if cl.HasIf && old.Type != cl.IfType {
			noChange("type: PM_TYPE_%s: No conditional change to PM_TYPE_%s", "type: PM_TYPE_%s: no conditional change to PM_TYPE_%s", TypeName(old.Type), TypeName(cl.Type))
			return
		}
		if !cl.HasIf && cl.Type == old.Type {
			noChange("type: PM_TYPE_%s: No change", "type: PM_TYPE_%s: no change", TypeName(old.Type))
			return
		}
		if !old.Type.Numeric() {
			c.failAs(cl.Pos, fmt.Sprintf("Old type (PM_TYPE_%s) must be numeric", TypeName(old.Type)), "metric %s: old type (PM_TYPE_%s) must be numeric", mp.name, TypeName(old.Type))
		}
		mp.New.Type = cl.Type
		set()
	case MetricSem:
		if cl.Sem == old.Sem {
			noChange("sem: %s: No change", "sem: %s: no change", SemName(old.Sem))
			return
		}
		mp.New.Sem = cl.Sem
		set()
	case MetricUnits:
		// The clause gives the six fields of PCP 6.0.3; PCP 7.2's extra
		// unit, in the low byte, stays the metric's.
		cl.Units = cl.Units&^0xff | old.Units&0xff
		if cl.Units == old.Units {
			c.warn(cl.Pos, "metric %s (%s): units: no change", mp.name, old.PMID).AtLine(cl.PCPLine).As("Metric: %s (%s): units: %s: No change", mp.name, old.PMID, unitsStr(old.Units))
			return
		}
		mp.New.Units = cl.Units
		set()
		sameDims := cl.Units.DimSpace() == old.Units.DimSpace() && cl.Units.DimTime() == old.Units.DimTime() && cl.Units.DimCount() == old.Units.DimCount()
		if cl.Rescale {
			if sameDims {
				mp.Changes |= ChangeRescale
			} else {
				noChange("Dimension changed, cannot rescale", "dimension changed, cannot rescale")
			}
		} else if c.opts.Scale && sameDims {
			mp.Changes |= ChangeRescale
		}
	case MetricInDom:
		mp.ruleEnd = cl.RuleEnd
		n := cl.InDom.Resolve(old.InDom)
		if n == old.InDom {
			noChange("indom: %s: No change", "indom: %s: no change", old.InDom)
			return
		}
		switch cl.Output.Kind {
		case OutputMin, OutputMax, OutputSum, OutputAvg:
			if !old.Type.Numeric() {
				c.fail(cl.Pos, Pos{}, "OUTPUT option MIN, MAX, AVG or SUM requires type to be numeric, not PM_TYPE_%s", TypeName(old.Type))
			}
		}
		mp.New.InDom = n
		set()
		mp.Output = cl.Output.Kind
		switch cl.Output.Kind {
		case OutputInst, OutputIName:
			mp.PickInst, mp.OneInst = cl.Output.Inst, cl.Output.Inst
			mp.pickName, mp.hasPickName = cl.Output.IName, cl.Output.Kind == OutputIName
			if mp.hasPickName {
				mp.PickInst, mp.OneInst = stream.InstNull, stream.InstNull
			}
			mp.Output = OutputInst
			if old.InDom == stream.InDomNull {
				mp.Output = OutputFirst
			}
		case OutputAll:
			if old.InDom != stream.InDomNull && n == stream.InDomNull {
				mp.Output, mp.OneInst = OutputFirst, stream.InstNull
			} else if old.InDom == stream.InDomNull && n != stream.InDomNull {
				mp.Output, mp.OneInst = OutputFirst, 0
			}
		}
	}
}

// evalDyn fills a clause's value from its expression (expr front end).
func (c *compiler) evalDyn(mp *MetricPlan, cl MetricClause) MetricClause {
	v, err := cl.Dyn.EvalMetric(&MetricInfo{Desc: mp.Old, Name: mp.name, Names: mp.Old.Names})
	if err != nil {
		c.fail(cl.Pos, Pos{}, "metric %s: %v", mp.name, err)
	}
	bad := func() {
		c.fail(cl.Pos, Pos{}, "metric %s: %s value %v (%T) has the wrong type%s", mp.name, cl.Op, v, v, clauseHint[cl.Op])
	}
	switch cl.Op {
	case MetricName:
		s, ok := v.(string)
		if !ok {
			bad()
		}
		cl.Name = s
	case MetricType:
		t, ok := v.(stream.Type)
		if !ok || !t.Numeric() {
			bad()
		}
		cl.Type = t
	case MetricSem:
		s, ok := v.(stream.Sem)
		if !ok {
			bad()
		}
		cl.Sem = s
	case MetricUnits:
		u, ok := v.(stream.Units)
		if !ok {
			bad()
		}
		cl.Units = u
	case MetricPMID:
		switch t := v.(type) {
		case PMIDTarget:
			cl.PMID = t
		case stream.PMID:
			cl.PMID = PMIDTarget{Domain: t.Domain(), Cluster: t.Cluster(), Item: t.Item()}
		default:
			bad()
		}
	case MetricInDom:
		switch t := v.(type) {
		case InDomTarget:
			cl.InDom = t
		case stream.InDomID:
			cl.InDom = InDomTarget{Domain: t.Domain(), Serial: t.Serial(), Null: t == stream.InDomNull}
		default:
			bad()
		}
	}
	return cl
}

// clauseHint says what a metric clause's expression must give, for the
// error when it gives something else.
var clauseHint = map[MetricOp]string{
	MetricName:  ": give a string",
	MetricType:  ": give a numeric type (I32 U32 I64 U64 FLOAT DOUBLE, or TYPE(\"U64\"))",
	MetricSem:   ": give COUNTER, INSTANT or DISCRETE",
	MetricUnits: ": give UNITS(\"dimSpace,dimTime,dimCount,scaleSpace,scaleTime,scaleCount\"), e.g. UNITS(\"0,0,1,0,0,ONE\") for a count",
	MetricPMID:  ": give PMID(domain, cluster, item)",
	MetricInDom: ": give INDOM(domain, serial) or NULL",
}

func (c *compiler) valueRules() {
	for _, r := range c.cfg.Values {
		for _, mp := range c.matchMetrics(r.Pos, r.Match) {
			if mp.Changes&ChangeDelete != 0 {
				c.fail(r.Pos, mp.clausePos[ChangeDelete], "value rule for deleted metric %s", mp.name)
			}
			if mp.Value != nil {
				c.fail(r.Pos, mp.clausePos[ChangeValue], "duplicate value rule for metric %s", mp.name)
			}
			mp.Value = r.Expr
			mp.Changes |= ChangeValue
			mp.clausePos[ChangeValue] = r.Pos
			if !mp.Pos.IsValid() {
				mp.Pos = r.Pos
			}
		}
	}
}

// ---------------------------------------------------------------------------
// cross-rule checks (pmlogrewrite.c: link_entries, check_indoms,
// check_output)

func (c *compiler) link() {
	c.linking = true
	defer func() { c.linking = false }()
	for _, ip := range c.indomSpec {
		if !ip.Changed() {
			continue
		}
		for _, d := range c.meta.Descs {
			if d.InDom != ip.Old {
				continue
			}
			mp := c.startMetric(d)
			if len(ip.Insts) > 0 {
				mp.InstMap = ip
			}
			if ip.New == ip.Old {
				continue
			}
			if mp.Changes&ChangeInDom != 0 {
				if mp.New.InDom != ip.New {
					c.failPCP(mp.clausePos[ChangeInDom], ip.idPos, fmt.Sprintf("Conflicting indom change for metric %s (%s from metric clause, %s from indom clause)", mp.name, mp.New.InDom, ip.New),
						"conflicting indom change for metric %s (%s from metric clause, %s from indom clause)", mp.name, mp.New.InDom, ip.New)
				}
			} else {
				mp.Changes |= ChangeInDom
				mp.New.InDom = ip.New
				mp.clausePos[ChangeInDom] = ip.idPos
			}
		}
		c.linkLabels(ip)
	}
	for _, d := range c.meta.Descs {
		mp := c.metrics[d.PMID]
		if mp == nil || mp.New.PMID == d.PMID {
			continue
		}
		c.linkMetricLabels(mp)
	}
	// Help texts follow their indoms and metrics as pmlogrewrite links
	// them, which is the order its -v summary lists them in: the indoms
	// newest first, then the metrics in the order of its list.
	for i := len(c.indomSpec) - 1; i >= 0; i-- {
		if ip := c.indomSpec[i]; ip.Changed() {
			c.linkTexts(ip)
		}
	}
	for _, mp := range c.pcpMetricOrder() {
		if mp.New.PMID != mp.Old.PMID {
			c.linkMetricTexts(mp)
		}
	}
}

// pcpMetricOrder is the metric plans in the order of pmlogrewrite's list
// of metric specs, which its -v summary follows. Each spec goes on the
// front of the list when it is made. Linking made one for every metric
// of the archive, in the order of libpcp's PMID table, at the first
// changed indom, after the rules had made theirs: so the metrics whose
// indom changes come first, in reverse table order, then those of the
// rules, newest first.
func (c *compiler) pcpMetricOrder() []*MetricPlan {
	var out []*MetricPlan
	hash := c.pmidHashOrder()
	for i := len(hash) - 1; i >= 0; i-- {
		if mp := c.metrics[hash[i].PMID]; mp != nil && mp.linked {
			out = append(out, mp)
		}
	}
	var ruled []*MetricPlan
	for _, mp := range c.metrics {
		if !mp.linked {
			ruled = append(ruled, mp)
		}
	}
	sort.Slice(ruled, func(a, b int) bool { return ruled[a].seq > ruled[b].seq })
	return append(out, ruled...)
}

func (c *compiler) checkInDoms() {
	for _, id := range sortedPMIDs(c.metrics) {
		mp := c.metrics[id]
		if mp.InstMap != nil || mp.Changes&ChangeInDom == 0 || mp.New.InDom == stream.InDomNull {
			continue
		}
		var ip *InDomPlan
		for _, s := range c.indomSpec {
			if s.Old == mp.Old.InDom || s.New == mp.New.InDom {
				ip = s
				break
			}
		}
		ok := false
		if ip == nil {
			ok = len(c.meta.Resolved[mp.New.InDom]) > 0
		} else {
			ok = len(c.meta.Resolved) > 0 && ip.New != ip.Old && ip.New == mp.New.InDom
		}
		if !ok {
			c.failPCP(mp.clausePos[ChangeInDom], Pos{}, fmt.Sprintf("New indom (%s) for metric %s is not in the output archive", mp.New.InDom, mp.name),
				"new indom (%s) for metric %s is not in the output archive", mp.New.InDom, mp.name)
		}
	}
	for _, tp := range c.plan.Texts {
		if tp.Key.Type&stream.TextInDom == 0 || !tp.ChangeID {
			continue
		}
		ip := c.indoms[stream.InDomID(tp.Key.Ident)]
		if ip != nil && ip.Changed() {
			continue
		}
		ok := false
		if ip == nil {
			ok = len(c.meta.Resolved[stream.InDomID(tp.NewIdent)]) > 0
		} else {
			ok = ip.New != ip.Old && uint32(ip.New) == tp.NewIdent
		}
		if !ok {
			c.failPCP(tp.flagPos[tfID], Pos{}, fmt.Sprintf("New indom (%s) for help text is not in the output archive", stream.InDomID(tp.NewIdent)),
				"new indom (%s) for help text is not in the output archive", stream.InDomID(tp.NewIdent))
		}
	}
	for i := len(c.plan.Labels) - 1; i >= 0; i-- { // (newest first, as pmlogrewrite checks)
		lp := c.plan.Labels[i]
		if lp.Type&(stream.LabelInDom|stream.LabelInstances) == 0 || !lp.ChangeIdent {
			continue
		}
		ip := c.indoms[stream.InDomID(lp.Ident)]
		if ip != nil && ip.Changed() {
			continue
		}
		ok := false
		if ip == nil {
			ok = len(c.meta.Resolved[stream.InDomID(lp.NewIdent)]) > 0
		} else {
			ok = ip.New != ip.Old && uint32(ip.New) == lp.NewIdent
		}
		if !ok {
			c.failPCP(lp.flagPos[lfID], Pos{}, fmt.Sprintf("New indom (%s) for label set %s is not in the output archive", stream.InDomID(lp.NewIdent), pcpLabelIdent(lp.Type, lp.NewIdent)),
				"new indom (%s) for label set is not in the output archive", stream.InDomID(lp.NewIdent))
		}
	}
	// instance ids and names must stay unique after the rewrite
	for _, ip := range c.indomSpec {
		n := len(ip.insts)
		ids := make([]int32, n)
		names := make([]string, n)
		for i := range ip.insts {
			ids[i], names[i] = ip.insts[i], ip.names[i]
			if ch := ip.Insts[ip.insts[i]]; ch != nil {
				if ch.ChangeInst {
					ids[i] = ch.NewInst
				}
				if ch.ChangeName {
					names[i] = ch.NewName
				}
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i == j {
					continue
				}
				pos := ip.clausePos[ip.insts[i]]
				if !pos.IsValid() {
					pos = ip.clausePos[ip.insts[j]]
				}
				if !pos.IsValid() {
					pos = ip.Pos
				}
				if ids[i] == ids[j] {
					c.failPCP(pos, Pos{}, fmt.Sprintf("Duplicate instance id %d (\"%s\" and \"%s\") for indom %s", ids[i], names[i], names[j], ip.Old),
						"duplicate instance id %d (%q and %q) for indom %s", ids[i], names[i], names[j], ip.Old)
				}
				if instNameEq(names[i], names[j]) {
					c.failPCP(pos, Pos{}, fmt.Sprintf("Duplicate instance name \"%s\" (%d) and \"%s\" (%d) for indom %s", names[i], ids[i], names[j], ids[j], ip.Old),
						"duplicate instance name %q (%d) and %q (%d) for indom %s", names[i], ids[i], names[j], ids[j], ip.Old)
				}
			}
		}
	}
}

func (c *compiler) checkOutput() {
	for _, id := range sortedPMIDs(c.metrics) {
		mp := c.metrics[id]
		if mp.Changes&ChangeInDom == 0 || (mp.Output != OutputInst && mp.Output != OutputFirst) {
			continue
		}
		pos := mp.clausePos[ChangeInDom]
		name, hasName := mp.pickName, mp.hasPickName
		find := func(ip *InDomPlan) bool {
			for i := range ip.insts {
				if hasName {
					if instNameEq(ip.names[i], name) {
						hasName = false
						mp.PickInst, mp.OneInst = ip.insts[i], ip.insts[i]
						return true
					}
				} else if ip.insts[i] == mp.OneInst {
					return true
				}
			}
			return false
		}
		if mp.Old.InDom != stream.InDomNull && mp.Output == OutputInst {
			if ip := c.startInDom(mp.Old.InDom); ip != nil && !find(ip) {
				if hasName {
					c.warn(pos, "instance %q from OUTPUT clause not found in old indom %s", name, mp.Old.InDom).As("Instance \"%s\" from OUTPUT clause not found in old indom %s", name, mp.Old.InDom).AtLine(mp.ruleEnd)
				} else {
					c.warn(pos, "instance %d from OUTPUT clause not found in old indom %s", mp.OneInst, mp.Old.InDom).As("Instance %d from OUTPUT clause not found in old indom %s", mp.OneInst, mp.Old.InDom).AtLine(mp.ruleEnd)
				}
			}
		}
		if mp.New.InDom != stream.InDomNull {
			ip := c.startInDom(mp.New.InDom)
			if ip == nil {
				c.fail(pos, Pos{}, "instance domain %s not found in the archive (needed by the OUTPUT clause)", mp.New.InDom)
			}
			if !find(ip) {
				if hasName {
					c.warn(pos, "instance %q from OUTPUT clause not found in new indom %s", name, mp.New.InDom).As("Instance \"%s\" from OUTPUT clause not found in new indom %s", name, mp.New.InDom).AtLine(mp.ruleEnd)
				} else {
					c.warn(pos, "instance %d from OUTPUT clause not found in new indom %s", mp.OneInst, mp.New.InDom).As("Instance %d from OUTPUT clause not found in new indom %s", mp.OneInst, mp.New.InDom).AtLine(mp.ruleEnd)
				}
			}
			if mp.Old.InDom == stream.InDomNull && mp.OneInst == stream.InstNull {
				mp.OneInst = 0
			}
		}
	}
}

func sortedPMIDs(m map[stream.PMID]*MetricPlan) []stream.PMID {
	ids := make([]stream.PMID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func containsPlan(l []*MetricPlan, mp *MetricPlan) bool {
	for _, x := range l {
		if x == mp {
			return true
		}
	}
	return false
}

// replaceName returns names with old replaced by n (or just n when old is
// not among them).
func replaceName(names []string, old, n string) []string {
	out := append([]string(nil), names...)
	for i, x := range out {
		if x == old {
			out[i] = n
			return out
		}
	}
	return []string{n}
}

// unitsStr is pmUnitsStr's text of u: "" for no dimension and no scale.
func unitsStr(u stream.Units) string {
	if u == 0 {
		return ""
	}
	return u.String()
}
