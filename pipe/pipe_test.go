package pipe

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// --- building records by hand ---

// tval is one value of a test value set: insitu (word) or a value block.
type tval struct {
	inst    int32
	word    uint32
	vtype   uint8
	payload []byte
}

// tset is one test value set; numval < 0 makes an error set.
type tset struct {
	pmid   stream.PMID
	numval int32
	valfmt uint32
	vals   []tval
}

// resultBody encodes value sets as PCP does for a record of the given
// version: the sets, then the value blocks they point at.
func resultBody(version uint8, sets ...tset) []byte {
	size := 4
	for _, s := range sets {
		size += 8
		if s.numval >= 0 && len(s.vals) > 0 {
			size += 4 + 8*len(s.vals)
		}
	}
	var blocks []byte
	b := binary.BigEndian.AppendUint32(nil, uint32(len(sets)))
	for _, s := range sets {
		b = binary.BigEndian.AppendUint32(b, uint32(s.pmid))
		if s.numval < 0 {
			b = binary.BigEndian.AppendUint32(b, uint32(s.numval))
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s.vals)))
		if len(s.vals) == 0 {
			continue
		}
		b = binary.BigEndian.AppendUint32(b, s.valfmt)
		for _, v := range s.vals {
			b = binary.BigEndian.AppendUint32(b, uint32(v.inst))
			if s.valfmt == stream.ValInsitu {
				b = binary.BigEndian.AppendUint32(b, v.word)
				continue
			}
			ptr := stream.PointerBase(version) + uint32(size+len(blocks))/4
			b = binary.BigEndian.AppendUint32(b, ptr)
			blocks = binary.BigEndian.AppendUint32(blocks, uint32(v.vtype)<<24|uint32(4+len(v.payload)))
			blocks = append(blocks, v.payload...)
			for len(blocks)%4 != 0 {
				blocks = append(blocks, '~')
			}
		}
	}
	return append(b, blocks...)
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func ts(sec int64, nsec int32) stream.Timestamp { return stream.Timestamp{Sec: sec, Nsec: nsec} }

// sampleRecords is a stream of two archives holding every record kind: a
// v3 one, then one that came from a v2 archive.
func sampleRecords() []stream.Record {
	pmidA, pmidB, pmidC := stream.NewPMID(60, 0, 1), stream.NewPMID(60, 1, 2), stream.NewPMID(2, 3, 4)
	indom := stream.NewInDomID(60, 5)
	v3body := resultBody(3,
		tset{pmid: pmidA, valfmt: stream.ValInsitu, vals: []tval{{inst: stream.InstNull, word: 42}}},
		tset{pmid: pmidB, valfmt: stream.ValDptr, vals: []tval{
			{inst: 0, vtype: uint8(stream.TypeU64), payload: u64(1 << 40)},
			{inst: 1, vtype: uint8(stream.TypeU64), payload: u64(7)},
		}},
		tset{pmid: pmidC, numval: -12357},
		tset{pmid: stream.NewPMID(2, 3, 5), valfmt: stream.ValSptr, vals: []tval{
			{inst: stream.InstNull, vtype: uint8(stream.TypeString), payload: []byte("hello\x00")},
		}},
	)
	v2body := resultBody(2,
		tset{pmid: pmidB, valfmt: stream.ValDptr, vals: []tval{
			{inst: 0, vtype: uint8(stream.TypeDouble), payload: u64(0x400921fb54442d18)},
			{inst: 2, vtype: uint8(stream.TypeDouble), payload: u64(0)},
		}},
		tset{pmid: pmidA, valfmt: stream.ValInsitu, vals: []tval{{inst: stream.InstNull, word: 0xffffffff}}},
	)
	t0 := ts(1700000000, 123456789)
	t1 := ts(1700000010, 0)
	t2 := ts(1800000000, 5000)
	return []stream.Record{
		&stream.Label{Version: 3, PID: 4242, Start: t0, Vol: -1, Features: format.FeatureQA,
			Hostname: "host-a.example.com", Timezone: "UTC", Zoneinfo: ":Europe/Oslo"},
		&stream.Desc{T: t0, PMID: pmidA, Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemInstant,
			Units: stream.NewUnits(0, 0, 1, 0, 0, 0), Names: []string{"sample.a", "sample.alias"}},
		&stream.Desc{T: t0, PMID: pmidB, Type: stream.TypeU64, InDom: indom, Sem: stream.SemCounter,
			Units: stream.NewUnits(1, 0, 0, 1, 0, 0), Names: []string{"sample.b"}},
		&stream.Desc{T: t0, PMID: pmidC, Type: stream.Type32, InDom: stream.InDomNull, Sem: stream.SemDiscrete},
		&stream.Text{T: t0, Type: stream.TextOneline | stream.TextPMID, Ident: uint32(pmidA), Text: "one line"},
		&stream.Text{T: t0, Type: stream.TextHelp | stream.TextInDom, Ident: uint32(indom), Text: "long\nhelp\ttext ünïcödé"},
		&stream.InDom{T: t0, InDom: indom, Encoding: stream.InDomFull, Insts: []int32{0, 1, 2}, Names: []string{"zero", "one", "two two"}},
		&stream.LabelSet{T: t0, Type: stream.LabelContext, Ident: uint32(stream.PMIDNull), Sets: []stream.OneLabelSet{
			{Inst: stream.InstNull, JSON: `{"agent":"sample","role":"testing"}`, NLabels: 2, Labels: []stream.LabelEntry{
				{Name: 2, NameLen: 5, Flags: 2, Value: 9, ValueLen: 8}, {Name: 19, NameLen: 4, Flags: 2, Value: 25, ValueLen: 9}}},
		}},
		&stream.LabelSet{T: t0, Type: stream.LabelInstances, Ident: uint32(indom), Sets: []stream.OneLabelSet{
			{Inst: 0, JSON: `{"i":0}`, NLabels: 1, Labels: []stream.LabelEntry{{Name: 2, NameLen: 1, Flags: 32, Value: 5, ValueLen: 1}}},
			{Inst: 1, JSON: ``, NLabels: -12345},
		}},
		&stream.Result{T: t0, Version: 3, Body: v3body},
		&stream.InDom{T: t1, InDom: indom, Encoding: stream.InDomDelta, Insts: []int32{1, 3}, Names: []string{"", "three"}, Deleted: []bool{true, false}},
		&stream.Result{T: t1, Version: 3, Body: v3body},
		&stream.Mark{T: t1.Add(1e6)},
		&stream.Label{Version: 2, PID: 7, Start: t2, Vol: 0, Hostname: "host-a.example.com", Timezone: "AEST-10"},
		&stream.Desc{T: t2, PMID: pmidB, Type: stream.TypeDouble, InDom: indom, Sem: stream.SemInstant, Names: []string{"sample.b"}},
		&stream.InDom{T: t2, InDom: indom, Encoding: stream.InDomV2, Insts: []int32{0, 2}, Names: []string{"zero", "two"}},
		&stream.LabelSet{T: t2, V2: true, Type: stream.LabelDomain, Ident: 60, Sets: []stream.OneLabelSet{
			{Inst: stream.InstNull, JSON: `{"x":1}`, NLabels: 1, Labels: []stream.LabelEntry{{Name: 2, NameLen: 1, Flags: 2, Value: 5, ValueLen: 1}}}}},
		&stream.Result{T: t2, Version: 2, Body: v2body},
		&stream.Result{T: t2.Add(1e9), Version: 2, Body: v2body},
		&stream.Desc{T: t2.Add(1e9), PMID: pmidC, Type: stream.Type32, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"late.desc"}},
		&stream.Mark{T: t2.Add(2e9)},
	}
}

