package summary

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// TestLocated (hostile seed 22, F20): a value the summary cannot read
// ended pcpsummary with pmlogsummary's "possibly corrupt archive?" alone,
// naming neither the file nor the offset. Under its own name the error
// now says both, found by reading the records again up to the result;
// under pmlogsummary's it stays PCP's words.
func TestLocated(t *testing.T) {
	a, err := format.Open(filepath.Join("..", "testdata", "example", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	ce := &CorruptError{T: stream.Timestamp{Sec: 1793491650, Nsec: 3000}, PMID: stream.NewPMID(60, 0, 20), Err: errors.New("bad")}
	got := Located(a, ce, true).Error()
	if !strings.Contains(got, "demo.1: offset 1404: metric 60.0.20") || !strings.HasSuffix(got, "possibly corrupt archive?") {
		t.Errorf("native: %q", got)
	}
	if got := Located(a, ce, false).Error(); got != "possibly corrupt archive?" {
		t.Errorf("as pmlogsummary: %q", got)
	}
	other := errors.New("other")
	if Located(a, other, true) != other {
		t.Error("another error changed")
	}
}
