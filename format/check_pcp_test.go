package format

import (
	"slices"
	"testing"
)

// TestHashWalkOrder: libpcp's hash table has one bucket until an eighth
// key arrives (8/4 > 1), then six; chains are walked from the head, where
// keys are pushed, and a resize reverses the old chains.
func TestHashWalkOrder(t *testing.T) {
	if got, want := hashWalkOrder([]uint32{10, 20, 30}), []int{2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("one bucket: %v, want %v", got, want)
	}
	// Keys 0-6 moved to 6 buckets, then 7 and 8 pushed on their heads:
	// [0 6] [7 1] [8 2] [3] [4] [5].
	got := hashWalkOrder([]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8})
	if want := []int{0, 3, 5, 6, 7, 8, 1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("after a resize: %v, want %v", got, want)
	}
	if got := hashWalkOrder(nil); len(got) != 0 {
		t.Errorf("no keys: %v", got)
	}
}

// TestPCPReport: pmlogcheck's order (pass 2 by its walk of the
// descriptors), its words where known and ours where not, and where it
// stops.
func TestPCPReport(t *testing.T) {
	f := func(pass int, effect PCPEffect, rank int, pcp string) Finding {
		return Finding{File: "a.0", Offset: -1, Pass: pass, Severity: Warning, Msg: "ours", PCP: pcp, PCPEffect: effect, pcpRank: rank}
	}
	run := PCPReport([]Finding{
		f(0, PCPGoesOn, 0, "p0"),
		f(1, PCPGoesOn, 0, ""),
		f(2, PCPGoesOn, 1, "second"),
		f(2, PCPGoesOn, 0, "first"),
		f(3, PCPExits, 0, "exit"),
		f(3, PCPGoesOn, 0, "never"),
	}, false)
	want := PCPRun{Pass0: []string{"p0"}, Opened: true, Lines: []string{"a.0: ours", "first", "second", "exit"}, Failed: true}
	if !slices.Equal(run.Pass0, want.Pass0) || !slices.Equal(run.Lines, want.Lines) || run.Opened != want.Opened || run.Failed != want.Failed {
		t.Errorf("got %+v\nwant %+v", run, want)
	}

	noOpen := f(2, PCPNoOpen, 0, "cannot open")
	noOpen.PCPDebug = "libpcp says"
	run = PCPReport([]Finding{f(1, PCPGoesOn, 0, "index"), noOpen, f(2, PCPNoOpen, 0, "not this")}, true)
	if run.Opened || !run.Failed || !slices.Equal(run.Lines, []string{"libpcp says", "cannot open"}) {
		t.Errorf("no open: %+v", run)
	}

	run = PCPReport([]Finding{f(0, PCPFails, 0, "framing"), f(1, PCPGoesOn, 0, "index")}, false)
	if run.Opened || !run.Failed || !slices.Equal(run.Pass0, []string{"framing"}) || len(run.Lines) != 0 {
		t.Errorf("pass 0 damage: %+v", run)
	}
}
