package dump

import (
	"github.com/pcptools/pcptools/internal/pcphash"

	"fmt"
	"sort"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// pcpMeta is an archive's metadata arranged the way libpcp holds it after
// opening the archive: the shapes (hash tables, time-ordered lists, the
// namespace tree) that pmdumplog's output order follows, with libpcp's
// rules for duplicates. It is built once from format.Metadata.
type pcpMeta struct {
	label   stream.Label
	version int

	descs  pcphash.Hash[*stream.Desc] // hashpmid, first descriptor of a PMID wins
	byPMID map[stream.PMID]*stream.Desc
	ns     *nameSpace

	indoms   pcphash.Hash[*indomList] // hashindom
	indomsBy map[stream.InDomID]*indomList

	labels pcphash.Hash[*pcphash.Hash[*labelVersion]] // type -> ident -> versions, newest first
	texts  map[textKey]string

	// descErr is set when two descriptors of one PMID disagree: libpcp
	// then refuses to open the archive.
	descErr error
	// nsStale: names were added to ns after its index was built (grow).
	nsStale bool
}

type textKey struct {
	typ   uint32
	ident uint32
}

// indomVersion is one instance domain record in libpcp's list: newest
// first along next, newest-neighbour along prior.
type indomVersion struct {
	stamp   stream.Timestamp
	isDelta bool
	insts   []int32
	names   []string
	deleted []bool // for a delta not yet resolved
	next    *indomVersion
	prior   *indomVersion
	sorted  bool // insts ascending, so lookups may binary search
}

type indomList struct {
	id   stream.InDomID
	head *indomVersion
	// chrono holds the versions oldest first once deltas are resolved.
	chrono []*indomVersion

	cacheOK bool
	cacheT  stream.Timestamp
	cacheV  *indomVersion
}

type labelVersion struct {
	stamp stream.Timestamp
	typ   uint32 // as recorded, flags included
	sets  []stream.OneLabelSet
	next  *labelVersion
}

func newPCPMeta(m *format.Metadata) *pcpMeta {
	pm := &pcpMeta{
		label:    m.Label,
		version:  m.Label.Version,
		byPMID:   map[stream.PMID]*stream.Desc{},
		ns:       newNameSpace(),
		indomsBy: map[stream.InDomID]*indomList{},
		texts:    map[textKey]string{},
	}
	for _, d := range m.Descs {
		if old, ok := pm.byPMID[d.PMID]; ok {
			if pm.descErr == nil && stream.DescChange(old, d) != "" {
				pm.descErr = errDescChanged(old, d)
			}
		} else {
			pm.byPMID[d.PMID] = d
			pm.descs.Add(uint32(d.PMID), d)
		}
		for _, n := range d.Names {
			pm.ns.add(d.PMID, n)
		}
	}
	pm.ns.finish()
	for _, r := range m.InDoms {
		pm.addInDom(r)
	}
	for _, l := range pm.indomsBy {
		l.resolve()
	}
	for _, l := range m.LabelSets {
		pm.addLabelSet(l)
	}
	pm.dropDuplicateLabels()
	for _, t := range m.Texts {
		pm.addText(t)
	}
	return pm
}

// addInDom files an instance domain record as libpcp's addindom does:
// records without instances are ignored; the list is kept newest first;
// a record with the same time as others goes to the head of that time
// slot, and one identical to a record already in the slot is not added
// again (the existing one moves to the head of the slot instead).
func (pm *pcpMeta) addInDom(r *stream.InDom) {
	if len(r.Insts) == 0 {
		return
	}
	v := &indomVersion{stamp: r.T, isDelta: r.Encoding == stream.InDomDelta}
	v.insts = append([]int32(nil), r.Insts...)
	v.names = append([]string(nil), r.Names...)
	if v.isDelta {
		v.deleted = make([]bool, len(r.Insts))
		copy(v.deleted, r.Deleted)
	}
	sortInsts(v)

	l := pm.indomsBy[r.InDom]
	if l == nil {
		l = &indomList{id: r.InDom, head: v}
		pm.indomsBy[r.InDom] = l
		pm.indoms.Add(uint32(r.InDom), l)
		return
	}
	var prev, cur *indomVersion
	for cur = l.head; cur != nil; cur = cur.next {
		c := cur.stamp.Compare(v.stamp)
		if c < 0 {
			break
		}
		if c == 0 {
			slotPrev := prev
			dup := false
			for {
				if sameInDom(cur, v) {
					dup = true
					break
				}
				prev = cur
				cur = cur.next
				if cur == nil || cur.stamp.Compare(v.stamp) != 0 {
					break
				}
			}
			if dup {
				if prev == slotPrev {
					return
				}
				prev.next = cur.next
				v = cur
			}
			prev = slotPrev
			break
		}
		prev = cur
	}
	if prev == nil {
		v.next = l.head
		l.head = v
	} else {
		v.next = prev.next
		prev.next = v
	}
	if cur == nil {
		v.prior = nil
	} else {
		v.prior = cur.prior
		cur.prior = v
	}
}

// sortInsts orders a record's instances by number with a stable insertion
// sort, as libpcp does on load.
func sortInsts(v *indomVersion) {
	for i := 1; i < len(v.insts); i++ {
		id, name := v.insts[i], v.names[i]
		var del bool
		if v.deleted != nil {
			del = v.deleted[i]
		}
		j := i
		for j > 0 && id < v.insts[j-1] {
			v.insts[j], v.names[j] = v.insts[j-1], v.names[j-1]
			if v.deleted != nil {
				v.deleted[j] = v.deleted[j-1]
			}
			j--
		}
		v.insts[j], v.names[j] = id, name
		if v.deleted != nil {
			v.deleted[j] = del
		}
	}
}

func sameInDom(a, b *indomVersion) bool {
	if len(a.insts) != len(b.insts) {
		return false
	}
	for i := range a.insts {
		if a.insts[i] != b.insts[i] {
			return false
		}
		ad := a.deleted != nil && a.deleted[i]
		bd := b.deleted != nil && b.deleted[i]
		if ad != bd || (!ad && a.names[i] != b.names[i]) {
			return false
		}
	}
	return true
}

// resolve turns every delta record into a full one, oldest first, and
// prepares the chronological view used for instance name lookups.
func (l *indomList) resolve() {
	var all []*indomVersion
	for v := l.head; v != nil; v = v.next {
		all = append(all, v)
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].isDelta {
			undelta(all[i])
		}
	}
	l.chrono = all
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	for _, v := range all {
		v.sorted = sort.SliceIsSorted(v.insts, func(i, j int) bool { return v.insts[i] < v.insts[j] })
	}
}