// expected returns what a record becomes through the pipe: results are
// version 3, labels version 2 or 3, empty slices nil.
func expected(t testing.TB, rec stream.Record) stream.Record {
	t.Helper()
	rec = stream.CloneRecord(rec)
	switch r := rec.(type) {
	case *stream.Label:
		if r.Version != 2 {
			r.Version = 3
		}
	case *stream.Result:
		if r.Version == 2 {
			break // a v2 result crosses as it is, V2 flag set
		}
		b, err := r.AppendBody(nil, 3)
		if err != nil {
			t.Fatalf("result at %s: %v", r.T, err)
		}
		r.Body, r.Version = b, 3
	}
	return normal(rec)
}

// normal makes empty slices nil so that reflect.DeepEqual compares content.
func normal(rec stream.Record) stream.Record {
	switch r := rec.(type) {
	case *stream.Desc:
		if len(r.Names) == 0 {
			r.Names = nil
		}
	case *stream.InDom:
		if len(r.Insts) == 0 {
			r.Insts, r.Names = nil, nil
			if r.Deleted != nil {
				r.Deleted = []bool{}
			}
		}
	case *stream.LabelSet:
		if len(r.Sets) == 0 {
			r.Sets = nil
		}
		for i := range r.Sets {
			if len(r.Sets[i].Labels) == 0 {
				r.Sets[i].Labels = nil
			}
		}
	}
	return rec
}

func encode(t testing.TB, recs []stream.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newWriterSize(&buf, 4096)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatalf("write %s at %s: %v", r.Kind(), r.Time(), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads a stream to its end, copying records. It uses a small
// buffer, so that frames of both sizes are exercised.
func readAll(b []byte) ([]stream.Record, error) {
	r := newReaderSize(bytes.NewReader(b), 512)
	var out []stream.Record
	for r.Next() {
		out = append(out, normal(stream.CloneRecord(r.At())))
	}
	return out, r.Err()
}

func checkSame(t *testing.T, what string, got []stream.Record, want []stream.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records back, %d written", what, len(got), len(want))
	}
	for i := range want {
		w := expected(t, want[i])
		if !reflect.DeepEqual(got[i], w) {
			t.Fatalf("%s: record %d (%s) changed:\n got %#v\nwant %#v", what, i, want[i].Kind(), got[i], w)
		}
	}
}

// --- round trips ---

func TestRoundTripEveryKind(t *testing.T) {
	recs := sampleRecords()
	kinds := map[stream.Kind]bool{}
	for _, r := range recs {
		kinds[r.Kind()] = true
	}
	if len(kinds) != 7 {
		t.Fatalf("sample covers %d kinds, want 7", len(kinds))
	}
	b := encode(t, recs)
	if !IsPipeStream(b) {
		t.Fatal("stream does not start with the magic")
	}
	got, err := readAll(b)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "sample", got, recs)

	// Reading what was read and writing it again gives the same bytes.
	if b2 := encode(t, got); !bytes.Equal(b, b2) {
		t.Fatal("re-encoding the records read does not give the same stream")
	}
	// Values survive: the v2 result's double is readable from its body.
	res := got[len(got)-4].(*stream.Result)
	it := res.VSets()
	if !it.Next() {
		t.Fatal(it.Err())
	}
	v, err := it.VSet().Value(0)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := v.Float64(stream.TypeDouble); f < 3.14159 || f > 3.1416 {
		t.Fatalf("pi came back as %v", f)
	}
}

