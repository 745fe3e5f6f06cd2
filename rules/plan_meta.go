package rules

import (
	"github.com/pcptools/pcptools/internal/pcphash"
	"github.com/pcptools/pcptools/stream"
)

// Help text and label rules. pmlogrewrite keeps one change spec per text
// (type, ident[, content]) and per label (type, ident, instance[, name,
// value]); so does this file, with the same duplicate and conflict checks.
//
// Deliberate differences from pmlogrewrite 6.0.3, which are bugs there:
// every clause of a text or label rule applies to every text or label the
// rule selects (6.0.3 applies only the first clause when a rule selects
// several, and aborts on an assertion for a second clause when it selects
// one); a metric's PMID change moves its cluster labels too (6.0.3 builds
// the cluster key wrongly and never finds them).

const (
	tfID     uint8 = 2
	tfText   uint8 = 8
	tfDelete uint8 = 16
)

func textKind(flag uint8) string {
	switch flag {
	case tfID:
		return "id"
	case tfText:
		return "text"
	}
	return "delete"
}

func textTypeStr(ty uint32) string {
	if ty&stream.TextOneline != 0 {
		return "one line"
	}
	return "help"
}

func (c *compiler) startText(key TextKey, content *string, old string) *TextPlan {
	for _, tp := range c.plan.Texts {
		if tp.Key == key && (content == nil && tp.Content == nil || content != nil && tp.Content != nil && *content == *tp.Content) {
			return tp
		}
	}
	tp := &TextPlan{Key: key, Content: content, NewIdent: key.Ident, flagPos: map[uint8]Pos{}, oldText: old}
	if content != nil {
		tp.oldText = *content
	}
	c.plan.Texts = append(c.plan.Texts, tp)
	return tp
}

// pcpTextOrder is the archive's help texts in the order pmlogrewrite's
// text rules visit them, which is the order its -v summary lists the
// texts they change in (newest first): libpcp keeps the texts in a table
// of tables, by type and then by ident, a later text of a type and ident
// replacing the earlier one, and a rule walks both bucket by bucket
// (internal/pcphash).
func pcpTextOrder(texts []*stream.Text) []*stream.Text {
	var byType pcphash.Hash[*pcphash.Hash[*stream.Text]]
	for _, t := range texts {
		n := byType.Search(t.Type)
		if n == nil {
			n = byType.Add(t.Type, &pcphash.Hash[*stream.Text]{})
		}
		if m := n.Data.Search(t.Ident); m != nil {
			m.Data = t
		} else {
			n.Data.Add(t.Ident, t)
		}
	}
	out := make([]*stream.Text, 0, len(texts))
	byType.Walk(func(n *pcphash.Node[*pcphash.Hash[*stream.Text]]) {
		n.Data.Walk(func(m *pcphash.Node[*stream.Text]) { out = append(out, m.Data) })
	})
	return out
}

// pcpTexts is pcpTextOrder of the archive's texts, made once.
func (c *compiler) pcpTexts() []*stream.Text {
	if c.textOrder == nil {
		c.textOrder = pcpTextOrder(c.meta.Texts)
	}
	return c.textOrder
}

func (c *compiler) textRules() {
	texts := c.pcpTexts()
	for _, r := range c.cfg.Texts {
		var specs []*TextPlan
		var pmid stream.PMID = stream.PMIDNull
		if !r.IsInDom && r.Metric.Kind == IDName {
			d := c.names[r.Metric.Name]
			if d == nil {
				c.warn(r.Pos, "metric %s: unknown metric name", r.Metric.Name)
				continue
			}
			pmid = d.PMID
		}
		seen := map[TextKey]bool{}
		for _, t := range texts {
			k := TextKey{t.Type, t.Ident}
			if seen[k] {
				continue
			}
			if r.Pred != nil {
				ok, err := r.Pred.MatchText(t)
				if err != nil {
					c.fail(r.Pos, Pos{}, "%v", err)
				}
				if !ok {
					continue
				}
			} else {
				if t.Type&(stream.TextOneline|stream.TextHelp)&r.Types == 0 {
					continue
				}
				if r.IsInDom {
					if t.Type&stream.TextInDom == 0 || !r.InDom.Match(stream.InDomID(t.Ident)) {
						continue
					}
				} else {
					if t.Type&stream.TextPMID == 0 {
						continue
					}
					if pmid != stream.PMIDNull {
						if stream.PMID(t.Ident) != pmid {
							continue
						}
					} else if !r.Metric.MatchPMID(stream.PMID(t.Ident)) {
						continue
					}
				}
			}
			seen[k] = true
			specs = append(specs, c.startText(k, r.Content, t.Text))
		}
		if len(specs) == 0 {
			c.warn(r.Pos, "text rule selects no help text in the archive")
		}
		for _, cl := range r.Clauses {
			for _, tp := range specs {
				c.textClause(tp, cl)
			}
		}
	}
}

