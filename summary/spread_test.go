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
