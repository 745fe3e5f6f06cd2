package toolio

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// TestProgressOff: off a terminal there is no display, and a nil one
// passes everything through untouched.
func TestProgressOff(t *testing.T) {
	var buf bytes.Buffer
	if pr := StartProgress(&buf, 100, false); pr != nil {
		t.Error("a display into a buffer")
	}
	for _, names := range [][]string{nil, {"-"}, {"/nonexistent"}, {t.TempDir()}} {
		if pr := StartFileProgress(&buf, names, false); pr != nil {
			t.Errorf("a display of %q", names)
		}
	}
	var pr *Progress
	pr.Record(&stream.Mark{})
	pr.Count()
	r := strings.NewReader("x")
	if pr.Reader(r) != r {
		t.Error("Reader wraps when off")
	}
	if pr.Ending(&buf) != &buf {
		t.Error("Ending wraps when off")
	}
	it := stream.Concat(nil)
	if Showing(it, nil) != it {
		t.Error("Showing wraps when off")
	}
	pr.Done(true)
	pr.Done(false)
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}
