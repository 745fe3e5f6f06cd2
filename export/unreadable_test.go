package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/internal/streamtest"
	"github.com/pcptools/pcptools/pipe"
)

// TestOpenMetricsUnreadableLeftOut: a numeric value that cannot be read
// as its type is given to the exporters as its bytes' text, which
// OpenMetrics (numbers only) skips; its warning said "given as the text
// of its bytes" all the same. It now says what OpenMetrics does.
func TestOpenMetricsUnreadableLeftOut(t *testing.T) {
	buf, meta := streamtest.Stream(t, 3, streamtest.Metric{Name: "bad.value", Bad: func(i int) bool { return i > 0 }})
	var out bytes.Buffer
	var warn strings.Builder
	src := FromStream(meta, pipe.Concatenated(buf, "standard input"))
	samples, skipped, err := OpenMetrics(&out, src, dump.Options{Warn: &warn, Prog: "pcpexport"})
	if err != nil {
		t.Fatal(err)
	}
	if samples != 1 || skipped != 2 {
		t.Errorf("samples %d skipped %d, want 1 and 2", samples, skipped)
	}
	got := warn.String()
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "cannot be read as its type (U32): left out\n") {
		t.Errorf("warnings %q", got)
	}
}
