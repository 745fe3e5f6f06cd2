package pipe

import (
	"io"
	"os"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// benchResult is a result of the size typical of the QA archives (about
// 640 bytes a record): 24 metrics, insitu and 64-bit values, some with
// four instances.
func benchResult(version uint8) *stream.Result {
	var sets []tset
	for i := 0; i < 24; i++ {
		s := tset{pmid: stream.NewPMID(60, uint32(i), 1)}
		n := 1 + 3*(i%2)
		if i%3 == 0 {
			s.valfmt = stream.ValInsitu
			for j := 0; j < n; j++ {
				s.vals = append(s.vals, tval{inst: int32(j), word: uint32(i * j)})
			}
		} else {
			s.valfmt = stream.ValDptr
			for j := 0; j < n; j++ {
				s.vals = append(s.vals, tval{inst: int32(j), vtype: uint8(stream.TypeU64), payload: u64(uint64(i) << 33)})
			}
		}
		sets = append(sets, s)
	}
	return &stream.Result{T: ts(1700000000, 0), Version: version, Body: resultBody(version, sets...)}
}

// cycle serves head once, then body over and over.
type cycle struct {
	head, body []byte
	pos        int
}

func (c *cycle) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	n := 0
	for n < len(p) {
		m := copy(p[n:], c.body[c.pos:])
		n += m
		c.pos = (c.pos + m) % len(c.body)
	}
	return n, nil
}

func BenchmarkReaderResult(b *testing.B) {
	full := encode(b, []stream.Record{&stream.Label{Version: 3, Start: ts(1700000000, 0)}, benchResult(3)})
	head := full[:HeaderSize+FrameHeaderSize+format.LabelSizeV3]
	frame := full[len(head) : len(full)-FrameHeaderSize]
	r := NewReader(&cycle{head: head, body: frame})
	if !r.Next() {
		b.Fatal(r.Err())
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !r.Next() {
			b.Fatal(r.Err())
		}
		if _, ok := r.At().(*stream.Result); !ok {
			b.Fatalf("got %s", r.At().Kind())
		}
	}
}

func benchWriter(b *testing.B, version uint8) {
	res := benchResult(version)
	w := NewWriter(io.Discard)
	w.Write(&stream.Label{Version: 3, Start: res.T})
	b.SetBytes(int64(FrameHeaderSize + 20 + len(res.Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.Write(res); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkWriterResultV3(b *testing.B) { benchWriter(b, 3) }

// A v2 body has its pointers rewritten on the way in.
func BenchmarkWriterResultV2(b *testing.B) { benchWriter(b, 2) }

// BenchmarkOSPipe moves results from a Writer to a Reader through an
// operating system pipe, as between two tools.
func BenchmarkOSPipe(b *testing.B) {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Skip(err)
	}
	res := benchResult(3)
	b.SetBytes(int64(FrameHeaderSize + 20 + len(res.Body)))
	b.ReportAllocs()
	go func() {
		w := NewWriter(pw)
		w.Write(&stream.Label{Version: 3, Start: res.T})
		for i := 0; i < b.N; i++ {
			w.Write(res)
		}
		w.Close()
		pw.Close()
	}()
	r := NewReader(pr)
	n := 0
	for r.Next() {
		n++
	}
	if r.Err() != nil || n != b.N+1 {
		b.Fatalf("%d records, %v", n, r.Err())
	}
	pr.Close()
}
