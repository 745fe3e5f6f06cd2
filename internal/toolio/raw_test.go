package toolio

import (
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/format"
	qafix "github.com/pcptools/pcptools/internal/qa"
	"github.com/pcptools/pcptools/stream"
)

// hideRaw is an iterator that says nothing of where its records lie.
type hideRaw struct{ stream.Iterator }

// TestCopyRaw: a copy of one archive, and of several of one host joined,
// lets the kernel copy the results it reads (the inputs' RawRecord says
// where they lie), and gives the same files as the copy through user
// space.
func TestCopyRaw(t *testing.T) {
	qa := qafix.Need(t)
	multi := qafix.Multi(t)
	dir := t.TempDir()
	for k, names := range [][]string{
		{filepath.Join(qa, "20180127.08.40")},
		multi,
		{filepath.Join(qa, "20180127.08.40"), filepath.Join(qa, "20180415.09.16")},
	} {
		open := func() *Input {
			in, err := OpenInputs(names, nil, func(error) {})
			if err != nil {
				t.Fatal(err)
			}
			return in
		}
		// The inputs vouch for their results.
		in := open()
		rs, ok := in.Iter.(format.RawSource)
		if !ok {
			t.Fatalf("%v: the inputs are no RawSource", names)
		}
		results, raw := 0, 0
		for in.Iter.Next() {
			if _, isResult := in.Iter.At().(*stream.Result); isResult {
				results++
				if _, ok := rs.RawRecord(in.Iter.At()); ok {
					raw++
				}
			}
		}
		in.Close()
		if results == 0 || raw != results {
			t.Errorf("%v: %d of %d results with a place to copy them from", names, raw, results)
		}
		// Copied either way, the same bytes.
		var outs [2]string
		for i, hide := range []bool{false, true} {
			in := open()
			outs[i] = filepath.Join(dir, string(rune('a'+k))+[]string{"raw", "plain"}[i])
			sink, err := OpenOutput(outs[i], format.WriterOptions{NoSync: true, KeepVolumes: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			it := in.Iter
			if hide {
				it = hideRaw{it}
			}
			if err := Copy(it, sink); err != nil {
				t.Fatal(err)
			}
			in.Close()
		}
		qafix.SameFiles(t, outs[0], outs[1])
	}
}
