package rules

// ReportPCP: pmlogrewrite's -v summary of a plan, in its words.

import (
	"fmt"
	"io"
	"sort"

	"github.com/pcptools/pcptools/stream"
)

// ReportPCP writes what pmlogrewrite 6.0.3 prints for -v: its
// "Specifications Summary" of the global, indom, metric, help text and
// label changes. lab is the input's label; newSet prints a spec's NEW
// labels as pmPrintLabelSets does (the label set encoding is the
// rewrite's).
func (p *Plan) ReportPCP(w io.Writer, lab *stream.Label, newSet func(ty, ident uint32, inst int32, labels []NewLabel) string) {
	fmt.Fprintln(w, "PCP Archive Log Rewrite Specifications Summary")
	change := false
	g := &p.Global
	if g.Hostname != nil {
		fmt.Fprintf(w, "Hostname:\t%s -> %s\n", lab.Hostname, *g.Hostname)
		change = true
	}
	if g.TimeZone != nil {
		fmt.Fprintf(w, "Timezone:\t%s -> %s\n", lab.Timezone, *g.TimeZone)
		change = true
	}
	if g.ZoneInfo != nil {
		fmt.Fprintf(w, "Zoneinfo:\t%s -> %s\n", lab.Zoneinfo, *g.ZoneInfo)
		change = true
	}
	if g.Features != nil {
		fmt.Fprintf(w, "Features:\t%d -> %d\n", lab.Features, *g.Features)
		change = true
	}
	if g.Shift != nil {
		fmt.Fprintf(w, "Delta:\t\t-> %s\n", pcpDelta(g.Shift))
		change = true
	}
	// Instance domains and metrics newest first, as pmlogrewrite lists
	// its specs (see pcpMetricOrder).
	ids := make([]stream.InDomID, 0, len(p.InDoms))
	for id := range p.InDoms {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return p.InDoms[ids[a]].seq > p.InDoms[ids[b]].seq })
	for _, id := range ids {
		ip := p.InDoms[id]
		hdr := false
		if ip.New != ip.Old {
			fmt.Fprintf(w, "\nInstance Domain: %s\npmInDom:\t-> %s\n", ip.Old, ip.New)
			hdr, change = true, true
		}
		for i, in := range ip.insts {
			ic := ip.Insts[in]
			if ic == nil || !(ic.Delete || ic.ChangeInst || ic.ChangeName) {
				continue
			}
			change = true
			if !hdr {
				fmt.Fprintf(w, "\nInstance Domain: %s\n", ip.Old)
				hdr = true
			}
			fmt.Fprintf(w, "Instance:\t[%d] \"%s\" -> ", in, ip.names[i])
			if ic.Delete {
				fmt.Fprintln(w, "DELETE")
				continue
			}
			ni, nn := in, ip.names[i]
			if ic.ChangeInst {
				ni = ic.NewInst
			}
			if ic.ChangeName {
				nn = ic.NewName
			}
			fmt.Fprintf(w, "[%d] \"%s\"\n", ni, nn)
		}
	}
	for _, mp := range p.pcpMetrics {
		if mp.Changes == 0 && mp.InstMap == nil {
			continue
		}
		change = true
		old := mp.Old
		names := old.Names
		switch len(names) {
		case 0:
			fmt.Fprintf(w, "\nMetric: %s (%s)\n", mp.name, old.PMID)
		case 1:
			fmt.Fprintf(w, "\nMetric: %s (%s)\n", names[0], old.PMID)
		default:
			// pmlogrewrite lists the names last first, all but the
			// last in brackets.
			fmt.Fprint(w, "\nMetrics:")
			for i := len(names) - 1; i >= 0; i-- {
				if i == len(names)-2 {
					fmt.Fprint(w, " [")
				} else {
					fmt.Fprint(w, " ")
				}
				fmt.Fprint(w, names[i])
			}
			fmt.Fprintf(w, "] (%s)\n", old.PMID)
		}
		if mp.Changes&ChangePMID != 0 {
			fmt.Fprintf(w, "pmID:\t\t%s -> %s\n", old.PMID, mp.New.PMID)
		}
		if mp.Changes&ChangeName != 0 && len(mp.New.Names) > 0 {
			fmt.Fprintf(w, "Name:\t\t%s -> %s\n", mp.name, mp.New.Names[0])
		}
		if mp.Changes&ChangeType != 0 {
			fmt.Fprintf(w, "Type:\t\t%s -> %s\n", TypeName(old.Type), TypeName(mp.New.Type))
		}
		if mp.Changes&ChangeInDom != 0 {
			fmt.Fprintf(w, "InDom:\t\t%s -> %s\n", old.InDom, mp.New.InDom)
			if s := mp.pcpOutput(); s != "" {
				fmt.Fprintf(w, "Output:\t\t%s\n", s)
			}
		}
		if mp.InstMap != nil {
			fmt.Fprintf(w, "Inst Changes:\t<- InDom %s\n", mp.InstMap.Old)
		}
		if mp.Changes&ChangeSem != 0 {
			fmt.Fprintf(w, "Semantics:\t%s -> %s\n", SemName(old.Sem), SemName(mp.New.Sem))
		}
		if mp.Changes&ChangeUnits != 0 {
			fmt.Fprintf(w, "Units:\t\t%s -> %s", old.Units, mp.New.Units)
			if mp.Changes&ChangeRescale != 0 {
				fmt.Fprint(w, " (rescale)")
			}
			fmt.Fprintln(w)
		}
		if mp.Changes&ChangeDelete != 0 {
			fmt.Fprintln(w, "DELETE")
		}
	}
	// The help texts, newest first, as pmlogrewrite links them.
	for i := len(p.Texts) - 1; i >= 0; i-- {
		tp := p.Texts[i]
		if tp.flags == 0 {
			continue
		}
		change = true
		fmt.Fprintf(w, "\nHelp Text: %s (%s)\n", pcpTextWhat(tp.Key.Type), pcpTextID(tp.Key.Type, tp.Key.Ident))
		if tp.ChangeID {
			fmt.Fprintf(w, "ID:\t\t%s -> %s\n", pcpTextID(tp.Key.Type, tp.Key.Ident), pcpTextID(tp.Key.Type, tp.NewIdent))
		}
		if tp.NewText != nil {
			fmt.Fprintf(w, "Text:\t\t\"%s\"\n\t\t->\n\t\t\"%s\"\n", tp.oldText, *tp.NewText)
		}
		if tp.Delete {
			fmt.Fprintln(w, "DELETE")
		}
	}
	// The label specs, newest first.
	for i := len(p.pcpLabels) - 1; i >= 0; i-- {
		lp := p.pcpLabels[i]
		if lp.flags == 0 {
			continue
		}
		change = true
		fmt.Fprintf(w, "\nLabel: %s", pcpLabelIdent(lp.Type, lp.Ident))
		if lp.Type == stream.LabelInstances {
			if lp.Inst != -1 {
				fmt.Fprintf(w, ", Instance: %d", lp.Inst)
			} else {
				fmt.Fprint(w, ", Instances: ALL")
			}
		}
		if lp.Name != nil {
			fmt.Fprintf(w, ", Label: \"%s\"", *lp.Name)
		}
		if lp.Value != nil {
			fmt.Fprintf(w, ", Value: %s", *lp.Value)
		}
		fmt.Fprintln(w)
		if lp.flags&lfNew != 0 {
			fmt.Fprintf(w, "NEW:\n%s", newSet(lp.Type, lp.NewIdent, lp.NewInst, lp.New))
		}
		if lp.flags&lfID != 0 {
			fmt.Fprintf(w, "ID:\t\t%s -> %s\n", pcpLabelID(lp.Type, lp.Ident), pcpLabelID(lp.Type, lp.NewIdent))
		}
		if lp.flags&lfLabel != 0 {
			old := "ALL"
			if lp.Name != nil {
				old = "\"" + *lp.Name + "\""
			}
			fmt.Fprintf(w, "Label:\t\t%s -> \"%s\"\n", old, *lp.NewName)
		}
		if lp.flags&lfValue != 0 {
			old := "ALL"
			if lp.Value != nil {
				old = *lp.Value
			}
			fmt.Fprintf(w, "Value:\t\t%s -> %s\n", old, *lp.NewValue)
		}
		if lp.flags&lfDel != 0 {
			fmt.Fprintln(w, "DELETE")
		}
	}
	if !change {
		fmt.Fprintln(w, "No changes")
	}
}

