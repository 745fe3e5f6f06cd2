package pipe

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// FuzzPipeReader feeds the reader arbitrary streams. It must never panic
// nor loop, every failure must be an error, and what it accepts must
// survive being written and read again unchanged.
func FuzzPipeReader(f *testing.F) {
	good := encode(f, sampleRecords())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:len(good)-FrameHeaderSize])
	var failed bytes.Buffer
	w := NewWriter(&failed)
	w.Write(sampleRecords()[0])
	w.Fail(errors.New("bad.meta: offset 8: bad magic"))
	f.Add(failed.Bytes())
	f.Add(cat2(header(1), frameBytes(0x80, 0, ts(0, 0), []byte("skip me"))))
	f.Add(encode(f, nil))
	f.Add([]byte(Magic))

	f.Fuzz(func(t *testing.T, data []byte) {
		r := newReaderSize(bytes.NewReader(data), 64)
		var recs []stream.Record
		for i := 0; r.Next(); i++ {
			if i > len(data) {
				t.Fatal("more records than bytes")
			}
			rec := r.At()
			if res, ok := rec.(*stream.Result); ok {
				if res.Version != 3 && res.Version != 2 {
					t.Fatalf("result of version %d", res.Version)
				}
				it := res.VSets()
				for it.Next() {
					vs := it.VSet()
					for j := 0; j < vs.Values(); j++ {
						vs.Value(j)
					}
				}
			}
			recs = append(recs, normal(stream.CloneRecord(rec)))
		}
		if r.At() != nil {
			t.Fatal("At is not nil after the end")
		}
		if r.Err() != nil {
			return
		}
		var out bytes.Buffer
		w := newWriterSize(&out, 256)
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatalf("a %s record read from the stream cannot be written: %v", rec.Kind(), err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := readAll(out.Bytes())
		if err != nil {
			t.Fatalf("re-encoded stream: %v", err)
		}
		if !reflect.DeepEqual(again, recs) {
			t.Fatalf("records change when written and read again:\n%#v\n%#v", recs, again)
		}
	})
}
