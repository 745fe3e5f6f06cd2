package dump

// pcpHash reproduces the iteration order of libpcp's chained hash tables
// (__pmHashCtl). pmdumplog -d and -i walk those tables bucket by bucket,
// so their output order is a function of the keys, the order in which they
// were added and the table's growth history. Nothing here is used to look
// things up quickly; Go maps do that.
//
// The table starts with one bucket. When an insertion makes the node count
// divided by four exceed the bucket count, the bucket count doubles, then
// grows by 2 unless it is a multiple of 3, and by 2 more unless it is then
// a multiple of 5 (1, 6, 14, 30, 60, 120, ...); every chain is relinked,
// walking the old buckets from last to first and pushing each node on the
// front of its new chain. New nodes also go on the front of their chain.
type pcpHash[T any] struct {
	buckets []*hashNode[T]
	nodes   int
}

type hashNode[T any] struct {
	key  uint32
	data T
	next *hashNode[T]
}

// search returns the first node with key in its chain, or nil.
func (h *pcpHash[T]) search(key uint32) *hashNode[T] {
	if len(h.buckets) == 0 {
		return nil
	}
	for n := h.buckets[key%uint32(len(h.buckets))]; n != nil; n = n.next {
		if n.key == key {
			return n
		}
	}
	return nil
}

// add inserts a node without checking for an existing key, as libpcp does.
func (h *pcpHash[T]) add(key uint32, data T) *hashNode[T] {
	h.nodes++
	if len(h.buckets) == 0 {
		h.buckets = make([]*hashNode[T], 1)
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
		h.buckets = make([]*hashNode[T], size)
		for i := len(old) - 1; i >= 0; i-- {
			for n := old[i]; n != nil; {
				next := n.next
				k := n.key % uint32(size)
				n.next = h.buckets[k]
				h.buckets[k] = n
				n = next
			}
		}
	}
	n := &hashNode[T]{key: key, data: data}
	k := key % uint32(len(h.buckets))
	n.next = h.buckets[k]
	h.buckets[k] = n
	return n
}

// walk calls f for every node in bucket and chain order.
func (h *pcpHash[T]) walk(f func(n *hashNode[T])) {
	for _, n := range h.buckets {
		for ; n != nil; n = n.next {
			f(n)
		}
	}
}
