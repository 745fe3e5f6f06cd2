// Package pcphash reproduces libpcp's chained hash tables (__pmHashCtl):
// their iteration order, and which of several nodes with one key a search
// finds. PCP's tools show both: pmdumplog -d and -i walk the tables bucket
// by bucket, and pmlogextract keeps every label set under its key and uses
// the one a search finds first. Both are a function of the keys, the order
// in which they were added and the table's growth history. Nothing here is
// used to look things up quickly; Go maps do that.
//
// The table starts with one bucket. When an insertion makes the node count
// divided by four exceed the bucket count, the bucket count doubles, then
// grows by 2 unless it is a multiple of 3, and by 2 more unless it is then
// a multiple of 5 (1, 6, 14, 30, 60, 120, ...); every chain is relinked,
// walking the old buckets from last to first and pushing each node on the
// front of its new chain. New nodes also go on the front of their chain.
package pcphash

// Hash is one table; the zero value is empty.
type Hash[T any] struct {
	buckets []*Node[T]
	nodes   int
}

// Node is one entry of a table.
type Node[T any] struct {
	Key  uint32
	Data T
	next *Node[T]
}

// Search returns the first node with key in its chain, or nil.
func (h *Hash[T]) Search(key uint32) *Node[T] {
	if len(h.buckets) == 0 {
		return nil
	}
	for n := h.buckets[key%uint32(len(h.buckets))]; n != nil; n = n.next {
		if n.Key == key {
			return n
		}
	}
	return nil
}

// Add inserts a node without checking for an existing key, as libpcp does.
func (h *Hash[T]) Add(key uint32, data T) *Node[T] {
	h.nodes++
	if len(h.buckets) == 0 {
		h.buckets = make([]*Node[T], 1)
	} else if h.nodes/4 > len(h.buckets) {
		size := len(h.buckets) * 2
		if size%2 != 0 {
			size++
		}
		if size%3 != 0 {
			size += 2
		}
		if size%5 != 0 {
			size += 2
		}
		old := h.buckets
		h.buckets = make([]*Node[T], size)
		for i := len(old) - 1; i >= 0; i-- {
			for n := old[i]; n != nil; {
				next := n.next
				k := n.Key % uint32(size)
				n.next = h.buckets[k]
				h.buckets[k] = n
				n = next
			}
		}
	}
	n := &Node[T]{Key: key, Data: data}
	k := key % uint32(len(h.buckets))
	n.next = h.buckets[k]
	h.buckets[k] = n
	return n
}

// Walk calls f for every node in bucket and chain order.
func (h *Hash[T]) Walk(f func(n *Node[T])) {
	for _, n := range h.buckets {
		for ; n != nil; n = n.next {
			f(n)
		}
	}
}

// FirstChain returns the nodes of the first bucket that has any, in chain
// order.
func (h *Hash[T]) FirstChain() []*Node[T] {
	var out []*Node[T]
	for _, n := range h.buckets {
		if n != nil {
			for ; n != nil; n = n.next {
				out = append(out, n)
			}
			break
		}
	}
	return out
}
