package dump

import (
	"strings"
	"testing"

	"github.com/pcptools/pcptools/internal/streamtest"
	"github.com/pcptools/pcptools/pipe"
)

// TestSamplesSayUnreadable (found beside F22): a numeric metric's value
// that cannot be read as its type (a flipped bit in a stream's result put
// FLOAT blocks on a U32 metric) was given to the exporters as text, which
// OpenMetrics (numbers only) left out without a word. Samples now warns,
// once per metric, naming where the result was read, the metric, the time
// and the type; the sample is still its bytes' text (Parquet's value_text).
func TestSamplesSayUnreadable(t *testing.T) {
	buf, meta := streamtest.Stream(t, 3, streamtest.Metric{Name: "bad.value", Bad: func(i int) bool { return i > 0 }})
	var warn strings.Builder
	var kinds []SampleKind
	err := SamplesStream(meta, pipe.Concatenated(buf, "standard input"), Options{Warn: &warn, Prog: "pcpexport"}, func(s *Sample) error {
		kinds = append(kinds, s.Kind)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 3 || kinds[0] != SampleInt || kinds[1] != SampleText || kinds[2] != SampleText {
		t.Errorf("samples %v", kinds)
	}
	got := warn.String()
	if !strings.HasPrefix(got, "pcpexport: warning: standard input: offset ") || strings.Count(got, "\n") != 1 ||
		!strings.Contains(got, ": metric bad.value (60.0.1): a value at 1700000001.000000000 cannot be read as its type (U32)") {
		t.Errorf("warnings %q", got)
	}
}