func (c *compiler) textObj(tp *TextPlan) string {
	if tp.Key.Type&stream.TextPMID != 0 {
		return textTypeStr(tp.Key.Type) + " text for metric " + stream.PMID(tp.Key.Ident).String()
	}
	return textTypeStr(tp.Key.Type) + " text for indom " + stream.InDomID(tp.Key.Ident).String()
}

func (c *compiler) textClause(tp *TextPlan, cl TextClause) {
	if cl.Dyn != nil {
		v, err := cl.Dyn.EvalText(&stream.Text{Type: tp.Key.Type, Ident: tp.Key.Ident, Text: tp.oldText})
		if err != nil {
			c.fail(cl.Pos, Pos{}, "%v", err)
		}
		switch id := v.(type) {
		case stream.PMID:
			if cl.Op != TextMetric || tp.Key.Type&stream.TextPMID == 0 {
				c.fail(cl.Pos, Pos{}, "metric = ... applies to metric help text only")
			}
			cl.PMID = PMIDTarget{Domain: id.Domain(), Cluster: id.Cluster(), Item: id.Item()}
		case stream.InDomID:
			if cl.Op != TextInDom || tp.Key.Type&stream.TextInDom == 0 {
				c.fail(cl.Pos, Pos{}, "indom = ... applies to indom help text only")
			}
			cl.InDom = InDomTarget{Domain: id.Domain(), Serial: id.Serial()}
		default:
			c.fail(cl.Pos, Pos{}, "want PMID(...) or INDOM(...), got %v", v)
		}
	}
	flag := map[TextOp]uint8{TextDelete: tfDelete, TextChange: tfText, TextMetric: tfID, TextInDom: tfID}[cl.Op]
	if tp.flags&flag != 0 {
		c.fail(cl.Pos, tp.flagPos[flag], "duplicate %s clause for %s", textKind(flag), c.textObj(tp))
	}
	if flag != tfDelete && tp.flags&tfDelete != 0 {
		c.fail(cl.Pos, tp.flagPos[tfDelete], "conflicting %s clause for deleted %s", textKind(flag), c.textObj(tp))
	}
	if flag == tfDelete && tp.flags&^tfDelete != 0 {
		c.fail(cl.Pos, tp.Pos, "conflicting delete and other clauses for %s", c.textObj(tp))
	}
	switch cl.Op {
	case TextDelete:
		tp.Delete = true
	case TextChange:
		if tp.oldText == cl.Text {
			c.warn(cl.Pos, "help text: no change")
			return
		}
		s := cl.Text
		tp.NewText = &s
	case TextMetric:
		n := uint32(cl.PMID.Resolve(stream.PMID(tp.Key.Ident)))
		if n == tp.Key.Ident {
			c.warn(cl.Pos, "text for metric %s: metric: no change", stream.PMID(tp.Key.Ident))
			return
		}
		for _, o := range c.plan.Texts {
			if o != tp && o.ChangeID && o.Key.Type == tp.Key.Type && o.NewIdent == n {
				c.fail(cl.Pos, o.flagPos[tfID], "text for metric %s: metric: conflicting metric change", stream.PMID(tp.Key.Ident))
			}
		}
		tp.ChangeID, tp.NewIdent = true, n
	case TextInDom:
		n := uint32(cl.InDom.Resolve(stream.InDomID(tp.Key.Ident)))
		if n == tp.Key.Ident {
			c.warn(cl.Pos, "text for instance domain %s: indom: no change", stream.InDomID(tp.Key.Ident))
			return
		}
		tp.ChangeID, tp.NewIdent = true, n
	}
	tp.flags |= flag
	tp.flagPos[flag] = cl.Pos
	if !tp.Pos.IsValid() {
		tp.Pos = cl.Pos
	}
}

