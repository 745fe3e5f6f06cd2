package extract

// pcpHash reproduces the lookup order of libpcp's __pmHash tables, which
// pmlogextract keeps its label sets in. Several label sets with the same
// type and identifier (one per input archive, or one per change) are all
// added under one key, and pmlogextract then only ever considers the one a
// search finds first. Which one that is depends on the table's history:
// a node is added at the head of its chain, and when the table grows every
// chain is relinked head-first into the new table, which reverses the order
// of nodes that stay together. The output of pmlogextract (which label set
// is written, and when) follows from that order, so it is modelled here.
type pcpHash[T any] struct {
	size  int
	nodes int
	heads []*pcpNode[T]
}

type pcpNode[T any] struct {
	key  uint32
	data T
	next *pcpNode[T]
}

func (h *pcpHash[T]) add(key uint32, data T) {
	h.nodes++
	if h.size == 0 {
		h.size = 1
		h.heads = make([]*pcpNode[T], 1)
	} else if h.nodes/4 > h.size {
		old := h.heads
		size := h.size * 2
		if size%2 != 0 {
			size++
		}
		if size%3 != 0 {
			size += 2
		}
		if size%5 != 0 {
			size += 2
		}
		h.size = size
		h.heads = make([]*pcpNode[T], size)
		for i := len(old) - 1; i >= 0; i-- {
			for n := old[i]; n != nil; {
				next := n.next
				k := n.key % uint32(size)
				n.next = h.heads[k]
				h.heads[k] = n
				n = next
			}
		}
	}
	k := key % uint32(h.size)
	h.heads[k] = &pcpNode[T]{key: key, data: data, next: h.heads[k]}
}

// search returns the data of the first node with key, as __pmHashSearch.
func (h *pcpHash[T]) search(key uint32) (T, bool) {
	var zero T
	if h.size == 0 {
		return zero, false
	}
	for n := h.heads[key%uint32(h.size)]; n != nil; n = n.next {
		if n.key == key {
			return n.data, true
		}
	}
	return zero, false
}
