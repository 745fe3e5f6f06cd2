package interop

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The native mode of pcpreduce, checked against an independent computation
// from the raw values (pcpcat --csv, <mark>s and descriptors from
// pcpcat --json), following the rules of docs/pcpreduce.md "Native mode":
// intervals (E-Δ, E] with E a multiple of Δ since the epoch; each sample
// covers the time since the one before of its metric-instance unless a
// <mark> came between; instant values: time-weighted mean (arithmetic when
// nothing is covered); counters: a monotone 64-bit value (32-bit decreases
// are wraps unless after a <mark>, other decreases resets).

// nativeSample are the QA archives the check runs on: counter wraps
// (uwrap), <mark>s (interpmark, gap), instances that come and go
// (dyninsts). PCPTOOLS_QA_FULL=1 adds every light QA archive.
var nativeSample = []string{"uwrap", "interpmark", "gap", "dyninsts"}

func TestReduceNativeValues(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	archives := []string{nativeFixture(t, dir)}
	if os.Getenv("PCPTOOLS_QA_FULL") != "" {
		archives = append(archives, lightArchives(t)...)
	} else {
		for _, a := range nativeSample {
			archives = append(archives, filepath.Join(qaDir, a))
		}
	}
	for _, a := range archives {
		for _, step := range []time.Duration{time.Minute, 10 * time.Minute} {
			name := fmt.Sprintf("%s/%v", filepath.Base(a), step)
			t.Run(name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				r := run(slow, nil, ours("pcpreduce"), "-t", step.String(), a, out)
				if r.code != 0 {
					if strings.Contains(r.stderr, "no samples") {
						t.Skipf("nothing to reduce: %s", r.stderr)
					}
					t.Fatalf("pcpreduce: %d %s", r.code, r.stderr)
				}
				if f := reducedFindings(a, out); len(f) > 0 {
					t.Errorf("pmlogcheck: %q", f)
				}
				want := expectNative(t, a, step)
				got := csvRows(t, out)
				compareNative(t, want, got)
			})
		}
	}
}

// TestReduceNativeReadable: PCP's pmlogsummary and pmval read a reduced
// archive, and pmlogsummary's mean of an instant metric is the raw one's.
func TestReduceNativeReadable(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	raw := nativeFixture(t, dir)
	outs := filepath.Join(dir, "red")
	if r := run(slow, nil, ours("pcpreduce"), "-t", "1m,5m", raw, outs); r.code != 0 {
		t.Fatalf("pcpreduce: %s", r.stderr)
	}
	for _, o := range []string{outs + ".1m", outs + ".5m"} {
		if f := checkFindings(o); len(f) > 0 {
			t.Errorf("pmlogcheck %s: %q", o, f)
		}
		r := run(slow, nil, "pmval", "-z", "-a", o, "t.c64")
		if r.code != 0 || !strings.Contains(r.stdout, "count / sec") {
			t.Errorf("pmval %s: %d %s %s", o, r.code, r.stdout, r.stderr)
		}
		r = run(slow, nil, "pmlogsummary", "-z", o, "pcpreduce.max.t.inst")
		if r.code != 0 || !strings.Contains(r.stdout, "pcpreduce.max.t.inst") {
			t.Errorf("pmlogsummary %s: %d %s %s", o, r.code, r.stdout, r.stderr)
		}
	}
}

