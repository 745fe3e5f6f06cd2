package stream

import (
	"container/heap"
	"fmt"
	"io"
	"iter"
)

// Iterator is a pull iterator over records.
//
//	for it.Next() {
//		rec := it.At()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// At returns the current record; it (and any slice inside it, such as a
// Result's Body or a Desc's Names) is valid only until the next call to
// Next. Implementations reuse their records so that the hot path does not
// allocate. A consumer that keeps a record must copy it (see CloneRecord).
type Iterator interface {
	Next() bool
	At() Record
	Err() error
}

// CloserIterator is an Iterator holding resources (files) to release.
type CloserIterator interface {
	Iterator
	io.Closer
}

// CheckDeferrer is implemented by an iterator that can hand out results
// before checking their structure (Result.Validate), for a consumer that
// walks every value of most results anyway and can check them as it goes:
// one walk of each result instead of two.
type CheckDeferrer interface {
	// DeferChecks asks for results unchecked from the next one on. It
	// reports false when the iterator cannot (its results are then
	// checked as usual). A consumer that gets true must, for every
	// result it does not confirm sound itself, call CheckResult before
	// it uses the result's values.
	DeferChecks() bool
	// CheckResult checks the current record (nothing to do but for a
	// result) and returns the error the iterator would have stopped with;
	// the iterator then stops with it.
	CheckResult() error
}

// Capabilities such as CheckDeferrer are found with As, never with a bare
// type assertion, so that they survive the stages in between. The
// contract: a stage that hands out its source's records unchanged, each
// at the moment its source has it current (it may skip records, or hand
// out records of its own that are not results), implements Unwrap, and As
// looks through it to the source. A stage that copies, re-encodes,
// buffers or reorders results must not implement Unwrap: a capability
// then stops at it, which is safe (the consumer does without), and it may
// offer the capability itself. Prepend unwraps; Concat, the extractor and
// the rewriter do not (Concat offers CheckDeferrer itself, passing it on
// to its inputs).
type Unwrapper interface {
	Unwrap() Iterator
}

// Locator is implemented by iterators that decode records from a file or
// a stream: Where names the file (or stream) the current record was read
// from and the byte offset of its first byte there, so that an error a
// later stage finds in the record can say where it is. It is found with
// As, so a stage in between that hands out its source's records unchanged
// keeps it; ok is false when the current record was not read from a file
// (an archive's label is read from the .meta's start, offset 0).
type Locator interface {
	Where() (file string, off int64, ok bool)
}

// Where says, through As, where it read its current record; "" when no
// iterator in the chain can say.
func Where(it Iterator) string {
	if l, ok := As[Locator](it); ok {
		if f, off, ok := l.Where(); ok {
			return fmt.Sprintf("%s: offset %d", f, off)
		}
	}
	return ""
}

// As finds, on it or on the iterators below it through Unwrap, the first
// that implements T (like errors.As for error chains).
func As[T any](it Iterator) (T, bool) {
	for it != nil {
		if c, ok := it.(T); ok {
			return c, true
		}
		u, ok := it.(Unwrapper)
		if !ok {
			break
		}
		it = u.Unwrap()
	}
	var zero T
	return zero, false
}

// All adapts an Iterator to a range-over-func sequence. A non-nil error is
// yielded once, as the last element, with a nil record.
func All(it Iterator) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for it.Next() {
			if !yield(it.At(), nil) {
				return
			}
		}
		if err := it.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// CloneRecord returns a deep copy of r that stays valid after the iterator
// moves on.
func CloneRecord(r Record) Record {
	switch v := r.(type) {
	case *Label:
		c := *v
		return &c
	case *Desc:
		c := *v
		c.Names = append([]string(nil), v.Names...)
		return &c
	case *InDom:
		c := *v
		c.Insts = append([]int32(nil), v.Insts...)
		c.Names = append([]string(nil), v.Names...)
		if v.Deleted != nil {
			c.Deleted = append([]bool(nil), v.Deleted...)
		}
		return &c
	case *LabelSet:
		c := *v
		c.Sets = make([]OneLabelSet, len(v.Sets))
		for i, s := range v.Sets {
			c.Sets[i] = s
			c.Sets[i].Labels = append([]LabelEntry(nil), s.Labels...)
		}
		return &c
	case *Text:
		c := *v
		return &c
	case *Result:
		return v.Clone()
	case *Mark:
		c := *v
		return &c
	}
	return r
}

// SliceIterator iterates over records held in memory.
type SliceIterator struct {
	recs []Record
	i    int
}

// FromSlice returns an Iterator over recs.
func FromSlice(recs []Record) *SliceIterator { return &SliceIterator{recs: recs, i: -1} }

// Next implements Iterator.
func (s *SliceIterator) Next() bool { s.i++; return s.i < len(s.recs) }

// At implements Iterator.
func (s *SliceIterator) At() Record { return s.recs[s.i] }

