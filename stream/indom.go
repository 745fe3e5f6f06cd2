package stream

import (
	"fmt"
	"slices"
	"sort"
)

// InstanceSet is a resolved (full) instance domain at some time.
type InstanceSet struct {
	T     Timestamp
	Insts []int32
	Names []string
}

// Lookup returns the name of instance inst.
func (s *InstanceSet) Lookup(inst int32) (string, bool) {
	for i, v := range s.Insts {
		if v == inst {
			return s.Names[i], true
		}
	}
	return "", false
}

// InDomTracker follows instance domain records and resolves deltas into
// full instance sets, as libpcp does when it loads an archive's metadata.
type InDomTracker struct {
	cur map[InDomID]*InstanceSet
}

// NewInDomTracker returns an empty tracker.
func NewInDomTracker() *InDomTracker { return &InDomTracker{cur: map[InDomID]*InstanceSet{}} }

// Current returns the latest resolved set for id, or nil.
func (t *InDomTracker) Current(id InDomID) *InstanceSet { return t.cur[id] }

// Apply resolves rec against the previous set for its domain and records
// the result. The returned set is owned by the tracker and is replaced (not
// modified) by later calls, so it may be kept.
func (t *InDomTracker) Apply(rec *InDom) (*InstanceSet, error) {
	if rec.Encoding != InDomDelta {
		s := &InstanceSet{T: rec.T, Insts: slices.Clone(rec.Insts), Names: slices.Clone(rec.Names)}
		t.cur[rec.InDom] = s
		return s, nil
	}
	prev := t.cur[rec.InDom]
	if prev == nil {
		return nil, fmt.Errorf("delta record for instance domain %s before any full record", rec.InDom)
	}
	s := ResolveDelta(prev, rec)
	t.cur[rec.InDom] = s
	return s, nil
}

// ResolveDelta applies the delta rec to prev and returns a new set, sorted
// by instance number (as libpcp keeps them).
func ResolveDelta(prev *InstanceSet, rec *InDom) *InstanceSet {
	names := make(map[int32]string, len(prev.Insts)+len(rec.Insts))
	for i, v := range prev.Insts {
		names[v] = prev.Names[i]
	}
	for i, v := range rec.Insts {
		if rec.Deleted != nil && rec.Deleted[i] {
			delete(names, v)
		} else {
			names[v] = rec.Names[i]
		}
	}
	s := &InstanceSet{T: rec.T, Insts: make([]int32, 0, len(names)), Names: make([]string, 0, len(names))}
	for v := range names {
		s.Insts = append(s.Insts, v)
	}
	slices.Sort(s.Insts)
	for _, v := range s.Insts {
		s.Names = append(s.Names, names[v])
	}
	return s
}

// MakeDelta returns the delta that turns prev into next, and whether PCP
// would write it as a delta (pmaDeltaInDom's rule): something changed,
// adds plus deletes are no more than next's size, and no instance kept its
// number but changed its name. A renamed instance appears in the delta as
// a delete followed by an add, which resolves correctly but which PCP
// never writes: it falls back to a full record. The delta's entries are
// sorted by instance.
func MakeDelta(prev, next *InstanceSet) (insts []int32, names []string, deleted []bool, ok bool) {
	old := make(map[int32]string, len(prev.Insts))
	for i, v := range prev.Insts {
		old[v] = prev.Names[i]
	}
	seen := make(map[int32]bool, len(next.Insts))
	type ent struct {
		inst int32
		name string
		del  bool
	}
	var ents []ent
	renamed := false
	for i, v := range next.Insts {
		seen[v] = true
		if n, had := old[v]; !had || n != next.Names[i] {
			if had {
				renamed = true
				ents = append(ents, ent{v, "", true})
			}
			ents = append(ents, ent{v, next.Names[i], false})
		}
	}
	for _, v := range prev.Insts {
		if !seen[v] {
			ents = append(ents, ent{v, "", true})
		}
	}
	sort.SliceStable(ents, func(i, j int) bool { return ents[i].inst < ents[j].inst })
	for _, e := range ents {
		insts = append(insts, e.inst)
		names = append(names, e.name)
		deleted = append(deleted, e.del)
	}
	return insts, names, deleted, !renamed && len(ents) > 0 && len(ents) <= len(next.Insts)
}
