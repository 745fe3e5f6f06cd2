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
	"fmt"
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
// the plan, with pmlogrewrite's checks and words: a second clause of a
// kind, or a clause beside a DELETE, in one spec is an error (walk_label),
// and a clause that changes nothing leaves the spec as it was, with a
// warning.
func (c *compiler) pcpClause(lp *PCPLabelSpec, cl LabelClause) {
	flag := labelFlag(cl.Op)
	check, which := flag, map[uint8]string{lfDel: "delete", lfLabel: "label", lfValue: "value", lfID: "id", lfInst: "id"}[flag]
	if flag == lfInst {
		check = lfID // (pmlogrewrite checks an INSTANCE clause as an id clause)
	}
	obj := pcpLabelObject(lp)
	switch {
	case lp.flags&check != 0:
		c.failAs(cl.Pos, fmt.Sprintf("Duplicate %s clause for %s", which, obj), "duplicate %s clause for label set", which)
	case flag != lfDel && lp.flags&lfDel != 0:
		c.failAs(cl.Pos, fmt.Sprintf("Conflicting %s clause for deleted %s", which, obj), "conflicting %s clause for deleted label set", which)
	case flag == lfDel && lp.flags&^lfDel != 0:
		c.failAs(cl.Pos, "Conflicting delete and other clauses for "+obj, "conflicting delete and other clauses for label set")
	}
	nochange := func(what string) {
		native := map[string]string{"label": "name"}[what]
		if native == "" {
			native = what
		}
		c.warn(cl.Pos, "label %s: no change", native).As("%s", pcpNoChange(lp, what))
	}
	switch cl.Op {
	case LabelDelete:
	case LabelInstance:
		if cl.Instance == lp.Inst {
			nochange("instance")
			return
		}
	case LabelRename:
		if lp.Name != nil && *lp.Name == cl.Name {
			nochange("label")
			return
		}
		s := cl.Name
		lp.NewName = &s
	case LabelValue:
		if lp.Value != nil && *lp.Value == cl.Value {
			nochange("value")
			return
		}
		s := cl.Value
		lp.NewValue = &s
	default:
		n := c.labelIdent(lp.Ident, cl)
		if n == lp.Ident {
			nochange("id")
			return
		}
		lp.NewIdent = n
	}
	lp.flags |= flag
}

// pcpLabelObject is how pmlogrewrite's walk_label names a spec's label
// set in its errors (a domain's identifier read as a PMID, as it does).
func pcpLabelObject(lp *PCPLabelSpec) string {
	p := stream.PMID(lp.Ident)
	switch lp.Type {
	case stream.LabelContext:
		return "context label"
	case stream.LabelDomain:
		return fmt.Sprintf("label for domain %d", p.Domain())
	case stream.LabelCluster:
		return fmt.Sprintf("label for cluster %d.%d", p.Domain(), p.Cluster())
	case stream.LabelItem:
		return "label for metric " + p.String()
	case stream.LabelInDom:
		return "label for indom " + stream.InDomID(lp.Ident).String()
	}
	return "label for the instances of indom " + stream.InDomID(lp.Ident).String()
}

// pcpNoChange is pmlogrewrite's warning for a label clause (what: "id",
// "label", "value" or "instance") that changes nothing, in the words of
// each of its grammar's rules (some of them copied from another type's).
func pcpNoChange(lp *PCPLabelSpec, what string) string {
	p, in := stream.PMID(lp.Ident), stream.InDomID(lp.Ident)
	cluster := fmt.Sprintf("Label for cluster %d.%d: %s: No change", p.Domain(), p.Cluster(), what)
	switch lp.Type {
	case stream.LabelContext:
		if what == "label" {
			return "Label for context: label: No change"
		}
		return cluster
	case stream.LabelDomain:
		switch what {
		case "id":
			return fmt.Sprintf("Label for metric domain: %d: No change", lp.Ident)
		case "label":
			return fmt.Sprintf("Label for domain %d: label: No change", lp.Ident)
		}
		return cluster
	case stream.LabelCluster:
		if what == "id" {
			return fmt.Sprintf("Label for cluster: %d.%d: No change", p.Domain(), p.Cluster())
		}
		return cluster
	case stream.LabelItem:
		if what == "id" {
			return fmt.Sprintf("Label for metric: %s: item: No change", p)
		}
		return fmt.Sprintf("Label for metric %s: %s: No change", p, what)
	case stream.LabelInDom:
		if what == "id" {
			what = "indom"
		}
		return fmt.Sprintf("Label for instance domain %s: %s: No change", in, what)
	}
	switch what {
	case "id":
		return fmt.Sprintf("Label for instance domain %s: indom: No change", in)
	case "instance":
		return fmt.Sprintf("Label for instance domain %s instance %d: instance: No change", in, lp.Inst)
	}
	return fmt.Sprintf("Label for instances of instance domain %s: %s: No change", in, what)
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
