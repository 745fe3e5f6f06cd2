package pipe

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// metaOf is the metadata of the first archive of recs.
func metaOf(recs []stream.Record) []stream.Record {
	var out []stream.Record
	for i, r := range recs {
		if _, ok := r.(*stream.Label); ok && i > 0 {
			break
		}
		switch r.(type) {
		case *stream.Desc, *stream.InDom, *stream.LabelSet, *stream.Text:
			out = append(out, r)
		}
	}
	return out
}

func encodeWithMeta(t *testing.T, recs, meta []stream.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newWriterSize(&buf, 4096)
	if err := w.WriteMetadata(meta); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatalf("write %s: %v", r.Kind(), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMetadataFrame(t *testing.T) {
	recs := sampleRecords()
	meta := metaOf(recs)
	b := encodeWithMeta(t, recs, meta)
	if FrameKind(b[HeaderSize]) != FrameMetadata {
		t.Fatalf("first frame is %s", FrameKind(b[HeaderSize]))
	}
	// The records are the same as without the frame: a reader that skips
	// it (any version 1 reader skips kinds from 0x80 on) loses nothing.
	got, err := readAll(b)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "with a METADATA frame", got, recs)

	r := newReaderSize(bytes.NewReader(b), 512)
	if _, ok := r.Metadata(); ok {
		t.Fatal("metadata before the first Next")
	}
	if !r.Next() {
		t.Fatal(r.Err())
	}
	m, ok := r.Metadata()
	if !ok || len(m) != len(meta) {
		t.Fatalf("metadata: %d records, %v; want %d", len(m), ok, len(meta))
	}
	for i := range meta {
		if w := expected(t, meta[i]); !reflect.DeepEqual(normal(m[i]), w) {
			t.Fatalf("metadata record %d:\n got %#v\nwant %#v", i, m[i], w)
		}
	}
	for r.Next() {
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if m2, _ := r.Metadata(); len(m2) != len(meta) {
		t.Fatal("the second archive's label changed Metadata")
	}

	// Without the frame, none.
	r = NewReader(bytes.NewReader(encode(t, recs)))
	r.Next()
	if _, ok := r.Metadata(); ok {
		t.Fatal("metadata from a stream without the frame")
	}

	// Cut anywhere, the stream is truncated.
	for cut := HeaderSize; cut < HeaderSize+FrameHeaderSize+200; cut++ {
		if _, err := readAll(b[:cut]); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
}

func TestMetadataFrameDamaged(t *testing.T) {
	recs := sampleRecords()
	lab := encode(t, recs[:1])
	labFrame := lab[HeaderSize : len(lab)-FrameHeaderSize]
	end := frameBytes(FrameEnd, 0, stream.Timestamp{}, nil)
	desc := encode(t, recs[:2])
	descFrame := desc[len(lab)-FrameHeaderSize : len(desc)-FrameHeaderSize]
	markFrame := frameBytes(FrameMark, 0, ts(1700000000, 123456789), nil)
	meta := func(inner ...[]byte) []byte { return frameBytes(FrameMetadata, 0, ts(0, 0), bytes.Join(inner, nil)) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	overrun := bytes.Clone(descFrame)
	overrun[7]++
	cases := []struct {
		name, want string
		s          []byte
	}{
		{"a mark inside", "MARK frame inside a METADATA frame", cat(header(1), meta(markFrame), labFrame, end)},
		{"a label inside", "LABEL frame inside", cat(header(1), meta(labFrame), labFrame, end)},
		{"inner frame overruns", "runs past the end", cat(header(1), meta(overrun), labFrame, end)},
		{"inner header cut", "inside a frame header", cat(header(1), meta(descFrame[:10]), labFrame, end)},
		{"no label after it", "a LABEL frame must follow", cat(header(1), labFrame, meta(descFrame), descFrame, end)},
		{"two in a row", "two METADATA frames", cat(header(1), meta(descFrame), meta(descFrame), labFrame, end)},
	}
	for _, c := range cases {
		_, err := readAll(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestWriteMetadataErrors(t *testing.T) {
	recs := sampleRecords()
	w := newWriterSize(io.Discard, 256)
	if err := w.WriteMetadata([]stream.Record{recs[0]}); err == nil {
		t.Fatal("a label in a METADATA frame")
	}
	if err := w.Write(recs[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMetadata(metaOf(recs)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs[1]); err == nil || !strings.Contains(err.Error(), "label must follow") {
		t.Fatalf("a descriptor right after METADATA: %v", err)
	}
	if err := w.Write(recs[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs[1]); err != nil {
		t.Fatal(err)
	}
}

func TestAnnounced(t *testing.T) {
	recs := sampleRecords()
	meta := metaOf(recs)
	n := 0
	it := Announced(stream.FromSlice(recs), meta)
	for it.Next() {
		n++
	}
	// The second archive brings a descriptor of a known PMID but
	// another type, then an instance domain and a label set that the
	// first's metadata did not hold: it stops at the first of them.
	if it.Err() == nil || !strings.Contains(it.Err().Error(), "the type differs from the stream's METADATA frame's") {
		t.Fatalf("after %d records: %v", n, it.Err())
	}
	if want := 14; n != want {
		t.Fatalf("stopped after %d records, want %d", n, want)
	}
	// without that descriptor, at the instance domain
	rest := append(append([]stream.Record{}, recs[:14]...), recs[15:]...)
	it, n = Announced(stream.FromSlice(rest), meta), 0
	for it.Next() {
		n++
	}
	if it.Err() == nil || !strings.Contains(it.Err().Error(), "did not hold") || n != 14 {
		t.Fatalf("after %d records: %v", n, it.Err())
	}
	all := Announced(stream.FromSlice(recs[:13]), meta)
	for all.Next() {
	}
	if all.Err() != nil {
		t.Fatal(all.Err())
	}
}

// TestAnnouncedDescChange: a descriptor record that differs from the
// frame's of its metric (the record or the frame damaged) stops the
// stream, as stream.Described stops pcpcat's reading of it.
func TestAnnouncedDescChange(t *testing.T) {
	recs := sampleRecords()
	meta := metaOf(recs)
	for i, r := range recs[:13] {
		d, ok := r.(*stream.Desc)
		if !ok {
			continue
		}
		changed := *d
		changed.Units = stream.NewUnits(1, 0, 0, 1, 0, 0)
		if d.Units == changed.Units {
			changed.Units = stream.NewUnits(0, 1, 0, 0, 3, 0)
		}
		in := append(append(append([]stream.Record{}, recs[:i]...), &changed), recs[i+1:13]...)
		it := Announced(stream.FromSlice(in), meta)
		n := 0
		for it.Next() {
			n++
		}
		if it.Err() == nil || !strings.Contains(it.Err().Error(), "the units differs from the stream's METADATA frame's") || n != i {
			t.Fatalf("descriptor %d changed: after %d records: %v", i, n, it.Err())
		}
		return
	}
	t.Fatal("no descriptor among the sample records")
}

// TestReaderChecksFrame: every reader of a stream with a METADATA frame
// refuses, naming the offset, a metadata record of its first archive
// that the frame did not hold or a descriptor that differs from the
// frame's; after the stream's second LABEL (another archive joined, or a
// volume) it no longer checks.
func TestReaderChecksFrame(t *testing.T) {
	recs := sampleRecords()[:13] // the first archive
	meta := metaOf(recs)
	if _, err := readAll(encodeWithMeta(t, recs, meta)); err != nil {
		t.Fatalf("the archive with its own frame: %v", err)
	}
	di, ii := -1, -1
	for i, r := range recs {
		switch r.(type) {
		case *stream.Desc:
			if di < 0 {
				di = i
			}
		case *stream.InDom:
			if ii < 0 {
				ii = i
			}
		}
	}
	if di < 0 || ii < 0 {
		t.Fatal("the sample has no descriptor or instance domain")
	}
	changed := *recs[di].(*stream.Desc)
	changed.Sem = stream.SemDiscrete
	if recs[di].(*stream.Desc).Sem == changed.Sem {
		changed.Sem = stream.SemInstant
	}
	bad := slices.Clone(recs)
	bad[di] = &changed
	_, err := readAll(encodeWithMeta(t, bad, meta))
	if err == nil || !strings.Contains(err.Error(), "the semantics differs from the stream's METADATA frame's") || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("a changed descriptor: %v", err)
	}
	// the frame without the instance domain
	var less []stream.Record
	for _, m := range meta {
		if _, ok := m.(*stream.InDom); !ok {
			less = append(less, m)
		}
	}
	_, err = readAll(encodeWithMeta(t, recs, less))
	if err == nil || !strings.Contains(err.Error(), "that the stream's METADATA frame did not hold") {
		t.Fatalf("an instance domain the frame did not hold: %v", err)
	}
	// after a second LABEL, nothing is checked
	all := sampleRecords()
	if _, err := readAll(encodeWithMeta(t, all, metaOf(all))); err != nil {
		t.Fatalf("a second archive with metadata of its own: %v", err)
	}
}
