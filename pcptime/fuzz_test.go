package pcptime

import (
	"testing"
	"time"
)

// The parsers take user input and archive labels; whatever they are given
// they must return, without panicking or looping.

func FuzzParseWindow(f *testing.F) {
	for _, s := range startSpecs {
		f.Add(s, "", "")
	}
	for _, e := range endSpecs {
		f.Add("+1m", e, "")
	}
	for _, c := range combos {
		f.Add(c[0], c[1], c[3])
	}
	loc, err := LoadZone("EST5EDT,M3.2.0,M11.1.0")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s, e, a string) {
		w, err := ParseWindow(s, e, "", a, ts(1101337806, 248424000), ts(1101340686, 250880000), loc)
		if err == nil && w.Start.Before(ts(1101337806, 248424000)) {
			t.Errorf("start %v before the archive", w.Start)
		}
		ParseInterval(s)
	})
}

func FuzzLoadZone(f *testing.F) {
	for _, z := range glibcZones {
		f.Add(z)
	}
	for _, z := range dumpZones {
		f.Add(z)
	}
	f.Fuzz(func(t *testing.T, tz string) {
		loc, err := LoadZone(tz)
		if err != nil {
			return
		}
		for _, sec := range []int64{-1e10, 0, 1101337806, 4e9, 1e11} {
			time.Unix(sec, 0).In(loc).Zone()
		}
		FormatDate(ts(1101337806, 1), loc, Nanos)
	})
}