// pcpLabelIdent names a label set's object as libpcp's
// __pmLabelIdentString does: "Context", "Domain 60", "Cluster 60.1",
// "PMID 60.1.2", "InDom 60.1" (for instance labels too).
func pcpLabelIdent(ty, id uint32) string {
	switch ty {
	case stream.LabelContext:
		return "Context"
	case stream.LabelDomain:
		return fmt.Sprintf("Domain %d", id)
	case stream.LabelCluster:
		p := stream.PMID(id)
		return fmt.Sprintf("Cluster %d.%d", p.Domain(), p.Cluster())
	case stream.LabelItem:
		return "PMID " + stream.PMID(id).String()
	case stream.LabelInDom, stream.LabelInstances:
		return "InDom " + stream.InDomID(id).String()
	}
	return "Unknown"
}

// pcpLabelID is pmlogrewrite's labelIDStr, which its summary's "ID:" line
// uses: empty for the context, "Domain 60", "Cluster 60.1.0" (the whole
// PMID), "PMID 60.1.2", "Indom 60.1", "Instances 60.1".
func pcpLabelID(ty, id uint32) string {
	switch ty {
	case stream.LabelContext:
		return ""
	case stream.LabelCluster:
		return "Cluster " + stream.PMID(id).String()
	case stream.LabelInDom:
		return "Indom " + stream.InDomID(id).String()
	case stream.LabelInstances:
		return "Instances " + stream.InDomID(id).String()
	}
	return pcpLabelIdent(ty, id)
}

