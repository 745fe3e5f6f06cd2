package summary

import (
	"strings"
	"testing"
)

// TestRollup: the roll-up's arithmetic and order, with hosts whose
// numbers differ; an instance is matched by name, units keep rows apart.
func TestRollup(t *testing.T) {
	load := rollKey{"kernel.all.load", "1 minute", "none", true}
	free := rollKey{"mem.freemem", "", "Kbyte", false}
	var r rollup
	r.add("alpha", []hostStat{{load, 1, 0.5, 2}, {free, 100, 90, 120}})
	r.add("beta", []hostStat{{free, 300, 80, 400}})
	r.add("gamma", []hostStat{{load, 3, 0.1, 1.5}})
	o := Options{Precision: 1}
	got := string(r.print(nil, &o, 3))
	want := "fleet (3 hosts):\n" +
		"kernel.all.load [\"1 minute\"] 2 hosts: mean 2.0 total 4.0 min 0.1 (gamma) max 2.0 (alpha) none\n" +
		"mem.freemem 2 hosts: mean 200.0 total 400.0 min 80.0 (beta) max 400.0 (beta) Kbyte\n"
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	o.JSON = true
	got = string(r.print(nil, &o, 3))
	if !strings.HasPrefix(got, `{"fleet":true,"metric":"kernel.all.load","instance":"1 minute","units":"none","hosts":2,"mean":2,"total":4,"min":0.1,"min_host":"gamma","max":2,"max_host":"alpha"}`+"\n") ||
		!strings.Contains(got, `"instance":null`) {
		t.Errorf("json:\n%s", got)
	}
	if _, ok := keep(&Stat{Insufficient: true}); ok {
		t.Error("an insufficient statistic was kept")
	}
}
