package format

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// ---------------------------------------------------------------------
// Synthetic streams.

func testLabel(version int) *stream.Label {
	return &stream.Label{
		Version:  version,
		PID:      4242,
		Start:    stream.Timestamp{Sec: 1700000000, Nsec: 123456000},
		Vol:      -1,
		Hostname: "testhost",
		Timezone: "UTC",
	}
}

func testResult(t *testing.T, sec int64, vals ...int64) *stream.Result {
	t.Helper()
	var b stream.ResultBuilder
	var vs []stream.Val
	for i, v := range vals {
		vs = append(vs, stream.Val{Inst: int32(i), I: v})
	}
	b.Add(stream.NewPMID(29, 0, 1), stream.Type64, vs...)
	r := &stream.Result{}
	if err := b.Build(stream.Timestamp{Sec: sec}, r); err != nil {
		t.Fatal(err)
	}
	return r
}

var testInDom = stream.NewInDomID(29, 7)

// testMeta returns the descriptor of testResult's metric and an instance
// domain with n instances, so that PCP's tools accept the archive.
func testMeta(t0 stream.Timestamp, n int) []stream.Record {
	d := &stream.InDom{T: t0, InDom: testInDom, Encoding: stream.InDomV2}
	for i := 0; i < n; i++ {
		d.Insts = append(d.Insts, int32(i))
		d.Names = append(d.Names, "i"+strconv.Itoa(i))
	}
	return []stream.Record{
		&stream.Desc{T: t0, PMID: stream.NewPMID(29, 0, 1), Type: stream.Type64, InDom: testInDom, Sem: stream.SemInstant, Names: []string{"test.metric"}},
		d,
	}
}

// withMeta inserts testMeta after the label.
func withMeta(n int, recs ...stream.Record) []stream.Record {
	out := []stream.Record{recs[0]}
	out = append(out, testMeta(recs[0].Time(), n)...)
	return append(out, recs[1:]...)
}

func writeAll(t *testing.T, base string, opts WriterOptions, recs ...stream.Record) error {
	t.Helper()
	w, err := Create(base, opts)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

func readIndex(t *testing.T, base string) (stream.Label, []IndexEntry) {
	t.Helper()
	b, err := os.ReadFile(base + ".index")
	if err != nil {
		t.Fatal(err)
	}
	l, err := DecodeLabel(b)
	if err != nil {
		t.Fatal(err)
	}
	n := IndexEntrySize(l.Version)
	var es []IndexEntry
	for off := LabelSize(l.Version); off+n <= len(b); off += n {
		es = append(es, DecodeIndexEntry(b[off:], l.Version))
	}
	return l, es
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func TestWriterFirstRecordMustBeLabel(t *testing.T) {
	dir := t.TempDir()
	err := writeAll(t, filepath.Join(dir, "a"), WriterOptions{}, &stream.Mark{})
	if err == nil || !strings.Contains(err.Error(), "first record must be a label") {
		t.Fatalf("got %v", err)
	}
	if n := dirNames(t, dir); len(n) != 0 {
		t.Fatalf("left behind: %v", n)
	}
}

func TestWriterHostnameMismatch(t *testing.T) {
	dir := t.TempDir()
	l2 := testLabel(3)
	l2.Hostname = "otherhost"
	err := writeAll(t, filepath.Join(dir, "a"), WriterOptions{}, testLabel(3), l2)
	if err == nil || !strings.Contains(err.Error(), `"testhost"`) || !strings.Contains(err.Error(), `"otherhost"`) {
		t.Fatalf("got %v", err)
	}
	// The same host again is fine and ignored.
	if err := writeAll(t, filepath.Join(dir, "b"), WriterOptions{}, testLabel(3), testResult(t, 1700000001, 1), testLabel(3), testResult(t, 1700000002, 2)); err != nil {
		t.Fatal(err)
	}
}

func TestWriterRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a")
	recs := []stream.Record{testLabel(3), testResult(t, 1700000001, 1), testResult(t, 1700000002, 2)}
	if err := writeAll(t, base, WriterOptions{VolumeRecords: 1}, recs...); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"a.0", "a.1", "a.index", "a.meta"}) {
		t.Fatalf("files %v", got)
	}
	// A compressed leftover counts as part of the archive too.
	if err := os.WriteFile(base+".7.xz", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(base, WriterOptions{}); err == nil || !strings.Contains(err.Error(), "archive exists") {
		t.Fatalf("Create over an archive: %v", err)
	}
	// Overwrite replaces it, including the volumes it no longer has.
	if err := writeAll(t, base, WriterOptions{Overwrite: true}, recs...); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"a.0", "a.index", "a.meta"}) {
		t.Fatalf("files after overwrite %v", got)
	}
	// An archive with another name in the same directory is not touched.
	if err := os.WriteFile(filepath.Join(dir, "ab.0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeAll(t, base, WriterOptions{Overwrite: true}, recs...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ab.0")); err != nil {
		t.Fatal(err)
	}
}

func TestWriterAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "a"), WriterOptions{VolumeRecords: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []stream.Record{testLabel(2), testResult(t, 1700000001, 1), testResult(t, 1700000002, 2)} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := dirNames(t, dir); len(n) != 3 {
		t.Fatalf("expected 3 temporaries while writing, have %v", n)
	}
	w.Abort()
	w.Abort()
	if n := dirNames(t, dir); len(n) != 0 {
		t.Fatalf("left behind: %v", n)
	}
	if err := w.Write(testResult(t, 1700000003, 3)); err == nil {
		t.Fatal("Write after Abort succeeded")
	}
}

func TestWriterCloseAfterFailedWrite(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "a"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(testLabel(2)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&stream.Result{T: stream.Timestamp{Sec: 1 << 40}, Version: 2, Body: make([]byte, 4)}); err == nil {
		t.Fatal("a 2^40 s timestamp went into a v2 archive")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a failed Write succeeded")
	}
	if n := dirNames(t, dir); len(n) != 0 {
		t.Fatalf("left behind: %v", n)
	}
}

// fullDisk accepts limit bytes and then fails as a full disk does.
type fullDisk struct {
	w     io.Writer
	limit *int64
	mu    *sync.Mutex
}

func (f fullDisk) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if int64(len(p)) > *f.limit {
		n, _ := f.w.Write(p[:*f.limit])
		*f.limit = 0
		return n, &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	}
	*f.limit -= int64(len(p))
	return f.w.Write(p)
}

func TestWriterDiskFull(t *testing.T) {
	for _, limit := range []int64{100, 5000, 300000, 3000000} {
		t.Run(strconv.FormatInt(limit, 10), func(t *testing.T) {
			dir := t.TempDir()
			left := limit
			var mu sync.Mutex
			hook := func(_ string, w io.Writer) io.Writer { return fullDisk{w, &left, &mu} }
			w, err := create(filepath.Join(dir, "a"), WriterOptions{}, hook)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(testLabel(3))
			for i := 0; err == nil && i < 20000; i++ {
				err = w.Write(testResult(t, 1700000001+int64(i), 1, 2, 3, 4, 5, 6, 7, 8))
			}
			if err == nil {
				err = w.Close()
			} else {
				w.Abort()
			}
			if err == nil || !strings.Contains(err.Error(), "disk full") || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("got %v", err)
			}
			t.Logf("%v", err)
			if n := dirNames(t, dir); len(n) != 0 {
				t.Fatalf("left behind: %v", n)
			}
		})
	}
}

