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
// identifier.
func Announced(it stream.Iterator, meta []stream.Record) stream.Iterator {
	a := &announced{Iterator: it, known: map[metaKey]bool{}}
	for _, r := range meta {
		a.known[keyOf(r)] = true
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
	if k := keyOf(rec); k.valid && !a.known[k] {
		where := stream.Where(a.Iterator)
		if where == "" {
			where = "the stream"
		}
		a.err = fmt.Errorf("%s: a %s record at %s that the stream's METADATA frame did not hold (a second stream joined to the first? give each stream to its own run)", where, rec.Kind(), rec.Time())
		return false
	}
	return true
}
