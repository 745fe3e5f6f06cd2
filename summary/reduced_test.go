package summary

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/reduce"
	"github.com/pcptools/pcptools/stream"
)

const qaArchives = "/var/lib/pcp/testsuite/archives"

// summaryObjs runs pcpsummary --json on an archive: the objects by metric
// and instance.
func summaryObjs(t *testing.T, path string, o Options) (map[string]map[string]any, string) {
	t.Helper()
	a, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var out, warn bytes.Buffer
	o.JSON, o.Location, o.Warn = true, time.UTC, &warn
	if o.Prog == "" {
		o.Prog = "pcpsummary"
	}
	if err := Run(&out, a, o); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	objs := map[string]map[string]any{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Text())
		}
		key := m["metric"].(string)
		if in, ok := m["inst"]; ok {
			key += "[" + jsonKey(in) + "]"
		}
		objs[key] = m
	}
	return objs, warn.String()
}

func jsonKey(v any) string { b, _ := json.Marshal(v); return string(b) }

// reduceNative reduces an archive with pcpreduce's native mode.
func reduceNative(t *testing.T, in string, iv time.Duration) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r")
	if err := reduce.RunNative(in, []reduce.Output{{Name: out, Interval: iv}}, reduce.Options{Mode: reduce.Native, Samples: -1}); err != nil {
		t.Fatal(err)
	}
	return out
}

// semantics maps each metric name of an archive to its semantics.
func semantics(t *testing.T, path string) map[string]stream.Sem {
	a, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	md, err := a.Meta()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]stream.Sem{}
	for _, d := range md.Descs {
		for _, n := range d.Names {
			m[n] = d.Sem
		}
	}
	return m
}

func num(m map[string]any, k string) float64 {
	if f, ok := m[k].(float64); ok {
		return f
	}
	return math.NaN()
}

// writeSynth writes a synthetic archive: a sample every 10 s from t0+10
// to t0+600 (t0 a multiple of a minute, so that 1-minute intervals end on
// samples) of
//   - kernel.all.load, instant DOUBLE, singular, irregular values;
//   - disk.dev.read, counter U64, instances 0 and 1; instance 1 is reset
//     (drops to 300) at t0+450;
//   - hinv.ncpu, discrete U32, 4 then 8 from t0+200;
//
// and a <mark> at t0+markAt: on a sample's time, after that sample; between
// two, in place of the sample after it. claim adds the context labels of a
// reduced archive; aggs also the aggregates of kernel.all.load, one value
// (its min at t0+300) missing.
const t0 = 1699999980

var (
	pmidLoad = stream.NewPMID(60, 2, 0)
	pmidRead = stream.NewPMID(60, 0, 4)
	pmidNcpu = stream.NewPMID(60, 0, 32)
	indomDsk = stream.NewInDomID(60, 1)
)

func sec(s float64) stream.Timestamp {
	return stream.Timestamp{Sec: t0 + int64(s), Nsec: int32((s - math.Floor(s)) * 1e9)}
}

func contextLabels(json string, names ...string) stream.OneLabelSet {
	ls := stream.OneLabelSet{Inst: -1, JSON: json, NLabels: int32(len(names))}
	for _, n := range names {
		i := strings.Index(json, `"`+n+`"`)
		v := i + len(n) + 3
		e := strings.IndexAny(json[v:], ",}")
		ls.Labels = append(ls.Labels, stream.LabelEntry{Name: uint16(i + 1), NameLen: uint8(len(n)), Value: uint16(v), ValueLen: uint16(e)})
	}
	return ls
}

