package rules

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// pmlogrewrite -Dappl1 traces its metadata changes on stderr. The part
// made before anything is written is the reference count of each input
// instance domain (a domain no output metric uses is not written): one
// "ref++" per descriptor of the archive that has a domain, in the order
// of libpcp's PMID table, then, walking its metric specs, a "ref--" for
// each deleted metric and a "ref--"/"ref++" pair for each metric whose
// domain changes (a new domain that no input metric has counts against
// the input domain an INDOM rule renames to it). PCPRefTrace returns
// those lines; the rest of the trace comes as the records are rewritten
// (package rewrite). Empty unless the plan was compiled with
// CompileOptions.PCPTrace.
//
// Not emulated: the "Botch:" lines pmlogrewrite prints when a count it
// looks for is missing (a metric moved to a domain that neither the
// archive nor any INDOM rule has), and -Dappl1's traces of label changes
// (docs/compatibility.md).
func (p *Plan) PCPRefTrace() string { return p.refTrace }

// TraceInsts writes pmlogrewrite -Dappl1's lines for the instances of a
// record of p's input domain (present) that p deletes or changes: in the
// order of the domain's instances in the archive (pmlogrewrite's spec
// holds them all, with the change of each), named by their names there.
func (p *InDomPlan) TraceInsts(w io.Writer, present []int32) {
	for i, in := range p.insts {
		ch := p.Insts[in]
		if ch == nil || !slices.Contains(present, in) {
			continue
		}
		name := p.names[i]
		switch {
		case ch.Delete:
			fmt.Fprintf(w, "Delete: instance %s (%d) for indom %s\n", name, in, p.Old)
		case ch.ChangeInst || ch.ChangeName:
			newName, newInst := name, in
			if ch.ChangeName {
				newName = ch.NewName
			}
			if ch.ChangeInst {
				newInst = ch.NewInst
			}
			fmt.Fprintf(w, "Rewrite: instance %s (%d) -> %s (%d) for indom %s\n", name, in, newName, newInst, p.Old)
		}
	}
}

// TraceText writes pmlogrewrite -Dappl1's line (or two) for help text t
// of the input, which tp deletes or rewrites. The old text it names is
// the spec's: the one the rule names, or else the archive's.
func (tp *TextPlan) TraceText(w io.Writer, t *stream.Text) {
	kind := func(typ uint32) string {
		if typ&stream.TextOneline != 0 {
			return "one line"
		}
		return "full"
	}
	obj := func(typ, ident uint32) string {
		if typ&stream.TextPMID != 0 {
			return " metric " + stream.PMID(ident).String()
		}
		return " indom " + stream.InDomID(ident).String()
	}
	if tp.Delete {
		fmt.Fprintf(w, "Delete: %s help text for %s\n", kind(t.Type), obj(t.Type, t.Ident))
		return
	}
	if !tp.ChangeID && tp.NewText == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Rewrite: %s help text for %s", kind(t.Type), obj(t.Type, t.Ident))
	if tp.NewText != nil {
		b.WriteString(" \"" + tp.oldText + "\"")
	}
	ident := t.Ident
	if tp.ChangeID {
		ident = tp.NewIdent
	}
	fmt.Fprintf(&b, " to\n%s help text for %s", kind(t.Type), obj(t.Type, ident))
	if tp.NewText != nil {
		b.WriteString(" \"" + *tp.NewText + "\"")
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

func (c *compiler) refTrace() string {
	var b strings.Builder
	refs := map[stream.InDomID]int{}
	for _, d := range c.pmidHashOrder() {
		if d.InDom == stream.InDomNull {
			continue
		}
		refs[d.InDom]++
		fmt.Fprintf(&b, "ref++ InDom: %s refcnt: %d (for PMID: %s)\n", d.InDom, refs[d.InDom], d.PMID)
	}
	for _, mp := range c.plan.pcpMetrics {
		old, pmid := mp.Old.InDom, mp.Old.PMID
		switch {
		case mp.Changes&ChangeDelete != 0:
			if _, ok := refs[old]; !ok || old == stream.InDomNull {
				continue
			}
			refs[old]--
			fmt.Fprintf(&b, "delete metric ref-- InDom: %s refcnt: %d (for PMID: %s)\n", old, refs[old], pmid)
		case mp.Changes&ChangeInDom != 0:
			if old != stream.InDomNull {
				if _, ok := refs[old]; !ok {
					continue
				}
				refs[old]--
				fmt.Fprintf(&b, "renumber indom ref-- InDom: %s refcnt: %d (for PMID: %s)\n", old, refs[old], pmid)
			}
			n := mp.New.InDom
			if n == stream.InDomNull {
				continue
			}
			if _, ok := refs[n]; !ok {
				// The input domain an INDOM rule renames to n, the
				// newest rule first (pmlogrewrite's indom_root).
				var ip *InDomPlan
				for i := len(c.indomSpec) - 1; i >= 0; i-- {
					if c.indomSpec[i].New == n {
						ip = c.indomSpec[i]
						break
					}
				}
				if ip == nil {
					continue
				}
				if _, ok := refs[ip.Old]; !ok {
					continue
				}
				n = ip.Old
			}
			refs[n]++
			fmt.Fprintf(&b, "renumber indom ref++ InDom: %s refcnt: %d (for PMID: %s)\n", n, refs[n], pmid)
		}
	}
	return b.String()
}