func TestReaderReusesRecords(t *testing.T) {
	recs := sampleRecords()
	r := NewReader(bytes.NewReader(encode(t, recs)))
	var results []*stream.Result
	for r.Next() {
		if res, ok := r.At().(*stream.Result); ok {
			if res.Version != 3 && res.Version != 2 {
				t.Fatalf("result of version %d", res.Version)
			}
			results = append(results, res)
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(results) < 2 || results[0] != results[1] {
		t.Fatal("the reader does not reuse its Result")
	}
	if r.Next() || r.Err() != nil {
		t.Fatal("Next after the end must stay false without error")
	}
}

func TestEmptyStream(t *testing.T) {
	got, err := readAll(encode(t, nil))
	if err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %d records, %v", len(got), err)
	}
}

// qaDir is where pcp-testsuite installs PCP's QA archives, badDir its
// damaged ones.
const (
	qaDir  = "/var/lib/pcp/testsuite/archives"
	badDir = "/var/lib/pcp/testsuite/badarchives"
)

func needQA(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(qaDir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PCP QA archives missing in CI: %v", err)
		}
		t.Skipf("PCP QA archives not installed: %v", err)
	}
}

// qaRecords decodes the uncompressed files of an archive with the codec:
// the label, the metadata records (descriptors and help text take the time
// of the record before them), then the records of every volume, up to
// maxData bytes of them, to keep the test quick on the few big archives. It
// stops at the first damaged record of a file; the order is not a merge
// by time, which the pipe does not need.
func qaRecords(t *testing.T, meta string, maxData int) []stream.Record {
	b, err := readQA(meta, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	l, err := format.DecodeLabel(b)
	if err != nil {
		return nil // damaged on purpose
	}
	recs := []stream.Record{&l}
	last := l.Start
	for off := format.LabelSize(l.Version); off+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n < 12 || off+n > len(b) {
			break
		}
		rec, err := format.DecodeMeta(b[off : off+n])
		if err != nil {
			break
		}
		switch r := rec.(type) {
		case *stream.Desc:
			r.T = last
		case *stream.Text:
			r.T = last
		}
		last = rec.Time()
		recs = append(recs, rec)
		off += n
	}
	base := strings.TrimSuffix(meta, ".meta")
	ndata := 0
	for vol := 0; ndata < maxData; vol++ {
		d, err := readQA(fmt.Sprintf("%s.%d", base, vol), int64(maxData)+1<<20)
		if err != nil {
			break
		}
		for off := format.LabelSize(l.Version); off+12 <= len(d) && ndata < maxData; {
			n := int(binary.BigEndian.Uint32(d[off:]))
			if n < 12 || off+n > len(d) {
				break
			}
			var res stream.Result
			mark, err := format.DecodeData(d[off:off+n], l.Version, &res)
			if err != nil {
				break
			}
			if mark {
				recs = append(recs, &stream.Mark{T: res.T})
			} else {
				if res.Validate() != nil {
					break
				}
				recs = append(recs, &res)
			}
			off += n
			ndata += n
		}
	}
	return recs
}

