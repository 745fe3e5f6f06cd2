package reduce

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/streamtest"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// lateStream is a stream without a METADATA frame: a label, metric a
// described, a result, then metric b described after that first result,
// and a result of both. It returns the stream and its head (what came
// before the first result).
func lateStream(t *testing.T, b stream.PMID) ([]stream.Record, *format.Metadata) {
	t.Helper()
	t0 := stream.Timestamp{Sec: 1700000000}
	lab := &stream.Label{Version: 2, Hostname: "late", Timezone: "UTC", Start: t0}
	a := stream.NewPMID(60, 0, 0)
	da := &stream.Desc{T: t0, PMID: a, Type: stream.TypeU64, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"late.a"}}
	db := &stream.Desc{T: t0, PMID: b, Type: stream.TypeU64, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"late.b"}}
	var rb stream.ResultBuilder
	recs := []stream.Record{lab, da}
	head, err := format.MetadataOf(*lab, []stream.Record{da})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		ts := stream.Timestamp{Sec: t0.Sec + int64(i)}
		if i == 1 {
			recs = append(recs, db)
		}
		rb.Reset()
		rb.Add(a, stream.TypeU64, stream.Val{Inst: stream.InstNull, U: uint64(i)})
		if i >= 1 {
			rb.Add(b, stream.TypeU64, stream.Val{Inst: stream.InstNull, U: uint64(2 * i)})
		}
		r := &stream.Result{}
		if err := rb.Build(ts, r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs, head
}

// TestLateCollision (issue 14): reduced as it arrives, a stream whose
// metric described after the first data record has the PMID pcpreduce
// gave an aggregate (the first of domain 60: cluster 4095, item 0) is
// refused with a message that says what to do; one described in a
// cluster the aggregates were being given (beyond their items) is
// reduced, and its own aggregates go to another cluster.
func TestLateCollision(t *testing.T) {
	opts := Options{Samples: -1, NoSync: true, NoProgress: true, Stderr: io.Discard}
	recs, head := lateStream(t, stream.NewPMID(60, 4095, 0))
	out := []Output{{Name: filepath.Join(t.TempDir(), "out"), Interval: 10 * time.Second}}
	err := RunNativeStreamLate(head, stream.FromSlice(recs), out, opts)
	if err == nil || !strings.Contains(err.Error(), "late.b") || !strings.Contains(err.Error(), "aggregate") {
		t.Fatalf("a late metric on an aggregate's PMID: %v", err)
	}

	recs, head = lateStream(t, stream.NewPMID(60, 4095, 100))
	out = []Output{{Name: filepath.Join(t.TempDir(), "out"), Interval: 10 * time.Second}}
	if err := RunNativeStreamLate(head, stream.FromSlice(recs), out, opts); err != nil {
		t.Fatal(err)
	}
	seen := map[stream.PMID]string{}
	for _, d := range outMeta(t, out[0].Name).Descs {
		if other, ok := seen[d.PMID]; ok {
			t.Errorf("PMID %s: %s and %s", d.PMID, other, d.Names[0])
		}
		seen[d.PMID] = d.Names[0]
		if d.PMID.Cluster() == 4095 && d.Names[0] != "late.b" && strings.HasSuffix(d.Names[0], ".late.b") {
			t.Errorf("late.b's aggregate %s in late.b's cluster (%s)", d.Names[0], d.PMID)
		}
	}
	if _, ok := seen[stream.NewPMID(60, 4095, 100)]; !ok || len(seen) < 4 {
		t.Errorf("metrics written: %v", seen)
	}
}

// TestUndefinedTypeSaid: a descriptor whose type PCP does not define (a
// flipped bit, found by the hostile campaign) is skipped with a warning
// that names the input and says it is no PCP type, not as an event
// metric is ("skipping type(134217728) metric" named neither).
func TestUndefinedTypeSaid(t *testing.T) {
	recs, head := lateStream(t, stream.NewPMID(60, 1, 0))
	for _, r := range recs {
		if d, ok := r.(*stream.Desc); ok && d.Names[0] == "late.b" {
			d.Type = 134217728
		}
	}
	var stderr strings.Builder
	opts := Options{Samples: -1, NoSync: true, NoProgress: true, Stderr: &stderr, Prog: "pcpreduce"}
	out := []Output{{Name: filepath.Join(t.TempDir(), "out"), Interval: 10 * time.Second}}
	if err := RunNativeStreamLate(head, stream.FromSlice(recs), out, opts); err != nil {
		t.Fatal(err)
	}
	want := "pcpreduce: standard input: warning: late.b (PMID 60.1.0): descriptor of type 134217728, which is no PCP type: metric skipped\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestAggUnitsInPmlogcheckRange (F21, the seed-23 campaign): a metric in
// units with a dimension of ±2 (a flipped bit made a descriptor's byte
// into byte^2) had its sum of squares written in byte^4, and a counter of
// count/sec^2 would have had its rates in count/sec^3: dimensions
// pmlogcheck warns of. Such aggregates are written without units, with a
// warning, and the output passes --check.
func TestAggUnitsInPmlogcheckRange(t *testing.T) {
	recs, head := lateStream(t, stream.NewPMID(60, 1, 0))
	for _, r := range recs {
		if d, ok := r.(*stream.Desc); ok {
			switch d.Names[0] {
			case "late.a":
				d.Units = stream.NewUnits(2, 0, 0, 0, 0, 0)
			case "late.b":
				d.Sem, d.Units = stream.SemCounter, stream.NewUnits(0, -2, 1, 0, 3, 0)
			}
		}
	}
	head.Descs[0].Units = stream.NewUnits(2, 0, 0, 0, 0, 0)
	var stderr strings.Builder
	opts := Options{Samples: -1, NoSync: true, NoProgress: true, Stderr: &stderr, Prog: "pcpreduce"}
	out := []Output{{Name: filepath.Join(t.TempDir(), "out"), Interval: 10 * time.Second}}
	if err := RunNativeStreamLate(head, stream.FromSlice(recs), out, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pcpreduce: standard input: warning: late.a (PMID 60.0.0): its sumsq", "late.b (PMID 60.1.0): its min_rate", "late.b (PMID 60.1.0): its max_rate"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q: no %q", stderr.String(), want)
		}
	}
	findings, err := format.Check(out[0].Name, format.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if format.Flagged(findings) {
		var b strings.Builder
		format.FormatFindings(&b, findings)
		t.Errorf("the output fails --check:\n%s", b.String())
	}
	for _, d := range outMeta(t, out[0].Name).Descs {
		if strings.HasPrefix(d.Names[0], AggPrefix+".sum.") && d.Names[0] == AggPrefix+".sum.late.a" && d.Units != stream.NewUnits(2, 0, 0, 0, 0, 0) {
			t.Errorf("%s: units %s, want the metric's own", d.Names[0], d.Units)
		}
	}
}

