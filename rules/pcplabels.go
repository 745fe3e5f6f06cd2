package rules

// pmlogrewrite's label change specs, kept beside the plan for its -v
// summary (ReportPCP). The plan's own LabelPlans say what the rewrite
// does; these say it the way pmlogrewrite 6.0.3 lists it: one spec per
// label set a rule finds (per instance domain, not per instance, for
// instance labels), found again or made as its start_label does, NEW
// labels gathered into specs as its new_*_label functions do, every spec
// made prepended to its list, which the summary walks from the head:
// newest first. The rules find label sets, metrics and instance domains
// by walking libpcp's hash tables (internal/pcphash), so their order is
// the tables'.

import (
	"slices"
	"strings"

	"github.com/pcptools/pcptools/internal/pcphash"
	"github.com/pcptools/pcptools/stream"
)

// lfNew marks a spec with NEW labels (pmlogrewrite's LABEL_NEW).
const lfNew uint8 = 0x40

// PCPLabelSpec is one of pmlogrewrite's label change specs.
type PCPLabelSpec struct {
	Type, Ident uint32
	// Inst: for instance labels, the instance the rule named, or -1
	// (every instance); 0 for the other types.
	Inst        int32
	Name, Value *string // what the rule selected by (nil: any)

	flags             uint8
	NewIdent          uint32
	NewName, NewValue *string
	// New are the NEW labels, sorted by name, a later label of a name
	// replacing the earlier (libpcp's __pmAddLabels); NewInst is their
	// set's instance.
	New     []NewLabel
	NewInst int32
}

// pcpStart is pmlogrewrite's start_label: the newest spec of the type and
// identifier, of the instance (any, for -1), whose name and value are
// those the rule gives (any, for a rule that gives none), or a new one.
func (c *compiler) pcpStart(ty, id uint32, inst int32, name, value *string) *PCPLabelSpec {
	specs := c.plan.pcpLabels
	for i := len(specs) - 1; i >= 0; i-- {
		lp := specs[i]
		if lp.Type == ty && lp.Ident == id && (inst == -1 || inst == lp.Inst) &&
			(name == nil || lp.Name != nil && *name == *lp.Name) &&
			(value == nil || lp.Value != nil && *value == *lp.Value) {
			return lp
		}
	}
	return c.pcpCreate(ty, id, inst, name, value)
}

func (c *compiler) pcpCreate(ty, id uint32, inst int32, name, value *string) *PCPLabelSpec {
	lp := &PCPLabelSpec{Type: ty, Ident: id, Inst: inst, Name: name, Value: value, NewIdent: id}
	c.plan.pcpLabels = append(c.plan.pcpLabels, lp)
	return lp
}

// pcpNew adds a NEW label to the spec pmlogrewrite's new_*_label finds
// for the object (the newest of its type and object that selects no label
// name; for an instance domain, one that names no instance, which none
// does: each NEW indom label gets a spec of its own, as in 6.0.3), or to
// a new one.
func (c *compiler) pcpNew(ty, id uint32, inst int32, n NewLabel) {
	var lp *PCPLabelSpec
	specs := c.plan.pcpLabels
	for i := len(specs) - 1; i >= 0 && lp == nil; i-- {
		s := specs[i]
		if s.Type != ty || s.Name != nil {
			continue
		}
		switch ty {
		case stream.LabelContext:
			lp = s
		case stream.LabelCluster:
			a, b := stream.PMID(s.Ident), stream.PMID(id)
			if a.Domain() == b.Domain() && a.Cluster() == b.Cluster() {
				lp = s
			}
		case stream.LabelInDom:
			if s.Ident == id && s.Inst == -1 {
				lp = s
			}
		case stream.LabelInstances:
			if s.Ident == id && s.Inst == inst {
				lp = s
			}
		default:
			if s.Ident == id {
				lp = s
			}
		}
	}
	if lp == nil {
		if ty != stream.LabelInstances {
			inst = 0
		}
		lp = c.pcpCreate(ty, id, inst, nil, nil)
	}
	k, found := slices.BinarySearchFunc(lp.New, n.Name, func(l NewLabel, name string) int { return strings.Compare(l.Name, name) })
	if found {
		lp.New[k] = n
	} else {
		lp.New = slices.Insert(lp.New, k, n)
	}
	lp.NewInst = inst
	lp.flags |= lfNew
}

// pcpClause records a clause's change in a spec, as labelClause does in
// the plan (a clause that changes nothing leaves the spec as it was).
func (c *compiler) pcpClause(lp *PCPLabelSpec, cl LabelClause) {
	flag := labelFlag(cl.Op)
	switch cl.Op {
	case LabelDelete, LabelInstance:
	case LabelRename:
		if lp.Name != nil && *lp.Name == cl.Name {
			return
		}
		s := cl.Name
		lp.NewName = &s
	case LabelValue:
		if lp.Value != nil && *lp.Value == cl.Value {
			return
		}
		s := cl.Value
		lp.NewValue = &s
	default:
		n := c.labelIdent(lp.Ident, cl)
		if n == lp.Ident {
			return
		}
		lp.NewIdent = n
	}
	lp.flags |= flag
}