// nativeFixture writes, with PCP's own pmi library, an archive with a
// 32-bit counter that wraps, a 64-bit counter that resets, a <mark>, an
// instant metric whose instances come and go, a discrete and a string
// metric, sampled every 10 s (with a 17 s gap) for 40 minutes.
func nativeFixture(t *testing.T, dir string) string {
	t.Helper()
	base := filepath.Join(dir, "fixture")
	script := `
import sys, math
from pcp import pmi
from cpmapi import PM_TYPE_U32, PM_TYPE_U64, PM_TYPE_DOUBLE, PM_TYPE_32, PM_TYPE_STRING, PM_SEM_COUNTER, PM_SEM_INSTANT, PM_SEM_DISCRETE, PM_INDOM_NULL
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetHostname("fixture")
log.pmiSetTimezone("UTC")
ind = log.pmiInDom(245, 1)
none = log.pmiUnits(0, 0, 0, 0, 0, 0)
cnt = log.pmiUnits(0, 0, 1, 0, 0, 0)
log.pmiAddMetric("t.c32", log.pmiID(245, 0, 1), PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_COUNTER, cnt)
log.pmiAddMetric("t.c64", log.pmiID(245, 0, 2), PM_TYPE_U64, PM_INDOM_NULL, PM_SEM_COUNTER, cnt)
log.pmiAddMetric("t.inst", log.pmiID(245, 0, 3), PM_TYPE_DOUBLE, ind, PM_SEM_INSTANT, none)
log.pmiAddMetric("t.disc", log.pmiID(245, 0, 4), PM_TYPE_32, PM_INDOM_NULL, PM_SEM_DISCRETE, none)
log.pmiAddMetric("t.str", log.pmiID(245, 0, 5), PM_TYPE_STRING, PM_INDOM_NULL, PM_SEM_DISCRETE, none)
for i, n in enumerate(["a", "b", "c"]):
    log.pmiAddInstance(ind, n, i)
t0 = 1700000003
c32, c64 = 4294967296 - 50000, 1000
t = t0
for k in range(240):
    t += 10 if k != 100 else 17
    c32 = (c32 + 1234 + 7 * k) % 4294967296
    c64 = c64 + 5000 + k * k if k != 150 else 42
    log.pmiPutValue("t.c32", "", str(c32))
    log.pmiPutValue("t.c64", "", str(c64))
    log.pmiPutValue("t.inst", "a", str(math.sin(k / 7.0) * 100))
    if k % 50 < 30:
        log.pmiPutValue("t.inst", "b", str(k * 0.5))
    if k >= 60:
        log.pmiPutValue("t.inst", "c", str(-k))
    log.pmiPutValue("t.disc", "", str(k // 40))
    log.pmiPutValue("t.str", "", "s%d" % (k // 30))
    log.pmiWrite(t, 250000 * (k % 3))
    if k == 120:
        log.pmiPutMark()
log.pmiEnd()
`
	cmd := exec.Command("/usr/bin/python3", "-c", script, base)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the fixture with pcp.pmi: %v\n%s", err, out)
	}
	return base
}

type nativeKey struct {
	t      int64 // interval end, ns
	metric string
	inst   string
}

type rawSample struct {
	t   int64
	val string
}

type rawDesc struct {
	Names     []string
	Type      string
	Semantics string
	Units     string
}

// expectNative computes the reduced archive's rows from the raw values.
func expectNative(t *testing.T, archive string, step time.Duration) map[nativeKey]string {
	t.Helper()
	r := run(slow, nil, ours("pcpcat"), "--json", archive)
	if r.code != 0 {
		t.Fatalf("pcpcat --json: %s", r.stderr)
	}
	descs := map[string]rawDesc{}
	var marks []int64
	for _, l := range strings.Split(r.stdout, "\n") {
		var rec struct {
			Kind string
			Time string
			rawDesc
		}
		if l == "" || json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		switch rec.Kind {
		case "desc":
			for _, n := range rec.Names {
				descs[n] = rec.rawDesc
			}
		case "mark":
			marks = append(marks, parseNs(t, rec.Time))
		}
	}
	series := map[[2]string][]rawSample{}
	var order [][2]string
	for _, row := range csvRaw(t, archive) {
		k := [2]string{row[1], row[2]}
		if series[k] == nil {
			order = append(order, k)
		}
		series[k] = append(series[k], rawSample{parseNs(t, row[0]), row[3]})
	}
	want := map[nativeKey]string{}
	for _, k := range order {
		d, ok := descs[k[0]]
		if !ok || d.Type == "AGGREGATE" || strings.Contains(d.Type, "EVENT") {
			continue
		}
		expectSeries(want, k[0], k[1], d, series[k], marks, int64(step))
	}
	return want
}

// interval accumulates one metric-instance over one interval.
type interval struct {
	n                                   int
	min, max, sum, sumsq, wsum, covered float64
	last                                string
	minRate, maxRate                    float64
	rates, resets                       int
	mono                                uint64
	monoF                               float64
}

