package dump

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// TestSamplesSayUnreadable (found beside F22): a numeric metric's value
// that cannot be read as its type (a flipped bit in a stream's result put
// FLOAT blocks on a U32 metric) was given to the exporters as text, which
// OpenMetrics (numbers only) left out without a word. Samples now warns,
// once per metric, naming where the result was read, the metric, the time
// and the type; the sample is still its bytes' text (Parquet's value_text).
func TestSamplesSayUnreadable(t *testing.T) {
	t0 := stream.Timestamp{Sec: 1700000000}
	lab := &stream.Label{Version: 2, Hostname: "bad", Timezone: "UTC", Start: t0}
	p := stream.NewPMID(60, 0, 1)
	d := &stream.Desc{T: t0, PMID: p, Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"bad.value"}}
	var buf bytes.Buffer
	w := pipe.NewWriter(&buf)
	for _, r := range []stream.Record{lab, d} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	var rb stream.ResultBuilder
	for i := range 3 {
		rb.Reset()
		typ := stream.TypeU32
		if i > 0 {
			typ = stream.TypeU64 // a U32 metric's value in a 64-bit block
		}
		rb.Add(p, typ, stream.Val{Inst: stream.InstNull, U: uint64(i)})
		var r stream.Result
		if err := rb.Build(stream.Timestamp{Sec: t0.Sec + int64(i)}, &r); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	meta, err := format.MetadataOf(*lab, []stream.Record{d})
	if err != nil {
		t.Fatal(err)
	}
	var warn strings.Builder
	var kinds []SampleKind
	err = SamplesStream(meta, pipe.Concatenated(&buf, "standard input"), Options{Warn: &warn, Prog: "pcpexport"}, func(s *Sample) error {
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
