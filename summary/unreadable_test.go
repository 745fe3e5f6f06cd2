package summary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/internal/streamtest"
)

// TestUnreadableValueSaid (hostile seed 23, F22): a flipped bit in a
// stream's result gave a value of a U32 metric in a FLOAT block, which
// cannot be read as the metric's type. pcpsummary stopped with
// pmlogsummary's "possibly corrupt archive?" and the metric and time (no
// offset: the re-reading that located it in an archive (F20) cannot read
// a stream again), where every other reader of the stream read on (pcpcat printing
// the value raw, as pmdumplog does). Under its own name it now says where
// the result is (the reader's place goes with each result to the
// workers), the metric, the time and the cause, once per metric, leaves
// such values out and summarises the rest, with one worker or several;
// under pmlogsummary's name it gives up as pmlogsummary does.
func TestUnreadableValueSaid(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stream"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _, err = streamtest.Write(f, 5,
		streamtest.Metric{Name: "bad.value", Bad: func(i int) bool { return i == 0 || i == 3 }},
		streamtest.Metric{Name: "good.value"},
		streamtest.Metric{Name: "never.value", Bad: func(int) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		for _, prog := range []string{"pcpsummary", "pmlogsummary"} {
			if _, err := f.Seek(0, 0); err != nil {
				t.Fatal(err)
			}
			var warn strings.Builder
			o := Options{Workers: workers, Prog: prog, Warn: &warn}
			a, err := OpenStdin(f, &o, func(error) {})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			err = Run(&out, a, o)
			if prog == "pmlogsummary" {
				if err == nil || err.Error() != "possibly corrupt archive?" {
					t.Errorf("%d workers, as pmlogsummary: %v", workers, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%d workers: %v", workers, err)
			}
			want := "pcpsummary: warning: standard input: offset "
			if got := warn.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 2 ||
				!strings.Contains(got, ": metric bad.value (60.0.1): a value at 1700000000.000000000 cannot be read (Impossible value or scale conversion): left out") {
				t.Errorf("%d workers: warnings %q", workers, got)
			}
			if !strings.Contains(out.String(), "bad.value") || !strings.Contains(out.String(), "good.value") || strings.Contains(out.String(), "never.value") {
				t.Errorf("%d workers: summary %q", workers, out.String())
			}
		}
	}
}
