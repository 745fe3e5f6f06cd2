package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// randomResult builds a result like a logger's: sets of 64-bit values,
// strings (blocks needing padding), 32-bit values (insitu), aggregates of
// odd sizes, error codes and empty sets.
func randomResult(t testing.TB, rng *rand.Rand) *Result {
	var b ResultBuilder
	n := 1 + rng.Intn(12)
	for m := 0; m < n; m++ {
		id := NewPMID(1, 0, uint32(m))
		vals := make([]Val, rng.Intn(6))
		for i := range vals {
			vals[i] = Val{Inst: int32(i), I: rng.Int63(), U: rng.Uint64(), F: rng.Float64(),
				S: strings.Repeat("s", rng.Intn(9)), B: bytes.Repeat([]byte{7}, 1+rng.Intn(9))}
		}
		switch rng.Intn(7) {
		case 0, 1:
			b.Add(id, TypeU64, vals...)
		case 2:
			b.Add(id, TypeString, vals...)
		case 3:
			b.Add(id, TypeU32, vals...)
		case 4:
			b.Add(id, TypeAggregate, vals...)
		case 5:
			b.Add(id, TypeDouble, vals...)
		default:
			b.AddError(id, -12345)
		}
	}
	r := &Result{}
	if err := b.Build(Timestamp{Sec: 1}, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// damage changes one word or byte of r's body somewhere past its numpmid.
func damage(rng *rand.Rand, r *Result) {
	b := r.Body
	if len(b) <= 8 {
		return
	}
	i := 4 + rng.Intn(len(b)-4)
	switch rng.Intn(3) {
	case 0:
		b[i] ^= byte(1 << rng.Intn(8))
	case 1:
		if i+4 <= len(b) {
			binary.BigEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:])+uint32(rng.Intn(5))-2)
		}
	default:
		b[i] = '~'
	}
}

// setByset is what AppendSetsRebased must equal: the sets of r whose
// headers lie in [from, to), copied one by one, then their blocks.
func setBySet(r *Result, offs []int32, i, j int, ptr uint32) (hdr, blocks []byte, next uint32, err error) {
	sets := make([]VSet, 0, j-i)
	for k := i; k < j; k++ {
		sets = append(sets, r.VSetAt(int(offs[k])))
	}
	for k := range sets {
		if hdr, ptr, err = sets[k].AppendRebased(hdr, sets[k].PMID, ptr); err != nil {
			return nil, nil, 0, err
		}
	}
	for k := range sets {
		if blocks, err = sets[k].AppendBlocks(blocks, '~'); err != nil {
			return nil, nil, 0, err
		}
	}
	return hdr, blocks, ptr, nil
}

// TestAppendSetsRebased: for runs of sets of random results, intact and
// damaged, the run's copy is what copying set by set gives, whenever it
// says it could make it; on results as PCP lays them out it always can.
// Both loops for evenly laid out blocks are run.
func TestAppendSetsRebased(t *testing.T) {
	defer func(f func([]byte, []byte, []byte, uint32, uint32, uint32, int) int) { evenLoop = f }(evenLoop)
	rng := rand.New(rand.NewSource(1))
	made, refused := 0, 0
	for round := 0; round < 20000; round++ {
		evenLoop = evenBlocks
		if round%2 == 1 {
			evenLoop = evenBlocksSafe
		}
		r := randomResult(t, rng)
		intact := round%3 != 0
		if !intact {
			damage(rng, r)
		}
		offs, err := r.Frame(nil)
		if err != nil {
			continue
		}
		n := len(offs) - 1
		i := rng.Intn(n + 1)
		j := i + rng.Intn(n-i+1)
		ptr := uint32(rng.Intn(1000))
		pre := []byte{1, 2, 3}
		got, span, next, ok := r.AppendSetsRebased(append([]byte(nil), pre...), int(offs[i]), int(offs[j]), ptr, '~')
		if !ok {
			if intact {
				t.Fatalf("round %d: sets %d..%d of an intact result refused", round, i, j)
			}
			if !bytes.Equal(got, pre) {
				t.Fatalf("round %d: refused, but appended %d bytes", round, len(got)-len(pre))
			}
			refused++
			continue
		}
		made++
		hdr, blocks, wantNext, err := setBySet(r, offs, i, j, ptr)
		if err != nil {
			t.Fatalf("round %d: sets %d..%d copied as a run, but one by one: %v", round, i, j, err)
		}
		if !bytes.Equal(got[len(pre):], hdr) || !bytes.Equal(r.Body[span.From:span.To], blocks) || next != wantNext {
			t.Fatalf("round %d (intact %v): sets %d..%d differ from set by set:\n got %x %x next %d\nwant %x %x next %d",
				round, intact, i, j, got[len(pre):], r.Body[span.From:span.To], next, hdr, blocks, wantNext)
		}
	}
	if made == 0 || refused == 0 {
		t.Errorf("%d runs made, %d refused: the test does not cover both", made, refused)
	}
}