// TestWriterTmpfsFull fills a real 1 MiB tmpfs when the test may mount one
// (root in a private mount namespace); elsewhere the hook test above covers
// the error path.
func TestWriterTmpfsFull(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, 0)
	w, err := Create(filepath.Join(dir, "a"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(testLabel(3))
	for i := 0; err == nil && i < 100000; i++ {
		err = w.Write(testResult(t, 1700000001+int64(i), 1, 2, 3, 4, 5, 6, 7, 8))
	}
	if err == nil {
		err = w.Close()
	} else {
		w.Abort()
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
	t.Logf("%v", err)
	if n := dirNames(t, dir); len(n) != 0 {
		t.Fatalf("left behind: %v", n)
	}
}

func TestWriterV3ToV2(t *testing.T) {
	dir := t.TempDir()
	n := 0
	try := func(l *stream.Label, recs ...stream.Record) error {
		n++
		return writeAll(t, filepath.Join(dir, strconv.Itoa(n)), WriterOptions{Version: 2}, append([]stream.Record{l}, recs...)...)
	}
	l := testLabel(3)
	l.Features = FeatureQA
	if err := try(l); err == nil || !strings.Contains(err.Error(), "feature") {
		t.Errorf("features: %v", err)
	}
	l = testLabel(3)
	l.Hostname = strings.Repeat("h", 64)
	if err := try(l); err == nil || !strings.Contains(err.Error(), "hostname") {
		t.Errorf("hostname: %v", err)
	}
	l = testLabel(3)
	l.Timezone = strings.Repeat("t", 40)
	if err := try(l); err == nil || !strings.Contains(err.Error(), "timezone") {
		t.Errorf("timezone: %v", err)
	}
	big := stream.Timestamp{Sec: 1 << 33}
	if err := try(testLabel(3), &stream.InDom{T: big, InDom: 1, Encoding: stream.InDomFull}); err == nil || !strings.Contains(err.Error(), "32 bits") {
		t.Errorf("indom time: %v", err)
	}
	if err := try(testLabel(3), &stream.Mark{T: big}); err == nil || !strings.Contains(err.Error(), "32 bits") {
		t.Errorf("mark time: %v", err)
	}
	if err := try(testLabel(3), &stream.LabelSet{T: big, Type: stream.LabelContext}); err == nil || !strings.Contains(err.Error(), "32 bits") {
		t.Errorf("label set time: %v", err)
	}
	// A delta with nothing before it cannot be resolved.
	if err := try(testLabel(3), &stream.InDom{T: l.Start, InDom: 1, Encoding: stream.InDomDelta, Insts: []int32{1}, Names: []string{"a"}, Deleted: []bool{false}}); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("lone delta: %v", err)
	}

	// What fits is written; deltas become full records, nanoseconds are
	// truncated (with one warning), the zoneinfo is dropped.
	var warns []error
	l = testLabel(3)
	l.Zoneinfo = ":Europe/Paris"
	t0 := stream.Timestamp{Sec: 1700000001, Nsec: 123456789}
	recs := []stream.Record{
		l,
		&stream.InDom{T: t0, InDom: 7, Encoding: stream.InDomFull, Insts: []int32{1, 2, 3}, Names: []string{"a", "b", "c"}},
		&stream.InDom{T: t0.Add(time.Second), InDom: 7, Encoding: stream.InDomDelta, Insts: []int32{2, 4}, Names: []string{"", "d"}, Deleted: []bool{true, false}},
		&stream.Mark{T: t0.Add(time.Second)},
	}
	base := filepath.Join(dir, "ok")
	w, err := Create(base, WriterOptions{Version: 2, Warn: func(e error) { warns = append(warns, e) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(warns) != 2 {
		t.Errorf("warnings: %v", warns)
	}
	b, err := os.ReadFile(base + ".meta")
	if err != nil {
		t.Fatal(err)
	}
	recb, _ := frames(b, LabelSizeV2)
	if len(recb) != 2 {
		t.Fatalf("%d meta records", len(recb))
	}
	r, err := DecodeMeta(recb[1])
	if err != nil {
		t.Fatal(err)
	}
	d := r.(*stream.InDom)
	if d.Encoding != stream.InDomV2 || !slices.Equal(d.Insts, []int32{1, 3, 4}) || !slices.Equal(d.Names, []string{"a", "c", "d"}) || d.T.Nsec != 123456000 {
		t.Errorf("resolved delta: %+v", d)
	}
}

func TestWriterNilRecord(t *testing.T) {
	dir := t.TempDir()
	var r *stream.Result
	for i, recs := range [][]stream.Record{{nil}, {(*stream.Label)(nil)}, {testLabel(3), r}} {
		if err := writeAll(t, filepath.Join(dir, strconv.Itoa(i)), WriterOptions{}, recs...); err == nil || !strings.Contains(err.Error(), "nil record") {
			t.Errorf("%d: %v", i, err)
		}
	}
}

// TestWriterV2ToV3InDoms checks the encodings v2 instance domains get in a
// v3 archive: deltas where PCP makes them, except where another record of
// the domain has the same time; repeats at one time left out.
func TestWriterV2ToV3InDoms(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a")
	at := func(s int64) stream.Timestamp { return stream.Timestamp{Sec: 1700000000 + s} }
	id := func(s int64, insts ...int32) *stream.InDom {
		d := &stream.InDom{T: at(s), InDom: testInDom, Encoding: stream.InDomV2}
		for _, i := range insts {
			d.Insts = append(d.Insts, i)
			d.Names = append(d.Names, "i"+strconv.Itoa(int(i)))
		}
		return d
	}
	l := testLabel(2)
	recs := []stream.Record{
		l,
		&stream.Desc{T: l.Start, PMID: stream.NewPMID(29, 0, 1), Type: stream.Type64, InDom: testInDom, Sem: stream.SemInstant, Names: []string{"a.b"}},
		id(1, 0, 1, 2, 3), testResult(t, 1700000001, 1, 2, 3, 4), // full: the first
		id(2, 0, 1, 2, 3, 4), id(2, 0, 1, 2, 3, 4), testResult(t, 1700000002, 1), // delta; repeat dropped
		id(3, 0, 1, 2, 3), id(3, 0, 1, 2, 3, 5), testResult(t, 1700000003, 1), // two versions at one time: both full
		id(4, 0, 1, 2), &stream.Text{T: at(4), Type: stream.TextOneline | stream.TextPMID, Ident: uint32(stream.NewPMID(29, 0, 1)), Text: "x"},
		id(5, 0, 1), // flushed by the later time: delta; then delta
		testResult(t, 1700000005, 1),
		id(6, 7), // too many changes: full
		testResult(t, 1700000006, 1),
	}
	if err := writeAll(t, base, WriterOptions{Version: 3}, recs...); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(base + ".meta")
	if err != nil {
		t.Fatal(err)
	}
	mrecs, _ := frames(b, LabelSizeV3)
	var got []string
	for _, m := range mrecs {
		r, err := DecodeMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		switch v := r.(type) {
		case *stream.InDom:
			got = append(got, fmt.Sprintf("%d:%d:%v", v.T.Sec-1700000000, v.Encoding, v.Insts))
		default:
			got = append(got, r.Kind().String())
		}
	}
	want := []string{"desc", "1:5:[0 1 2 3]", "2:6:[4]", "3:5:[0 1 2 3]", "3:5:[0 1 2 3 5]", "4:6:[3 5]", "text", "5:6:[2]", "6:5:[7]"}
	if !slices.Equal(got, want) {
		t.Errorf("meta records\n got %v\nwant %v", got, want)
	}
	checkPCP(t, base)
}

func TestWriterVolumes(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a")
	recs := []stream.Record{testLabel(3)}
	for i := 0; i < 10; i++ {
		recs = append(recs, testResult(t, 1700000001+int64(i), int64(i)))
	}
	size := len(recs[1].(*stream.Result).Body) + DataHeaderSize(3) + 4
	// Room for the label and three records per volume.
	recs = withMeta(1, recs...)
	if err := writeAll(t, base, WriterOptions{VolumeBytes: int64(LabelSizeV3 + 3*size)}, recs...); err != nil {
		t.Fatal(err)
	}
	for v := 0; v < 4; v++ {
		b, err := os.ReadFile(base + "." + strconv.Itoa(v))
		if err != nil {
			t.Fatal(err)
		}
		l, err := DecodeLabel(b)
		if err != nil || l.Vol != int32(v) {
			t.Fatalf("volume %d label %+v %v", v, l, err)
		}
		want := 3
		if v == 3 {
			want = 1
		}
		if got, _ := frames(b, LabelSizeV3); len(got) != want {
			t.Errorf("volume %d: %d records, want %d", v, len(got), want)
		}
	}
	_, es := readIndex(t, base)
	// First record of each volume, then the final entry.
	var vols []int32
	for _, e := range es {
		vols = append(vols, e.Vol)
		if e.DataOff < LabelSizeV3 {
			t.Errorf("entry %+v before the label", e)
		}
	}
	if !slices.Equal(vols, []int32{0, 1, 2, 3, 3}) {
		t.Errorf("index volumes %v (%+v)", vols, es)
	}
	checkPCP(t, base)

	base = filepath.Join(dir, "b")
	recs = recs[2:]
	recs[0] = testLabel(3)
	recs = withMeta(1, recs...)
	if err := writeAll(t, base, WriterOptions{VolumeRecords: 4}, recs...); err != nil {
		t.Fatal(err)
	}
	for v, want := range []int{4, 4, 2} {
		b, err := os.ReadFile(base + "." + strconv.Itoa(v))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := frames(b, LabelSizeV3); len(got) != want {
			t.Errorf("volume %d: %d records, want %d", v, len(got), want)
		}
	}
	checkPCP(t, base)
}

func TestWriterIndex(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a")
	l := testLabel(2)
	at := func(s int64) stream.Timestamp { return stream.Timestamp{Sec: 1700000000 + s} }
	big := make([]int64, 2000) // 40032 bytes per result: an entry every 3
	recs := []stream.Record{
		l,
		&stream.Desc{T: l.Start, PMID: stream.NewPMID(29, 0, 1), Type: stream.Type64, InDom: testInDom, Sem: stream.SemInstant, Names: []string{"a.b"}},
		&stream.InDom{T: at(1), InDom: testInDom, Encoding: stream.InDomV2, Insts: []int32{0, 1}, Names: []string{"x", "y"}},
		testResult(t, 1700000001, 1, 2), // first in volume -> entry
		testResult(t, 1700000002, 1, 2),
		&stream.InDom{T: at(3), InDom: testInDom, Encoding: stream.InDomV2, Insts: []int32{0, 1, 2}, Names: []string{"x", "y", "z"}},
		testResult(t, 1700000003, 1, 2, 3), // after an indom -> entry
		&stream.InDom{T: at(3), InDom: testInDom, Encoding: stream.InDomV2, Insts: []int32{0, 1}, Names: []string{"x", "y"}},
		testResult(t, 1700000003, 1, 2), // same timestamp: no second entry
	}
	for i := 0; i < 12; i++ {
		recs = append(recs, testResult(t, 1700000010+int64(i), big...))
	}
	recs = append(recs, &stream.Mark{T: at(30)})
	if err := writeAll(t, base, WriterOptions{}, recs...); err != nil {
		t.Fatal(err)
	}
	_, es := readIndex(t, base)
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%d/%d/%d/%d", e.T.Sec-1700000000, e.Vol, e.MetaOff, e.DataOff))
	}
	meta, _ := os.ReadFile(base + ".meta")
	_, moffs := frames(meta, LabelSizeV2)
	data, _ := os.ReadFile(base + ".0")
	_, doffs := frames(data, LabelSizeV2)
	e := func(s, meta, data int) string { return fmt.Sprintf("%d/0/%d/%d", s, meta, data) }
	want := []string{
		// the desc and the indom before the first record
		e(1, LabelSizeV2, doffs[0]),
		// the second indom, not the third (same timestamp)
		e(3, moffs[2], doffs[2]),
		// 100000 bytes after the end of record 2: record 3 is 72 bytes, the
		// big ones 40032, so every third big one gets an entry.
		e(12, len(meta), doffs[6]),
		e(15, len(meta), doffs[9]),
		e(18, len(meta), doffs[12]),
		e(21, len(meta), doffs[15]),
		// the last record had no entry: the final one points before it
		e(30, len(meta), doffs[16]),
	}
	if !slices.Equal(got, want) {
		t.Errorf("index\n got %v\nwant %v", got, want)
	}
	checkPCP(t, base)
}

func TestWriterStartAtFirstRecord(t *testing.T) {
	dir := t.TempDir()
	for _, z := range []bool{false, true} {
		base := filepath.Join(dir, fmt.Sprint("a", z))
		if err := writeAll(t, base, WriterOptions{StartAtFirstRecord: true, Zstd: z}, testLabel(3), testResult(t, 1700000005, 1), testResult(t, 1700000006, 1)); err != nil {
			t.Fatal(err)
		}
		vol := base + ".0"
		if z {
			vol += ".zst"
			unzstd(t, vol)
		}
		for _, f := range []string{base + ".meta", base + ".index", base + ".0"} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			l, err := DecodeLabel(b)
			if err != nil || l.Start != (stream.Timestamp{Sec: 1700000005}) {
				t.Errorf("%s: label start %v %v", f, l.Start, err)
			}
		}
	}
}

// unzstd decompresses name (ending in .zst) next to it with zstd(1).
func unzstd(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath("zstd"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("zstd(1) missing in CI")
		}
		t.Skip("zstd(1) not installed")
	}
	if out, err := exec.Command("zstd", "-q", "-d", "-f", name).CombinedOutput(); err != nil {
		t.Fatalf("zstd -d %s: %v\n%s", name, err, out)
	}
}

func TestWriterZstd(t *testing.T) {
	dir := t.TempDir()
	recs := withMeta(4, testLabel(3))
	for i := 0; i < 3000; i++ {
		recs = append(recs, testResult(t, 1700000001+int64(i), int64(i), 2, 3, int64(i*i)))
	}
	plain := filepath.Join(dir, "plain")
	if err := writeAll(t, plain, WriterOptions{VolumeRecords: 1000}, recs...); err != nil {
		t.Fatal(err)
	}
	zdir := filepath.Join(dir, "z")
	os.Mkdir(zdir, 0o755)
	z := filepath.Join(zdir, "plain")
	if err := writeAll(t, z, WriterOptions{VolumeRecords: 1000, Zstd: true}, recs...); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, zdir); !slices.Equal(got, []string{"plain.0.zst", "plain.1.zst", "plain.2.zst", "plain.index", "plain.meta"}) {
		t.Fatalf("files %v", got)
	}
	for v := 0; v < 3; v++ {
		name := z + "." + strconv.Itoa(v)
		unzstd(t, name+".zst")
		a, _ := os.ReadFile(name)
		b, _ := os.ReadFile(plain + "." + strconv.Itoa(v))
		if !bytes.Equal(a, b) {
			t.Errorf("volume %d differs once decompressed", v)
		}
		// The package's own reader uses the seek table.
		f, err := compress.Open(name + ".zst")
		if err != nil {
			t.Fatal(err)
		}
		c, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(c, b) {
			t.Errorf("volume %d through compress.Open: %v", v, err)
		}
		os.Remove(name + ".zst")
	}
	for _, s := range []string{".meta", ".index"} {
		a, _ := os.ReadFile(z + s)
		b, _ := os.ReadFile(plain + s)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs", s)
		}
	}
	checkPCP(t, z)
}