func expectSeries(want map[nativeKey]string, metric, inst string, d rawDesc, s []rawSample, marks []int64, step int64) {
	var cur *interval
	var end int64
	emit := func() {
		if cur == nil {
			return
		}
		put := func(name, v string) { want[nativeKey{end, name, inst}] = v }
		agg := func(kind, v string) { put("pcpreduce."+kind+"."+metric, v) }
		put(metric, cur.last)
		agg("count", strconv.Itoa(cur.n))
		switch {
		case d.Type == "STRING":
		case d.Semantics == "counter":
			if d.Type == "FLOAT" || d.Type == "DOUBLE" {
				put(metric, fmtF(cur.monoF))
			} else {
				put(metric, strconv.FormatUint(cur.mono, 10))
			}
			agg("covered", fmtF(cur.covered))
			agg("resets", strconv.Itoa(cur.resets))
			if cur.rates > 0 {
				agg("min_rate", fmtF(cur.minRate))
				agg("max_rate", fmtF(cur.maxRate))
			}
		case d.Semantics == "discrete":
			agg("min", fmtF(cur.min))
			agg("max", fmtF(cur.max))
			agg("covered", fmtF(cur.covered))
		default:
			mean := cur.sum / float64(cur.n)
			if cur.covered > 0 {
				mean = cur.wsum / cur.covered
			}
			put(metric, fmtF(mean))
			for _, a := range [][2]any{{"min", cur.min}, {"max", cur.max}, {"sum", cur.sum}, {"sumsq", cur.sumsq}, {"covered", cur.covered}} {
				agg(a[0].(string), fmtF(a[1].(float64)))
			}
			f, _ := strconv.ParseFloat(cur.last, 64)
			agg("last", fmtF(f))
		}
	}
	var prevT int64
	var prevF float64
	var prevU uint64
	var mono uint64
	var monoF float64
	for i, x := range s {
		e := (x.t + step - 1) / step * step
		if cur == nil || e != end {
			emit()
			cur, end = &interval{}, e
		}
		gapped := false
		for _, m := range marks {
			if i > 0 && m > prevT && m <= x.t {
				gapped = true
			}
		}
		dt := 0.0
		if i > 0 && !gapped && x.t > prevT {
			dt = float64(x.t-prevT) / 1e9
		}
		cur.n++
		cur.last = x.val
		if d.Type == "STRING" {
			prevT = x.t
			continue
		}
		f, _ := strconv.ParseFloat(x.val, 64)
		u, uerr := strconv.ParseUint(x.val, 10, 64)
		if iv, err := strconv.ParseInt(x.val, 10, 64); err == nil && uerr != nil {
			u = uint64(iv)
		}
		if cur.n == 1 || f < cur.min {
			cur.min = f
		}
		if cur.n == 1 || f > cur.max {
			cur.max = f
		}
		cur.sum += f
		cur.sumsq += f * f
		switch d.Semantics {
		case "counter":
			var inc float64
			isF := d.Type == "FLOAT" || d.Type == "DOUBLE"
			is32 := d.Type == "32" || d.Type == "U32"
			switch {
			case i == 0:
				mono, monoF = u, f
			case isF && f >= prevF:
				inc = f - prevF
				monoF += inc
			case isF:
				inc, monoF = f, monoF+f
				cur.resets++
			case int64(u) >= int64(prevU) && (d.Type == "32" || d.Type == "64") || u >= prevU && (d.Type == "U32" || d.Type == "U64"):
				inc = float64(u - prevU)
				mono += u - prevU
			case is32 && !gapped:
				w := uint64(uint32(u) - uint32(prevU))
				inc, mono = float64(w), mono+w
			default:
				inc, mono = float64(u), mono+u
				cur.resets++
			}
			cur.mono, cur.monoF = mono, monoF
			if dt > 0 {
				r := inc / dt / timeScaleOf(d.Units)
				if cur.rates == 0 || r < cur.minRate {
					cur.minRate = r
				}
				if cur.rates == 0 || r > cur.maxRate {
					cur.maxRate = r
				}
				cur.rates++
				cur.covered += dt
			}
		case "discrete":
			cur.covered += dt
		default:
			cur.wsum += f * dt
			cur.covered += dt
		}
		prevT, prevF, prevU = x.t, f, u
	}
	emit()
}

