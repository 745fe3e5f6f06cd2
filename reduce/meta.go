package reduce

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// The metadata side of the reduction: what libpcp builds when it opens an
// archive, reduced to what pmlogreduce's answers depend on, read in one
// streaming pass over the .meta file:
//
//   - the namespace, as libpcp builds it from the descriptors' names (new
//     children go at the front of their parent's list), because the order
//     pmlogreduce fetches metrics in, and so the order of the value sets in
//     every record it writes, is a depth-first walk of it;
//   - per instance domain, the union of its instances over the whole
//     archive in the order pmGetInDomArchive returns them (newest record
//     first, each record sorted), which decides the order of the values in
//     a value set (a hash walk over that list);
//   - for domains that ever hold 16 or more instances, the time each
//     instance first appears and the time of the record after its last
//     appearance (libpcp's time_caliper), which bound interpolation.
//
// Memory is proportional to the metrics and the instances, plus 16 bytes
// per instance domain record.

// pmnsNode is a node of libpcp's namespace tree.
type pmnsNode struct {
	name     string
	pmid     stream.PMID // PMIDNull for an inner node
	children []*pmnsNode // in insertion order; libpcp's list is the reverse
}

// add inserts name for pmid as libpcp's AddPMNSNode does: a name that is
// already there for another PMID is ignored (the archive then loses that
// name, as it does for libpcp).
func (n *pmnsNode) add(pmid stream.PMID, name string) {
	for {
		part, rest, more := cut(name)
		var c *pmnsNode
		for _, ch := range n.children {
			if ch.name == part {
				c = ch
				break
			}
		}
		if c == nil {
			for {
				c = &pmnsNode{name: part, pmid: stream.PMIDNull}
				n.children = append(n.children, c)
				if !more {
					c.pmid = pmid
					return
				}
				n = c
				part, rest, more = cut(rest)
			}
		}
		if !more {
			return // a duplicate name, or another PMID's: ignored
		}
		n, name = c, rest
	}
}

