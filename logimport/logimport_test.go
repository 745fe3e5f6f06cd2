package logimport

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

func newTest(t *testing.T) (*Importer, string) {
	t.Helper()
	base := filepath.Join(t.TempDir(), "a")
	im, err := Create(base, Options{Hostname: "h", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return im, base
}

func TestErrors(t *testing.T) {
	im, base := newTest(t)
	defer im.Abort()
	d := stream.NewInDomID(Domain, 1)
	want := func(err, sentinel error) {
		t.Helper()
		if !errors.Is(err, sentinel) {
			t.Errorf("got %v, want %v", err, sentinel)
		}
	}
	_, err := im.AddMetric(Metric{Name: "a.b", Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemInstant})
	want(err, nil)
	_, err = im.AddMetric(Metric{Name: "a.b", Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemInstant})
	want(err, ErrDupMetricName)
	_, err = im.AddMetric(Metric{Name: "a.c", PMID: stream.NewPMID(Domain, 0, 1), Type: stream.TypeU32, InDom: d, Sem: stream.SemInstant})
	want(err, ErrDupMetricID)
	_, err = im.AddMetric(Metric{Name: "a.d", Type: stream.TypeEvent, Sem: stream.SemInstant})
	want(err, ErrBadType)
	_, err = im.AddMetric(Metric{Name: "a.e", Type: stream.TypeU32, Sem: 2})
	want(err, ErrBadSem)
	for _, n := range []string{"", "1a", "a..b", "a.", "a.1", "a-b"} {
		_, err = im.AddMetric(Metric{Name: n, Type: stream.TypeU32, Sem: stream.SemInstant})
		want(err, ErrBadMetricName)
	}
	_, err = im.AddMetric(Metric{Name: "a.i", Type: stream.TypeDouble, InDom: d, Sem: stream.SemInstant})
	want(err, nil)
	want(im.AddInstance(d, "x y", 1), nil)
	want(im.AddInstance(d, "x z", 2), ErrDupInstName)
	want(im.AddInstance(d, "w", 1), ErrDupInstID)
	want(im.PutValue("nosuch", "", "1"), ErrUnknownMetric)
	want(im.PutValue("a.b", "x", "1"), ErrInstNotNull)
	want(im.PutValue("a.i", "", "1"), ErrInstNull)
	want(im.PutValue("a.i", "q", "1"), ErrUnknownInst)
	want(im.PutValue("a.i", "x anything", "1.5"), nil)
	want(im.PutValue("a.i", "x", "1.5"), ErrUnknownInst)
	want(im.PutValue("a.b", "", "12x"), ErrConv)
	want(im.PutValue("a.b", "", "1"), ErrDupValue)
	want(im.PutHandle(Handle{}, "1"), ErrBadHandle)
	want(im.Write(stream.Timestamp{Sec: 10}), nil)
	want(im.Write(stream.Timestamp{Sec: 11}), ErrNoData)
	want(im.PutValue("a.b", "", "3"), nil)
	want(im.Write(stream.Timestamp{Sec: 9}), ErrBadTimestamp)
	want(im.PutText(3, stream.TextHelp, 1, "x"), ErrBadTextType)
	want(im.PutText(stream.TextPMID, 3, 1, "x"), ErrBadTextClass)
	want(im.PutText(stream.TextPMID, stream.TextHelp, uint32(stream.PMIDNull), "x"), ErrBadTextID)
	want(im.PutText(stream.TextPMID, stream.TextHelp, 1, ""), ErrEmptyText)
	want(im.PutText(stream.TextPMID, stream.TextHelp, 1, "x"), nil)
	want(im.PutText(stream.TextPMID, stream.TextHelp, 1, "x"), ErrDupText)
	want(im.PutLabel(0x100, 1, -1, "a", "b"), ErrBadLabelType)
	want(im.PutLabel(stream.LabelItem, uint32(stream.PMIDNull), -1, "a", "b"), ErrBadLabelID)
	want(im.PutLabel(stream.LabelInstances, uint32(d), -1, "a", "b"), ErrBadLabelInst)
	want(im.PutLabel(stream.LabelItem, 1, -1, "", "b"), ErrEmptyLabelName)
	want(im.PutLabel(stream.LabelItem, 1, -1, "a", ""), ErrEmptyLabelVal)
	if _, err := New(nil, Options{Version: 4}); !errors.Is(err, ErrBadVersion) {
		t.Errorf("version 4: %v", err)
	}
	want(im.End(), nil)
	want(im.End(), ErrEnded)
	if _, err := os.Stat(base + ".meta"); err != nil {
		t.Error(err)
	}
}

// TestNothingWritten: no record, no archive.
func TestNothingWritten(t *testing.T) {
	im, base := newTest(t)
	if err := im.End(); !errors.Is(err, ErrNoData) {
		t.Errorf("End: %v", err)
	}
	if m, _ := filepath.Glob(base + "*"); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
}

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		typ stream.Type
		in  string
		ok  bool
		i   int64
		u   uint64
		f   float64
	}{
		{stream.Type32, "-5", true, -5, 0, 0},
		{stream.Type32, " 7", true, 7, 0, 0},
		{stream.Type32, "", true, 0, 0, 0},
		{stream.Type32, " ", false, 0, 0, 0},
		{stream.Type32, "7 ", false, 0, 0, 0},
		{stream.Type32, "0x10", false, 0, 0, 0},
		{stream.Type32, "4294967297", true, 1, 0, 0},
		{stream.Type64, "-9223372036854775809", true, math.MinInt64, 0, 0},
		{stream.TypeU32, "-1", true, 0, math.MaxUint32, 0},
		{stream.TypeU64, "99999999999999999999", true, 0, math.MaxUint64, 0},
		{stream.TypeU64, "+", false, 0, 0, 0},
		{stream.TypeDouble, "1e400", true, 0, 0, math.Inf(1)},
		{stream.TypeDouble, "x", false, 0, 0, 0},
		{stream.TypeFloat, "0.1", true, 0, 0, float64(float32(0.1))},
	} {
		v, err := parseValue(c.typ, c.in)
		if (err == nil) != c.ok || c.ok && (v.I != c.i || v.U != c.u || v.F != c.f) {
			t.Errorf("%s %q: got %+v, %v", c.typ, c.in, v, err)
		}
	}
}

