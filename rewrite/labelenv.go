package rewrite

import (
	"encoding/json"

	"github.com/pcptools/pcptools/stream"
)

// The labels a value expression sees: the input's labels of the value's
// metric and instance, merged as PCP merges them for a client (context,
// then domain, instance domain, cluster, item and instance, a later level
// overriding an earlier one), as they stand when the value was logged.
// They are the labels read, before any label rule: the same as the name,
// type and instance the expression sees.

type labelKey struct{ typ, ident uint32 }

type valueLabels struct {
	sets  map[labelKey]map[int32][]label // per (type, ident): labels per instance
	cache map[valueKey]map[string]string // merged, until the next label set
}

type valueKey struct {
	pmid  stream.PMID
	indom stream.InDomID
	inst  int32
}

// add records a label set read from the input.
func (v *valueLabels) add(ls *stream.LabelSet) {
	typ := ls.Type & stream.LabelTypeMask
	ident := ls.Ident
	if typ == stream.LabelContext {
		ident = 0
	}
	m := make(map[int32][]label, len(ls.Sets))
	for i := range ls.Sets {
		m[ls.Sets[i].Inst] = labelsOf(&ls.Sets[i])
	}
	if v.sets == nil {
		v.sets = map[labelKey]map[int32][]label{}
	}
	v.sets[labelKey{typ, ident}] = m
	v.cache = nil
}

// lookup returns the merged labels of one value. The map is shared by
// every value of that metric and instance until a label set arrives:
// expressions only read it.
func (v *valueLabels) lookup(pmid stream.PMID, indom stream.InDomID, inst int32) map[string]string {
	k := valueKey{pmid, indom, inst}
	if m, ok := v.cache[k]; ok {
		return m
	}
	out := map[string]string{}
	put := func(typ, ident uint32, instances bool) {
		for in, labs := range v.sets[labelKey{typ, ident}] {
			if instances && in != inst {
				continue
			}
			for _, l := range labs {
				out[l.name] = labelValue(l.value)
			}
		}
	}
	put(stream.LabelContext, 0, false)
	put(stream.LabelDomain, pmid.Domain(), false)
	if indom != stream.InDomNull {
		put(stream.LabelInDom, uint32(indom), false)
	}
	put(stream.LabelCluster, uint32(stream.NewPMID(pmid.Domain(), pmid.Cluster(), 0)), false)
	put(stream.LabelItem, uint32(pmid), false)
	if indom != stream.InDomNull && inst != stream.InstNull {
		put(stream.LabelInstances, uint32(indom), true)
	}
	if v.cache == nil {
		v.cache = map[valueKey]map[string]string{}
	}
	v.cache[k] = out
	return out
}

// labelValue turns a label's JSON value into what expressions compare: a
// string's text without quotes and escapes, anything else (numbers,
// booleans, null, arrays, objects) as its JSON text.
func labelValue(js string) string {
	if len(js) > 0 && js[0] == '"' {
		var s string
		if json.Unmarshal([]byte(js), &s) == nil {
			return s
		}
	}
	return js
}