// undelta rebuilds v and any unresolved deltas between it and the nearest
// older full record, marching forward in time from that record along the
// prior links, merging each delta into its predecessor: a delete drops the
// matching instance, an add goes in front of the first larger instance,
// and what is left of either list is appended. A delta with no full record
// before it stays as it is (libpcp complains and carries on).
func undelta(v *indomVersion) {
	full := v.next
	for full != nil && full.isDelta {
		full = full.next
	}
	if full == nil {
		return
	}
	// Guard against prior links that loop, which libpcp's bookkeeping can
	// produce for out-of-order records; libpcp would not terminate.
	for d, steps := full.prior, 0; d != nil && steps < 1<<20; steps++ {
		if !d.isDelta {
			// A full record met along the prior links (stale after
			// records out of time order, FuzzStreamViews/e66410e764a87d0d):
			// the deltas after it build on it, and it stays as it is.
			if d == v {
				break
			}
			full, d = d, d.prior
			continue
		}
		n := len(full.insts) + len(d.insts)
		insts := make([]int32, 0, n)
		names := make([]string, 0, n)
		i, j := 0, 0
		for i < len(full.insts) || j < len(d.insts) {
			if i < len(full.insts) && j < len(d.insts) {
				if d.deleted[j] && full.insts[i] == d.insts[j] {
					i++
					j++
					continue
				}
				if !d.deleted[j] && full.insts[i] > d.insts[j] {
					insts = append(insts, d.insts[j])
					names = append(names, d.names[j])
					j++
					continue
				}
			}
			if i < len(full.insts) {
				insts = append(insts, full.insts[i])
				names = append(names, full.names[i])
				i++
			} else {
				insts = append(insts, d.insts[j])
				names = append(names, d.names[j])
				j++
			}
		}
		d.insts, d.names, d.deleted, d.isDelta = insts, names, nil, false
		if d == v {
			break
		}
		full = d
		d = d.prior
	}
}

// at returns the version in force at t: the newest with a time at or
// before t, or nil when t is before every version.
func (l *indomList) at(t stream.Timestamp) *indomVersion {
	c := l.chrono
	i := sort.Search(len(c), func(i int) bool { return c[i].stamp.After(t) })
	if i == 0 {
		return nil
	}
	return c[i-1]
}

// name returns the name of inst in v.
func (v *indomVersion) name(inst int32) (string, bool) {
	if i, ok := v.find(inst); ok {
		return v.names[i], true
	}
	return "", false
}

