package dump

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/format"
)

// TestExplicitZone checks -Z with a POSIX rule, a zoneinfo name and a
// three-letter name (which PCP turns into UTC under that name).
func TestExplicitZone(t *testing.T) {
	var base string
	for _, b := range qaBases(t) {
		if filepath.Base(b) == "omnibus_v3" {
			base = b
		}
	}
	if base == "" {
		t.Skip("omnibus_v3 not among the QA archives")
	}
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tz := range []string{"EST-10", "America/New_York", "EST", "UTC"} {
		want, err := exec.Command("pmdumplog", "-Z", tz, "-l", "-x", "-m", "-T", "+5", base).Output()
		if err != nil {
			t.Fatalf("pmdumplog -Z %s: %v", tz, err)
		}
		var got bytes.Buffer
		if err := Dump(&got, a, Options{Zone: tz, Label: true, TimeFormat: 1, Values: true, Finish: "+5"}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got.Bytes()) {
			m, _, diff := compareStreams(bytes.NewReader(want), &got)
			t.Errorf("-Z %s: after %v: %s", tz, m, diff)
		}
	}
}