func TestDeltaInDom(t *testing.T) {
	set := func(ids []int32, names ...string) *stream.InstanceSet {
		return &stream.InstanceSet{Insts: ids, Names: names}
	}
	rec := func(ids []int32, names ...string) *stream.InDom {
		return &stream.InDom{Encoding: stream.InDomV2, Insts: ids, Names: names}
	}
	cases := []struct {
		name       string
		prev       *stream.InstanceSet
		next       *stream.InDom
		wantInsts  []int32
		wantDelete []bool
	}{
		{"same", set([]int32{1, 2}, "a", "b"), rec([]int32{1, 2}, "a", "b"), nil, nil},
		{"add", set([]int32{1, 2}, "a", "b"), rec([]int32{1, 2, 3}, "a", "b", "c"), []int32{3}, []bool{false}},
		{"del+add", set([]int32{1, 2, 3}, "a", "b", "c"), rec([]int32{1, 3, 4}, "a", "c", "d"), []int32{2, 4}, []bool{true, false}},
		{"too many", set([]int32{1, 2, 3}, "a", "b", "c"), rec([]int32{4}, "d"), nil, nil},
		{"exactly size", set([]int32{1}, "a"), rec([]int32{2, 3}, "b", "c"), nil, nil},
		{"at size", set([]int32{1, 2}, "a", "b"), rec([]int32{2, 3}, "b", "c"), []int32{1, 3}, []bool{true, false}},
		{"renamed", set([]int32{1, 2}, "a", "b"), rec([]int32{1, 2, 3}, "a", "B", "c"), nil, nil},
		// PCP's walk over unsorted lists sees 7 changes: full, as PCP.
		{"unsorted, PCP full", set([]int32{3, 1, 2}, "c", "a", "b"), rec([]int32{2, 1, 4, 3}, "b", "a", "d", "c"), nil, nil},
		// PCP's walk finds the right changes, listed in its order.
		{"unsorted, PCP order", set([]int32{30872}, "x"), rec([]int32{29663, 30872, 0}, "y", "x", "z"), []int32{29663, 0}, []bool{false, false}},
		// PCP's walk sees 1 deleted and added again: the sorted walk wins.
		{"unsorted, PCP wrong", set([]int32{1, 2, 3}, "a", "b", "c"), rec([]int32{2, 1, 3, 4}, "b", "a", "c", "d"), []int32{4}, []bool{false}},
		{"repeated", set([]int32{1, 1}, "a", "a"), rec([]int32{1, 1, 2}, "a", "a", "b"), nil, nil},
		{"empty to one", set(nil), rec([]int32{1}, "a"), []int32{1}, []bool{false}},
	}
	for _, c := range cases {
		d := deltaInDom(c.prev, c.next)
		if c.wantInsts == nil {
			if d != nil {
				t.Errorf("%s: got delta %+v, want full", c.name, d)
			}
			continue
		}
		if d == nil || !slices.Equal(d.Insts, c.wantInsts) || !slices.Equal(d.Deleted, c.wantDelete) || d.Encoding != stream.InDomDelta {
			t.Errorf("%s: got %+v", c.name, d)
			continue
		}
		// Resolving the delta must give the new set back.
		got := stream.ResolveDelta(c.prev, d)
		want := &stream.InstanceSet{}
		idx := make([]int, len(c.next.Insts))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return c.next.Insts[idx[a]] < c.next.Insts[idx[b]] })
		for _, i := range idx {
			want.Insts = append(want.Insts, c.next.Insts[i])
			want.Names = append(want.Names, c.next.Names[i])
		}
		if !slices.Equal(got.Insts, want.Insts) || !slices.Equal(got.Names, want.Names) {
			t.Errorf("%s: resolves to %v %v", c.name, got.Insts, got.Names)
		}
	}
}