// timeScaleOf converts a time counter's units into seconds.
func timeScaleOf(units string) float64 {
	for _, s := range [][2]string{{"nanosec", "1e9"}, {"microsec", "1e6"}, {"millisec", "1e3"}, {"min", "0.016666666666666666"}, {"hour", "0.0002777777777777778"}, {"sec", "1"}} {
		if units == s[0] {
			f, _ := strconv.ParseFloat(s[1], 64)
			return f
		}
	}
	return 1
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func parseNs(t *testing.T, s string) int64 {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm.UnixNano()
}

func csvRaw(t *testing.T, archive string) [][]string {
	t.Helper()
	r := run(slow, nil, ours("pcpcat"), "--csv", archive)
	if r.code != 0 {
		t.Fatalf("pcpcat --csv %s: %s", archive, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("pcpcat --csv %s: %v", archive, err)
	}
	return rows[1:]
}

func csvRows(t *testing.T, archive string) map[nativeKey]string {
	got := map[nativeKey]string{}
	for _, row := range csvRaw(t, archive) {
		got[nativeKey{parseNs(t, row[0]), row[1], row[2]}] = row[3]
	}
	return got
}

// compareNative wants every expected row, numbers within 1e-9 relative
// (sums are added in another order), and no row that was not expected.
func compareNative(t *testing.T, want, got map[nativeKey]string) {
	t.Helper()
	var bad []string
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			bad = append(bad, fmt.Sprintf("missing %v = %s", k, w))
		} else if !closeEnough(w, g) {
			bad = append(bad, fmt.Sprintf("%v: want %s, got %s", k, w, g))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && !strings.HasSuffix(g, "NaN") {
			bad = append(bad, fmt.Sprintf("unexpected %v = %s", k, g))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d of %d rows differ, first: %s", len(bad), len(want), strings.Join(bad[:min(len(bad), 10)], "\n"))
	}
}

func closeEnough(w, g string) bool {
	if w == g {
		return true
	}
	a, err1 := strconv.ParseFloat(w, 64)
	b, err2 := strconv.ParseFloat(g, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

var findingName = regexp.MustCompile(`^ARCHIVE\.meta: (?:pcpreduce\.[a-z_]+\.)?(\S+) \[`)

// reducedFindings are pmlogcheck's findings on out that are not findings on
// the input (a descriptor the input already gets a finding for passes on
// to the reduced metric and its aggregates).
func reducedFindings(in, out string) []string {
	old := map[string]bool{}
	for _, f := range checkFindings(in) {
		if m := findingName.FindStringSubmatch(f); m != nil {
			old[m[1]] = true
		}
	}
	var fresh []string
	for _, f := range checkFindings(out) {
		if m := findingName.FindStringSubmatch(f); m == nil || !old[m[1]] {
			fresh = append(fresh, f)
		}
	}
	return fresh
}

// TestReduceNativeAgain: reducing a 1-minute reduction to 10 minutes gives
// what reducing the raw archive to 10 minutes gives: the same metadata
// (descriptors, instance domains, labels, help text) and the same values,
// up to floating-point rounding (sums are added in another order).
func TestReduceNativeAgain(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	archives := []string{nativeFixture(t, dir)}
	for _, a := range nativeSample {
		archives = append(archives, filepath.Join(qaDir, a))
	}
	for _, a := range archives {
		t.Run(filepath.Base(a), func(t *testing.T) {
			d := t.TempDir()
			fine, twice, direct := filepath.Join(d, "fine"), filepath.Join(d, "twice"), filepath.Join(d, "direct")
			for _, c := range [][]string{{"-t", "1m", a, fine}, {"-t", "10m", fine, twice}, {"-t", "10m", a, direct}} {
				if r := run(slow, nil, ours("pcpreduce"), c...); r.code != 0 {
					t.Fatalf("pcpreduce %q: %s", c, r.stderr)
				}
			}
			if f := reducedFindings(a, twice); len(f) > 0 {
				t.Errorf("pmlogcheck: %q", f)
			}
			if m1, m2 := metaLines(t, direct), metaLines(t, twice); m1 != m2 {
				t.Errorf("metadata differs:\n%s", firstDiff(m1, m2))
			}
			compareNative(t, csvRows(t, direct), csvRows(t, twice))
		})
	}
}

// metaLines is the metadata of an archive as pcpcat --json has it.
func metaLines(t *testing.T, archive string) string {
	r := run(slow, nil, ours("pcpcat"), "--json", archive)
	if r.code != 0 {
		t.Fatalf("pcpcat --json %s: %s", archive, r.stderr)
	}
	var keep []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if !strings.Contains(l, `"kind":"result"`) && !strings.Contains(l, `"kind":"mark"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
