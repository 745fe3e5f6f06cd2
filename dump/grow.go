package dump

import (
	"fmt"
	"slices"

	"github.com/pcptools/pcptools/stream"
)

// grow files a metadata record of a stream read as it arrives (a
// streamSource: the records come once, and the metadata at the start is
// only what came before the first data record, or the first stream's
// METADATA frame) into the metadata, as loading the whole archive would
// have, so that the values after it find their descriptors, names and
// instances; what was built from the metadata before is forgotten where
// the record changes it. Descriptors and instance domains are what the
// value views (-m, --json, --csv) look up; label sets and help texts they
// print as records but never look up, so those are not filed (the views
// that list them, -e and -h, are not read from a stream: Streamable).
//
// A descriptor that differs from the one before it for the same PMID is
// the error that loading the archive would give (errDescChanged), here
// only when the stream reaches it.
func (d *dumper) grow(rec stream.Record) error {
	pm := d.meta
	switch r := rec.(type) {
	case *stream.Desc:
		if old, ok := pm.byPMID[r.PMID]; ok {
			if stream.DescChange(old, r) != "" {
				return errDescChanged(old, r)
			}
			if slices.Equal(old.Names, r.Names) || d.knownNames(r) {
				return nil // (the frame's, or a repeat)
			}
		} else {
			c := stream.CloneRecord(r).(*stream.Desc)
			pm.byPMID[c.PMID] = c
			pm.descs.Add(uint32(c.PMID), c)
		}
		for _, n := range r.Names {
			pm.ns.add(r.PMID, n)
		}
		pm.nsStale = true
		delete(d.metrics, r.PMID)
	case *stream.InDom:
		if len(r.Insts) == 0 {
			return nil // (addInDom ignores it)
		}
		if d.fromStart == nil {
			d.fromStart = map[indomKey]int{}
			for _, x := range d.startMeta.InDoms {
				d.fromStart[keyOfInDom(x)]++
			}
		}
		// The stream brings again, once each, the records it started
		// with: filed already.
		if k := keyOfInDom(r); d.fromStart[k] > 0 {
			d.fromStart[k]--
			return nil
		}
		l := pm.indomsBy[r.InDom]
		if l == nil {
			pm.addInDom(r)
			l = pm.indomsBy[r.InDom]
			l.resolve()
			// Metrics of the domain seen before it had any record
			// print their instances as ??? no longer.
			for p, mi := range d.metrics {
				if mi.indom == r.InDom {
					delete(d.metrics, p)
				}
			}
			return nil
		}
		newest := l.head != nil && r.T.After(l.head.stamp) &&
			len(l.chrono) > 0 && l.chrono[len(l.chrono)-1] == l.head
		pm.addInDom(r)
		l.cacheOK = false
		if !newest {
			l.resolve() // out of time order, or a slot shared: as a load does
			return nil
		}
		// The usual case, a version newer than every other: resolved
		// against the one before it alone, and appended.
		v := l.head
		if v.isDelta {
			undelta(v)
		}
		v.sorted = sortedInsts(v.insts)
		l.chrono = append(l.chrono, v)
	}
	return nil
}

// growAt is grow of a record of it, its error placed in the stream.
func (d *dumper) growAt(it stream.Iterator, rec stream.Record) error {
	err := d.grow(rec)
	if err != nil {
		if where := stream.Where(it); where != "" {
			return fmt.Errorf("%s: %s record at %s: %w", where, rec.Kind(), rec.Time(), err)
		}
	}
	return err
}

func sortedInsts(insts []int32) bool {
	for i := 1; i < len(insts); i++ {
		if insts[i] < insts[i-1] {
			return false
		}
	}
	return true
}

// knownNames reports whether every name of r is already one of its PMID's.
func (d *dumper) knownNames(r *stream.Desc) bool {
	have := d.meta.names(r.PMID)
	for _, n := range r.Names {
		if !slices.Contains(have, n) {
			return false
		}
	}
	return true
}

// indomKey tells apart the instance domain records of a stream's start
// (a METADATA frame's, or those before the first data record), which the
// stream carries again, each once and before any other record of the
// domain's with the same key, and grow must not file twice. (Filing one
// again is not a no-op: it would move it to the head of its time slot,
// and costs a resolve of the domain's whole list.)
type indomKey struct {
	id          stream.InDomID
	t           stream.Timestamp
	enc         stream.InDomEncoding
	n           int
	first, last int32
}

func keyOfInDom(r *stream.InDom) indomKey {
	k := indomKey{id: r.InDom, t: r.T, enc: r.Encoding, n: len(r.Insts)}
	if len(r.Insts) > 0 {
		k.first, k.last = r.Insts[0], r.Insts[len(r.Insts)-1]
	}
	return k
}
