package stream

import (
	"fmt"
	"slices"
)

// Described returns a stage that hands out its records unchanged and
// stops with an error at a result holding a metric no descriptor came
// before, or at a delta instance domain record with no full record of its
// domain before it (which nothing can resolve), or at a descriptor that
// differs from an earlier one of its metric in type, semantics, instance
// domain or units (libpcp refuses such an archive: PM_ERR_LOGCHANGETYPE
// and its kin), the earlier one being a record before it or, in a pipe
// stream, the stream's METADATA frame (a source's Metadata). Such a result cannot be written: PCP's tools refuse the archive
// (pmlogextract: "meta data (TYPE_DESC) ... has not been found"), pmlogcheck
// reports it, and a copy that kept it would pass the damage on in
// silence. The error says where the result was read when an iterator
// below can (Locator).
//
// The check costs a walk over the value set headers of each result and a
// lookup per metric; results whose metrics are those of the result before
// them (the common case: pmlogger logs the same metrics each interval)
// skip the lookups.
func Described(it Iterator) Iterator {
	return &described{src: it, descs: make(map[PMID]*Desc), indoms: make(map[InDomID]struct{})}
}

type described struct {
	src    Iterator
	descs  map[PMID]*Desc
	meta   map[PMID]*Desc       // the source's METADATA frame's (nil: none)
	seeded bool                 // the source's METADATA frame looked at
	indoms map[InDomID]struct{} // those with a full record
	prev   []PMID               // the metrics of the last result found described
	cur    []PMID
	err    error
}

func (d *described) Next() bool {
	if d.err != nil || !d.src.Next() {
		return false
	}
	if !d.seeded {
		d.seeded = true
		d.seed()
	}
	switch r := d.src.At().(type) {
	case *Desc:
		old := d.descs[r.PMID]
		if old == nil {
			old = d.meta[r.PMID]
		}
		if old != nil {
			if what := DescChange(old, r); what != "" {
				return d.fail(fmt.Errorf("descriptor of metric %s: the %s changed from an earlier descriptor of it, which PCP refuses", r.PMID, what))
			}
		}
		d.descs[r.PMID] = r
	case *InDom:
		if r.Encoding != InDomDelta {
			d.indoms[r.InDom] = struct{}{}
		} else if _, ok := d.indoms[r.InDom]; !ok {
			return d.fail(fmt.Errorf("delta record for instance domain %s before any full record", r.InDom))
		}
	case *Result:
		if err := d.check(r); err != nil {
			return d.fail(err)
		}
	}
	return true
}

// seed files the descriptors of the source's METADATA frame (a pipe
// stream's), read with its first frame: a descriptor record that differs
// from them is damage in the stream, as pcpcat -m finds it. They do not
// describe the results: only records are written.
func (d *described) seed() {
	ms, ok := As[interface{ Metadata() ([]Record, bool) }](d.src)
	if !ok {
		return
	}
	recs, ok := ms.Metadata()
	if !ok {
		return
	}
	d.meta = make(map[PMID]*Desc)
	for _, rec := range recs {
		if ds, ok := rec.(*Desc); ok {
			d.meta[ds.PMID] = ds
		}
	}
}

// DescChange names the first field (type, semantics, instance domain,
// units) in which b, a later descriptor of a's metric, differs from a:
// libpcp refuses an archive with such a pair (PM_ERR_LOGCHANGETYPE and
// its kin). It returns "" when libpcp takes the two for one.
func DescChange(a, b *Desc) string {
	switch {
	case a.Type != b.Type:
		return "type"
	case a.Sem != b.Sem:
		return "semantics"
	case a.InDom != b.InDom:
		return "instance domain"
	case a.Units != b.Units:
		return "units"
	}
	return ""
}

func (d *described) fail(err error) bool {
	if w := Where(d.src); w != "" {
		err = fmt.Errorf("%s: %w", w, err)
	}
	d.err = err
	return false
}

// check looks up each metric of r unless r's metrics are prev's. The
// metrics come from one tight pass over the value set headers
// (AppendPMIDs): walking them with VSets cost 4% of a 1 GiB copy. A body
// that does not frame is left to the checks of whoever uses its values;
// the metrics before the damage are still checked.
func (d *described) check(r *Result) error {
	d.cur, _ = r.AppendPMIDs(d.cur[:0])
	if slices.Equal(d.cur, d.prev) {
		return nil
	}
	for i, p := range d.cur {
		if i < len(d.prev) && d.prev[i] == p {
			continue // prev's metrics were all described
		}
		if d.descs[p] == nil {
			return fmt.Errorf("result at %s: no descriptor for metric %s before it", r.T, p)
		}
	}
	d.prev, d.cur = d.cur, d.prev
	return nil
}

func (d *described) At() Record { return d.src.At() }

func (d *described) Err() error {
	if d.err != nil {
		return d.err
	}
	return d.src.Err()
}

// Unwrap implements Unwrapper: the records are the source's, unchanged.
func (d *described) Unwrap() Iterator { return d.src }
