package pcphash

import "testing"

func TestGrowth(t *testing.T) {
	var h Hash[int]
	for i := 0; i < 100; i++ {
		h.Add(uint32(i*7), i)
	}
	// 1 bucket; whenever nodes pass four per bucket the count doubles,
	// gains 2 unless a multiple of 3 and 2 more unless then a multiple
	// of 5: 1 -> 6 -> 14 -> 30.
	if len(h.buckets) != 30 {
		t.Errorf("%d buckets", len(h.buckets))
	}
	n := 0
	h.Walk(func(*Node[int]) { n++ })
	if n != 100 || h.Search(7*99) == nil || h.Search(5) != nil {
		t.Errorf("walk %d nodes", n)
	}
}

// TestDuplicateKeys: a search finds the newest node with a key until the
// table grows; growing relinks chains head first, which reverses the order
// of nodes that share a chain, so the oldest is found after that.
func TestDuplicateKeys(t *testing.T) {
	var h Hash[int]
	for i := 1; i <= 3; i++ {
		h.Add(42, i)
	}
	if got := h.Search(42).Data; got != 3 {
		t.Fatalf("before growth: found %d, want the newest (3)", got)
	}
	for i := 4; i <= 8; i++ { // the 8th node makes the table grow
		h.Add(42, i)
	}
	if len(h.buckets) != 6 {
		t.Fatalf("%d buckets, want 6", len(h.buckets))
	}
	// Relinking reversed 7..1 into 1..7; 8 then went on the front.
	if got := h.Search(42).Data; got != 8 {
		t.Fatalf("found %d, want 8", got)
	}
	var order []int
	for _, n := range h.FirstChain() {
		order = append(order, n.Data)
	}
	want := []int{8, 1, 2, 3, 4, 5, 6, 7}
	for i := range want {
		if i >= len(order) || order[i] != want[i] {
			t.Fatalf("chain %v, want %v", order, want)
		}
	}
}