// readQA reads up to limit bytes of a file, decompressed if only a
// compressed version of it exists.
func readQA(name string, limit int64) ([]byte, error) {
	p, err := compress.Lookup(name)
	if err != nil {
		return nil, err
	}
	f, err := compress.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

func TestRoundTripQA(t *testing.T) {
	needQA(t)
	t.Parallel()
	// Archives whose .meta is compressed are left to the next test: they
	// cost seconds of xz decoding.
	metas, _ := filepath.Glob(filepath.Join(qaDir, "*.meta"))
	if len(metas) < 100 {
		t.Fatalf("only %d .meta files in %s", len(metas), qaDir)
	}
	var narch, nrec, nbytes int
	for _, m := range metas {
		recs := qaRecords(t, m, 8<<20)
		if len(recs) == 0 {
			continue
		}
		b := encode(t, recs)
		got, err := readAll(b)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		checkSame(t, m, got, recs)
		narch++
		nrec += len(recs)
		nbytes += len(b)
	}
	t.Logf("%d archives, %d records, %d stream bytes round-tripped", narch, nrec, nbytes)
}

// TestRoundTripQAFormatReader sends every QA archive, as format's reader
// streams it, through a writer and a reader. An archive the reader fails
// on half-way ends its stream with an ERROR frame, and the consumer must
// fail with the same message.
func TestRoundTripQAFormatReader(t *testing.T) {
	needQA(t)
	t.Parallel()
	metas, _ := filepath.Glob(filepath.Join(qaDir, "*.meta"))
	// Compressed archives cost seconds of xz decoding (whole files, as
	// most are one xz block); -short leaves them out.
	if !testing.Short() {
		xz, _ := filepath.Glob(filepath.Join(qaDir, "*.meta.xz"))
		metas = append(metas, xz...)
	}
	bad, _ := filepath.Glob(filepath.Join(badDir, "*.meta*"))
	metas = append(metas, bad...)
	var narch, nrec, nfail, nopen int
	for _, m := range metas {
		base := strings.TrimSuffix(strings.TrimSuffix(m, ".xz"), ".meta")
		a, err := format.Open(base)
		if err != nil {
			nopen++ // damaged on purpose
			continue
		}
		it := a.Records()
		var want []stream.Record
		var buf bytes.Buffer
		w := newWriterSize(&buf, 64<<10)
		var failure error
		for data := 0; data < 8<<20 && it.Next(); {
			rec := it.At()
			if err := w.Write(rec); err != nil {
				failure = err
				break
			}
			want = append(want, stream.CloneRecord(rec))
			if r, ok := rec.(*stream.Result); ok {
				data += len(r.Body)
			}
		}
		if failure == nil {
			failure = it.Err()
		}
		it.Close()
		if failure != nil {
			w.Fail(failure)
			if nfail++; nfail == 1 {
				t.Logf("for example: %v", failure)
			}
		} else if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := readAll(buf.Bytes())
		checkSame(t, base, got, want)
		var ue *UpstreamError
		switch {
		case failure == nil && err != nil:
			t.Fatalf("%s: %v", base, err)
		case failure != nil && (!errors.As(err, &ue) || ue.Msg != cleanMessage([]byte(failure.Error()))):
			t.Fatalf("%s: producer failed with %q, consumer with %v", base, failure, err)
		}
		narch++
		nrec += len(want)
	}
	t.Logf("%d archives (%d ending in an error frame), %d records; %d archives format.Open refused", narch, nfail, nrec, nopen)
	if narch < 150 || nfail == 0 {
		t.Fatalf("%d archives opened, %d failed half-way: the test proves little", narch, nfail)
	}
}

// --- damage ---

func TestTruncatedStream(t *testing.T) {
	b := encode(t, sampleRecords())
	for cut := 0; cut < len(b); cut++ {
		_, err := readAll(b[:cut])
		if err == nil {
			t.Fatalf("stream cut at %d of %d bytes read without error", cut, len(b))
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: error does not wrap io.ErrUnexpectedEOF: %v", cut, err)
		}
	}
	_, err := readAll(b[:len(b)-FrameHeaderSize])
	if err == nil || !strings.Contains(err.Error(), "without an END frame") {
		t.Fatalf("stream without its END frame: %v", err)
	}
	t.Log(err)
}

// frameBytes builds one frame by hand.
func frameBytes(kind FrameKind, flags uint8, t stream.Timestamp, payload []byte) []byte {
	b := appendFrameHeader(nil, kind, flags, len(payload), t)
	return append(b, payload...)
}

func header(version uint16) []byte {
	b := []byte(Magic)
	b = binary.BigEndian.AppendUint16(b, version)
	return append(b, 0, 0)
}

func TestDamagedStreams(t *testing.T) {
	lab := &stream.Label{Version: 3, Start: ts(100, 5), Hostname: "h"}
	labPayload := format.AppendLabel(nil, lab, 3, 0)
	labFrame := frameBytes(FrameLabel, 0, lab.Start, labPayload)
	end := frameBytes(FrameEnd, 0, stream.Timestamp{}, nil)
	res := &stream.Result{T: ts(100, 5), Version: 3, Body: resultBody(3, tset{pmid: 1, valfmt: 0, vals: []tval{{inst: -1, word: 1}}})}
	resPayload, _ := format.AppendResult(nil, res, 3)
	desc, _ := format.AppendMeta(nil, &stream.Desc{PMID: 1, Names: []string{"a"}}, 3)
	text, _ := format.AppendMeta(nil, &stream.Text{Type: 5, Ident: 1, Text: "x"}, 3)
	v2indom, _ := format.AppendMeta(nil, &stream.InDom{T: ts(100, 0), InDom: 1, Insts: []int32{1}, Names: []string{"a"}}, 2)
	delta, _ := format.AppendMeta(nil, &stream.InDom{T: ts(100, 5), InDom: 1, Encoding: stream.InDomDelta, Insts: []int32{1}, Names: []string{""}, Deleted: []bool{true}}, 3)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	badLen := bytes.Clone(resPayload)
	binary.BigEndian.PutUint32(badLen, uint32(len(badLen)+4))
	badTrailer := bytes.Clone(resPayload)
	binary.BigEndian.PutUint32(badTrailer[len(badTrailer)-4:], 7)
	v2label := format.AppendLabel(nil, lab, 2, 0)
	badSets := bytes.Clone(resPayload) // claims 5 value sets, holds 1
	binary.BigEndian.PutUint32(badSets[format.DataHeaderSize(3):], 5)

	cases := []struct {
		name, stream, want string
	}{
		{"garbage", "this is not a stream at all, just text", "not a pipe stream"},
		{"archive", string(labPayload), "not a pipe stream"},
		{"empty", "", "empty input"},
		{"version 3", string(cat(header(3), labFrame, end)), "version 3"},
		{"version 0", string(cat(header(0), labFrame, end)), "version 0"},
		{"unknown critical kind", string(cat(header(1), labFrame, frameBytes(0x08, 0, ts(100, 5), nil), end)), "unknown frame kind 0x08"},
		{"kind zero", string(cat(header(1), labFrame, frameBytes(0, 0, ts(100, 5), nil), end)), "unknown frame kind 0x00"},
		{"huge length", string(cat(header(1), labFrame, appendFrameHeader(nil, FrameResult, 0, MaxPayload+1, ts(100, 5)))), "more than the limit"},
		{"huge error", string(cat(header(1), appendFrameHeader(nil, FrameError, 0, MaxErrorMessage+1, ts(0, 0)))), "more than the limit"},
		{"end with payload", string(cat(header(1), labFrame, frameBytes(FrameEnd, 0, ts(0, 0), []byte("xx")))), "END frame with 2"},
		{"desc before label", string(cat(header(1), frameBytes(FrameDesc, 0, ts(1, 0), desc), end)), "before any LABEL"},
		{"result before label", string(cat(header(1), frameBytes(FrameResult, 0, res.T, resPayload), end)), "before any LABEL"},
		{"timestamp mismatch", string(cat(header(1), labFrame, frameBytes(FrameResult, 0, ts(100, 6), resPayload), end)), "differs from its record"},
		{"label timestamp mismatch", string(cat(header(1), frameBytes(FrameLabel, 0, ts(1, 0), labPayload), end)), "differs from its record"},
		{"nanoseconds", string(cat(header(1), labFrame, frameBytes(FrameMark, 0, ts(100, 1e9), format.AppendMark(nil, ts(100, 1e9), 3)), end)), "nanoseconds"},
		{"record length", string(cat(header(1), labFrame, frameBytes(FrameResult, 0, res.T, badLen), end)), "does not match the frame's payload length"},
		{"record trailer", string(cat(header(1), labFrame, frameBytes(FrameResult, 0, res.T, badTrailer), end)), "trailer length 7"},
		{"value sets past the record", string(cat(header(1), labFrame, frameBytes(FrameResult, 0, res.T, badSets), end)), "data record: "},
		{"short payload", string(cat(header(1), labFrame, frameBytes(FrameMark, 0, res.T, []byte{0, 0, 0, 8, 0, 0, 0, 8}), end)), "too short"},
		{"mark in result frame", string(cat(header(1), labFrame, frameBytes(FrameResult, 0, res.T, format.AppendMark(nil, res.T, 3)), end)), "RESULT frame holds a <mark>"},
		{"result in mark frame", string(cat(header(1), labFrame, frameBytes(FrameMark, 0, res.T, resPayload), end)), "MARK frame holds a result"},
		{"desc in text frame", string(cat(header(1), labFrame, frameBytes(FrameText, 0, res.T, desc), end)), "TEXT frame holds a metadata record of type 1"},
		{"text in desc frame", string(cat(header(1), labFrame, frameBytes(FrameDesc, 0, res.T, text), end)), "DESC frame holds a metadata record of type 4"},
		{"v2 indom payload", string(cat(header(1), labFrame, frameBytes(FrameInDom, 0, ts(100, 0), v2indom), end)), "type 2"},
		{"v2 flag on a delta", string(cat(header(1), labFrame, frameBytes(FrameInDom, FlagV2, ts(100, 5), delta), end)), "delta"},
		{"v2 label payload", string(cat(header(1), frameBytes(FrameLabel, 0, lab.Start, v2label), end)), "version 2 label"},
		{"label payload damaged", string(cat(header(1), frameBytes(FrameLabel, 0, lab.Start, labPayload[:400]), end)), ""},
	}
	for _, c := range cases {
		got, err := readAll([]byte(c.stream))
		if err == nil {
			t.Errorf("%s: read %d records without error", c.name, len(got))
			continue
		}
		var fe *format.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %T is not a *format.FormatError: %v", c.name, err, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

func TestOptionalFramesSkipped(t *testing.T) {
	b := encode(t, sampleRecords())
	// Insert optional frames after the first frame, and before the END.
	first := HeaderSize + FrameHeaderSize + format.LabelSizeV3
	opt := cat2(frameBytes(0x88, 0xff, ts(-1, -1), []byte("future extension")), frameBytes(0xfd, 0, ts(0, 0), nil))
	var s []byte
	s = append(s, b[:first]...)
	s = append(s, opt...)
	s = append(s, b[first:len(b)-FrameHeaderSize]...)
	s = append(s, opt...)
	s = append(s, b[len(b)-FrameHeaderSize:]...)
	got, err := readAll(s)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "with optional frames", got, sampleRecords())
	// A cut inside an optional frame is still a cut.
	if _, err := readAll(s[:first+FrameHeaderSize+3]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut in an optional frame: %v", err)
	}
}

// TestFlippedKindRefused: a required kind with its top bit set (0x81 to
// 0x87, 0xfe, 0xff) is never assigned. One flipped bit makes a record's
// frame such a kind; a reader that skipped it as optional lost the record
// without a word (a result, a <mark>: every reader alike, so the hostile
// campaign could not see it). Every frame of the sample, flipped in turn,
// is refused with its offset.
func TestFlippedKindRefused(t *testing.T) {
	b := encode(t, sampleRecords())
	off, n := HeaderSize, 0
	for off+FrameHeaderSize <= len(b) {
		kind := FrameKind(b[off])
		size := int(binary.BigEndian.Uint32(b[off+4:]))
		m := slices.Clone(b)
		m[off] |= 0x80
		_, err := readAll(m)
		if err == nil || !strings.Contains(err.Error(), "top bit set") || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", off)) {
			t.Errorf("%s frame at %d with its top bit set: %v", kind, off, err)
		}
		n++
		off += FrameHeaderSize + size
	}
	if n < 10 {
		t.Fatalf("only %d frames", n)
	}
	for _, k := range []FrameKind{0x80, 0x88, 0xa0, 0xfd} {
		if k.flipped() {
			t.Errorf("%#x: refused, but it is a kind a reader may skip", uint8(k))
		}
	}
}

// TestEndFlippedToErrorPlaced (hostile seed 27, F25): a flipped bit made
// a stream's END frame (0x7f) an ERROR frame (0x7e) with no message, and
// every reader failed with "upstream: the producer failed without saying
// why", naming no place. The message now names the frame's offset.
func TestEndFlippedToErrorPlaced(t *testing.T) {
	b := encode(t, sampleRecords())
	off := len(b) - FrameHeaderSize
	if FrameKind(b[off]) != FrameEnd {
		t.Fatalf("the last frame is %s, not END", FrameKind(b[off]))
	}
	b[off] ^= 1
	_, err := readAll(b)
	var ue *UpstreamError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d: the producer failed without saying why", off)) {
		t.Errorf("END flipped to ERROR: %v", err)
	}
}

