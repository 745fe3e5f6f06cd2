package pipe

import (
	"fmt"

	"github.com/pcptools/pcptools/stream"
)

// Announced passes on the records of it, a stream whose METADATA frame
// held meta, and fails at the first metadata record that the frame did
// not hold: a consumer that planned its work on the frame (pcprewrite's
// rules, pcpextract's metadata) must not go on with records it did not
// plan for, as it would after a second stream joined to the first
// (Concatenated) that brings metadata of its own. A descriptor is known
// by its PMID, an instance domain by its identifier and time, a label set
// by its type, identifier and time, a help text by its type and
// identifier. A descriptor that differs from the frame's of its metric
// (stream.DescChange) fails too: the one or the other is damaged, and a
// consumer that took the frame's would write it without a word where
// pcpcat, which takes the record's and checks it against the frame
// (stream.Described), refuses the stream.
func Announced(it stream.Iterator, meta []stream.Record) stream.Iterator {
	a := &announced{Iterator: it, known: map[metaKey]bool{}, descs: map[stream.PMID]*stream.Desc{}}
	for _, r := range meta {
		a.known[keyOf(r)] = true
		if d, ok := r.(*stream.Desc); ok {
			a.descs[d.PMID] = d
		}
	}
	return a
}

type metaKey struct {
	kind  stream.Kind
	a, b  uint32
	t     stream.Timestamp
	valid bool
}

func keyOf(rec stream.Record) metaKey {
	switch r := rec.(type) {
	case *stream.Desc:
		return metaKey{kind: r.Kind(), a: uint32(r.PMID), valid: true}
	case *stream.InDom:
		return metaKey{kind: r.Kind(), a: uint32(r.InDom), t: r.T, valid: true}
	case *stream.LabelSet:
		return metaKey{kind: r.Kind(), a: uint32(r.Type), b: r.Ident, t: r.T, valid: true}
	case *stream.Text:
		return metaKey{kind: r.Kind(), a: r.Type, b: r.Ident, valid: true}
	}
	return metaKey{}
}

type announced struct {
	stream.Iterator
	known map[metaKey]bool
	descs map[stream.PMID]*stream.Desc // the frame's
	err   error
}

// Unwrap: records pass unchanged, so capabilities below stay visible.
func (a *announced) Unwrap() stream.Iterator { return a.Iterator }

func (a *announced) Err() error {
	if a.err != nil {
		return a.err
	}
	return a.Iterator.Err()
}

func (a *announced) Next() bool {
	if a.err != nil || !a.Iterator.Next() {
		return false
	}
	rec := a.At()
	k := keyOf(rec)
	if !k.valid {
		return true
	}
	where := func() string {
		if w := stream.Where(a.Iterator); w != "" {
			return w
		}
		return "the stream"
	}
	if !a.known[k] {
		a.err = fmt.Errorf("%s: a %s record at %s that the stream's METADATA frame did not hold (a second stream joined to the first? give each stream to its own run)", where(), rec.Kind(), rec.Time())
		return false
	}
	if d, ok := rec.(*stream.Desc); ok {
		if what := stream.DescChange(a.descs[d.PMID], d); what != "" {
			a.err = fmt.Errorf("%s: descriptor of metric %s: the %s differs from the stream's METADATA frame's, which PCP refuses", where(), d.PMID, what)
			return false
		}
	}
	return true
}
