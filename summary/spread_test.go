package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
)

// TestSpreadRunsLikeEachValue: runs of equal values, added to the sketch
// at once with their count, give the percentiles that adding each value
// gives.
func TestSpreadRunsLikeEachValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := spread{wants: true}
	direct, err := newSketch()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		v := float64(rng.IntN(50))
		switch rng.IntN(6) {
		case 0, 1:
			v = rng.NormFloat64() * 1e6
		case 2:
			// 1e-5 to 1e12, either sign: batches that span more bins
			// than drain counts in an array
			v = math.Pow(10, rng.Float64()*17-5)
			if rng.IntN(2) == 0 {
				v = -v
			}
		}
		for n := rng.IntN(20); n >= 0; n-- {
			p.add(v)
			_ = direct.Add(v)
		}
	}
	ps := []float64{0.1, 1, 25, 50, 75, 90, 99, 99.9, 100}
	got := p.percentiles(ps)
	for i, q := range ps {
		want, err := direct.GetValueAtQuantile(q / 100)
		if err != nil {
			t.Fatal(err)
		}
		if got[i].Value != want {
			t.Errorf("p%v: %v, adding each value: %v", q, got[i].Value, want)
		}
	}
	if p.sk.GetCount() != direct.GetCount() {
		t.Errorf("count %v, adding each value: %v", p.sk.GetCount(), direct.GetCount())
	}
	// Bin by bin, the same sketch.
	bins := func(sk *ddsketch.DDSketch) (out []string) {
		sk.ForEach(func(v, c float64) bool {
			out = append(out, fmt.Sprint(v, c))
			return false
		})
		return out
	}
	if b, d := bins(p.sk), bins(direct); !slices.Equal(b, d) {
		t.Errorf("the bins differ: %d against %d adding each value", len(b), len(d))
	}
}

// TestSpreadWideAndLong: values whose bins span more than a sketch keeps
// (counting starts again after each drain into the sketch, which then
// collapses its lowest bins), and runs too long for a 32-bit count, keep
// every value's weight; percentiles above the collapsed bins are those of
// adding each value in turn.
func TestSpreadWideAndLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := spread{wants: true}
	direct, err := newSketch()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50000; i++ {
		v := math.Pow(10, rng.Float64()*60-30) // 10^-30 to 10^30: about 7,000 bins
		p.add(v)
		_ = direct.Add(v)
		if len(p.pos.c) > sketchBins { // memory per instance stays bounded
			t.Fatalf("%d bins counted, more than a sketch's %d", len(p.pos.c), sketchBins)
		}
	}
	ps := []float64{50, 75, 90, 99, 100}
	got := p.percentiles(ps)
	for i, q := range ps {
		want, _ := direct.GetValueAtQuantile(q / 100)
		if got[i].Value != want {
			t.Errorf("p%v: %v, adding each value: %v", q, got[i].Value, want)
		}
	}
	if p.sk.GetCount() != direct.GetCount() {
		t.Errorf("count %v, adding each value: %v", p.sk.GetCount(), direct.GetCount())
	}

	// 5e9 values of 7, then 3 and 11: the median is 7.
	q := spread{wants: true}
	q.add(3)
	q.flush()
	q.runV, q.runN = 7, 5e9 // (as 5e9 calls of add(7) leave it)
	q.add(11)
	q.add(11)
	got = q.percentiles([]float64{1e-9, 50, 100})
	if q.sk.GetCount() != 5e9+3 {
		t.Errorf("count %v, want 5e9+3", q.sk.GetCount())
	}
	for i, want := range []float64{3, 7, 11} {
		if math.Abs(got[i].Value-want) > want*SketchAccuracy {
			t.Errorf("p%v: %v, want %v within 1%%", got[i].P, got[i].Value, want)
		}
	}
}

// TestSharedBatchLikeOwn: instances of a metric whose values wait in one
// batch, interleaved as a metric's values come, end with the sketches
// of adding each instance's values to a sketch of its own.
func TestSharedBatchLikeOwn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var mb pctBatch
	ps := make([]*spread, 5)
	direct := make([]*ddsketch.DDSketch, len(ps))
	for i := range ps {
		ps[i] = &spread{wants: true}
		mb.join(ps[i])
		direct[i], _ = newSketch()
	}
	for r := 0; r < 30000; r++ {
		for i, p := range ps {
			v := float64(rng.IntN(40)) * float64(i+1)
			if rng.IntN(3) == 0 {
				v = math.Pow(10, rng.Float64()*40-20) // wide: spans that drain
			}
			if i == 2 && r%1000 < 900 {
				v = 42 // long runs
			}
			p.add(v)
			_ = direct[i].Add(v)
		}
	}
	for i, p := range ps {
		got := p.percentiles([]float64{50, 90, 99, 100})
		for j, q := range []float64{50, 90, 99, 100} {
			want, _ := direct[i].GetValueAtQuantile(q / 100)
			if got[j].Value != want {
				t.Errorf("instance %d p%v: %v, alone: %v", i, q, got[j].Value, want)
			}
		}
		if p.sk.GetCount() != direct[i].GetCount() {
			t.Errorf("instance %d: count %v, alone %v", i, p.sk.GetCount(), direct[i].GetCount())
		}
	}
}