// checkPCP runs pmlogcheck and pmdumplog -t -a on an archive we wrote and
// fails on any complaint.
func checkPCP(t *testing.T, base string) {
	t.Helper()
	if _, err := exec.LookPath("pmlogcheck"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pmlogcheck missing in CI")
		}
		return
	}
	out, err := exec.Command("pmlogcheck", base).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("pmlogcheck %s: %v\n%s", base, err, out)
	}
	out, err = exec.Command("pmdumplog", "-a", base).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("Error")) || bytes.Contains(out, []byte("rror:")) {
		t.Errorf("pmdumplog -a %s: %v\n%s", base, err, out)
	}
}

// ---------------------------------------------------------------------
// Benchmark: the pass-through write path.

func BenchmarkWriterPassThrough(b *testing.B) {
	for _, conv := range []bool{false, true} {
		name := "same-version"
		if conv {
			name = "v2-to-v3"
		}
		b.Run(name, func(b *testing.B) {
			var rb stream.ResultBuilder
			for p := 0; p < 20; p++ {
				var vs []stream.Val
				for i := 0; i < 16; i++ {
					vs = append(vs, stream.Val{Inst: int32(i), I: int64(p * i)})
				}
				rb.Add(stream.NewPMID(60, 0, uint32(p)), stream.Type64, vs...)
			}
			r := &stream.Result{}
			if err := rb.Build(stream.Timestamp{Sec: 1700000000}, r); err != nil {
				b.Fatal(err)
			}
			version := 3
			if conv {
				version = 2
			}
			// A v2 body, so that v2-to-v3 has pointers to adjust.
			if conv {
				raw, err := AppendResult(nil, r, 2)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := DecodeData(raw, 2, r); err != nil {
					b.Fatal(err)
				}
			}
			dir := b.TempDir()
			w, err := Create(filepath.Join(dir, "bench"), WriterOptions{Version: 3})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Abort()
			if err := w.Write(testLabel(version)); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(r.Body) + DataHeaderSize(3) + 4))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.T.Sec++
				if err := w.Write(r); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
		})
	}
}

// ---------------------------------------------------------------------
// The QA archives: read, write, compare.

