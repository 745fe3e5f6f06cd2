package dump

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

func block(vtype stream.Type, payload []byte) stream.Value {
	return stream.Value{VType: uint8(vtype), Payload: payload}
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// The expected strings are what pmPrintValue prints (checked with
// pmdumplog on the QA archives and with printf for the float cases).
func TestAppendValue(t *testing.T) {
	for _, c := range []struct {
		name string
		typ  stream.Type
		v    stream.Value
		want string
	}{
		{"32", stream.Type32, stream.Value{Insitu: true, Word: uint32(0xfffffffe)}, "-2"},
		{"u32", stream.TypeU32, stream.Value{Insitu: true, Word: 0xfffffffe}, "4294967294"},
		{"float insitu", stream.TypeFloat, stream.Value{Insitu: true, Word: math.Float32bits(0.83)}, "0.82999998"},
		{"float block", stream.TypeFloat, block(stream.TypeFloat, be32(math.Float32bits(1e10))), "1e+10"},
		{"64", stream.Type64, block(stream.Type64, be64(uint64(1)<<63)), "-9223372036854775808"},
		{"u64", stream.TypeU64, block(stream.TypeU64, be64(1<<63)), "9223372036854775808"},
		{"double", stream.TypeDouble, block(stream.TypeDouble, be64(math.Float64bits(0.1))), "0.1"},
		{"double big", stream.TypeDouble, block(stream.TypeDouble, be64(math.Float64bits(123456789012345678))), "1.234567890123457e+17"},
		{"double nan", stream.TypeDouble, block(stream.TypeDouble, be64(math.Float64bits(math.NaN()))), "nan"},
		{"double -inf", stream.TypeDouble, block(stream.TypeDouble, be64(math.Float64bits(math.Inf(-1)))), "-inf"},
		{"string", stream.TypeString, block(stream.TypeString, []byte("abc\x00~~")), `"abc"`},
		{"aggregate text", stream.TypeAggregate, block(stream.TypeAggregate, []byte("hello")), `"hello" [68656c6c6f]`},
		{"aggregate binary", stream.TypeAggregate, block(stream.TypeAggregate, []byte{0, 1, 2}), `[000102]`},
		{"aggregate empty", stream.TypeAggregate, block(stream.TypeAggregate, nil), `"" []`},
		// 8 bytes: little-endian u64 and double of the bytes as stored.
		{"aggregate 8", stream.TypeAggregate, block(stream.TypeAggregate, []byte{1, 0, 0, 0, 0, 0, 0, 0}), `1 4.940656458412465e-324 [0100000000000000]`},
		// A 64-bit block under a 32-bit descriptor: libpcp byte-swapped
		// it on decode, so the integer reads as stored.
		{"mismatch 64 as 32", stream.Type32, block(stream.Type64, be64(5)), `5 2.470328229206233e-323 [0500000000000000]`},
		{"insitu unknown", stream.Type64, stream.Value{Insitu: true, Word: 1}, "1 1.4012985e-45 0x1"},
		{"insitu nan", stream.TypeAggregate, stream.Value{Insitu: true, Word: 0x7fc00000}, "2143289344 0x7fc00000"},
	} {
		if got := string(appendValue(nil, c.typ, c.v)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestUnitsString(t *testing.T) {
	for _, c := range []struct {
		u    stream.Units
		want string
	}{
		{stream.NewUnits(0, 0, 0, 0, 0, 0), ""},
		{stream.NewUnits(1, 0, 0, 1, 0, 0), "Kbyte"},
		{stream.NewUnits(1, -1, 0, 0, 3, 0), "byte / sec"},
		{stream.NewUnits(0, -1, 1, 0, 3, 0), "count / sec"},
		{stream.NewUnits(0, 1, 0, 0, 2, 0), "millisec"},
		{stream.NewUnits(0, 0, 1, 0, 0, 3), "count x 10^3"},
		{stream.NewUnits(0, 0, 1, 0, 0, 1), "count x 10"},
		{stream.NewUnits(0, 0, 0, 0, 0, 3), "x 10^3"},
		{stream.NewUnits(2, -2, 0, 2, 4, 0), "Mbyte^2 / min^2"},
		{stream.NewUnits(1, 0, 0, 12, 0, 0), "space-12"},
		{stream.NewUnits(0, 1, 0, 0, 9, 0), "time-9"},
	} {
		if got := c.u.String(); got != c.want {
			t.Errorf("%08x: got %q, want %q", uint32(c.u), got, c.want)
		}
	}
}

// TestNameOrder checks the order of a metric's names: the namespace is
// walked depth first with the newest child first, and a metric's names
// come out in reverse walk order.
func TestNameOrder(t *testing.T) {
	ns := newNameSpace()
	p := stream.NewPMID(29, 0, 5)
	ns.add(stream.NewPMID(29, 0, 36), "sample.dupnames.three.write_me")
	ns.add(p, "sample.dupnames.four.colour")
	ns.add(p, "sample.colour")
	ns.add(stream.NewPMID(29, 0, 6), "sample.colour") // a conflicting PMID is ignored
	ns.finish()
	got := ns.byPMID[p]
	if len(got) != 2 || got[0] != "sample.dupnames.four.colour" || got[1] != "sample.colour" {
		t.Errorf("names %q", got)
	}
	pmids, ok := ns.lookup("sample.dupnames")
	if !ok || len(pmids) != 2 || pmids[0] != p || pmids[1] != stream.NewPMID(29, 0, 36) {
		t.Errorf("lookup sample.dupnames: %v %v", pmids, ok)
	}
	if _, ok := ns.lookup("sample.nosuch"); ok {
		t.Error("unknown name found")
	}
}

func TestErrStr(t *testing.T) {
	for code, want := range map[int32]string{
		-2:     "No such file or directory",
		-134:   "Unknown error 134",
		-12357: "Unknown metric name",
		-12352: "No such PMAPI error code (-12352)",
		-30000: "Unknown secure sockets error -30000 (-8656)",
	} {
		if got := string(appendErrStr(nil, code)); got != want {
			t.Errorf("%d: got %q want %q", code, got, want)
		}
	}
}

// TestRecordPathAllocs checks that printing a record allocates nothing
// once its metrics have been seen.
func TestRecordPathAllocs(t *testing.T) {
	var base string
	for _, b := range qaBases(t) {
		if filepath.Base(b) == "20041125" {
			base = b
		}
	}
	if base == "" {
		t.Skip("20041125 not among the QA archives")
	}
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	md, err := a.Meta()
	if err != nil {
		t.Fatal(err)
	}
	d := &dumper{w: bufio.NewWriter(io.Discard), a: newArchiveSource(a), lab: a.Label(),
		metrics: map[stream.PMID]*metricInfo{}, warn: io.Discard, vers: a.Version(), prec: 6,
		loc: time.UTC, meta: newPCPMeta(md), opts: Options{Sizes: true, TimeFormat: 2}}
	d.tcache.loc = time.UTC
	d.start = stream.Timestamp{Sec: a.Label().Start.Sec - 1e5}
	var recs []*stream.Result
	it := a.Records()
	for it.Next() && len(recs) < 50 {
		if r, ok := it.At().(*stream.Result); ok {
			recs = append(recs, r.Clone())
		}
	}
	it.Close()
	run := func() {
		for _, r := range recs {
			d.dumpRecord(r.T, r, nil)
			d.flush()
		}
	}
	run() // metrics seen, buffers grown
	if n := testing.AllocsPerRun(5, run); n != 0 {
		t.Errorf("%v allocations per pass over %d records", n, len(recs))
	}
}

// TestAppendDiff checks the -xx offsets against what C computes with
// long double arithmetic (values from a C program on x86-64).
func TestAppendDiff(t *testing.T) {
	var c diffCalc
	for _, tc := range []struct {
		ds, dn int64
		want   string
	}{
		{1048576, 999999999, "1048576.999999999"},
		{123456789, 123456789, "123456789.123456791"},
		{1700000000, 1, "1700000000.000000000"},
		{-2000000, -999999999, "-2000000.999999999"},
		{99999999, 500000000, "99999999.500000000"},
		{60, 5000, "60.000005000"},
	} {
		if got := string(c.appendDiff(nil, tc.ds, tc.dn, 1e9, 9)); got != tc.want {
			t.Errorf("%d + %d ns: got %s want %s", tc.ds, tc.dn, got, tc.want)
		}
	}
}
