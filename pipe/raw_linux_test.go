package pipe

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
	"golang.org/x/sys/unix"
)

// streamOf writes the records of the archive at base into a pipe, through
// WriteRaw where its reader says where a result lies (raw) or through
// Write, and returns the stream's bytes and how many results were offered
// to WriteRaw.
func streamOf(t *testing.T, base string, raw bool) ([]byte, int) {
	t.Helper()
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	it := a.Records()
	defer it.Close()
	rs := it.(format.RawSource)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte)
	go func() {
		all, _ := io.ReadAll(r)
		got <- all
	}()
	pw := NewWriter(w)
	if _, ok := pw.bw.(*spliceBuf); !ok {
		t.Fatalf("a pipe got a %T", pw.bw)
	}
	offered := 0
	for it.Next() {
		rec := it.At()
		res, isResult := rec.(*stream.Result)
		if rr, ok := rs.RawRecord(rec); ok && raw && isResult {
			offered++
			err = pw.WriteRaw(res, rr)
		} else {
			err = pw.Write(rec)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return <-got, offered
}

// TestWriteRawSplice: a stream whose large results were spliced from
// their archive's volume is byte for byte the stream written through the
// buffer, for results large and small, v2 and v3, and reads back.
func TestWriteRawSplice(t *testing.T) {
	dir := t.TempDir()
	for _, version := range []int{2, 3} {
		base := filepath.Join(dir, "v"+string(rune('0'+version)))
		recs := []stream.Record{testLabelV(version)}
		for i := 0; i < 40; i++ {
			n := 3 + i%4
			if i%3 == 0 {
				n = 7000 + 100*i // 64 KiB and more of values
			}
			recs = append(recs, bigResult(t, 1700000000+int64(i), n))
		}
		if err := writeArchive(base, recs); err != nil {
			t.Fatal(err)
		}
		viaRaw, offered := streamOf(t, base, true)
		plain, _ := streamOf(t, base, false)
		if offered == 0 {
			t.Fatalf("v%d: no result offered to WriteRaw", version)
		}
		if !bytes.Equal(viaRaw, plain) {
			t.Fatalf("v%d: the spliced stream (%d bytes) differs from the buffered one (%d bytes)", version, len(viaRaw), len(plain))
		}
		// Where the kernel will not splice (after moving a part, or
		// none), the bytes are read and written instead.
		for _, part := range []int{0, 5000} {
			keep := spliceFile
			spliceFile = func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
				if part > 0 && n > part {
					return keep(rfd, roff, wfd, woff, part, flags)
				}
				return 0, unix.EINVAL
			}
			copied, _ := streamOf(t, base, true)
			spliceFile = keep
			if !bytes.Equal(copied, plain) {
				t.Fatalf("v%d, splice failing after %d bytes: the stream (%d bytes) differs from the buffered one (%d bytes)", version, part, len(copied), len(plain))
			}
		}
		rd := NewReader(bytes.NewReader(viaRaw))
		n := 0
		for rd.Next() {
			n++
		}
		if err := rd.Err(); err != nil || n == 0 {
			t.Fatalf("v%d: reading the spliced stream back: %d records, %v", version, n, err)
		}
	}
}

func testLabelV(version int) *stream.Label {
	return &stream.Label{Version: version, PID: 1, Start: stream.Timestamp{Sec: 1700000000}, Vol: -1, Hostname: "h", Timezone: "UTC"}
}

var rawPMID = stream.NewPMID(29, 0, 1)

// bigResult is a result of n 64-bit values (12-byte blocks each).
func bigResult(t *testing.T, sec int64, n int) *stream.Result {
	t.Helper()
	var b stream.ResultBuilder
	vs := make([]stream.Val, n)
	for i := range vs {
		vs[i] = stream.Val{Inst: int32(i), I: int64(i) * sec}
	}
	b.Add(rawPMID, stream.Type64, vs...)
	r := &stream.Result{}
	if err := b.Build(stream.Timestamp{Sec: sec, Nsec: 250000000}, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// writeArchive writes recs after the label (recs[0]), with the metric's
// descriptor.
func writeArchive(base string, recs []stream.Record) error {
	w, err := format.Create(base, format.WriterOptions{NoSync: true})
	if err != nil {
		return err
	}
	all := append([]stream.Record{recs[0], &stream.Desc{T: recs[0].Time(), PMID: rawPMID, Type: stream.Type64, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"raw.metric"}}}, recs[1:]...)
	for _, r := range all {
		if err := w.Write(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}