// find returns the position of inst in v: the first, as libpcp's linear
// scan finds it.
func (v *indomVersion) find(inst int32) (int, bool) {
	if v.sorted {
		lo, hi := 0, len(v.insts)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if v.insts[m] < inst {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo, lo < len(v.insts) && v.insts[lo] == inst
	}
	for i, x := range v.insts {
		if x == inst {
			return i, true
		}
	}
	return 0, false
}

// addLabelSet files a label record as libpcp's addlabel does. A record for
// a (type, ident) whose newest version has no label sets starts a new
// chain (libpcp's lookup reports "nothing" for it), which is why records
// are not simply appended to a map entry.
func (pm *pcpMeta) addLabelSet(r *stream.LabelSet) {
	typ := r.Type & stream.LabelTypeMask
	ident := r.Ident
	if typ == stream.LabelContext {
		ident = uint32(stream.PMIDNull)
	}
	v := &labelVersion{stamp: r.T, typ: r.Type, sets: r.Sets}
	th := pm.labels.Search(typ)
	var idn *pcphash.Node[*labelVersion]
	if th != nil {
		idn = th.Data.Search(ident)
	}
	if idn == nil || len(idn.Data.sets) == 0 {
		if th == nil {
			th = pm.labels.Add(typ, &pcphash.Hash[*labelVersion]{})
		}
		th.Data.Add(ident, v)
		return
	}
	var prev *labelVersion
	for cur := idn.Data; cur != nil; cur = cur.next {
		if cur.stamp.Compare(v.stamp) < 0 {
			break
		}
		prev = cur
	}
	if prev == nil {
		v.next = idn.Data
		idn.Data = v
	} else {
		v.next = prev.next
		prev.next = v
	}
}

// dropDuplicateLabels removes, from each version, the label sets that are
// also in the version just before it in time, and versions left empty
// (except the oldest), as libpcp does once the metadata is loaded.
func (pm *pcpMeta) dropDuplicateLabels() {
	pm.labels.Walk(func(tn *pcphash.Node[*pcphash.Hash[*labelVersion]]) {
		tn.Data.Walk(func(n *pcphash.Node[*labelVersion]) {
			var prev *labelVersion
			for v := n.Data; v != nil; {
				older := v.next
				if older == nil {
					break
				}
				var kept []stream.OneLabelSet
				for _, s := range v.sets {
					dup := false
					for k := range older.sets {
						if sameLabelSet(&s, &older.sets[k]) {
							dup = true
							break
						}
					}
					if !dup {
						kept = append(kept, s)
					}
				}
				v.sets = kept
				if len(v.sets) == 0 {
					if prev != nil {
						prev.next = older
					} else {
						n.Data = older
					}
				} else {
					prev = v
				}
				v = older
			}
		})
	})
}

// sameLabelSet compares two sets by instance and by label names and
// values, whatever their order or JSON spacing.
func sameLabelSet(a, b *stream.OneLabelSet) bool {
	if a.Inst != b.Inst || a.NLabels != b.NLabels {
		return false
	}
	for _, la := range a.Labels {
		an, aok := labelPart(a.JSON, int(la.Name), int(la.NameLen))
		found := false
		for _, lb := range b.Labels {
			bn, bok := labelPart(b.JSON, int(lb.Name), int(lb.NameLen))
			if la.NameLen != lb.NameLen || !aok || !bok || an != bn {
				continue
			}
			if la.ValueLen != lb.ValueLen {
				return false
			}
			av, _ := labelPart(a.JSON, int(la.Value), int(la.ValueLen))
			bv, _ := labelPart(b.JSON, int(lb.Value), int(lb.ValueLen))
			if av != bv {
				return false
			}
			found = true
			break
		}
		if !found {
			return false
		}
	}
	return true
}

func labelPart(s string, off, n int) (string, bool) {
	if off < 0 || n < 0 || off+n > len(s) {
		return "", false
	}
	return s[off : off+n], true
}

// addText keeps the latest text for each (type, ident), as libpcp does.
// Records that are neither one-line nor help text, or name neither a
// metric nor an instance domain, are skipped.
func (pm *pcpMeta) addText(t *stream.Text) {
	if t.Type&(stream.TextOneline|stream.TextHelp) == 0 {
		return
	}
	if t.Type&(stream.TextInDom|stream.TextPMID) == 0 {
		return
	}
	pm.texts[textKey{t.Type, t.Ident}] = t.Text
}

// names returns a metric's names in pmNameAll order (nil when it has
// none).
func (pm *pcpMeta) names(p stream.PMID) []string {
	if pm.nsStale {
		pm.ns.finish()
		pm.nsStale = false
	}
	return pm.ns.byPMID[p]
}

// errDescChanged is libpcp's refusal of an archive whose descriptors of
// one metric disagree (PM_ERR_LOGCHANGETYPE and friends).
func errDescChanged(old, d *stream.Desc) error {
	return fmt.Errorf("metric %s: the %s changed between descriptors, which PCP refuses", d.PMID, stream.DescChange(old, d))
}
