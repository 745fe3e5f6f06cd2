package format

import (
	"fmt"
	"io"
	"slices"

	"github.com/pcptools/pcptools/stream"
)

// Meta loads the whole .meta file (once; later calls return the same
// *Metadata, which callers must not modify). Descriptors and help texts
// get the timestamp of the timestamped record before them, or the label's
// start; instance domains are resolved into Metadata.Resolved, where, as
// in libpcp, a version identical to one already there with the same
// timestamp is not repeated (pmlogextract writes such duplicates). Damage
// is an error naming the .meta file and the offset.
func (a *Archive) Meta() (*Metadata, error) {
	a.metaMu.Lock()
	defer a.metaMu.Unlock()
	if a.meta == nil && a.metaErr == nil {
		a.meta, a.metaErr = a.loadMeta()
	}
	return a.meta, a.metaErr
}

func (a *Archive) loadMeta() (*Metadata, error) {
	f, err := openFile(a.metaPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := readLabel(f, a.metaPath, -1); err != nil {
		return nil, err
	}
	var rr recReader
	rr.reset(f, a.metaPath, int64(LabelSize(a.label.Version)), metaBufSize, f.Size(), false)
	b := newMetaBuilder(a.label)
	last := a.label.Start
	for {
		r, off, err := a.readMetaRecord(&rr)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch r := r.(type) {
		case *stream.Desc, *stream.Text:
			setTime(r, last)
		case *stream.InDom, *stream.LabelSet:
			last = r.Time()
		}
		old, err := b.add(r)
		if err != nil {
			return nil, &FormatError{File: a.metaPath, Offset: off, Msg: err.Error()}
		}
		if r, ok := r.(*stream.Desc); ok && old != nil {
			a.warnf(&FormatError{File: a.metaPath, Offset: off, Msg: fmt.Sprintf("descriptor of %s changes (type %d→%d, indom %s→%s, sem %d→%d, units %#x→%#x); the first is used",
				r.PMID, old.Type, r.Type, old.InDom, r.InDom, old.Sem, r.Sem, uint32(old.Units), uint32(r.Units))})
		}
	}
	return b.finish(), nil
}

// setTime gives a descriptor or help text (records with no time of their
// own in the file) the time of the timestamped record before it.
func setTime(r stream.Record, t stream.Timestamp) {
	switch r := r.(type) {
	case *stream.Desc:
		r.T = t
	case *stream.Text:
		r.T = t
	}
}

// MetadataOf builds what Meta gives for an archive labelled l whose .meta
// holds recs (each kind in file order, with their times): for metadata
// that came some other way, such as a stream's METADATA frame.
func MetadataOf(l stream.Label, recs []stream.Record) (*Metadata, error) {
	b := newMetaBuilder(l)
	for _, r := range recs {
		if _, err := b.add(r); err != nil {
			return nil, err
		}
	}
	return b.finish(), nil
}

// metaBuilder gathers metadata records into a Metadata, as Meta gives it.
type metaBuilder struct {
	m      *Metadata
	tr     *stream.InDomTracker
	byTime map[versionKey][]*stream.InstanceSet
}

type versionKey struct {
	id stream.InDomID
	t  stream.Timestamp
}

func newMetaBuilder(l stream.Label) *metaBuilder {
	return &metaBuilder{
		m: &Metadata{
			Label:    l,
			ByPMID:   map[stream.PMID]*stream.Desc{},
			Resolved: map[stream.InDomID][]*stream.InstanceSet{},
		},
		tr:     stream.NewInDomTracker(),
		byTime: map[versionKey][]*stream.InstanceSet{},
	}
}

// add takes one record. For a descriptor of a metric already described
// differently it returns the first one, which stays in force.
func (b *metaBuilder) add(rec stream.Record) (changed *stream.Desc, err error) {
	m := b.m
	switch r := rec.(type) {
	case *stream.Desc:
		m.Descs = append(m.Descs, r)
		if old, ok := m.ByPMID[r.PMID]; !ok {
			m.ByPMID[r.PMID] = r
		} else if stream.DescChange(old, r) != "" {
			return old, nil
		}
	case *stream.InDom:
		m.InDoms = append(m.InDoms, r)
		s, err := b.tr.Apply(r)
		if err != nil {
			return nil, err
		}
		k := versionKey{r.InDom, s.T}
		if !hasSet(b.byTime[k], s) {
			b.byTime[k] = append(b.byTime[k], s)
			m.Resolved[r.InDom] = append(m.Resolved[r.InDom], s)
		}
	case *stream.LabelSet:
		m.LabelSets = append(m.LabelSets, r)
	case *stream.Text:
		m.Texts = append(m.Texts, r)
	}
	return nil, nil
}

// finish sorts each instance domain's versions by time: they are applied
// in file order (a delta is relative to the record before it in the
// file) but looked up by time.
func (b *metaBuilder) finish() *Metadata {
	for _, vs := range b.m.Resolved {
		slices.SortStableFunc(vs, func(x, y *stream.InstanceSet) int { return x.T.Compare(y.T) })
	}
	return b.m
}

// hasSet reports whether vs holds a set with the same instances and names
// as s (in any order).
func hasSet(vs []*stream.InstanceSet, s *stream.InstanceSet) bool {
	for _, v := range vs {
		if len(v.Insts) != len(s.Insts) {
			continue
		}
		names := make(map[int32]string, len(v.Insts))
		for i, inst := range v.Insts {
			names[inst] = v.Names[i]
		}
		same := true
		for i, inst := range s.Insts {
			if n, ok := names[inst]; !ok || n != s.Names[i] {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}