// TestEvenLoopsAgree: the loops for evenly laid out blocks (the quick
// one with and without its vector part for 12-byte blocks, and the safe
// one) find the same sets laid out that way, and move their pointers
// alike.
func TestEvenLoopsAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	vector := 0
	for round := 0; round < 40000; round++ {
		n := rng.Intn(8)
		if round%2 == 0 {
			n = rng.Intn(60)
		}
		vlen := 12
		if round%3 == 0 {
			vlen = 4 * (1 + rng.Intn(4))
		}
		w0 := uint32(rng.Intn(100))
		if round%5 == 0 {
			w0 = ^uint32(0) - uint32(rng.Intn(100)) // the pointers wrap
		}
		d := uint32(rng.Intn(1000)) - 500
		pairs := make([]byte, 8*n)
		blocks := make([]byte, n*vlen)
		rng.Read(blocks)
		for k := 0; k < n; k++ {
			binary.BigEndian.PutUint32(pairs[8*k:], rng.Uint32())
			binary.BigEndian.PutUint32(pairs[8*k+4:], w0+uint32(k*vlen/4))
			binary.BigEndian.PutUint32(blocks[k*vlen:], 3<<24|uint32(vlen))
		}
		if n > 0 && rng.Intn(2) == 0 {
			if rng.Intn(2) == 0 {
				pairs[8*rng.Intn(n)+4+rng.Intn(4)] ^= 1 << rng.Intn(8)
			} else {
				blocks[rng.Intn(n)*vlen+rng.Intn(4)] ^= 1 << rng.Intn(8)
			}
		}
		hdr := uint32(0)
		if n > 0 {
			hdr = binary.LittleEndian.Uint32(blocks)
		}
		safe := append([]byte(nil), pairs...)
		ps := evenBlocksSafe(safe, pairs, blocks, w0, d, hdr, vlen)
		allSafe := ps >= len(pairs)
		loops := map[string]func(a, src, blocks []byte, w, d, hdr uint32, vlen int) int{
			"quick": evenBlocks,
			"quick, scalar": func(a, src, blocks []byte, w, d, hdr uint32, vlen int) int {
				return evenBlocksWith(nil, a, src, blocks, w, d, hdr, vlen)
			},
		}
		for name, loop := range loops {
			a := append([]byte(nil), pairs...)
			pa := loop(a, pairs, blocks, w0, d, hdr, vlen)
			if all := pa >= len(pairs); all != allSafe {
				t.Fatalf("round %d (n %d vlen %d): %s loop says %v, safe loop %v", round, n, vlen, name, all, allSafe)
			}
			if allSafe && !bytes.Equal(a, safe) {
				t.Fatalf("round %d (n %d vlen %d): %s loop moved the pointers otherwise:\n%x\n%x", round, n, vlen, name, a, safe)
			}
			if !allSafe && !bytes.Equal(a, pairs) {
				// The quick loop leaves the pairs as they were.
				t.Fatalf("round %d: %s loop failed and left %x (was %x)", round, name, a, pairs)
			}
		}
		if !allSafe && (ps > len(pairs) || ps < 4) {
			t.Fatalf("round %d: safe loop stopped at %d", round, ps)
		}
		if vlen == 12 && n >= 8 {
			vector++
		}
	}
	if even12 == nil {
		t.Log("no vector loop on this machine: the quick loop was tested scalar only")
	} else if vector == 0 {
		t.Error("the vector loop was never run")
	}
}

func ExampleResult_AppendSetsRebased() {
	var b ResultBuilder
	b.Add(NewPMID(1, 0, 1), TypeU64, Val{Inst: 1, U: 10}, Val{Inst: 2, U: 20})
	b.Add(NewPMID(1, 0, 2), TypeString, Val{Inst: 1, S: "abc"})
	var r Result
	_ = b.Build(Timestamp{Sec: 1}, &r)
	offs, _ := r.Frame(nil)
	// The second set alone, its block moved to word 100.
	hdr, span, next, ok := r.AppendSetsRebased(nil, int(offs[1]), int(offs[2]), 100, '~')
	fmt.Println(len(hdr), span.To-span.From, next, ok)
	// Output: 20 8 102 true
}

// TestReframe: Reframe gives what Frame gives, offsets and error alike,
// whatever offsets it starts from: the result's own, another result's,
// none, or its own with one changed.
func TestReframe(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var prev []int32
	for round := 0; round < 20000; round++ {
		r := randomResult(t, rng)
		if round%3 == 0 {
			damage(rng, r)
		}
		want, werr := r.Frame(nil)
		start := prev
		switch round % 4 {
		case 0:
			start = append([]int32(nil), want...)
		case 1:
			start = nil
		case 2:
			start = append([]int32(nil), want...)
			if len(start) > 0 {
				start[rng.Intn(len(start))] += int32(rng.Intn(9)) - 4
			}
		}
		got, gerr := r.Reframe(start)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("round %d: Frame says %v, Reframe %v", round, werr, gerr)
		}
		if werr == nil && !slices.Equal(got, want) {
			t.Fatalf("round %d: Frame gives %v, Reframe %v (from %v)", round, want, got, start)
		}
		prev = got
	}
}