func readWhole(path string) ([]byte, error) {
	f, err := compress.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// volumes lists base's data volumes in order.
func volumes(base string) ([]string, error) {
	dir, name := filepath.Dir(base), filepath.Base(base)
	all, err := archiveFiles(dir, name)
	if err != nil {
		return nil, err
	}
	type vol struct {
		n    int
		path string
	}
	var vs []vol
	for _, p := range all {
		rest, _ := compress.SplitSuffix(filepath.Base(p)[len(name)+1:])
		if n, err := strconv.Atoi(rest); err == nil {
			vs = append(vs, vol{n, p})
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].n < vs[j].n })
	var out []string
	for _, v := range vs {
		out = append(out, v.path)
	}
	return out, nil
}

// dataReader returns the records of every volume of base, labels left
// out, as one stream of bytes; and the total of the volumes' sizes.
func dataReader(base string, labelSize int, maxSize int64) (io.Reader, func(), int64, error) {
	vols, err := volumes(base)
	if err != nil {
		return nil, nil, 0, err
	}
	var rs []io.Reader
	var fs []compress.File
	var total int64
	done := func() {
		for _, f := range fs {
			f.Close()
		}
	}
	for _, v := range vols {
		f, err := compress.Options{MaxSize: maxSize}.Open(v)
		if err != nil {
			done()
			return nil, nil, 0, err
		}
		fs = append(fs, f)
		total += f.Size()
		if total > maxSize {
			done()
			return nil, nil, total, fmt.Errorf("more than %d bytes of data", maxSize)
		}
		rs = append(rs, io.NewSectionReader(f, int64(labelSize), max(0, f.Size()-int64(labelSize))))
	}
	return io.MultiReader(rs...), done, total, nil
}

// compareStreams reports whether a and b hold the same bytes; when they
// do not, prefix says whether the shorter is a prefix of the longer, and
// at is the offset of the first difference.
func compareStreams(a, b io.Reader) (same, prefix bool, at int64) {
	ba := make([]byte, 1<<16)
	bb := make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		n := min(na, nb)
		if i := firstMismatch(ba[:n], bb[:n]); i >= 0 {
			return false, false, at + int64(i)
		}
		at += int64(n)
		if na != nb {
			return false, true, at
		}
		if ea != nil || eb != nil {
			return (ea != nil) == (eb != nil), true, at
		}
	}
}

func firstMismatch(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// copyArchive streams the archive at base through the reader into a new
// archive at out. It returns the reader's warnings.
func copyArchive(base, out string, opts WriterOptions) (warns []string, err error) {
	return copyArchiveWith(base, out, opts, nil)
}

// copyArchiveWith is copyArchive; with raw, results whose bytes the
// reader vouches for go through WriteRaw, counted in *raw.
func copyArchiveWith(base, out string, opts WriterOptions, raw *int) (warns []string, err error) {
	a, err := Open(base, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
	if err != nil {
		return nil, err
	}
	it := a.Records()
	defer it.Close()
	w, err := Create(out, opts)
	if err != nil {
		return warns, err
	}
	rs, _ := it.(RawSource)
	for it.Next() {
		rec := it.At()
		if r, ok := rs.RawRecord(rec); ok && raw != nil {
			*raw++
			err = w.WriteRaw(rec, r)
		} else {
			err = w.Write(rec)
		}
		if err != nil {
			w.Abort()
			return warns, err
		}
	}
	if err := it.Err(); err != nil {
		w.Abort()
		return warns, fmt.Errorf("reader: %w", err)
	}
	return warns, w.Close()
}

func qaBases(t *testing.T) []string {
	t.Helper()
	metas, err := filepath.Glob(filepath.Join(QADir, "*.meta*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range metas {
		b, _ := compress.SplitSuffix(m)
		out = append(out, strings.TrimSuffix(b, ".meta"))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func runTool(ctx context.Context, name string, args ...string) (string, error) {
	if !strings.Contains(name, "/") {
		if p, err := exec.LookPath(name); err == nil {
			name = p
		} else if p := filepath.Join("/usr/lib/pcp/bin", name); fileExists(p) {
			name = p
		}
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "TZ=UTC", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// dumpSections splits pmdumplog output into the temporal index section
// and the rest, dropping the PID line.
func dumpSections(out, base string) (rest, index string) {
	var r, x strings.Builder
	inIndex := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Temporal Index"):
			inIndex = true
		case inIndex && line == "":
			inIndex = false
		}
		if strings.HasPrefix(line, "PID for pmlogger:") {
			continue
		}
		line = strings.ReplaceAll(line, base, "ARCHIVE")
		if inIndex {
			x.WriteString(line + "\n")
		} else {
			r.WriteString(line + "\n")
		}
	}
	return r.String(), x.String()
}

// trimNs rewrites each HH:MM:SS.nnnnnnnnn in l whose last three digits
// are 000 as HH:MM:SS.uuuuuu (a regexp made the test ten times slower).
func trimNs(l string) string { return cutNs(l, false) }

// cutNs is trimNs, or with all set drops the last three digits of every
// nine-digit fraction (a v2 copy of a v3 archive truncates them).
func cutNs(l string, all bool) string {
	if !all && !strings.Contains(l, "000") {
		return l
	}
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	var b []byte
	last := 0
	for i := 0; i+18 <= len(l); i++ {
		if l[i+2] != ':' || l[i+5] != ':' || l[i+8] != '.' || !digit(l[i]) || !digit(l[i+7]) {
			continue
		}
		ok := true
		for k := i + 9; k < i+18; k++ {
			ok = ok && digit(l[k])
		}
		if !ok || !all && l[i+15:i+18] != "000" || i+18 < len(l) && digit(l[i+18]) {
			continue
		}
		b = append(b, l[last:i+15]...)
		last = i + 18
		i += 17
	}
	if b == nil {
		return l
	}
	return string(append(b, l[last:]...))
}

// semantic reduces pmdumplog -a -e -h -I output (index section already
// removed) to what a v2 archive and its v3 copy must agree on: no on-disk
// instance domain records (the copy may use deltas), no record sizes, no
// label start (the copy starts at its first record), nanoseconds that are
// whole microseconds printed as microseconds.
func semantic(out string) string { return semanticCut(out, false) }

func semanticCut(out string, all bool) string {
	var b strings.Builder
	skip := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == "Instance Domains on-disk ...":
			skip = true
			continue
		case skip && (l == "" || strings.HasSuffix(l, " ...")):
			skip = false
		case skip:
			continue
		}
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, " bytes]") ||
			strings.HasPrefix(l, "    commencing ") || strings.HasPrefix(l, "Log Label (Log Format Version") {
			continue
		}
		if strings.HasPrefix(l, "Archive zoneinfo:") {
			continue
		}
		b.WriteString(cutNs(l, all))
		b.WriteByte('\n')
	}
	return b.String()
}

// sameUpToMetaOrder compares pmdumplog outputs with the metadata part
// (everything before the first record, "[N bytes]") taken as a multiset of
// blocks, a block being a line that does not start with white space and the
// indented lines after it: pmlogextract writes metadata in the order results
// need it, we in stream order.
func sameUpToMetaOrder(a, b string) bool {
	split := func(s string) (blocks []string, data string) {
		lines := strings.Split(s, "\n")
		i := 0
		for ; i < len(lines); i++ {
			l := lines[i]
			if strings.HasPrefix(l, "[") && strings.HasSuffix(l, " bytes]") {
				break
			}
			if l == "" {
				continue
			}
			if len(blocks) == 0 || !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
				blocks = append(blocks, l)
			} else {
				blocks[len(blocks)-1] += "\n" + l
			}
		}
		sort.Strings(blocks)
		return blocks, strings.Join(lines[i:], "\n")
	}
	ab, ad := split(a)
	bb, bd := split(b)
	return ad == bd && slices.Equal(ab, bb)
}

// indexData keeps, of each index entry pmdumplog -t prints, the time, the
// volume and the data offset: the .meta offsets differ wherever the .meta
// files do.
func indexData(section string) string {
	var b strings.Builder
	for _, l := range strings.Split(section, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && strings.Contains(f[0], ":") {
			b.WriteString(f[0] + " " + f[1] + " " + f[3] + "\n")
		}
	}
	return b.String()
}

// normCheck normalises pmlogcheck output for comparison: archive paths
// replaced, lines sorted.
func normCheck(out, base string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.ReplaceAll(l, base, "ARCHIVE"))
		if l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

// firstDiff returns a few lines around the first difference of a and b.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  input: %q\n  ours:  %q", i+1, x, y)
		}
	}
	return "(equal)"
}