func writeSynth(t *testing.T, dir string, markAt float64, claim, aggs bool) string {
	t.Helper()
	base := filepath.Join(dir, "synth")
	w, err := format.Create(base, format.WriterOptions{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	start := sec(10)
	must(w.Write(&stream.Label{Version: 2, PID: 1, Start: start, Hostname: "h", Timezone: "UTC"}))
	must(w.Write(&stream.Desc{T: start, PMID: pmidLoad, Type: stream.TypeDouble, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"kernel.all.load"}}))
	must(w.Write(&stream.Desc{T: start, PMID: pmidRead, Type: stream.TypeU64, InDom: indomDsk, Sem: stream.SemCounter,
		Units: stream.NewUnits(0, 0, 1, 0, 0, 0), Names: []string{"disk.dev.read"}}))
	must(w.Write(&stream.Desc{T: start, PMID: pmidNcpu, Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemDiscrete, Names: []string{"hinv.ncpu"}}))
	must(w.Write(&stream.InDom{T: start, InDom: indomDsk, Insts: []int32{0, 1}, Names: []string{"sda", "sdb"}}))
	if claim {
		js := `{"reduce_interval":60,"reduce_tool":"pcpreduce"}`
		must(w.Write(&stream.LabelSet{T: start, Type: stream.LabelContext, Ident: uint32(stream.PMIDNull),
			Sets: []stream.OneLabelSet{contextLabels(js, "reduce_interval", "reduce_tool")}}))
	}
	var aggIDs []stream.PMID
	if aggs {
		for i, k := range []string{"count", "min", "max", "sum", "sumsq", "covered", "last"} {
			id := stream.NewPMID(60, 4095, uint32(i))
			typ := stream.TypeDouble
			if k == "count" {
				typ = stream.TypeU64
			}
			must(w.Write(&stream.Desc{T: start, PMID: id, Type: typ, InDom: stream.InDomNull, Sem: stream.SemInstant,
				Names: []string{"pcpreduce." + k + ".kernel.all.load"}}))
			aggIDs = append(aggIDs, id)
		}
	}
	var rb stream.ResultBuilder
	var res stream.Result
	r0, r1 := uint64(1000), uint64(5000)
	marked := false
	for s := 10.0; s <= 600; s += 10 {
		if !marked && s > markAt {
			must(w.Write(&stream.Mark{T: sec(markAt)}))
			marked = true
			if s-markAt < 10 && markAt != math.Floor(markAt/10)*10 {
				continue // the sample the <mark> replaces
			}
		}
		i := int(s / 10)
		load := 1 + float64((i*37)%23)/7 // 1 .. 4.14, irregular
		r0 += uint64(100 + (i*53)%400)
		r1 += uint64(100 + (i*29)%400)
		if s == 450 {
			r1 = 300
		}
		ncpu := uint64(4)
		if s >= 200 {
			ncpu = 8
		}
		rb.Reset()
		rb.Add(pmidLoad, stream.TypeDouble, stream.Val{Inst: -1, F: load})
		rb.Add(pmidRead, stream.TypeU64, stream.Val{Inst: 0, U: r0}, stream.Val{Inst: 1, U: r1})
		rb.Add(pmidNcpu, stream.TypeU32, stream.Val{Inst: -1, U: ncpu})
		for k, id := range aggIDs {
			if k == 1 && s == 300 {
				continue // a min missing
			}
			if k == 0 {
				rb.Add(id, stream.TypeU64, stream.Val{Inst: -1, U: 1})
			} else {
				rb.Add(id, stream.TypeDouble, stream.Val{Inst: -1, F: load})
			}
		}
		must(rb.Build(sec(s), &res))
		must(w.Write(&res))
	}
	must(w.Close())
	return base
}

func closeTo(a, b, rel float64) bool {
	return a == b || math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b))
}

// compareExact checks what the aggregates give exactly: min, max (their
// times: the end of the interval holding the raw one), count, samples,
// sum, stochastic average and standard deviation of instant metrics;
// min, max, count of discrete ones; min, max (when the raw counter has
// no reset) and count of counters. It returns how many were compared.
func compareExact(t *testing.T, raw, red map[string]map[string]any, sems map[string]stream.Sem, iv float64) int {
	t.Helper()
	n := 0
	for k, ro := range red {
		if ro["from_aggregates"] != true {
			continue
		}
		if ro["reduce_interval"] != iv {
			t.Errorf("%s: reduce_interval %v, want %v", k, ro["reduce_interval"], iv)
		}
		wo := raw[k]
		if wo == nil {
			t.Errorf("%s: not in the raw summary", k)
			continue
		}
		if wo["insufficient"] == true || ro["insufficient"] == true {
			continue
		}
		sem := sems[ro["metric"].(string)]
		fields := []string{"min", "max", "count"}
		switch {
		case sem == stream.SemInstant:
			fields = append(fields, "samples", "sum", "stochastic_average", "values")
		case sem == stream.SemCounter && num(wo, "resets") != num(ro, "resets"):
			// a 32-bit counter going down: a wrap to pcpreduce
			fields = nil
		case sem == stream.SemCounter && num(wo, "resets") > 0:
			fields = []string{"count"}
		}
		for _, f := range fields {
			if !closeTo(num(wo, f), num(ro, f), 1e-12) {
				t.Errorf("%s: %s %v, raw %v", k, f, ro[f], wo[f])
			}
		}
		if sem == stream.SemInstant {
			m, sw, sr := num(wo, "stochastic_average"), num(wo, "stddev"), num(ro, "stddev")
			if math.Abs(sw*sw-sr*sr) > 1e-12*(m*m+sw*sw)+1e-300 {
				t.Errorf("%s: stddev %v, raw %v", k, sr, sw)
			}
		}
		for _, f := range []string{"min_time", "max_time"} {
			if sem == stream.SemCounter && (num(wo, "resets") > 0 || wo[f] == wo["first_seen"]) {
				// (pmlogsummary gives a first rate the time of the
				// sample before it)
				break
			}
			tw, _ := time.Parse(time.RFC3339Nano, wo[f].(string))
			tr, _ := time.Parse(time.RFC3339Nano, ro[f].(string))
			// (pmlogsummary gives a counter's first rate the time of
			// the sample before it, which may be an interval earlier)
			lim := iv
			if sem == stream.SemCounter {
				lim = 2 * iv
			}
			if d := tr.Sub(tw).Seconds(); d < 0 || d >= lim {
				t.Errorf("%s: %s %s, raw %s: not the end of its interval", k, f, ro[f], wo[f])
			}
		}
		n++
	}
	return n
}