// pcpTextWhat names a help text's type as pmlogrewrite's summary does:
// "One Line pmID", "full pmInDom".
func pcpTextWhat(ty uint32) string {
	what := map[bool]string{true: "One Line", false: "full"}[ty&stream.TextOneline != 0]
	return what + map[bool]string{true: " pmID", false: " pmInDom"}[ty&stream.TextPMID != 0]
}

func pcpTextID(ty, id uint32) string {
	if ty&stream.TextPMID != 0 {
		return stream.PMID(id).String()
	}
	return stream.InDomID(id).String()
}

// pcpDelta is a time shift as pmlogrewrite's summary shows it:
// [-]HH:MM:SS.nnnnnnnnn, hours not wrapped at a day.
func pcpDelta(t *TimeShift) string {
	sec, nsec, sign := t.Sec, t.Nsec, ""
	if t.Neg {
		sign = "-"
	}
	return fmt.Sprintf("%s%02d:%02d:%02d.%09d", sign, sec/3600, sec/60%60, sec%60, nsec)
}

// pcpOutput is the "Output:" line of pmlogrewrite's summary for a metric
// whose indom changes, or "" when every value is kept.
func (m *MetricPlan) pcpOutput() string {
	fromNull := m.Old.InDom == stream.InDomNull
	switch m.Output {
	case OutputInst, OutputIName:
		if fromNull {
			return fmt.Sprintf("the only value (output instance %d)", m.OneInst)
		}
		if m.Output == OutputIName {
			return fmt.Sprintf("value for instance \"%s\"", m.pickName)
		}
		return fmt.Sprintf("value for instance %d", m.OneInst)
	case OutputFirst:
		if !fromNull {
			return "first value"
		}
		if m.pickName != "" {
			return fmt.Sprintf("first and only value (output instance \"%s\")", m.pickName)
		}
		return fmt.Sprintf("first and only value (output instance %d)", m.OneInst)
	case OutputLast:
		if !fromNull {
			return "last value"
		}
		return fmt.Sprintf("last and only value (output instance %d)", m.OneInst)
	case OutputMin:
		if !fromNull {
			return "smallest value"
		}
		return fmt.Sprintf("smallest and only value (output instance %d)", m.OneInst)
	case OutputMax:
		if !fromNull {
			return "largest value"
		}
		return fmt.Sprintf("largest and only value (output instance %d)", m.OneInst)
	case OutputSum:
		if !fromNull {
			return fmt.Sprintf("sum value (output instance %d)", m.OneInst)
		}
		return fmt.Sprintf("sum and only value (output instance %d)", m.OneInst)
	case OutputAvg:
		if !fromNull {
			return fmt.Sprintf("average value (output instance %d)", m.OneInst)
		}
		return fmt.Sprintf("average and only value (output instance %d)", m.OneInst)
	}
	return ""
}
