package summary

import (
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// multi is a multi-archive context (pmlogsummary a,b,c or a directory of
// archives): the archives of one host read one after the other, with a
// <mark> between them, and their metadata loaded together.
type multi struct {
	names []string
	as    []*format.Archive
}

// Multi joins archives of one host, sorted by start time, into one
// Archive for Run, as libpcp's multi-archive contexts do.
func Multi(names []string, as []*format.Archive) Archive {
	if len(as) == 1 {
		return as[0]
	}
	return &multi{names, as}
}

func (m *multi) Label() stream.Label { return m.as[0].Label() }

// DataSize is the size of every archive's data volumes.
func (m *multi) DataSize() int64 {
	var n int64
	for _, a := range m.as {
		n += a.DataSize()
	}
	return n
}

func (m *multi) End() (stream.Timestamp, bool, error) {
	for i := len(m.as) - 1; i >= 0; i-- {
		t, ok, err := m.as[i].End()
		if err != nil || ok {
			return t, ok, err
		}
	}
	return stream.Timestamp{}, false, nil
}

// Meta loads every archive's metadata, in time order: the first
// descriptor of a metric and the first owner of a name win, as they do
// when libpcp loads the archives one by one.
func (m *multi) Meta() (*format.Metadata, error) {
	out := &format.Metadata{Label: m.as[0].Label(), ByPMID: map[stream.PMID]*stream.Desc{},
		Resolved: map[stream.InDomID][]*stream.InstanceSet{}}
	for _, a := range m.as {
		md, err := a.Meta()
		if err != nil {
			return nil, err
		}
		out.Descs = append(out.Descs, md.Descs...)
		for _, d := range md.Descs {
			if _, ok := out.ByPMID[d.PMID]; !ok {
				out.ByPMID[d.PMID] = d
			}
		}
		out.InDoms = append(out.InDoms, md.InDoms...)
		for id, vs := range md.Resolved {
			out.Resolved[id] = append(out.Resolved[id], vs...)
		}
		out.LabelSets = append(out.LabelSets, md.LabelSets...)
		out.Texts = append(out.Texts, md.Texts...)
	}
	return out, nil
}

func (m *multi) Records(opts ...format.RecordsOption) stream.CloserIterator {
	its := make([]stream.Iterator, len(m.as))
	cs := make(closers, len(m.as))
	for i, a := range m.as {
		it := a.Records(opts...)
		its[i], cs[i] = it, it
	}
	return closeIter{stream.Concat(m.names, its...), cs}
}

type closers []stream.CloserIterator

type closeIter struct {
	stream.Iterator
	cs closers
}

func (c closeIter) Close() error {
	var first error
	for _, x := range c.cs {
		if err := x.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