// outMeta is the metadata of the archive name.
func outMeta(t *testing.T, name string) *format.Metadata {
	t.Helper()
	a, err := format.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Meta()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnreadableValueLeftOut (hostile seed 25, F23; F22 for pcpsummary):
// a value that cannot be read as its metric's type (a flipped bit made a
// U32 metric's descriptor say DOUBLE, its values in place) stopped pcpreduce with the time and the
// metric but neither the file nor the offset, where every other reader
// of the stream read on past it. It is now left out, with a warning per
// metric naming the place of its record, and the rest is reduced.
func TestUnreadableValueLeftOut(t *testing.T) {
	buf, head := streamtest.Stream(t, 5,
		streamtest.Metric{Name: "bad.value", Type: stream.TypeDouble, Bad: func(i int) bool { return i == 0 || i == 3 }},
		streamtest.Metric{Name: "good.value"})
	var stderr strings.Builder
	opts := Options{Samples: -1, NoSync: true, NoProgress: true, Stderr: &stderr, Prog: "pcpreduce"}
	out := []Output{{Name: filepath.Join(t.TempDir(), "out"), Interval: 10 * time.Second}}
	if err := RunNativeStreamLate(head, pipe.Concatenated(buf, "standard input"), out, opts); err != nil {
		t.Fatal(err)
	}
	got := stderr.String()
	if !strings.HasPrefix(got, "pcpreduce: warning: standard input: offset ") || strings.Count(got, "\n") != 1 ||
		!strings.Contains(got, ": bad.value (PMID 60.0.1): a value at 1700000000.000000000: value does not match the metric's type (DOUBLE): left out") {
		t.Errorf("stderr %q", got)
	}
	findings, err := format.Check(out[0].Name, format.CheckOptions{})
	if err != nil || format.Flagged(findings) {
		t.Errorf("the output fails --check: %v %v", err, findings)
	}
	counts := map[string]bool{}
	for _, d := range outMeta(t, out[0].Name).Descs {
		counts[d.Names[0]] = true
	}
	if !counts["bad.value"] || !counts["good.value"] || !counts[AggPrefix+".count.bad.value"] {
		t.Errorf("metrics written: %v", counts)
	}
}

// TestWarnedOncePerReduction: the -t outputs of one reduction read the
// same input, so a metric's warning about it (a value that cannot be read,
// aggregate units past ±2) is said once, not once per output; the
// sampling warning, about one -t, stays per output.
func TestWarnedOncePerReduction(t *testing.T) {
	buf, head := streamtest.Stream(t, 5,
		streamtest.Metric{Name: "bad.value", Type: stream.TypeDouble, Bad: func(i int) bool { return i == 0 || i == 3 }},
		// in byte^2: its sumsq would be in byte^4
		streamtest.Metric{Name: "good.value", Units: stream.NewUnits(2, 0, 0, 0, 0, 0)})
	var stderr strings.Builder
	opts := Options{Samples: -1, NoSync: true, NoProgress: true, Stderr: &stderr, Prog: "pcpreduce"}
	dir := t.TempDir()
	out := []Output{{Name: filepath.Join(dir, "a"), Interval: 10 * time.Second}, {Name: filepath.Join(dir, "b"), Interval: 20 * time.Second}}
	if err := RunNativeStream(head, pipe.Concatenated(buf, "standard input"), out, opts); err != nil {
		t.Fatal(err)
	}
	got := stderr.String()
	if n := strings.Count(got, "cannot be read"); n != 1 {
		t.Errorf("unreadable value said %d times: %q", n, got)
	}
	if n := strings.Count(got, "dimension past ±2"); n != 1 {
		t.Errorf("aggregate units said %d times: %q", n, got)
	}
}
