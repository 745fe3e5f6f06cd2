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
	m := &Metadata{
		Label:    a.label,
		ByPMID:   map[stream.PMID]*stream.Desc{},
		Resolved: map[stream.InDomID][]*stream.InstanceSet{},
	}
	tr := stream.NewInDomTracker()
	type versionKey struct {
		id stream.InDomID
		t  stream.Timestamp
	}
	byTime := map[versionKey][]*stream.InstanceSet{}
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
		case *stream.Desc:
			r.T = last
			m.Descs = append(m.Descs, r)
			if old, ok := m.ByPMID[r.PMID]; !ok {
				m.ByPMID[r.PMID] = r
			} else if old.Type != r.Type || old.InDom != r.InDom || old.Sem != r.Sem || old.Units != r.Units {
				a.warnf(&FormatError{File: a.metaPath, Offset: off, Msg: fmt.Sprintf("descriptor of %s changes (type %d→%d, indom %s→%s, sem %d→%d, units %#x→%#x); the first is used",
					r.PMID, old.Type, r.Type, old.InDom, r.InDom, old.Sem, r.Sem, uint32(old.Units), uint32(r.Units))})
			}
		case *stream.InDom:
			last = r.T
			m.InDoms = append(m.InDoms, r)
			s, err := tr.Apply(r)
			if err != nil {
				return nil, &FormatError{File: a.metaPath, Offset: off, Msg: err.Error()}
			}
			k := versionKey{r.InDom, s.T}
			if !hasSet(byTime[k], s) {
				byTime[k] = append(byTime[k], s)
				m.Resolved[r.InDom] = append(m.Resolved[r.InDom], s)
			}
		case *stream.LabelSet:
			last = r.T
			m.LabelSets = append(m.LabelSets, r)
		case *stream.Text:
			r.T = last
			m.Texts = append(m.Texts, r)
		}
	}
	// Versions are applied in file order (a delta is relative to the
	// record before it in the file) but looked up by time.
	for _, vs := range m.Resolved {
		slices.SortStableFunc(vs, func(x, y *stream.InstanceSet) int { return x.T.Compare(y.T) })
	}
	return m, nil
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
