package reduce

import (
	"testing"
	"time"
)

func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		h    map[int]int
		want int
	}{
		{map[int]int{}, -1},
		{map[int]int{1: 1, 59: 1}, 59}, // the upper of two
		{map[int]int{1: 10, 6: 3}, 1},
		{map[int]int{1: 2, 6: 3}, 6},
	} {
		if got := medianOf(c.h); got != c.want {
			t.Errorf("medianOf(%v) = %d, want %d", c.h, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{10 * time.Second: "10s", 5 * time.Minute: "5m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 250 * time.Millisecond: "250ms"} {
		if got := FormatInterval(d); got != want {
			t.Errorf("FormatInterval(%v) = %q, want %q", d, got, want)
		}
	}
}