// qaBudget bounds the PCP tool runs: archives whose data exceeds it are
// only byte-compared unless PCPTOOLS_QA_FULL is set (pmdumplog takes a
// minute on the largest).
const qaBudget = 4 << 20

// qaMaxCopy bounds the archives copied at all (one QA archive has 300 MB
// of xz-compressed data).
const qaMaxCopy = 64 << 20

type qaResult struct {
	base                string
	skipped             string
	damaged             string
	bytesOK             bool
	tools               bool
	checkOK, dumpOK     bool
	indexSame           bool
	v3tools             bool
	v3dumpOK, v3indexOK bool
	v3dumpOrder         bool // equal only up to the order of metadata
	v3semOK             bool // same as the input under pmdumplog, as libpcp reads it
	v3indexData         bool // index entries at the same times and data offsets
	took                time.Duration
	zstdOK              bool
	size                int64 // of the data volumes, decompressed
	v3checkOK           bool
	notes               []string
}

func TestWriterQA(t *testing.T) {
	needQA(t)
	for _, tool := range []string{"pmlogcheck", "pmdumplog"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s missing in CI", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
	bases := qaBases(t)
	full := os.Getenv("PCPTOOLS_QA_FULL") != ""
	// For debugging: PCPTOOLS_QA_ONLY=name,... limits the archives,
	// PCPTOOLS_QA_KEEP=dir keeps what was written.
	if only := os.Getenv("PCPTOOLS_QA_ONLY"); only != "" {
		bases = slices.DeleteFunc(bases, func(b string) bool {
			return !slices.Contains(strings.Split(only, ","), filepath.Base(b))
		})
	}
	tmp := os.Getenv("PCPTOOLS_QA_KEEP")
	if tmp == "" {
		tmp = t.TempDir()
	}
	results := make([]*qaResult, len(bases))
	work := make(chan int)
	var wg sync.WaitGroup
	for k := 0; k < runtime.NumCPU()+1; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				start := time.Now()
				results[i] = qaOne(t, bases[i], filepath.Join(tmp, filepath.Base(bases[i])), full)
				results[i].took = time.Since(start)
			}
		}()
	}
	for i := range bases {
		work <- i
	}
	close(work)
	wg.Wait()

	var nzstd int
	var n, bytesOK, tools, checkOK, dumpOK, idx, v3, v3sem, v3dump, v3order, v3idx, v3idxData, v3check, damaged int
	for _, r := range results {
		if r == nil || r.skipped != "" {
			if r != nil {
				t.Logf("%s: skipped: %s", filepath.Base(r.base), r.skipped)
			}
			continue
		}
		n++
		if r.damaged != "" {
			damaged++
			t.Logf("%s: damaged input, compared as far as it decodes: %s", filepath.Base(r.base), r.damaged)
		}
		if r.bytesOK {
			bytesOK++
		}
		if r.zstdOK {
			nzstd++
		}
		if r.tools {
			tools++
			if r.checkOK {
				checkOK++
			}
			if r.dumpOK {
				dumpOK++
			}
			if r.indexSame {
				idx++
			}
		}
		if r.v3tools {
			v3++
			if r.v3dumpOK {
				v3dump++
			}
			if r.v3semOK {
				v3sem++
			}
			if r.v3dumpOrder {
				v3order++
			}
			if r.v3indexData {
				v3idxData++
			}
			if r.v3indexOK {
				v3idx++
			}
			if r.v3checkOK {
				v3check++
			}
		}
		for _, s := range r.notes {
			t.Logf("%s: %s", filepath.Base(r.base), s)
		}
	}
	slow := slices.Clone(results)
	slices.SortFunc(slow, func(a, b *qaResult) int { return int(b.took - a.took) })
	for _, r := range slow[:min(5, len(slow))] {
		t.Logf("slowest: %s %v", filepath.Base(r.base), r.took.Round(time.Millisecond))
	}
	t.Logf("%d archives written (%d damaged inputs); .meta and data byte-identical: %d", n, damaged, bytesOK)
	t.Logf("zstd copies identical to the plain copies once decompressed: %d", nzstd)
	t.Logf("same version, %d checked with PCP: pmlogcheck no new findings %d, pmdumplog -a -e -h -I identical (index aside) %d, index identical %d", tools, checkOK, dumpOK, idx)
	t.Logf("v2 -> v3, %d compared with the input as libpcp reads both (pmdumplog -a -e -h -i, no -I): identical %d", v3, v3sem)
	t.Logf("v2 -> v3 vs pmlogextract -V 3, %d compared: pmdumplog identical (index aside) %d (%d of them only up to the order of metadata records), index identical %d (%d but for .meta offsets), pmlogcheck no new findings %d", v3, v3dump, v3order, v3idx, v3idxData, v3check)
}

// qaKnown lists QA archives where a v2 -> v3 copy differs from
// pmlogextract's, and why (see the report in TestWriterQA's log).
var qaKnown = map[string]string{
	// pmlogextract writes metadata lazily, when a result needs it: the
	// descriptors (and help, labels) of metrics no result holds are left
	// out; we copy the stream.
	"eventrec":          "pmlogextract leaves out descriptors of metrics no result holds (event parameters)",
	"eventrec-old":      "pmlogextract leaves out descriptors of metrics no result holds (event parameters)",
	"foo+":              "pmlogextract leaves out descriptors of metrics no result holds",
	"omnibus-nomark_v2": "pmlogextract leaves out descriptors of metrics no result holds",
	// It also writes one version of a domain per result time, the one it
	// looks up, stamped with the time of the first result that needs it.
	"540117-short":         "two different versions of indom 2.1 at one time: pmlogextract writes one",
	"pcp-pidstat":          "versions of indom 3.9 alternate at one time (one per metric): pmlogextract writes one",
	"bigace_v2":            "indom 40.1 repeated per metric and changed at one time; pmlogextract restamps it; its output crashes pmdumplog -a (heap corruption resolving its deltas)",
	"pcp-tapestat-archive": "pmlogextract stamps indoms 60.7, 60.8 with the first result's time, earlier than their own",
	"pcp-pidstat-timezone": "pmlogextract stamps indoms 60.7, 60.8 with the first result's time, earlier than their own",
	// Its merge uses time 0 to mean "no time yet".
	"rank-pred":  "records at the epoch (time 0): pmlogextract drops them",
	"dyninsts":   "records at the epoch (time 0): pmlogextract drops them",
	"dyninsts2":  "records at the epoch (time 0): pmlogextract drops them",
	"value-test": "records at the epoch (time 0): pmlogextract drops them",
	// pmaDeltaInDom's walk assumes sorted lists; these v2 domains are not
	// sorted, and it lists instances as deleted and added again.
	// pmlogextract's output for these two crashes pmdumplog -a (libpcp
	// corrupts its heap resolving those deltas); ours reads back right.
	"mirage-3":      "PCP's delta of an unsorted v2 indom (29.3) lists unchanged instances as deleted and re-added (its output crashes pmdumplog -a); ours lists the true changes",
	"pcp-atop-boot": "PCP's delta of an unsorted v2 indom (3.9) lists unchanged instances as deleted and re-added (its output crashes pmdumplog -a); ours lists the true changes",
	"20180102":      "PCP's delta of an unsorted v2 indom (2.3) lists unchanged instances as deleted and re-added (its output crashes pmdumplog -a); ours lists the true changes",
	"20201109":      "PCP's delta of an unsorted v2 indom (3.9) lists unchanged instances as deleted and re-added (its output crashes pmdumplog -a); ours lists the true changes",
}