// linkTexts moves the help text of a renumbered indom with it.
func (c *compiler) linkTexts(ip *InDomPlan) {
	if ip.New == ip.Old {
		return
	}
	for _, t := range c.pcpTexts() {
		if t.Type&stream.TextInDom == 0 || stream.InDomID(t.Ident) != ip.Old {
			continue
		}
		tp := c.startText(TextKey{t.Type, t.Ident}, nil, t.Text)
		c.linkTextID(tp, uint32(ip.New), ip.idPos, "indom")
	}
}

// linkMetricTexts moves the help text of a renumbered metric with it.
func (c *compiler) linkMetricTexts(mp *MetricPlan) {
	for _, t := range c.pcpTexts() {
		if t.Type&stream.TextPMID == 0 || stream.PMID(t.Ident) != mp.Old.PMID {
			continue
		}
		tp := c.startText(TextKey{t.Type, t.Ident}, nil, t.Text)
		c.linkTextID(tp, uint32(mp.New.PMID), mp.clausePos[ChangePMID], "pmid")
	}
}

func (c *compiler) linkTextID(tp *TextPlan, n uint32, pos Pos, what string) {
	if tp.flags&tfID != 0 {
		if tp.NewIdent != n {
			c.fail(tp.flagPos[tfID], pos, "conflicting %s change for help text", what)
		}
		return
	}
	tp.flags |= tfID
	tp.ChangeID, tp.NewIdent = true, n
	tp.flagPos[tfID] = pos
}

// ---------------------------------------------------------------------------
// labels

const (
	lfID    uint8 = 0x02
	lfLabel uint8 = 0x04
	lfInst  uint8 = 0x08
	lfValue uint8 = 0x10
	lfDel   uint8 = 0x20
)

func (c *compiler) startLabel(ty, ident uint32, inst int32, name, value *string) *LabelPlan {
	for _, lp := range c.plan.Labels {
		if lp.Type == ty && lp.Ident == ident && lp.Inst == inst && eqPtr(lp.Name, name) && eqPtr(lp.Value, value) {
			return lp
		}
	}
	lp := &LabelPlan{Type: ty, Ident: ident, Inst: inst, Name: name, Value: value, NewIdent: ident, NewInst: inst, flagPos: map[uint8]Pos{}}
	c.plan.Labels = append(c.plan.Labels, lp)
	return lp
}

func eqPtr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// labelTargetPMID is the metric a rule's target names by name (PMIDNull
// for any other target); false for a name the archive does not have.
func (c *compiler) labelTargetPMID(r *LabelRule) (stream.PMID, bool) {
	tg := r.Target
	if tg.Type == stream.LabelItem && tg.Metric.Kind == IDName {
		d := c.names[tg.Metric.Name]
		if d == nil {
			return stream.PMIDNull, false
		}
		return d.PMID, true
	}
	return stream.PMIDNull, true
}