func TestParseEpochUnits(t *testing.T) {
	for in, want := range map[string]stream.Timestamp{"1.5": {Sec: 1, Nsec: 5e8}, "-0.250000000": {Sec: -1, Nsec: 75e7},
		"12": {Sec: 12}, "1101337806.248424000": {Sec: 1101337806, Nsec: 248424000}} {
		got, err := parseEpoch(in)
		if err != nil || got != want || (got.Sec < 0) != strings.HasPrefix(in, "-") {
			t.Errorf("%q: %v %v", in, got, err)
		}
		if got.String() != want.String() {
			t.Errorf("%q: %s", in, got)
		}
	}
	for _, bad := range []string{"", "1.1234567891", "x", "1.-5"} {
		if _, err := parseEpoch(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, u := range []stream.Units{0, stream.NewUnits(1, -1, 0, 1, 3, 0), stream.NewUnits(0, 0, 1, 0, 0, 3), stream.NewUnits(0, 1, 0, 0, 2, 0)} {
		got, err := ParseUnits(u.String())
		if err != nil || got != u {
			t.Errorf("%q: %v %v", u.String(), got, err)
		}
	}
}

// TestJSONErrors: bad input names the file, the line and (for syntax) the
// column.
func TestJSONErrors(t *testing.T) {
	label := `{"kind":"label","epoch":1.0,"version":3,"hostname":"h","timezone":"UTC"}` + "\n"
	for in, want := range map[string]string{
		label + `{"kind":"desc",`: "in:2: column",
		label + `{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","values":[]}]}`:                          "in:2: result record: metric 1.2.3 has no type",
		label + `{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":-1}]}]}`: "in:2: result record: metric 1.2.3",
		`{"kind":"desc","epoch":1}`: "in:1: desc record: no label record before it",
		label + `{"kind":"indom","epoch":0.5,"indom":"1","encoding":"full"}`: "in:2: indom record: instance domain \"1\"",
	} {
		r := NewJSONReader(strings.NewReader(in), "in")
		for r.Next() {
		}
		if r.Err() == nil || !strings.HasPrefix(r.Err().Error(), want) {
			t.Errorf("%q: got %v, want %s...", in, r.Err(), want)
		}
	}
}

// TestSimpleDecimal: the fast path for plain decimals gives exactly what
// strconv.ParseFloat gives, and declines what it cannot do exactly.
func TestSimpleDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []string{"0", "-0", "5.", ".5", "-.5", "0.1", "0.3", "123456789012345", "1234567890123456",
		"9007199254740993", "0.000000000000000000001", "1.5e3", "+1", " 1", "1 ", "", ".", "-", "1.2.3", "0x10", "inf", "NaN"}
	for range 200000 {
		digits := r.IntN(17) + 1
		b := make([]byte, 0, 20)
		if r.IntN(4) == 0 {
			b = append(b, '-')
		}
		pt := r.IntN(digits + 2)
		for i := 0; i < digits; i++ {
			if i == pt {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		cases = append(cases, string(b))
	}
	took := 0
	for _, s := range cases {
		got, ok := simpleDecimal(s)
		if !ok {
			continue
		}
		took++
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("simpleDecimal(%q) = %v (%#x), ParseFloat: %v (%#x), %v", s, got, math.Float64bits(got), want, math.Float64bits(want), err)
		}
	}
	if took < len(cases)/2 {
		t.Fatalf("the fast path took only %d of %d cases", took, len(cases))
	}
	for _, s := range []string{"1.5e3", "+1", " 1", "", ".", "-", "1.2.3", "1234567890123456"} {
		if _, ok := simpleDecimal(s); ok {
			t.Errorf("simpleDecimal(%q) took a case it must leave to ParseFloat", s)
		}
	}
}

// TestParseUnitsTable: ParseUnits gives, for every text of units with
// dimensions -4..4 and PCP's scales, what a table of them all gives (the
// smallest encoding when several print alike), and refuses texts that no
// such units print.
func TestParseUnitsTable(t *testing.T) {
	table := map[string]stream.Units{}
	for ds := -4; ds <= 4; ds++ {
		for dt := -4; dt <= 4; dt++ {
			for dc := -4; dc <= 4; dc++ {
				for ss := uint(0); ss <= 8 && (ds != 0 || ss == 0); ss++ {
					for st := uint(0); st <= 5 && (dt != 0 || st == 0); st++ {
						for sc := -8; sc <= 7; sc++ {
							if dc == 0 && sc != 0 {
								continue
							}
							u := stream.NewUnits(ds, dt, dc, ss, st, sc)
							if o, ok := table[u.String()]; !ok || u < o {
								table[u.String()] = u
							}
						}
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	n := 0
	for s, want := range table {
		// all of one or two words, and a sample of the rest
		if strings.Count(s, " ") > 1 && r.IntN(100) != 0 {
			continue
		}
		n++
		got, err := ParseUnits(s)
		if err != nil || got != want {
			t.Fatalf("ParseUnits(%q) = %#x, %v; want %#x", s, uint32(got), err, uint32(want))
		}
	}
	for _, bad := range []string{"byte^5", "x 10^3", "space-9", "count x 10^9", "sec sec", "Kbyte /", "furlong", "count x 10^2 x 10"} {
		if _, ok := table[bad]; ok {
			continue
		}
		if u, err := ParseUnits(bad); err == nil {
			t.Errorf("ParseUnits(%q) = %#x, want an error", bad, uint32(u))
		}
	}
	t.Logf("%d of %d texts checked", n, len(table))
}

// TestParseDate: dates as sheet2pcp reads them, and RFC 3339.
func TestParseDate(t *testing.T) {
	s := &Sheet{DateFmt: "YMD"}
	for in, want := range map[string]string{
		"2023-11-14 22:13:20":         "2023-11-14T22:13:20Z",
		"2023/11/14 22:13":            "2023-11-14T22:13:00Z",
		"  2023-11-14   22:13:20  ":   "2023-11-14T22:13:20Z",
		"23-1-2 3:4:5":                "2023-01-02T03:04:05Z",
		"99-12-31 23:59:59":           "1999-12-31T23:59:59Z",
		"2024-01-01T00:00:01.5+01:00": "2024-01-01T00:00:01.5+01:00",
	} {
		got, err := s.parseDate(in, time.UTC)
		if err != nil || got.Format(time.RFC3339Nano) != want {
			t.Errorf("%q: %v %v, want %s", in, got.Format(time.RFC3339Nano), err, want)
		}
	}
	for _, bad := range []string{"", "2023-11-14", "2023-11-14 22:13:20:01", "2023-02-30 00:00:00", "2023-11-14 x:13:20", "2024-01-01T25:00:00Z", "2023-11-14 22:13:20 7"} {
		if got, err := s.parseDate(bad, time.UTC); err == nil {
			t.Errorf("%q: %v, want an error", bad, got)
		}
	}
}

// TestParseUnitsNone: "none", as pmdumplog -d and pmlogsummary print no
// units, is taken for no units (pcpimport -c app.cpu:double:instant:none
// was refused).
func TestParseUnitsNone(t *testing.T) {
	for _, s := range []string{"none", " none ", ""} {
		if u, err := ParseUnits(s); err != nil || u != 0 {
			t.Errorf("ParseUnits(%q) = %v, %v; want no units", s, u, err)
		}
	}
	if _, err := ParseUnits("nones"); err == nil {
		t.Error(`ParseUnits("nones") accepted`)
	}
}