func qaOne(t *testing.T, base, out string, full bool) *qaResult {
	r := &qaResult{base: base}
	name := filepath.Base(base)
	mpath, err := compress.Lookup(base + ".meta")
	if err != nil {
		r.skipped = err.Error()
		return r
	}
	inMeta, err := readWhole(mpath)
	if err != nil {
		r.skipped = err.Error()
		return r
	}
	inLabel, err := DecodeLabel(inMeta)
	if err != nil {
		r.skipped = "label: " + err.Error()
		return r
	}
	ls := LabelSize(inLabel.Version)
	limit := int64(qaMaxCopy)
	if full {
		limit = math.MaxInt64
	}
	inData, doneIn, dataSize, err := dataReader(base, ls, limit)
	if err != nil {
		r.skipped = err.Error() + " (PCPTOOLS_QA_FULL=1 copies it)"
		return r
	}
	defer doneIn()
	r.size = dataSize
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Error(err)
		return r
	}
	same := filepath.Join(out, name)
	warns, err := copyArchive(base, same, WriterOptions{})
	if err != nil {
		if len(warns) > 0 || strings.Contains(err.Error(), "reader:") {
			// A damaged input: the reader says so; nothing to compare.
			r.skipped = "the reader refuses it: " + err.Error()
			return r
		}
		t.Errorf("%s: copy: %v", name, err)
		return r
	}
	if len(warns) > 0 {
		r.damaged = strings.Join(warns, "; ")
	}
	outMeta, err := os.ReadFile(same + ".meta")
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return r
	}
	l, err := DecodeLabel(outMeta)
	if err != nil {
		t.Errorf("%s: our label: %v", name, err)
		return r
	}
	lab := inLabel
	lab.Vol = l.Vol
	if l != lab {
		t.Errorf("%s: label %+v, want %+v", name, l, lab)
	}
	outData, doneOut, _, err := dataReader(same, ls, math.MaxInt64)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return r
	}
	defer doneOut()
	metaSame := bytes.Equal(outMeta[ls:], inMeta[ls:])
	dataSame, dataPrefix, at := compareStreams(inData, outData)
	switch {
	case metaSame && dataSame:
		r.bytesOK = true
	case r.damaged != "" && (metaSame || bytes.HasPrefix(inMeta[ls:], outMeta[ls:])) && (dataSame || dataPrefix):
		r.bytesOK = true // what the reader could read is copied exactly
	case !metaSame:
		t.Errorf("%s: .meta records differ from the input's (%d vs %d bytes)", name, len(outMeta), len(inMeta))
	default:
		t.Errorf("%s: data records differ from the input's at byte %d of the data after the labels", name, at)
	}
	// The same through seekable zstd: the volumes must decompress to the
	// plain copy's.
	if dataSize <= qaBudget {
		zst := filepath.Join(out, "zst", name)
		os.MkdirAll(filepath.Dir(zst), 0o755)
		if _, err := copyArchive(base, zst, WriterOptions{Zstd: true}); err != nil {
			t.Errorf("%s: zstd copy: %v", name, err)
		} else if a, err := readWhole(zst + ".0.zst"); err != nil {
			t.Errorf("%s: zstd copy: %v", name, err)
		} else if b, _ := os.ReadFile(same + ".0"); !bytes.Equal(a, b) {
			t.Errorf("%s: zstd copy's volume differs from the plain copy's once decompressed", name)
		} else {
			r.zstdOK = true
		}
	}
	if vols, _ := volumes(base); len(vols) > 1 {
		r.notes = append(r.notes, fmt.Sprintf("input has %d volumes, the copy one", len(vols)))
	}
	budget := int64(qaBudget)
	if testing.Short() {
		budget = 256 << 10
	}
	if dataSize > budget && !full {
		r.notes = append(r.notes, fmt.Sprintf("%d bytes of data: PCP tool comparison skipped (PCPTOOLS_QA_FULL=1 runs it)", dataSize))
		return r
	}
	if r.damaged != "" {
		// PCP's tools report the damage on the input, not on our copy of
		// its good part: nothing to compare.
		return r
	}
	toolLimit := 2 * time.Minute
	if full {
		toolLimit = 15 * time.Minute // pmdumplog takes minutes on the largest
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolLimit)
	defer cancel()
	r.tools = true
	// pmlogcheck on the input only when the copy has findings: most have
	// none, and the tools are most of this test's time.
	var inCheck string
	inChecked := false
	inputCheck := func() string {
		if !inChecked {
			inCheck, _ = runTool(ctx, "pmlogcheck", base)
			inChecked = true
		}
		return inCheck
	}
	ourCheck, _ := runTool(ctx, "pmlogcheck", same)
	r.checkOK = len(normCheck(ourCheck, same)) == 0 || subset(normCheck(ourCheck, same), normCheck(inputCheck(), base))
	if !r.checkOK {
		t.Errorf("%s: pmlogcheck reports on the copy what it does not on the input:\n--- input\n%s--- copy\n%s", name, inCheck, ourCheck)
	}
	args := []string{"-a", "-e", "-h", "-I"}
	inDump, _ := runTool(ctx, "pmdumplog", append(args, base)...)
	ourDump, _ := runTool(ctx, "pmdumplog", append(args, same)...)
	inRest, inIdx := dumpSections(inDump, base)
	ourRest, ourIdx := dumpSections(ourDump, same)
	r.dumpOK = inRest == ourRest
	r.indexSame = inIdx == ourIdx
	if !r.dumpOK {
		t.Errorf("%s: pmdumplog -a -e -h -I differs: %s", name, firstDiff(inRest, ourRest))
	}
	if strings.Contains(ourIdx, "Error:") || strings.Contains(ourIdx, "Warning:") {
		t.Errorf("%s: pmdumplog -t complains about our index:\n%s", name, ourIdx)
	}

	if inLabel.Version != 2 {
		return r
	}
	// v2 -> v3 against pmlogextract -V 3.
	v3 := filepath.Join(out, "v3", name)
	ext := filepath.Join(out, "ext", name)
	os.MkdirAll(filepath.Dir(v3), 0o755)
	os.MkdirAll(filepath.Dir(ext), 0o755)
	if _, err := copyArchive(base, v3, WriterOptions{Version: 3, StartAtFirstRecord: true}); err != nil {
		t.Errorf("%s: write v3: %v", name, err)
		return r
	}
	if o, err := runTool(ctx, "pmlogextract", "-V", "3", base, ext); err != nil {
		r.notes = append(r.notes, "pmlogextract -V 3 fails: "+strings.TrimSpace(o))
		return r
	}
	r.v3tools = true
	extDump, _ := runTool(ctx, "pmdumplog", append(args, ext)...)
	v3Dump, _ := runTool(ctx, "pmdumplog", append(args, v3)...)
	extRest, extIdx := dumpSections(extDump, ext)
	v3Rest, v3Idx := dumpSections(v3Dump, v3)
	// What libpcp makes of our copy (deltas resolved, instance names of
	// every value) must be what it makes of the input.
	if a, b := semantic(inRest), semantic(v3Rest); a != b {
		t.Errorf("%s: v3 copy and input differ under pmdumplog -a -e -h -i: %s", name, firstDiff(a, b))
	} else {
		r.v3semOK = true
	}
	r.v3dumpOK = extRest == v3Rest
	r.v3indexOK = extIdx == v3Idx
	r.v3indexData = indexData(extIdx) == indexData(v3Idx)
	if !r.v3indexData {
		r.notes = append(r.notes, "v3 index differs from pmlogextract's in times or data offsets: "+firstDiff(indexData(extIdx), indexData(v3Idx)))
	}
	if !r.v3dumpOK && sameUpToMetaOrder(extRest, v3Rest) {
		r.v3dumpOrder = true
		r.v3dumpOK = true
	}
	if !r.v3dumpOK {
		msg := fmt.Sprintf("v3 copy and pmlogextract -V 3 differ under pmdumplog: %s", firstDiff(extRest, v3Rest))
		if why, ok := qaKnown[name]; ok {
			r.notes = append(r.notes, msg+" (known: "+why+")")
		} else {
			t.Errorf("%s: %s", name, msg)
		}
	}
	// What pmlogcheck finds in our v3 copy it must find in pmlogextract's
	// or in the input (pmlogextract loses some findings: rank-pred).
	var extCheck string
	v3Check, _ := runTool(ctx, "pmlogcheck", v3)
	r.v3checkOK = len(normCheck(v3Check, v3)) == 0
	if !r.v3checkOK {
		extCheck, _ = runTool(ctx, "pmlogcheck", ext)
		r.v3checkOK = subset(normCheck(v3Check, v3), append(normCheck(extCheck, ext), normCheck(inputCheck(), base)...))
	}
	if !r.v3checkOK {
		t.Errorf("%s: pmlogcheck reports on our v3 copy what it does not on pmlogextract's or the input:\n--- pmlogextract\n%s--- input\n%s--- ours\n%s", name, extCheck, inCheck, v3Check)
	}
	return r
}

