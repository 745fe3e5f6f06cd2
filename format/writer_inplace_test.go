package format

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// TestWriterResultSpace: an archive whose result bodies were encoded in
// the room ResultSpace offers (some outgrowing it, some encoded elsewhere,
// some larger than a chunk) is the archive written the plain way, byte
// for byte, in one volume and in many.
func TestWriterResultSpace(t *testing.T) {
	for _, vb := range []int64{0, 300 << 10} {
		dir := t.TempDir()
		recs := []stream.Record{testLabel(3)}
		rng := rand.New(rand.NewPCG(5, 6))
		for i := 0; i < 200; i++ {
			vals := make([]int64, 1+rng.IntN(3000))
			if i%40 == 7 {
				vals = make([]int64, 126000*asyncChunk/(1<<20)) // 1.8 chunks
			}
			for k := range vals {
				vals[k] = rng.Int64()
			}
			recs = append(recs, testResult(t, 1700000000+int64(i), vals...))
		}
		recs = withMeta(70000, recs...)
		opts := WriterOptions{Version: 3, VolumeBytes: vb, NoSync: true}
		if err := writeAll(t, filepath.Join(dir, "plain"), opts, recs...); err != nil {
			t.Fatal(err)
		}
		w, err := Create(filepath.Join(dir, "space"), opts)
		if err != nil {
			t.Fatal(err)
		}
		offered, inPlace := 0, 0
		for _, rec := range recs {
			if r, ok := rec.(*stream.Result); ok {
				size := len(r.Body)
				if rng.IntN(4) == 0 {
					size /= 2 // asks for too little: may outgrow it
				}
				var body []byte
				if rng.IntN(5) != 0 {
					body = w.ResultSpace(size)
				}
				if body != nil {
					offered++
				}
				body = append(body, r.Body...)
				rec = &stream.Result{T: r.T, Version: r.Version, Body: body}
			}
			var before int
			if w.vol != nil {
				before = w.vol.aw.inPlace
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if w.vol != nil && w.vol.aw.inPlace > before {
				inPlace++
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if offered == 0 || inPlace == 0 || inPlace >= offered {
			t.Fatalf("room offered %d times, results written in place %d: the test misses a case", offered, inPlace)
		}
		for _, n := range dirNames(t, dir) {
			if !strings.HasPrefix(n, "plain.") {
				continue
			}
			a, _ := os.ReadFile(filepath.Join(dir, n))
			b, err := os.ReadFile(filepath.Join(dir, "space"+strings.TrimPrefix(n, "plain")))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("volume bytes %d: %s differs when encoded in place (%v)", vb, n, err)
			}
		}
	}
}
