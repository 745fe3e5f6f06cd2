package summary

import (
	"math/rand/v2"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
)

// TestSpreadRunsLikeEachValue: runs of equal values, added to the sketch
// at once with their count, give the percentiles that adding each value
// gives.
func TestSpreadRunsLikeEachValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := spread{wants: true}
	direct, err := ddsketch.LogCollapsingLowestDenseDDSketch(SketchAccuracy, sketchBins)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		v := float64(rng.IntN(50))
		if rng.IntN(3) == 0 {
			v = rng.NormFloat64() * 1e6
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
}
