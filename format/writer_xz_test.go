package format

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/pcptools/pcptools/format/compress"
)

// TestWriterXz: volumes written with Xz decompress (with xz(1) and with
// this module's reader) to exactly the plain writer's volumes, and PCP
// reads the archive as it is.
func TestWriterXz(t *testing.T) {
	dir := t.TempDir()
	recs := withMeta(4, testLabel(3))
	for i := 0; i < 3000; i++ {
		recs = append(recs, testResult(t, 1700000001+int64(i), int64(i), 2, 3, int64(i*i)))
	}
	plain := filepath.Join(dir, "plain")
	if err := writeAll(t, plain, WriterOptions{VolumeRecords: 1000}, recs...); err != nil {
		t.Fatal(err)
	}
	xdir := filepath.Join(dir, "x")
	os.Mkdir(xdir, 0o755)
	x := filepath.Join(xdir, "plain")
	if err := writeAll(t, x, WriterOptions{VolumeRecords: 1000, Xz: true}, recs...); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, xdir); !slices.Equal(got, []string{"plain.0.xz", "plain.1.xz", "plain.2.xz", "plain.index", "plain.meta"}) {
		t.Fatalf("files %v", got)
	}
	checkPCP(t, x)
	haveXZ := true
	if _, err := exec.LookPath("xz"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xz(1) missing in CI")
		}
		haveXZ = false
	}
	for v := 0; v < 3; v++ {
		name := x + "." + strconv.Itoa(v) + ".xz"
		want, _ := os.ReadFile(plain + "." + strconv.Itoa(v))
		if haveXZ {
			got, err := exec.Command("xz", "-dc", name).Output()
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("volume %d: xz -dc: %v, or it differs from the plain volume", v, err)
			}
		}
		f, err := compress.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("volume %d through compress.Open: %v", v, err)
		}
	}
	for _, s := range []string{".meta", ".index"} {
		a, _ := os.ReadFile(x + s)
		b, _ := os.ReadFile(plain + s)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs", s)
		}
	}
}
