package extract

import "github.com/pcptools/pcptools/stream"

// inputHeap orders the inputs that have something pending (a record, or
// the <mark> due at their end) by when it sorts, ties to the input named
// first: pmlogextract's choice, which scans every input for the earliest
// record and keeps the first of equal ones. The keys of an input never
// change while it is in the heap, so each entry caches its key.
//
// It is hand-rolled rather than container/heap's: that one boxes every
// pushed and popped item in an interface, an allocation per record.
type inputHeap []heapEnt

type heapEnt struct {
	key stream.Timestamp
	in  *input
}

// before is the heap's order: earlier key first, then the input named
// first.
func (a heapEnt) before(b heapEnt) bool {
	if c := a.key.Compare(b.key); c != 0 {
		return c < 0
	}
	return a.in.idx < b.in.idx
}

func (h *inputHeap) push(in *input) {
	*h = append(*h, heapEnt{key: in.key(), in: in})
	h.up(len(*h) - 1)
}

// pop removes and returns the first input.
func (h *inputHeap) pop() *input {
	s := *h
	top := s[0].in
	n := len(s) - 1
	s[0] = s[n]
	s[n] = heapEnt{}
	*h = s[:n]
	if n > 0 {
		h.down(0)
	}
	return top
}

// top returns the first input, nil when the heap is empty.
func (h inputHeap) top() *input {
	if len(h) == 0 {
		return nil
	}
	return h[0].in
}

// fixTop re-sorts the first entry after its input's key has changed.
func (h inputHeap) fixTop() {
	h[0].key = h[0].in.key()
	h.down(0)
}

func (h inputHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h inputHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// init orders the heap from scratch.
func (h inputHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
