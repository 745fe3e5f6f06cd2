package rewrite

import (
	"cmp"
	"slices"
	"strings"

	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

// Label set rewriting, following pmlogrewrite's do_labelset: a rule that
// selects whole label sets (no label name or value given) changes or
// deletes the record, or moves its sets into records of their own; a rule
// that selects labels by name or value takes each such label out of its
// set and, unless deleting, writes it as a label set of its own.

type label struct {
	name  string // without quotes
	value string // JSON text
	flags uint8
}

// labelsOf returns the labels of s in the order of its JSON text (its
// label entries are sorted by name; pmlogrewrite rebuilds a changed set's
// text from the text, so the labels left keep their order there).
func labelsOf(s *stream.OneLabelSet) []label {
	ents := slices.Clone(s.Labels)
	slices.SortStableFunc(ents, func(a, b stream.LabelEntry) int { return cmp.Compare(a.Name, b.Name) })
	out := make([]label, 0, len(ents))
	for _, l := range ents {
		ne, ve := int(l.Name)+int(l.NameLen), int(l.Value)+int(l.ValueLen)
		if ne > len(s.JSON) || ve > len(s.JSON) {
			continue
		}
		out = append(out, label{name: s.JSON[l.Name:ne], value: s.JSON[l.Value:ve], flags: l.Flags})
	}
	return out
}

// buildSet encodes labels as PCP does: {"name":value,...} in the order
// given, with the label entries sorted by name (as libpcp keeps them).
func buildSet(inst int32, labs []label) stream.OneLabelSet {
	var b strings.Builder
	s := stream.OneLabelSet{Inst: inst, NLabels: int32(len(labs))}
	b.WriteByte('{')
	for i, l := range labs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		e := stream.LabelEntry{Name: uint16(b.Len()), NameLen: uint8(len(l.name)), Flags: l.flags}
		b.WriteString(l.name)
		b.WriteString(`":`)
		e.Value, e.ValueLen = uint16(b.Len()), uint16(len(l.value))
		b.WriteString(l.value)
		s.Labels = append(s.Labels, e)
	}
	b.WriteByte('}')
	s.JSON = b.String()
	slices.SortStableFunc(s.Labels, func(a, b stream.LabelEntry) int {
		return strings.Compare(s.JSON[a.Name:int(a.Name)+int(a.NameLen)], s.JSON[b.Name:int(b.Name)+int(b.NameLen)])
	})
	return s
}

func labelChanges(lp *rules.LabelPlan) bool {
	return lp.Delete || lp.NewName != nil || lp.NewValue != nil || lp.ChangeIdent || lp.ChangeInst
}

func (r *Rewriter) doLabelSet(ls *stream.LabelSet) {
	r.vlabs.add(ls)
	ls.T = r.shiftT(ls.T)
	typ, ident := ls.Type, ls.Ident
	sets := ls.Sets
	// pmlogrewrite keeps its label rules in a list it prepends to, so it
	// applies (and writes what they split off) newest first.
	for li := len(r.plan.Labels) - 1; li >= 0; li-- {
		lp := r.plan.Labels[li]
		if lp.Type != typ || lp.Ident != ident || !labelChanges(lp) {
			continue
		}
		whole := lp.Name == nil && lp.Value == nil
		full := false
		if whole {
			if typ != stream.LabelInstances || lp.Inst == stream.InstNull {
				full = true
			} else {
				full = true
				for _, s := range sets {
					if s.Inst != lp.Inst {
						full = false
						break
					}
				}
			}
		}
		if full {
			if lp.Delete {
				return
			}
			if lp.ChangeIdent {
				ident = lp.NewIdent
			}
		}
		kept := sets[:0:0]
		for i := range sets {
			s := sets[i]
			if typ == stream.LabelInstances && lp.Inst != stream.InstNull && lp.Inst != s.Inst {
				kept = append(kept, s)
				continue
			}
			if whole {
				only := !lp.Delete && lp.NewName == nil && lp.NewValue == nil && !lp.ChangeIdent && lp.ChangeInst
				if only {
					s.Inst = lp.NewInst
					kept = append(kept, s)
					continue
				}
				if lp.Delete {
					continue
				}
				if lp.ChangeInst {
					s.Inst = lp.NewInst
				}
				if lp.NewName != nil || lp.NewValue != nil {
					labs := labelsOf(&s)
					for k := range labs {
						if lp.NewName != nil {
							labs[k].name = *lp.NewName
						}
						if lp.NewValue != nil {
							labs[k].value = *lp.NewValue
						}
					}
					s = buildSet(s.Inst, labs)
				}
				r.emitMeta(&stream.LabelSet{T: ls.T, V2: ls.V2, Type: typ, Ident: lp.NewIdent, Sets: []stream.OneLabelSet{s}})
				continue
			}
			labs := labelsOf(&s)
			rest := labs[:0:0]
			for _, l := range labs {
				if lp.Name != nil && l.name != *lp.Name || lp.Value != nil && l.value != *lp.Value {
					rest = append(rest, l)
					continue
				}
				if lp.Delete {
					continue
				}
				n := l
				if lp.NewName != nil {
					n.name = *lp.NewName
				}
				if lp.NewValue != nil {
					n.value = *lp.NewValue
				}
				n.flags = uint8(typ)
				inst := s.Inst
				if lp.ChangeInst {
					inst = lp.NewInst
				}
				r.emitMeta(&stream.LabelSet{T: ls.T, V2: ls.V2, Type: typ, Ident: lp.NewIdent, Sets: []stream.OneLabelSet{buildSet(inst, []label{n})}})
			}
			if len(rest) == len(labs) {
				kept = append(kept, s)
			} else if len(rest) > 0 {
				kept = append(kept, buildSet(s.Inst, rest))
			}
		}
		sets = kept
		if len(sets) == 0 {
			return
		}
	}
	ls.Ident, ls.Sets = ident, sets
	r.emitMeta(ls)
}