func cat2(a, b []byte) []byte { return append(append([]byte(nil), a...), b...) }

// chunks yields n bytes of zeros in reads of at most 64 KiB, then EOF.
type zeros struct{ left int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), z.left, 64<<10)
	clear(p[:n])
	z.left -= n
	return n, nil
}

// A frame that claims a gigabyte and brings a few megabytes must not make
// the reader allocate the gigabyte.
func TestLyingLengthBoundedAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("counts allocations; the race detector adds its own")
	}
	lab := &stream.Label{Version: 3, Start: ts(100, 5)}
	head := cat2(header(1), frameBytes(FrameLabel, 0, lab.Start, format.AppendLabel(nil, lab, 3, 0)))
	head = appendFrameHeader(head, FrameResult, 0, MaxPayload, ts(100, 5))
	const present = 3 << 20
	src := io.MultiReader(bytes.NewReader(head), &zeros{left: present})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := NewReader(src)
	for r.Next() {
	}
	runtime.ReadMemStats(&after)
	err := r.Err()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), fmt.Sprintf("%d of its %d bytes", present, MaxPayload)) {
		t.Fatalf("lying length: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("reader allocated %d bytes for %d bytes of input", alloc, present)
	} else {
		t.Logf("%d bytes allocated for a frame claiming %d bytes with %d present", alloc, MaxPayload, present)
	}
}