// Err implements Iterator.
func (s *SliceIterator) Err() error { return nil }

// Collect reads every record of it into memory (deep copies).
func Collect(it Iterator) ([]Record, error) {
	var out []Record
	for it.Next() {
		out = append(out, CloneRecord(it.At()))
	}
	return out, it.Err()
}

// Merge interleaves the records of several iterators by timestamp. Ties go
// to the iterator given first, and records with equal timestamps are all
// kept, so the merge is stable. Each input must itself be in time order.
//
// Because At of an input is only valid until that input's Next, Merge
// advances an input only after its current record has been handed out and
// the consumer has called Next again.
func Merge(its ...Iterator) Iterator {
	if len(its) == 1 {
		return single{its[0]}
	}
	return &merger{its: its}
}

// single is Merge of one input: the input itself, and a Sourcer as the
// result of Merge is documented to be.
type single struct{ Iterator }

func (single) Source() int { return 0 }

type mergeItem struct {
	it  Iterator
	idx int
	rec Record
}

type mergeHeap []mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	c := h[i].rec.Time().Compare(h[j].rec.Time())
	if c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type merger struct {
	its     []Iterator
	h       mergeHeap
	started bool
	cur     mergeItem // the item handed out; advanced on the next Next
	have    bool
	err     error
}

func (m *merger) Next() bool {
	if m.err != nil {
		return false
	}
	if !m.started {
		m.started = true
		for i, it := range m.its {
			if it.Next() {
				m.h = append(m.h, mergeItem{it: it, idx: i, rec: it.At()})
			} else if err := it.Err(); err != nil {
				m.err = err
				return false
			}
		}
		heap.Init(&m.h)
	} else if m.have {
		// Advance the input whose record was handed out last.
		c := m.cur
		m.have = false
		if c.it.Next() {
			c.rec = c.it.At()
			// Fast path: still the smallest, no heap work.
			if len(m.h) == 0 || !m.less(m.h[0], c) {
				m.cur = c
				m.have = true
				return true
			}
			// Trade places with the top and sift it down: heap.Push and
			// heap.Pop would box the item in an interface, an allocation
			// per record.
			m.cur, m.h[0] = m.h[0], c
			heap.Fix(&m.h, 0)
			m.have = true
			return true
		} else if err := c.it.Err(); err != nil {
			m.err = err
			return false
		}
	}
	if len(m.h) == 0 {
		return false
	}
	m.cur = heap.Pop(&m.h).(mergeItem)
	m.have = true
	return true
}

func (m *merger) less(a, b mergeItem) bool {
	c := a.rec.Time().Compare(b.rec.Time())
	if c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}

func (m *merger) At() Record { return m.cur.rec }

// Source returns the index of the input the current record came from.
func (m *merger) Source() int { return m.cur.idx }

func (m *merger) Err() error { return m.err }

// Sourcer is implemented by iterators that can say which input the current
// record came from (Merge's result does).
type Sourcer interface{ Source() int }

// Prepend returns an iterator that yields rec and then the records of it.
// A consumer that must look at the head of a stream (its label, to parse a
// time window against it) reads that record, then hands the whole stream
// on; rec must stay valid (clone it with CloneRecord when it came from
// it.At()).
func Prepend(rec Record, it Iterator) Iterator { return &prepended{head: rec, rest: it} }

type prepended struct {
	head  Record
	rest  Iterator
	state int // 0 before the head, 1 at it, 2 in the rest
}

func (p *prepended) Next() bool {
	if p.state == 0 {
		p.state = 1
		return true
	}
	p.state = 2
	p.head = nil
	return p.rest.Next()
}

func (p *prepended) At() Record {
	if p.state == 1 {
		return p.head
	}
	return p.rest.At()
}

func (p *prepended) Err() error { return p.rest.Err() }

// Unwrap implements Unwrapper: after its head, a prepended iterator hands
// out its rest's records as they come.
func (p *prepended) Unwrap() Iterator { return p.rest }

// PrependAll is Prepend of several records: it yields recs in turn, then
// the records of it.
func PrependAll(recs []Record, it Iterator) Iterator {
	return &prependedAll{head: recs, rest: it, i: -1}
}

type prependedAll struct {
	head []Record
	rest Iterator
	i    int // the current head record; len(head): in the rest
}

func (p *prependedAll) Next() bool {
	if p.i < len(p.head) {
		p.i++
	}
	if p.i < len(p.head) {
		return true
	}
	p.head, p.i = nil, 0
	return p.rest.Next()
}

func (p *prependedAll) At() Record {
	if p.i < len(p.head) {
		return p.head[p.i]
	}
	return p.rest.At()
}

func (p *prependedAll) Err() error { return p.rest.Err() }

// Unwrap implements Unwrapper, as Prepend's does.
func (p *prependedAll) Unwrap() Iterator { return p.rest }
