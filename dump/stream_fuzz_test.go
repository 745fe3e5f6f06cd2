package dump

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/fuzzdir"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// FuzzStreamViews feeds pcpcat's stream path (toolio.OpenGrowing, then
// CSV and the values view filing the metadata as it comes: grow)
// arbitrary record streams, seeded with QA archives' streams with and
// without a METADATA frame, and two of them concatenated. It must never
// panic nor hang; every failure is an error.
func FuzzStreamViews(f *testing.F) {
	var streams [][]byte
	for _, name := range []string{"20041125", "mark-bug", "omnibus_v3", "pcp-mpstat3"} {
		for _, frame := range []bool{true, false} {
			if b := streamOf(f, filepath.Join(qaArchives, name), frame); b != nil {
				f.Add(b)
				streams = append(streams, b)
			}
		}
	}
	if len(streams) >= 2 {
		f.Add(append(append([]byte{}, streams[0]...), streams[len(streams)-1]...))
	}
	dir := fuzzdir.Dir(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "stream")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, csv := range []bool{true, false} {
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			in, err := toolio.OpenGrowing(nil, fh, "pcptools-fuzz-", true, true, true, func(error) {})
			if err == nil {
				if in.Spilled == nil {
					opts := Options{Location: time.UTC, Values: true}
					it := stream.Described(in.Iter)
					if csv {
						_ = CSVStream(io.Discard, in.Meta, it, opts)
					} else {
						_ = DumpStream(io.Discard, in.Meta, it, opts)
					}
				}
				in.Close()
			}
			fh.Close()
		}
	})
}

// streamOf is the record stream pcpcat writes of an archive, with its
// METADATA frame or without; nil when the archive is not there.
func streamOf(f *testing.F, base string, frame bool) []byte {
	a, err := format.Open(base, format.WithWarn(func(error) {}))
	if err != nil {
		return nil
	}
	m, err := a.Meta()
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	w := pipe.NewWriter(&buf)
	if frame {
		var recs []stream.Record
		for _, d := range m.Descs {
			recs = append(recs, d)
		}
		for _, r := range m.InDoms {
			recs = append(recs, r)
		}
		if err := w.WriteMetadata(recs); err != nil {
			f.Fatal(err)
		}
	}
	it := a.Records()
	defer it.Close()
	for it.Next() {
		if err := w.Write(it.At()); err != nil {
			f.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		return nil
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