// A frame larger than the buffer is read in steps and still decodes.
func TestLargeFrame(t *testing.T) {
	var sets []tset
	for i := 0; i < 20; i++ {
		big := bytes.Repeat([]byte{byte('a' + i)}, 100<<10)
		sets = append(sets, tset{pmid: stream.PMID(i), valfmt: stream.ValDptr, vals: []tval{{inst: -1, vtype: uint8(stream.TypeAggregate), payload: big}}})
	}
	res := &stream.Result{T: ts(5, 0), Version: 3, Body: resultBody(3, sets...)}
	if len(res.Body) <= BufferSize {
		t.Fatalf("body of %d bytes fits the buffer", len(res.Body))
	}
	recs := []stream.Record{&stream.Label{Version: 3, Start: ts(5, 0)}, res, res, &stream.Mark{T: ts(6, 0)}}
	got, err := readAll(encode(t, recs))
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "large frames", got, recs)
	if err := got[1].(*stream.Result).Validate(); err != nil {
		t.Fatal(err)
	}
}

// --- the error frame ---

func TestErrorFramePropagates(t *testing.T) {
	recs := sampleRecords()[:4]
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	upstream := errors.New("bad.meta: offset 4712: indom record claims 90000 instances in 212 bytes")
	if err := w.Fail(upstream); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close after Fail: %v", err)
	}
	if err := w.Write(recs[1]); err != ErrFinished {
		t.Fatalf("Write after Fail: %v", err)
	}
	got, err := readAll(buf.Bytes())
	if len(got) != len(recs) {
		t.Fatalf("%d records before the error frame, want %d", len(got), len(recs))
	}
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Msg != upstream.Error() {
		t.Fatalf("got %v, want the upstream error", err)
	}
	if err.Error() != "upstream: "+upstream.Error() {
		t.Fatalf("message %q", err)
	}
}

func TestErrorFrameSanitized(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	long := strings.Repeat("é", MaxErrorMessage) // 2 bytes each
	w.Fail(errors.New("\x1b[31mred\x1b[0m\nline two\t\xff" + long))
	_, err := readAll(buf.Bytes())
	var ue *UpstreamError
	if !errors.As(err, &ue) {
		t.Fatal(err)
	}
	if strings.Contains(ue.Msg, "\x1b") || !utf8.ValidString(ue.Msg) || !strings.Contains(ue.Msg, "\nline two\t") {
		t.Fatalf("message not cleaned: %q", ue.Msg[:40])
	}
	if len(ue.Msg) > MaxErrorMessage+8 || !strings.HasSuffix(ue.Msg, "é...") {
		t.Fatalf("long message: %d bytes, ends %q", len(ue.Msg), ue.Msg[len(ue.Msg)-8:])
	}

	buf.Reset()
	NewWriter(&buf).Fail(nil)
	if _, err := readAll(buf.Bytes()); err == nil || err.Error() != "upstream: unknown error" {
		t.Fatalf("Fail(nil): %v", err)
	}
}

// --- the writer ---

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