// TestReducedSynthetic: evenly spaced samples, a <mark> on an interval's
// end: every statistic the aggregates give is exact, the time average too.
func TestReducedSynthetic(t *testing.T) {
	dir := t.TempDir()
	in := writeSynth(t, dir, 300, false, false)
	r := reduceNative(t, in, time.Minute)
	raw, _ := summaryObjs(t, in, Options{})
	red, warn := summaryObjs(t, r, Options{})
	if warn != "" {
		t.Errorf("warnings: %s", warn)
	}
	sems := semantics(t, in)
	if n := compareExact(t, raw, red, sems, 60); n != 4 {
		t.Errorf("%d metric-instances from aggregates, want 4", n)
	}
	for k := range red {
		if strings.HasPrefix(k, "pcpreduce.") {
			t.Errorf("%s: an aggregate in the default output", k)
		}
	}
	load := "kernel.all.load"
	if a, b := num(raw[load], "time_average"), num(red[load], "time_average"); !closeTo(a, b, 1e-12) {
		t.Errorf("load: time average %v, raw %v", b, a)
	}
	// the counter with a reset at t0+450: its rate there (300 in 10 s)
	// is within the others, so min and max are the raw ones; pmlogsummary
	// leaves the interval out of its count, and so does the reduced one
	sdb := `disk.dev.read[1]`
	for _, f := range []string{"min", "max", "count", "resets"} {
		if num(raw[sdb], f) != num(red[sdb], f) {
			t.Errorf("%s: %s %v, raw %v", sdb, f, red[sdb][f], raw[sdb][f])
		}
	}
	if num(red[sdb], "resets") != 1 {
		t.Errorf("%s: resets %v, want 1", sdb, red[sdb]["resets"])
	}
	// counters' time average: the rate between the monotone values, the
	// raw one over the same span
	win := Options{Start: "@" + sec(60).Time().UTC().Format("2006-01-02 15:04:05"), Finish: "@" + sec(300).Time().UTC().Format("2006-01-02 15:04:05")}
	rawW, _ := summaryObjs(t, in, win)
	redW, _ := summaryObjs(t, r, win)
	for _, k := range []string{"disk.dev.read[0]", sdb} {
		if a, b := num(rawW[k], "time_average"), num(redW[k], "time_average"); !closeTo(a, b, 1e-12) {
			t.Errorf("%s over 60..300 s: time average %v, raw %v", k, b, a)
		}
	}
	// pmlogsummary's own output does not change
	rawP, _ := summaryObjs(t, r, Options{Prog: "pmlogsummary"})
	if rawP[load]["from_aggregates"] != nil || rawP["pcpreduce.max.kernel.all.load"] == nil {
		t.Errorf("as pmlogsummary: %v", rawP[load])
	}
	// the aggregates are still there by name
	named, _ := summaryObjs(t, r, Options{Metrics: []string{"pcpreduce.max"}})
	if named["pcpreduce.max.kernel.all.load"] == nil {
		t.Error("pcpreduce.max.kernel.all.load not summarised when named")
	}
}

// TestReducedMarkInside: a <mark> inside an interval, between samples: the
// time average is then within the bound docs/pcpsummary.md gives, the rest
// exact.
func TestReducedMarkInside(t *testing.T) {
	dir := t.TempDir()
	in := writeSynth(t, dir, 305, false, false)
	r := reduceNative(t, in, time.Minute)
	raw, _ := summaryObjs(t, in, Options{})
	red, _ := summaryObjs(t, r, Options{})
	compareExact(t, raw, red, semantics(t, in), 60)
	load := "kernel.all.load"
	a, b := num(raw[load], "time_average"), num(red[load], "time_average")
	// bound: one step (10 s) of the range over the covered time
	bound := 10 * (num(raw[load], "max") - num(raw[load], "min")) / (590 - 20)
	if math.Abs(a-b) > bound {
		t.Errorf("load: time average %v, raw %v: beyond %v", b, a, bound)
	}
	t.Logf("time average %v, raw %v (bound %v)", b, a, bound)
}