func cut(s string) (head, tail string, more bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// walk visits the leaves depth first in libpcp's order (its child lists
// are newest first), with their full names.
func (n *pmnsNode) walk(prefix string, leaf func(name string, pmid stream.PMID)) {
	for i := len(n.children) - 1; i >= 0; i-- {
		c := n.children[i]
		full := c.name
		if prefix != "" {
			full = prefix + "." + c.name
		}
		if len(c.children) > 0 {
			c.walk(full, leaf)
		} else {
			leaf(full, c.pmid)
		}
	}
}

// allNames visits every node that carries a PMID (inner ones too, as
// libpcp's hash of names does), depth first.
func (n *pmnsNode) allNames(prefix string, visit func(name string, pmid stream.PMID)) {
	for i := len(n.children) - 1; i >= 0; i-- {
		c := n.children[i]
		full := c.name
		if prefix != "" {
			full = prefix + "." + c.name
		}
		if c.pmid != stream.PMIDNull {
			visit(full, c.pmid)
		}
		c.allNames(full, visit)
	}
}

// indomInfo is what the reduction needs of one instance domain.
type indomInfo struct {
	// union is every instance ever in the domain, in pmGetInDomArchive's
	// order.
	union []int32
	// big: some record holds 16 or more instances, so that libpcp bounds
	// each instance by birth and death (see instState).
	big   bool
	birth map[int32]stream.Timestamp
	death map[int32]stream.Timestamp // absent: in the newest record
}

// archiveMeta is the metadata pass's result.
type archiveMeta struct {
	descs  map[stream.PMID]*stream.Desc // the first descriptor of each PMID
	order  []fetchEntry                 // pmlogreduce's fetch list
	names  map[stream.PMID][]string     // pmNameAll's answer
	indoms map[stream.InDomID]*indomInfo
}

// fetchEntry is one entry of pmlogreduce's fetch list: a metric by the
// first of its names in namespace order.
type fetchEntry struct {
	name string
	pmid stream.PMID
	skip bool // aggregate and event metrics: fetched, never written
}

// snapshot is one instance domain record, resolved and sorted.
type snapshot struct {
	t     stream.Timestamp
	idx   int // position among the domain's records in the file
	insts []int32
}

// loadMeta reads the .meta file once.
func loadMeta(a *format.Archive) (*archiveMeta, error) {
	it := a.Records(format.MetaOnly())
	defer it.Close()
	m := &archiveMeta{descs: map[stream.PMID]*stream.Desc{}, names: map[stream.PMID][]string{},
		indoms: map[stream.InDomID]*indomInfo{}}
	root := &pmnsNode{pmid: stream.PMIDNull}
	tracker := stream.NewInDomTracker()
	type instKey struct {
		latest int // index into the domain's snapshots
		pos    int
	}
	type domState struct {
		snaps  []snapshot
		latest map[int32]instKey
		first  map[int32]stream.Timestamp
		maxN   int
	}
	doms := map[stream.InDomID]*domState{}
	var domOrder []stream.InDomID
	ndesc := 0
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Desc:
			ndesc++
			if _, ok := m.descs[r.PMID]; !ok {
				m.descs[r.PMID] = stream.CloneRecord(r).(*stream.Desc)
			}
			for _, n := range r.Names {
				// libpcp reads names as C strings.
				if i := strings.IndexByte(n, 0); i >= 0 {
					n = n[:i]
				}
				root.add(r.PMID, n)
			}
		case *stream.InDom:
			set, err := tracker.Apply(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a.Base(), err)
			}
			d := doms[r.InDom]
			if d == nil {
				d = &domState{latest: map[int32]instKey{}, first: map[int32]stream.Timestamp{}}
				doms[r.InDom] = d
				domOrder = append(domOrder, r.InDom)
			}
			insts := slices.Clone(set.Insts)
			slices.Sort(insts) // libpcp sorts every record it loads
			d.snaps = append(d.snaps, snapshot{t: r.T, idx: len(d.snaps), insts: nil})
			d.maxN = max(d.maxN, len(insts))
			k := len(d.snaps) - 1
			for p, v := range insts {
				if old, ok := d.latest[v]; !ok || laterSnap(d.snaps[k], d.snaps[old.latest]) {
					d.latest[v] = instKey{k, p}
				}
				if t, ok := d.first[v]; !ok || r.T.Before(t) {
					d.first[v] = r.T
				}
			}
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if ndesc == 0 {
		return nil, fmt.Errorf("%s.meta: no metric descriptors: not a usable archive", a.Base())
	}
	for _, id := range domOrder {
		d := doms[id]
		info := &indomInfo{big: d.maxN >= 16}
		type ent struct {
			inst int32
			k    instKey
		}
		ents := make([]ent, 0, len(d.latest))
		for v, k := range d.latest {
			ents = append(ents, ent{v, k})
		}
		// Newest record first; within a record, its (sorted) order.
		slices.SortFunc(ents, func(a, b ent) int {
			if a.k.latest != b.k.latest {
				if laterSnap(d.snaps[a.k.latest], d.snaps[b.k.latest]) {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.k.pos, b.k.pos)
		})
		for _, e := range ents {
			info.union = append(info.union, e.inst)
		}
		if info.big {
			order := make([]int, len(d.snaps))
			for i := range order {
				order[i] = i
			}
			// Oldest first.
			slices.SortFunc(order, func(a, b int) int {
				if laterSnap(d.snaps[a], d.snaps[b]) {
					return 1
				}
				if laterSnap(d.snaps[b], d.snaps[a]) {
					return -1
				}
				return 0
			})
			rank := make([]int, len(d.snaps))
			for r, i := range order {
				rank[i] = r
			}
			info.birth = d.first
			info.death = map[int32]stream.Timestamp{}
			for v, k := range d.latest {
				if r := rank[k.latest]; r+1 < len(order) {
					info.death[v] = d.snaps[order[r+1]].t
				}
			}
		}
		m.indoms[id] = info
	}
	// The fetch list: leaves in namespace order, the first name of each
	// PMID (aggregate and event metrics are listed under every name, as
	// pmlogreduce checks their type before it checks for a duplicate).
	seen := map[stream.PMID]bool{}
	root.walk("", func(name string, pmid stream.PMID) {
		d := m.descs[pmid]
		if d == nil {
			return
		}
		skip := skipType(d.Type)
		if !skip && seen[pmid] {
			return
		}
		seen[pmid] = true
		m.order = append(m.order, fetchEntry{name: name, pmid: pmid, skip: skip})
	})
	// pmNameAll: libpcp's hash chains put the last name of a depth-first
	// walk first.
	root.allNames("", func(name string, pmid stream.PMID) {
		m.names[pmid] = append([]string{name}, m.names[pmid]...)
	})
	return m, nil
}

// laterSnap reports whether a comes before b in libpcp's list of a
// domain's records: newer first, and of two at one time the later in the
// file first.
func laterSnap(a, b snapshot) bool {
	if c := a.t.Compare(b.t); c != 0 {
		return c > 0
	}
	return a.idx > b.idx
}

func skipType(t stream.Type) bool {
	switch t {
	case stream.TypeAggregate, stream.TypeAggStatic, stream.TypeEvent, stream.TypeHighresEvent:
		return true
	}
	return false
}