// labelHashOrder is the archive's label sets' (type, identifier) pairs in
// the order a walk of libpcp's label table (hashlabels) visits them: a
// table by type (without the compound and optional bits) of tables by
// identifier (PM_ID_NULL for the context), each pair added when its first
// label set is read.
func (c *compiler) labelHashOrder() [][2]uint32 {
	if c.labelOrder == nil {
		var byType pcphash.Hash[*pcphash.Hash[struct{}]]
		for _, ls := range c.meta.LabelSets {
			ty, id := ls.Type&stream.LabelTypeMask, ls.Ident
			if ty == stream.LabelContext {
				id = uint32(stream.PMIDNull)
			}
			n := byType.Search(ty)
			if n == nil {
				n = byType.Add(ty, &pcphash.Hash[struct{}]{})
			}
			if n.Data.Search(id) == nil {
				n.Data.Add(id, struct{}{})
			}
		}
		c.labelOrder = [][2]uint32{}
		byType.Walk(func(n *pcphash.Node[*pcphash.Hash[struct{}]]) {
			n.Data.Walk(func(m *pcphash.Node[struct{}]) { c.labelOrder = append(c.labelOrder, [2]uint32{n.Key, m.Key}) })
		})
	}
	return c.labelOrder
}

// indomHashRank is each instance domain's place in a walk of libpcp's
// instance domain table (hashindom), which adds a domain at its first
// record.
func (c *compiler) indomHashRank() map[uint32]int {
	if c.indomRank == nil {
		var h pcphash.Hash[struct{}]
		for _, d := range c.meta.InDoms {
			if h.Search(uint32(d.InDom)) == nil {
				h.Add(uint32(d.InDom), struct{}{})
			}
		}
		c.indomRank = map[uint32]int{}
		h.Walk(func(n *pcphash.Node[struct{}]) { c.indomRank[n.Key] = len(c.indomRank) })
	}
	return c.indomRank
}

// pcpLabelRule makes or finds the specs of a rule's target, as
// pmlogrewrite's grammar does before it reads the rule's clauses: the
// label sets of the target's type, in hashlabels order, that the target
// selects (one spec per instance domain for instance labels, for the
// instance the rule names, or -1 for all; none when the rule names an
// instance that the domain never had).
func (c *compiler) pcpLabelRule(r *LabelRule, pmid stream.PMID) []*PCPLabelSpec {
	tg := r.Target
	var out []*PCPLabelSpec
	for _, k := range c.labelHashOrder() {
		if k[0] != tg.Type || !c.labelMatch(tg, pmid, k[1]) {
			continue
		}
		var inst int32
		if tg.Type == stream.LabelInstances {
			inst = -1
			switch {
			case tg.HasInstName:
				inst = -2
				if ip := c.startInDom(stream.InDomID(k[1])); ip != nil {
					for i, in := range ip.insts {
						if instNameEq(ip.names[i], tg.InstName) {
							inst = in
							break
						}
					}
				}
				if inst == -2 {
					c.warn(r.Pos, "instance domain %s: no instance %q", stream.InDomID(k[1]), tg.InstName).As("Instance domain %s: no instance \"%s\" found", stream.InDomID(k[1]), tg.InstName)
					continue
				}
			case !tg.AnyInst:
				inst = tg.Inst
			}
		}
		lp := c.pcpStart(tg.Type, k[1], inst, r.Name, r.Value)
		if !slices.Contains(out, lp) {
			out = append(out, lp)
		}
	}
	return out
}

// pcpNewOrder puts the objects a NEW clause adds a label to in the order
// pmlogrewrite's new_*_label functions make their specs: metrics (and
// the clusters of metrics) in hashpmid order, instance domains in
// hashindom order, the instances of one domain in the order given.
func (c *compiler) pcpNewOrder(adds []NewLabel) []NewLabel {
	if len(adds) < 2 {
		return adds
	}
	rank := make([]int, len(adds))
	switch adds[0].Type {
	case stream.LabelItem, stream.LabelCluster:
		r := map[uint32]int{}
		for i, d := range c.pmidHashOrder() {
			k := uint32(d.PMID)
			if adds[0].Type == stream.LabelCluster {
				k = uint32(stream.NewPMID(d.PMID.Domain(), d.PMID.Cluster(), 0))
			}
			if _, ok := r[k]; !ok {
				r[k] = i
			}
		}
		for i, n := range adds {
			rank[i] = r[n.Ident]
		}
	case stream.LabelInDom, stream.LabelInstances:
		// (newLabels adds one domain's instances in the reverse of the
		// order pmlogrewrite makes their specs)
		r := c.indomHashRank()
		for i, n := range adds {
			rank[i] = r[n.Ident]*len(adds) + len(adds) - i
		}
	}
	idx := make([]int, len(adds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank[a] - rank[b] })
	out := make([]NewLabel, len(adds))
	for i, k := range idx {
		out[i] = adds[k]
	}
	return out
}