// TestReducedIncomplete: labels that claim pcpreduce over missing or
// incomplete aggregates: the plain summary, with warnings, no panic.
func TestReducedIncomplete(t *testing.T) {
	dir := t.TempDir()
	in := writeSynth(t, dir, 300, true, true)
	got, warn := summaryObjs(t, in, Options{})
	want, _ := summaryObjs(t, in, Options{Prog: "pmlogsummary"})
	for k, w := range want {
		g := got[k]
		if g == nil {
			t.Errorf("%s missing", k)
			continue
		}
		if g["from_aggregates"] != nil || jsonKey(g) != jsonKey(w) {
			t.Errorf("%s: %v, want the plain %v", k, g, w)
		}
	}
	for _, w := range []string{"kernel.all.load: instance", "disk.dev.read: the reduced archive lacks its aggregate(s) count, min_rate",
		"hinv.ncpu: the reduced archive lacks"} {
		if !strings.Contains(warn, w) {
			t.Errorf("no warning %q in %q", w, warn)
		}
	}
}

// TestReducedQA reduces QA archives: the statistics the aggregates give
// are the raw ones, and the time averages of instant metrics within the
// measured bounds.
func TestReducedQA(t *testing.T) {
	for _, c := range []struct {
		name string
		iv   time.Duration
		mean float64 // mean |time average error| / (max − min), measured
	}{
		{"20041125", 5 * time.Minute, 1e-5},
		{"20180416.10.00", 5 * time.Minute, 0.01},
		{"pmiostat_mark", 5 * time.Minute, 0.005},
	} {
		in := filepath.Join(qaArchives, c.name)
		if _, err := os.Stat(in + ".meta"); err != nil {
			if _, err := os.Stat(in + ".meta.xz"); err != nil {
				t.Logf("%s: no QA archive", c.name)
				continue
			}
		}
		r := reduceNative(t, in, c.iv)
		raw, _ := summaryObjs(t, in, Options{})
		red, _ := summaryObjs(t, r, Options{})
		sems := semantics(t, in)
		n := compareExact(t, raw, red, sems, c.iv.Seconds())
		var m int
		var sum float64
		for k, ro := range red {
			if ro["from_aggregates"] != true || sems[ro["metric"].(string)] != stream.SemInstant {
				continue
			}
			rng := num(raw[k], "max") - num(raw[k], "min")
			ta := num(ro, "time_average")
			if num(raw[k], "count") > 1 && ta < num(raw[k], "min")-1e-9*math.Abs(ta) || ta > num(raw[k], "max")+1e-9*math.Abs(ta) {
				t.Errorf("%s: time average %v outside min..max", k, ta)
			}
			if rng > 0 && num(raw[k], "count") > 1 {
				sum += math.Abs(ta-num(raw[k], "time_average")) / rng
				m++
			}
		}
		if m > 0 && sum/float64(m) > c.mean {
			t.Errorf("%s: mean time average error %v of the range, want <= %v", c.name, sum/float64(m), c.mean)
		}
		t.Logf("%s: %d metric-instances compared, time averages: mean error %.3g of the range", c.name, n, sum/float64(max(m, 1)))
	}
}

// TestReducedWorkedExample is the example of docs/pcpsummary.md,
// "Reduced archives": 1.0, 3.0, 2.0, 4.0, 2.0, 3.0 every 20 s in
// 1-minute intervals; pmlogsummary's time average is 2.4, mean × covered
// would give 2.8.
func TestReducedWorkedExample(t *testing.T) {
	r := &reduced{interval: 60}
	m := &raMetric{name: "x", sem: stream.SemInstant, insts: map[int32]*raInst{}}
	ri := &raInst{m: m, newSeg: true}
	for i, iv := range []struct{ c, s, l, cov, mean, min, max float64 }{
		{3, 6, 2, 40, 2.5, 1, 3},
		{3, 9, 3, 60, 3, 2, 4},
	} {
		ri.agg = [nRA]float64{raCount: iv.c, raSum: iv.s, raLast: iv.l, raCovered: iv.cov, raMin: iv.min, raMax: iv.max}
		ri.got, ri.base, ri.baseV = 0xffff, true, iv.mean
		ri.ts = timeval{sec: int64(60 * (i + 1))}
		ri.fold(r)
	}
	if got := ri.timeAverage(); math.Abs(got-2.4) > 1e-12 {
		t.Errorf("time average %v, want 2.4", got)
	}
}
