package extract

import (
	"os"
	"reflect"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/format/compress"
)

// TestXzInputsLikePlain: merging xz-compressed archives, whose last volumes
// End leaves decoded for the merge and whose next inputs the merge warms
// ahead of their turn (format.Archive.Warm), gives what merging the same
// archives uncompressed gives, record for record.
func TestXzInputsLikePlain(t *testing.T) {
	dir, xdir := t.TempDir(), t.TempDir()
	var plain, xz []*format.Archive
	for i := 0; i < 40; i++ {
		base := manyArchive(t, dir, i)
		xbase := manyArchive(t, xdir, i)
		for _, suffix := range []string{".0", ".meta"} {
			b, err := os.ReadFile(xbase + suffix)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(xbase + suffix + ".xz")
			if err != nil {
				t.Fatal(err)
			}
			w := compress.NewXZWriter(f)
			if _, err := w.Write(b); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			os.Remove(xbase + suffix)
		}
		for _, p := range []struct {
			base string
			to   *[]*format.Archive
		}{{base, &plain}, {xbase, &xz}} {
			a, err := format.Open(p.base)
			if err != nil {
				t.Fatal(err)
			}
			*p.to = append(*p.to, a)
		}
	}
	for _, opts := range []Options{{}, {AlwaysMark: true}, {Samples: 50}} {
		want, _ := extractMany(t, plain, opts, true)
		got, _ := extractMany(t, xz, opts, true)
		if len(got) != len(want) {
			t.Fatalf("%+v: xz: %d records, plain: %d", opts, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%+v: record %d: xz %+v, plain %+v", opts, i, got[i], want[i])
			}
		}
	}
}