// subset reports whether every line of a is in b.
func subset(a, b []string) bool {
	for _, l := range a {
		if !slices.Contains(b, l) {
			return false
		}
	}
	return true
}

func TestTrimNs(t *testing.T) {
	for in, want := range map[string]string{
		"06:57:25.419733000 InDom: 2.1":             "06:57:25.419733 InDom: 2.1",
		"06:57:25.419733123 x":                      "06:57:25.419733123 x",
		"a 00:00:01.000000000 b 00:00:02.5000":      "a 00:00:01.000000 b 00:00:02.5000",
		"ending Wed Nov 24 23:58:06.250880000 2004": "ending Wed Nov 24 23:58:06.250880 2004",
		"12:00:00.0000000001":                       "12:00:00.0000000001",
	} {
		if got := trimNs(in); got != want {
			t.Errorf("trimNs(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterV3ToV2QA writes PCP's v3 QA archives as v2: deltas become
// full records, nanoseconds microseconds, the zoneinfo goes; libpcp must
// read the same instances and values from both.
func TestWriterV3ToV2QA(t *testing.T) {
	needQA(t)
	if _, err := exec.LookPath("pmdumplog"); err != nil {
		t.Skip("pmdumplog not installed")
	}
	dir := t.TempDir()
	for _, name := range []string{"omnibus_v3", "omnibus-nomark_v3"} {
		base := filepath.Join(QADir, name)
		out := filepath.Join(dir, name)
		var warns []string
		if _, err := copyArchive(base, out, WriterOptions{Version: 2, Warn: func(e error) { warns = append(warns, e.Error()) }}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w := strings.Join(warns, "\n"); len(warns) != 2 || !strings.Contains(w, "zoneinfo") || !strings.Contains(w, "microseconds") {
			t.Errorf("%s: warnings %q", name, warns)
		}
		b, _ := os.ReadFile(out + ".meta")
		if l, err := DecodeLabel(b); err != nil || l.Version != 2 {
			t.Fatalf("%s: label %+v %v", name, l, err)
		}
		checkPCP(t, out)
		ctx := context.Background()
		args := []string{"-a", "-e", "-h", "-I"}
		in, _ := runTool(ctx, "pmdumplog", append(args, base)...)
		got, _ := runTool(ctx, "pmdumplog", append(args, out)...)
		inRest, _ := dumpSections(in, base)
		gotRest, _ := dumpSections(got, out)
		if a, b := semanticCut(inRest, true), semanticCut(gotRest, true); a != b {
			t.Errorf("%s: v2 copy and v3 input differ under pmdumplog: %s", name, firstDiff(a, b))
		}
	}
}

// BenchmarkCopyQA copies a 7 MB QA archive through the reader and the
// writer: what pcpcat A -o B costs (page cache, no fsync wait aside).
func BenchmarkCopyQA(b *testing.B) {
	needQA(b)
	base := filepath.Join(QADir, "20180102")
	st, err := os.Stat(base + ".0")
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := copyArchive(base, filepath.Join(dir, strconv.Itoa(i)), WriterOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriterOverwriteFailurePutsBack: a replacement that fails half way
// (here the second volume's temporary file vanishes before its rename) must
// leave the archive it was replacing exactly as it was: rewriting in place
// (-i) depends on it.
func TestWriterOverwriteFailurePutsBack(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a")
	old := []stream.Record{testLabel(3), testResult(t, 1700000001, 1), testResult(t, 1700000002, 2), testResult(t, 1700000003, 3)}
	if err := writeAll(t, base, WriterOptions{VolumeRecords: 2}, old...); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, n := range dirNames(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		before[n] = b
	}
	w, err := Create(base, WriterOptions{VolumeRecords: 1, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []stream.Record{testLabel(3), testResult(t, 1700000005, 5), testResult(t, 1700000006, 6), testResult(t, 1700000007, 7)} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	var vols []*outFile
	for _, o := range w.files {
		if o != w.meta {
			vols = append(vols, o)
		}
	}
	if len(vols) < 2 {
		t.Fatalf("%d volumes written", len(vols))
	}
	os.Remove(vols[1].tmp)
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded with a temporary file gone")
	}
	after := dirNames(t, dir)
	if len(after) != len(before) {
		t.Fatalf("files after a failed replacement %v, before %v", after, slices.Sorted(maps.Keys(before)))
	}
	for _, n := range after {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, before[n]) {
			t.Errorf("%s changed by a failed replacement", n)
		}
	}
}