func TestWriterErrors(t *testing.T) {
	recs := sampleRecords()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(recs[1]); err == nil || !strings.Contains(err.Error(), "before any label") {
		t.Fatalf("desc before label: %v", err)
	}
	if err := w.Write(recs[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&stream.Mark{T: ts(1, -1)}); err == nil {
		t.Fatal("negative nanoseconds accepted")
	}
	// The stream is still good after refused records.
	for _, r := range recs[1:] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Write(recs[0]); err != ErrFinished {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := w.Fail(errors.New("x")); err != ErrFinished {
		t.Fatalf("Fail after Close: %v", err)
	}
	got, err := readAll(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "after refused records", got, recs)

	// An I/O error sticks.
	fw := &failWriter{n: 3 << 20}
	w = NewWriter(fw)
	big := &stream.Result{T: ts(1, 0), Version: 3, Body: resultBody(3, tset{pmid: 1, valfmt: stream.ValDptr,
		vals: []tval{{inst: 0, vtype: 7, payload: make([]byte, 600<<10)}}})}
	w.Write(recs[0])
	var err2 error
	for i := 0; i < 10 && err2 == nil; i++ {
		err2 = w.Write(big)
	}
	if err2 == nil || err2.Error() != "broken pipe" {
		t.Fatalf("write error: %v", err2)
	}
	if err := w.Write(recs[1]); err != err2 {
		t.Fatalf("error not sticky: %v", err)
	}
	if err := w.Close(); err != err2 {
		t.Fatalf("Close after an I/O error: %v", err)
	}
}

type otherRecord struct{}

func (otherRecord) Kind() stream.Kind      { return 99 }
func (otherRecord) Time() stream.Timestamp { return stream.Timestamp{} }

func TestWriterUnknownRecord(t *testing.T) {
	w := NewWriter(io.Discard)
	w.Write(sampleRecords()[0])
	if err := w.Write(otherRecord{}); err == nil {
		t.Fatal("a foreign record type was written")
	}
}

// --- sniffing ---

func TestIsPipeStream(t *testing.T) {
	b := encode(t, nil)
	for n := 0; n <= len(b); n++ {
		if got, want := IsPipeStream(b[:n]), n >= len(Magic); got != want {
			t.Errorf("IsPipeStream of %d bytes = %v", n, got)
		}
	}
	lab := format.AppendLabel(nil, &stream.Label{Version: 2}, 2, 0)
	for _, s := range [][]byte{lab, []byte("\x89PNG\r\n\x1a\n"), []byte("\xfd7zXZ\x00\x00\x00"), []byte("\x28\xb5\x2f\xfd0000")} {
		if IsPipeStream(s) {
			t.Errorf("%q taken for a stream", s)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
	if IsTerminal(nil) {
		t.Error("nil is a terminal")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		if IsTerminal(null) {
			t.Errorf("%s is a terminal", os.DevNull)
		}
		null.Close()
	}
	pr, pw, err := os.Pipe()
	if err == nil {
		if IsTerminal(pr) || IsTerminal(pw) {
			t.Error("a pipe is a terminal")
		}
		pr.Close()
		pw.Close()
	}
	if runtime.GOOS == "linux" {
		ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
		if err != nil {
			t.Skipf("no pseudo-terminal to test with: %v", err)
		}
		defer ptmx.Close()
		if !IsTerminal(ptmx) {
			t.Error("a pseudo-terminal is not a terminal")
		}
	}
}

// TestSpecExample checks the example of docs/stream.md byte for byte.
func TestSpecExample(t *testing.T) {
	lab := &stream.Label{Version: 3, PID: 1234, Start: ts(1700000000, 5), Hostname: "h", Timezone: "UTC"}
	recs := []stream.Record{
		lab,
		&stream.Desc{T: lab.Start, PMID: stream.NewPMID(60, 0, 1), Type: stream.TypeU32, InDom: stream.InDomNull,
			Sem: stream.SemInstant, Names: []string{"a.b"}},
		&stream.Result{T: ts(1700000001, 0), Version: 3, Body: resultBody(3,
			tset{pmid: stream.NewPMID(60, 0, 1), valfmt: stream.ValInsitu, vals: []tval{{inst: stream.InstNull, word: 7}}})},
		&stream.Mark{T: ts(1700000001, 1000000)},
	}
	hexs := func(s string) []byte {
		b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var want []byte
	want = append(want, hexs("89 50 43 50 70 69 70 65 00 02 00 00")...)
	want = append(want, hexs("01 00 00 00 00 00 03 28 00 00 00 00 65 53 f1 00 00 00 00 05")...)
	want = append(want, format.AppendLabel(nil, lab, 3, 0)...)
	want = append(want, hexs(`02 00 00 00 00 00 00 2b 00 00 00 00 65 53 f1 00 00 00 00 05
		00 00 00 2b 00 00 00 01 0f 00 00 01 00 00 00 01 ff ff ff ff 00 00 00 03 00 00 00 00
		00 00 00 01 00 00 00 03 61 2e 62 00 00 00 2b`)...)
	want = append(want, hexs(`06 00 00 00 00 00 00 2c 00 00 00 00 65 53 f1 01 00 00 00 00
		00 00 00 2c 65 53 f1 01 00 00 00 00 00 00 00 00 00 00 00 01 0f 00 00 01 00 00 00 01
		00 00 00 00 ff ff ff ff 00 00 00 07 00 00 00 2c`)...)
	want = append(want, hexs(`07 00 00 00 00 00 00 18 00 00 00 00 65 53 f1 01 00 0f 42 40
		00 00 00 18 65 53 f1 01 00 00 00 00 00 0f 42 40 00 00 00 00 00 00 00 18`)...)
	want = append(want, hexs("7f 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")...)
	got := encode(t, recs)
	if !bytes.Equal(got, want) {
		t.Fatalf("the spec's example is not what the writer writes:\n got %x\nwant %x", got, want)
	}
	if len(got) != 1031 || !bytes.Equal(got[32:44], hexs("00 00 03 28 50 05 26 03 00 00 04 d2")) {
		t.Fatal("label bytes of the example")
	}
}

// TestV2ResultCrossesAsIs: a v2 result crosses a stream with its pointers
// as they are and the V2 flag, and comes back of version 2, byte for byte;
// one whose pointer runs outside it is written (the writer does not walk
// it) and refused by the reader, with the frame's offset. The V2 flag on
// a result of a version 1 stream is ignored, as version 1 readers did.
func TestV2ResultCrossesAsIs(t *testing.T) {
	recs := sampleRecords()
	good := &stream.Result{T: ts(1, 0), Version: 2, Body: resultBody(2, tset{pmid: 1, valfmt: stream.ValDptr, vals: []tval{{inst: 0, vtype: 3, payload: u64(1)}}})}
	bad := good.Clone()
	binary.BigEndian.PutUint32(bad.Body[20:], 0xffffffff) // pointer word out of range
	for _, c := range []struct {
		res  *stream.Result
		want string
	}{{good, ""}, {bad, "data record: body offset 20: value pointer"}} {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, r := range []stream.Record{recs[0], c.res} {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		at := bytes.LastIndex(b, c.res.Body) - FrameHeaderSize - 16
		if at < 0 || FrameKind(b[at]) != FrameResult || b[at+1] != FlagV2 {
			t.Fatalf("no RESULT frame flagged V2 holding the body as it was")
		}
		got, err := readAll(b)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("a result whose pointer runs outside it was read: %v", err)
			}
			t.Log(err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		res := got[len(got)-1].(*stream.Result)
		if res.Version != 2 || !bytes.Equal(res.Body, good.Body) {
			t.Fatalf("came back as version %d, body equal %v", res.Version, bytes.Equal(res.Body, good.Body))
		}
		// the same bytes in a version 1 stream: the flag means nothing,
		// and the body, read with version 3's pointer base, has its
		// value block a word before where libpcp wants it
		binary.BigEndian.PutUint16(b[8:], 1)
		if _, err := readAll(b); err == nil || !strings.Contains(err.Error(), "not right after the value sets") {
			t.Fatalf("version 1 stream: %v, want the body read as version 3's", err)
		}
	}
}

// TestReaderDeferChecks: with DeferChecks, a result whose pointer runs
// outside it is handed out, and CheckResult then fails with the error Next
// would have stopped at (the same frame's offset), which also ends the
// stream; sound results check clean.
func TestReaderDeferChecks(t *testing.T) {
	recs := sampleRecords()
	good := &stream.Result{T: ts(1, 0), Version: 3, Body: resultBody(3, tset{pmid: 1, valfmt: stream.ValDptr, vals: []tval{{inst: 0, vtype: 3, payload: u64(1)}}})}
	bad := good.Clone()
	bad.T = ts(2, 0)
	binary.BigEndian.PutUint32(bad.Body[20:], 0xffffffff) // pointer word out of range
	after := good.Clone()
	after.T = ts(3, 0)
	lab := *recs[0].(*stream.Label)
	lab.Start = ts(1, 0)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range []stream.Record{&lab, good, bad, after} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, want := readAll(buf.Bytes())
	if want == nil {
		t.Fatal("the damaged result was read without deferring")
	}
	r := NewReader(bytes.NewReader(buf.Bytes()))
	if d, ok := stream.As[stream.CheckDeferrer](r); !ok || !d.DeferChecks() {
		t.Fatal("the reader does not defer its checks")
	}
	var got []string
	for r.Next() {
		rec := r.At()
		err := r.CheckResult()
		got = append(got, fmt.Sprintf("%s@%d:%v", rec.Kind(), rec.Time().Sec, err))
	}
	wantLog := fmt.Sprintf("[label@1:<nil> result@1:<nil> result@2:%v]", want)
	if fmt.Sprint(got) != wantLog {
		t.Errorf("got  %v\nwant %s", got, wantLog)
	}
	if r.Err() == nil || r.Err().Error() != want.Error() {
		t.Errorf("Err() = %v, want %v", r.Err(), want)
	}
}

// TestNotAStream: standard input that is not a stream is refused naming
// the offset and what it holds: a PCP archive file by its label's magic
// (cat A.meta | pcpcat), anything else by its first bytes.
func TestNotAStream(t *testing.T) {
	label := []byte{0, 0, 0, 132, 0x50, 0x05, 0x26, 0x02, 0, 0}
	if got := NotAStream(label); !strings.HasPrefix(got, "offset 4: the magic number of a PCP archive file (version 2)") {
		t.Errorf("an archive file: %q", got)
	}
	if got := NotAStream([]byte("garbage\n")); got != `offset 0: not a pcp* stream: it starts with "garbage\n" where a stream starts with "\x89PCPpipe" (name archives as arguments instead)` {
		t.Errorf("text: %q", got)
	}
	if got := NotAStream([]byte("x")); !strings.Contains(got, `starts with "x" where`) {
		t.Errorf("one byte: %q", got)
	}
}
