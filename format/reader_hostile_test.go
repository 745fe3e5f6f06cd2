package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// hostileArchive writes a v3 archive x in dir whose .meta is a label and
// whose volume 0 is a label followed by tail.
func hostileArchive(t *testing.T, dir string, tail func(f *os.File) error) string {
	t.Helper()
	base := filepath.Join(dir, "x")
	l := stream.Label{Version: 3, PID: 1, Start: stream.Timestamp{Sec: 1700000000}, Hostname: "h", Timezone: "UTC"}
	if err := os.WriteFile(base+".meta", AppendLabel(nil, &l, 3, -1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(base + ".0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(AppendLabel(nil, &l, 3, 0)); err != nil {
		t.Fatal(err)
	}
	if err := tail(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return base
}

// readAll opens and reads the archive, returning the error and the
// warnings, as one text.
func readAll(t *testing.T, base string) string {
	t.Helper()
	var msgs []string
	a, err := Open(base, WithWarn(func(e error) { msgs = append(msgs, "warning: "+e.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	it := a.Records()
	for it.Next() {
	}
	if it.Err() != nil {
		msgs = append(msgs, "error: "+it.Err().Error())
	}
	it.Close()
	return strings.Join(msgs, "\n")
}

// TestRestSparseZeros is the campaign's mutant "<source>:.0/label+sparse-
// zeros-10GiB" (interop.TestHostile): a volume of a label and then 10 GiB
// of holes. The reader, finding a length word of 0, scanned the whole
// mapping to see whether only zeros followed, paging in 10 GiB (57 s and
// 9.9 GB resident for pcpcat -a). It must now answer at once, with the
// same error as before.
func TestRestSparseZeros(t *testing.T) {
	base := hostileArchive(t, t.TempDir(), func(f *os.File) error { return f.Truncate(10 << 30) })
	start := time.Now()
	msg := readAll(t, base)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("reading took %v", took)
	}
	if !strings.Contains(msg, "x.0: offset 808: ") || !strings.Contains(msg, "10737417432 bytes left") {
		t.Errorf("said %q", msg)
	}
	t.Log(msg)
}

// TestRestDenseTail: the same scan over real bytes still tells zeros from
// damage, whichever window the first non-zero byte is in.
func TestRestDenseTail(t *testing.T) {
	for _, n := range []int{0, 100, 3 << 20} {
		for _, last := range []byte{0, 7} {
			base := hostileArchive(t, t.TempDir(), func(f *os.File) error {
				b := make([]byte, 8+n)
				b[len(b)-1] = last
				_, err := f.Write(b)
				return err
			})
			msg := readAll(t, base)
			// only zeros after the damage (or too few bytes for a
			// record) is a logger that stopped: a warning
			want := "warning: "
			if last != 0 && n > 0 {
				want = "error: "
			}
			if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "offset 808") {
				t.Errorf("%d bytes, last %d: said %q", 8+n, last, msg)
			}
			t.Logf("%d bytes, last %d: %s", 8+n, last, msg)
		}
	}
}
