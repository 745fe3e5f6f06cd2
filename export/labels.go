package export

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// labelKinds name the label set types as the "pcp.labels" metadata does.
var labelKinds = []struct {
	typ  uint32
	name string
}{
	{stream.LabelContext, "context"}, {stream.LabelDomain, "domain"}, {stream.LabelInDom, "indom"},
	{stream.LabelCluster, "cluster"}, {stream.LabelItem, "item"}, {stream.LabelInstances, "instances"},
}

func labelKind(typ uint32) string {
	for _, k := range labelKinds {
		if typ&stream.LabelTypeMask == k.typ {
			return k.name
		}
	}
	return strconv.FormatUint(uint64(typ), 10)
}

// LabelMeta is one label set of the file's "pcp.labels" metadata: every
// label set record of the archive, in .meta order.
type LabelMeta struct {
	Time     string          `json:"time"`               // RFC 3339, UTC
	Type     string          `json:"type"`               // context, domain, indom, cluster, item, instances
	Ident    string          `json:"ident,omitempty"`    // domain 29, cluster 29.0, item 29.0.64, indom 29.1
	Instance *int32          `json:"instance,omitempty"` // instances sets only
	Labels   json.RawMessage `json:"labels"`
}

// labelMetadata is the "pcp.labels" value: every label set, as recorded.
func labelMetadata(m *format.Metadata) (string, error) {
	out := []LabelMeta{}
	for _, ls := range m.LabelSets {
		kind := labelKind(ls.Type)
		ident := ""
		switch ls.Type & stream.LabelTypeMask {
		case stream.LabelDomain:
			ident = strconv.FormatUint(uint64(ls.Ident), 10)
		case stream.LabelCluster:
			ident = strings.TrimSuffix(pmidString(stream.PMID(ls.Ident)), ".0")
		case stream.LabelItem:
			ident = pmidString(stream.PMID(ls.Ident))
		case stream.LabelInDom, stream.LabelInstances:
			ident = indomString(stream.InDomID(ls.Ident))
		}
		t := time.Unix(ls.T.Sec, int64(ls.T.Nsec)).UTC().Format(time.RFC3339Nano)
		for _, s := range ls.Sets {
			lm := LabelMeta{Time: t, Type: kind, Ident: ident, Labels: json.RawMessage("{}")}
			if ls.Type&stream.LabelTypeMask == stream.LabelInstances {
				inst := s.Inst
				lm.Instance = &inst
			}
			if s.JSON != "" && json.Valid([]byte(s.JSON)) {
				lm.Labels = json.RawMessage(s.JSON)
			}
			out = append(out, lm)
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// seriesLabels gives a metric-instance's labels as libpcp merges them for
// pmLookupLabels: context, domain, instance domain, cluster, item,
// instance, a later level's label replacing an earlier one of the same
// name. It takes the last label set of each (type, identity) that the
// archive records: the labels in force at its end.
type seriesLabels struct {
	last map[[2]uint32]*stream.LabelSet
}

func newSeriesLabels(m *format.Metadata) *seriesLabels {
	x := &seriesLabels{last: map[[2]uint32]*stream.LabelSet{}}
	for _, ls := range m.LabelSets {
		ident := ls.Ident
		if ls.Type&stream.LabelTypeMask == stream.LabelContext {
			ident = 0 // whatever an archive records there
		}
		x.last[[2]uint32{ls.Type & stream.LabelTypeMask, ident}] = ls
	}
	return x
}

// of returns the labels of (p, inst) as name and value pairs, in name
// order; a value is the label's JSON value, a string unquoted. The caller
// keeps them per series: they are worked out each time.
func (x *seriesLabels) of(p stream.PMID, d *stream.Desc, inst int32, hasInst bool) [][2]string {
	vals := map[string]string{}
	add := func(typ, ident uint32, inst int32, any bool) {
		ls := x.last[[2]uint32{typ, ident}]
		if ls == nil {
			return
		}
		for _, s := range ls.Sets {
			if !any && s.Inst != inst {
				continue
			}
			for _, e := range s.Labels {
				ne, ve := int(e.Name)+int(e.NameLen), int(e.Value)+int(e.ValueLen)
				if ne > len(s.JSON) || ve > len(s.JSON) {
					continue
				}
				name, v := s.JSON[e.Name:ne], s.JSON[e.Value:ve]
				var str string
				if json.Unmarshal([]byte(v), &str) == nil {
					v = str
				}
				vals[name] = v
			}
		}
	}
	add(stream.LabelContext, 0, 0, true)
	add(stream.LabelDomain, uint32(p)>>22&0x1ff, 0, true)
	if d != nil && d.InDom != stream.InDomNull {
		add(stream.LabelInDom, uint32(d.InDom), 0, true)
	}
	add(stream.LabelCluster, uint32(p)&^0x3ff, 0, true)
	add(stream.LabelItem, uint32(p), 0, true)
	if hasInst && d != nil && d.InDom != stream.InDomNull {
		add(stream.LabelInstances, uint32(d.InDom), inst, false)
	}
	out := make([][2]string, 0, len(vals))
	for n, v := range vals {
		out = append(out, [2]string{n, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// promLabels are the labels of (p, inst) as OpenMetrics labels: names
// made Prometheus' (PromName's mapping), leaving out the names of the
// labels pcpexport gives every sample (hostname, instname, instid), which
// come from the archive's label and instance domains.
func (x *seriesLabels) promLabels(p stream.PMID, d *stream.Desc, inst int32, hasInst bool) [][2]string {
	var out [][2]string
	seen := map[string]bool{"hostname": true, "instname": true, "instid": true}
	for _, l := range x.of(p, d, inst, hasInst) {
		n := PromName(l[0])
		if seen[n] || len(n) >= 2 && n[:2] == "__" {
			continue // reserved, or two PCP names that map to one
		}
		seen[n] = true
		out = append(out, [2]string{n, l[1]})
	}
	return out
}