// labelTargets lists the (type, ident, inst) of the archive's label sets
// that a rule selects.
func (c *compiler) labelTargets(r *LabelRule) [][3]uint32 {
	tg := r.Target
	pmid, ok := c.labelTargetPMID(r)
	if !ok {
		c.warn(r.Pos, "metric %s: unknown metric name", tg.Metric.Name).As("Metric: %s: Unknown metric name", tg.Metric.Name)
		return nil
	}
	var out [][3]uint32
	seen := map[[3]uint32]bool{}
	for _, ls := range c.meta.LabelSets {
		if ls.Type != tg.Type {
			continue
		}
		id := ls.Ident
		if !c.labelMatch(tg, pmid, id) {
			continue
		}
		if tg.Type != stream.LabelInstances {
			k := [3]uint32{ls.Type, id, 0xffffffff}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
			continue
		}
		for _, s := range ls.Sets {
			if !tg.AnyInst {
				if tg.HasInstName {
					ip := c.startInDom(stream.InDomID(id))
					ok := false
					if ip != nil {
						for i, in := range ip.insts {
							if in == s.Inst && instNameEq(ip.names[i], tg.InstName) {
								ok = true
							}
						}
					}
					if !ok {
						continue
					}
				} else if s.Inst != tg.Inst {
					continue
				}
			}
			k := [3]uint32{ls.Type, id, uint32(s.Inst)}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// labelMatch reports whether the label sets of identifier id (of the
// target's type) are the target's; pmid is the metric a target names by
// name (PMIDNull otherwise).
func (c *compiler) labelMatch(tg LabelTarget, pmid stream.PMID, id uint32) bool {
	switch tg.Type {
	case stream.LabelContext:
		return true
	case stream.LabelDomain:
		return id == tg.Domain
	case stream.LabelCluster:
		p := stream.PMID(id)
		return p.Domain() == tg.Cluster.Domain && (tg.Cluster.StarCluster || p.Cluster() == tg.Cluster.Cluster)
	case stream.LabelItem:
		if pmid != stream.PMIDNull {
			return stream.PMID(id) == pmid
		}
		return tg.Metric.MatchPMID(stream.PMID(id))
	case stream.LabelInDom, stream.LabelInstances:
		return tg.InDom.Match(stream.InDomID(id))
	}
	return false
}

func (c *compiler) labelRules() {
	for _, r := range c.cfg.Labels {
		var specs []*LabelPlan
		var pcp []*PCPLabelSpec
		if r.Pred != nil {
			specs = c.labelsByPred(r)
		} else {
			for _, k := range c.labelTargets(r) {
				specs = append(specs, c.startLabel(k[0], k[1], int32(k[2]), r.Name, r.Value))
			}
			if pmid, ok := c.labelTargetPMID(r); ok {
				pcp = c.pcpLabelRule(r, pmid)
			}
		}
		for _, cl := range r.Clauses {
			if cl.Op == LabelNew {
				c.newLabels(r, cl)
				continue
			}
			// pmlogrewrite's specs first: its checks and warnings, in
			// its words, where it has them
			for _, lp := range pcp {
				c.pcpClause(lp, cl)
			}
			for _, lp := range specs {
				c.labelClause(lp, cl, r.Pred == nil)
			}
		}
	}
}

func labelFlag(op LabelOp) uint8 {
	switch op {
	case LabelDelete:
		return lfDel
	case LabelRename:
		return lfLabel
	case LabelValue:
		return lfValue
	case LabelInstance:
		return lfInst
	}
	return lfID
}

// labelClause applies a clause to a label plan; quiet: a clause that
// changes nothing has been warned about already (pcpClause).
func (c *compiler) labelClause(lp *LabelPlan, cl LabelClause, quiet bool) {
	flag := labelFlag(cl.Op)
	kinds := map[uint8]string{lfDel: "delete", lfLabel: "label", lfValue: "value", lfInst: "instance", lfID: "id"}
	obj := "label set"
	if lp.flags&flag != 0 && flag != lfID {
		c.fail(cl.Pos, lp.flagPos[flag], "duplicate %s clause for %s", kinds[flag], obj)
	}
	if flag != lfDel && lp.flags&lfDel != 0 {
		c.fail(cl.Pos, lp.flagPos[lfDel], "conflicting %s clause for deleted %s", kinds[flag], obj)
	}
	if flag == lfDel && lp.flags&^lfDel != 0 {
		c.fail(cl.Pos, lp.Pos, "conflicting delete and other clauses for %s", obj)
	}
	switch cl.Op {
	case LabelDelete:
		lp.Delete = true
	case LabelRename:
		if lp.Name != nil && *lp.Name == cl.Name {
			c.warnUnless(quiet, cl.Pos, "label name: no change")
			return
		}
		s := cl.Name
		lp.NewName = &s
	case LabelValue:
		if lp.Value != nil && *lp.Value == cl.Value {
			c.warnUnless(quiet, cl.Pos, "label value: no change")
			return
		}
		s := cl.Value
		lp.NewValue = &s
	case LabelInstance:
		if lp.flags&lfInst != 0 {
			c.fail(cl.Pos, lp.flagPos[lfInst], "duplicate instance clause for label set")
		}
		if cl.Instance == lp.Inst {
			c.warnUnless(quiet, cl.Pos, "label instance: no change")
			return
		}
		lp.ChangeInst, lp.NewInst = true, cl.Instance
	default:
		if (cl.Op == LabelInDom || cl.Op == LabelInstances) && (lp.Type == stream.LabelInDom || lp.Type == stream.LabelInstances) && lp.ChangeIdent {
			c.fail(cl.Pos, lp.flagPos[lfID], "duplicate label clause for indom %s", stream.InDomID(lp.Ident))
		}
		n := c.labelIdent(lp.Ident, cl)
		if n == lp.Ident {
			c.warnUnless(quiet, cl.Pos, "label id: no change")
			return
		}
		lp.ChangeIdent, lp.NewIdent = true, n
	}
	lp.flags |= flag
	lp.flagPos[flag] = cl.Pos
	if !lp.Pos.IsValid() {
		lp.Pos = cl.Pos
	}
}

// labelIdent is the new identifier an ID clause gives the label sets of
// identifier ident.
func (c *compiler) labelIdent(ident uint32, cl LabelClause) uint32 {
	switch cl.Op {
	case LabelDomain:
		return cl.Domain
	case LabelCluster:
		p := stream.PMID(ident)
		cc := cl.Cluster.Cluster
		if cl.Cluster.StarCluster {
			cc = p.Cluster()
		}
		return uint32(stream.NewPMID(cl.Cluster.Domain, cc, 0))
	case LabelItem:
		return uint32(cl.PMID.Resolve(stream.PMID(ident)))
	case LabelInDom, LabelInstances:
		return uint32(cl.InDom.Resolve(stream.InDomID(ident)))
	}
	return ident
}

// newLabels adds a NEW label to every object of the archive the rule's
// target names (its metrics, clusters, indoms or instances, not only those
// that already have labels), as pmlogrewrite does.
func (c *compiler) newLabels(r *LabelRule, cl LabelClause) {
	tg := r.Target
	add := func(ty, id uint32, inst int32) {
		for _, n := range c.plan.New {
			if n.Type == ty && n.Ident == id && n.Inst == inst && n.Name == cl.Name && n.Value == cl.Value {
				return
			}
		}
		c.plan.New = append(c.plan.New, NewLabel{Type: ty, Ident: id, Inst: inst, Name: cl.Name, Value: cl.Value, Pos: cl.Pos})
	}
	before := len(c.plan.New)
	switch tg.Type {
	case stream.LabelContext:
		add(stream.LabelContext, uint32(stream.PMIDNull), stream.InstNull)
	case stream.LabelDomain:
		for _, d := range c.meta.Descs {
			if d.PMID.Domain() == tg.Domain {
				add(stream.LabelDomain, tg.Domain, stream.InstNull)
				break
			}
		}
	case stream.LabelCluster:
		for _, d := range c.meta.Descs {
			p := d.PMID
			if p.Domain() == tg.Cluster.Domain && (tg.Cluster.StarCluster || p.Cluster() == tg.Cluster.Cluster) {
				add(stream.LabelCluster, uint32(stream.NewPMID(p.Domain(), p.Cluster(), 0)), stream.InstNull)
			}
		}
	case stream.LabelItem:
		for _, d := range c.meta.Descs {
			ok := false
			if tg.Metric.Kind == IDName {
				ok = c.names[tg.Metric.Name] == d
			} else {
				ok = tg.Metric.MatchPMID(d.PMID)
			}
			if ok {
				add(stream.LabelItem, uint32(d.PMID), stream.InstNull)
			}
		}
	case stream.LabelInDom, stream.LabelInstances:
		for _, id := range c.archiveInDoms() {
			if !tg.InDom.Match(id) {
				continue
			}
			if tg.Type == stream.LabelInDom {
				add(stream.LabelInDom, uint32(id), stream.InstNull)
				continue
			}
			ip := c.startInDom(id)
			name := make(map[int32]string, len(ip.insts))
			for i, in := range ip.insts {
				name[in] = ip.names[i]
			}
			// pmlogrewrite walks the versions of the indom newest first,
			// each in its stored order, making a spec for each instance
			// the first time it sees it, and prepends each spec to its
			// list: the labels come out in the reverse of that order.
			vs := c.meta.Resolved[id]
			seen := make(map[int32]bool, len(ip.insts))
			var picked []int32
			for k := len(vs) - 1; k >= 0; k-- {
				for _, in := range vs[k].Insts {
					if seen[in] {
						continue
					}
					seen[in] = true
					if tg.AnyInst || tg.HasInstName && instNameEq(name[in], tg.InstName) || !tg.HasInstName && in == tg.Inst {
						picked = append(picked, in)
					}
				}
			}
			for k := len(picked) - 1; k >= 0; k-- {
				add(stream.LabelInstances, uint32(id), picked[k])
			}
		}
	}
	if len(c.plan.New) == before {
		what := map[uint32]string{stream.LabelDomain: "domain", stream.LabelCluster: "cluster", stream.LabelItem: "metric",
			stream.LabelInDom: "indom", stream.LabelInstances: "indom instance"}[tg.Type]
		c.warn(cl.Pos, "no matching object for new label %q", cl.Name).As("No matching %s for new label {\"%s\":%s}", what, cl.Name, cl.Value)
	}
	for _, n := range c.pcpNewOrder(c.plan.New[before:]) {
		c.pcpNew(n.Type, n.Ident, n.Inst, n)
	}
}

// linkLabels moves the labels of a renumbered indom with it.
func (c *compiler) linkLabels(ip *InDomPlan) {
	if ip.New == ip.Old {
		return
	}
	for _, ls := range c.meta.LabelSets {
		if ls.Type&(stream.LabelInDom|stream.LabelInstances) == 0 || stream.InDomID(ls.Ident) != ip.Old {
			continue
		}
		for _, s := range ls.Sets {
			inst := stream.InstNull
			if ls.Type == stream.LabelInstances {
				inst = s.Inst
			}
			lp := c.startLabel(ls.Type, ls.Ident, inst, nil, nil)
			c.linkLabelID(lp, uint32(ip.New), ip.idPos, "indom")
		}
	}
}

// linkMetricLabels moves the domain, cluster and item labels of a
// renumbered metric with it.
func (c *compiler) linkMetricLabels(mp *MetricPlan) {
	o, n := mp.Old.PMID, mp.New.PMID
	for _, ls := range c.meta.LabelSets {
		var oldID, newID uint32
		switch ls.Type {
		case stream.LabelDomain:
			oldID, newID = o.Domain(), n.Domain()
		case stream.LabelCluster:
			oldID, newID = uint32(stream.NewPMID(o.Domain(), o.Cluster(), 0)), uint32(stream.NewPMID(n.Domain(), n.Cluster(), 0))
		case stream.LabelItem:
			oldID, newID = uint32(o), uint32(n)
		default:
			continue
		}
		if ls.Ident != oldID || oldID == newID {
			continue
		}
		lp := c.startLabel(ls.Type, oldID, stream.InstNull, nil, nil)
		c.linkLabelID(lp, newID, mp.clausePos[ChangePMID], "pmid")
	}
}

func (c *compiler) linkLabelID(lp *LabelPlan, n uint32, pos Pos, what string) {
	if lp.flags&lfID != 0 {
		if lp.NewIdent != n {
			c.fail(lp.flagPos[lfID], pos, "conflicting %s change for label set", what)
		}
		return
	}
	lp.flags |= lfID
	lp.ChangeIdent, lp.NewIdent = true, n
	lp.flagPos[lfID] = pos
}

// labelsByPred selects single labels with an expr predicate: one spec per
// (type, ident, instance, label name).
func (c *compiler) labelsByPred(r *LabelRule) []*LabelPlan {
	var out []*LabelPlan
	for _, ls := range c.meta.LabelSets {
		for _, set := range ls.Sets {
			inst := stream.InstNull
			if ls.Type == stream.LabelInstances {
				inst = set.Inst
			}
			for _, l := range set.Labels {
				ne, ve := int(l.Name)+int(l.NameLen), int(l.Value)+int(l.ValueLen)
				if ne > len(set.JSON) || ve > len(set.JSON) {
					continue
				}
				info := &LabelInfo{Type: ls.Type, Ident: ls.Ident, Inst: inst,
					Name: set.JSON[l.Name:ne], Value: set.JSON[l.Value:ve]}
				ok, err := r.Pred.MatchLabel(info)
				if err != nil {
					c.fail(r.Pos, Pos{}, "%v", err)
				}
				if ok {
					name := info.Name
					lp := c.startLabel(ls.Type, ls.Ident, inst, &name, nil)
					if !containsLabel(out, lp) {
						out = append(out, lp)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		c.warn(r.Pos, "label rule selects no label in the archive")
	}
	return out
}

func containsLabel(l []*LabelPlan, lp *LabelPlan) bool {
	for _, x := range l {
		if x == lp {
			return true
		}
	}
	return false
}
