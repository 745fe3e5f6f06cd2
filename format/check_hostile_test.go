package format

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// TestCheckFIFONoHang is the campaign's mutant "<any source>:.meta/fifo"
// (also .0/fifo, .index/fifo; interop.TestHostile): a file of the archive
// that is a named pipe nobody writes to made Check block for ever in
// open(2). It must be a finding, at once.
func TestCheckFIFONoHang(t *testing.T) {
	for _, suffix := range []string{".meta", ".0", ".index"} {
		t.Run(suffix, func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "x")
			for _, s := range []string{".meta", ".0", ".index"} {
				if s == suffix {
					if err := syscall.Mkfifo(base+s, 0o644); err != nil {
						t.Skip(err)
					}
					continue
				}
				if err := os.WriteFile(base+s, minimalFile(t, s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan []Finding, 1)
			go func() {
				fs, err := Check(base, CheckOptions{})
				if err != nil {
					t.Error(err)
				}
				done <- fs
			}()
			select {
			case fs := <-done:
				found := false
				for _, f := range fs {
					if strings.HasSuffix(f.File, "x"+suffix) && strings.Contains(f.Msg, "not a regular file") {
						found = true
					}
				}
				if !found || !Flagged(fs) {
					t.Errorf("no finding about the FIFO: %+v", fs)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Check blocks on a FIFO")
			}
		})
	}
}

// minimalFile returns a file of a tiny valid v3 archive: a label, and in
// the volume a mark.
func minimalFile(t *testing.T, suffix string) []byte {
	t.Helper()
	var vol int32
	switch suffix {
	case ".meta":
		vol = -1
	case ".index":
		vol = -2
	}
	l := stream.Label{Version: 3, PID: 1, Start: stream.Timestamp{Sec: 1700000000}, Hostname: "h", Timezone: "UTC"}
	b := AppendLabel(nil, &l, 3, vol)
	if suffix == ".0" {
		b = AppendMark(b, l.Start, 3)
	}
	return b
}
