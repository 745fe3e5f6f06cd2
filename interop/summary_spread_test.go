package interop

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSummaryPercentiles checks pcpsummary's standard deviations and
// percentiles against an independent computation: the values pcpcat --csv
// prints, the semantics pmdumplog -d prints, and exact order statistics
// and a two-pass variance computed here. A percentile must be within the
// sketch's 1% of a value whose rank is the percentile's (between the two
// values around rank q(n-1)); a counter's values are its rates, taken
// between consecutive samples that do not go down (the archives have no
// <mark>), and checked for counters whose rate units have no time
// dimension of their own (pmlogsummary scales those to utilisation).
func TestSummaryPercentiles(t *testing.T) {
	needPCP(t)
	ps := []float64{1, 10, 50, 90, 99, 100}
	for _, name := range []string{"20041125", "pcp-zeroconf", "20180606", "pcp-free-tera"} {
		t.Run(name, func(t *testing.T) {
			a := filepath.Join(qaDir, name)
			if n := strings.Count(run(slow, nil, "pmdumplog", a).stdout, "<mark>"); n != 0 {
				t.Fatalf("%d <mark>s: the independent computation here assumes none", n)
			}
			sems := semanticsOf(t, a)
			vals := csvValues(t, a, sems)
			r := run(slow, nil, ours("pcpsummary"), "--json", "--percentiles", "1,10,50,90,99,100", a)
			if r.code != 0 {
				t.Fatalf("pcpsummary: %s", r.stderr)
			}
			checked := 0
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var st struct {
					Metric      string             `json:"metric"`
					Instance    *string            `json:"instance"`
					Inst        *int               `json:"inst"`
					Units       string             `json:"units"`
					Values      int                `json:"values"`
					StdDev      *float64           `json:"stddev"`
					Percentiles map[string]float64 `json:"percentiles"`
				}
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				inst := ""
				if st.Instance != nil {
					inst = *st.Instance
				} else if st.Inst != nil {
					continue // an instance with no name: the CSV cannot say which
				}
				if sems[st.Metric] == "counter" && (st.Units == "none" || !strings.HasSuffix(st.Units, " / sec") ||
					strings.Contains(strings.TrimSuffix(st.Units, " / sec"), "sec")) {
					continue
				}
				v := vals[st.Metric+"\x00"+inst]
				if len(v) != st.Values {
					t.Errorf("%s[%s]: %d values, the CSV gives %d", st.Metric, inst, st.Values, len(v))
					continue
				}
				if len(v) == 0 {
					continue
				}
				checked++
				// (the CSV prints FLOAT values to float32's shortest
				// digits: a relative 1e-7 of the mean)
				if sd, mean := stddev(v); st.StdDev == nil || math.Abs(*st.StdDev-sd) > 1e-6*math.Max(1, math.Abs(mean))+1e-9*sd {
					got := math.NaN()
					if st.StdDev != nil {
						got = *st.StdDev
					}
					t.Errorf("%s[%s]: stddev %v, want %v", st.Metric, inst, got, sd)
				}
				sort.Float64s(v)
				for _, p := range ps {
					key := strconv.FormatFloat(p, 'g', -1, 64)
					got, ok := st.Percentiles[key]
					if !ok {
						t.Errorf("%s[%s]: no percentile %s", st.Metric, inst, key)
						continue
					}
					rank := p / 100 * float64(len(v)-1)
					lo, hi := v[int(math.Floor(rank))], v[int(math.Ceil(rank))]
					slack := 0.0101*math.Max(math.Abs(lo), math.Abs(hi)) + 1e-9
					if got < lo-slack || got > hi+slack {
						t.Errorf("%s[%s]: p%s = %v, want within 1%% of [%v, %v] (%d values)", st.Metric, inst, key, got, lo, hi, len(v))
					}
				}
			}
			if checked < 20 {
				t.Errorf("only %d metric-instances checked", checked)
			}
			t.Logf("%d metric-instances checked", checked)
		})
	}
}

var descSem = regexp.MustCompile(`Semantics: (\w+)`)

// semanticsOf returns each metric's semantics, as pmdumplog -d prints them.
func semanticsOf(t *testing.T, a string) map[string]string {
	out := map[string]string{}
	name := ""
	for _, l := range strings.Split(run(slow, nil, "pmdumplog", "-d", a).stdout, "\n") {
		if m := dumpDesc.FindStringSubmatch(l); m != nil {
			name = m[1]
		} else if m := descSem.FindStringSubmatch(l); m != nil && name != "" {
			out[name] = m[1]
			name = ""
		}
	}
	return out
}

// csvValues returns the values of each metric-instance ("metric\0instance")
// in pcpcat --csv's output: numbers as they are, counters as rates per
// second between consecutive samples that do not go down.
func csvValues(t *testing.T, a string, sems map[string]string) map[string][]float64 {
	f, err := os.CreateTemp(t.TempDir(), "csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := run(slow, nil, ours("pcpcat"), "--csv", a)
	if r.code != 0 {
		t.Fatalf("pcpcat --csv: %s", r.stderr)
	}
	rd := csv.NewReader(bufio.NewReader(strings.NewReader(r.stdout)))
	rd.FieldsPerRecord = 4
	type last struct {
		t time.Time
		v float64
	}
	prev := map[string]last{}
	out := map[string][]float64{}
	if _, err := rd.Read(); err != nil { // the header
		t.Fatal(err)
	}
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		v, err := strconv.ParseFloat(rec[3], 64)
		if err != nil {
			continue // a string, an event, an aggregate
		}
		ts, err := time.Parse(time.RFC3339Nano, rec[0])
		if err != nil {
			t.Fatal(err)
		}
		k := rec[1] + "\x00" + rec[2]
		if sems[rec[1]] != "counter" {
			out[k] = append(out[k], v)
			continue
		}
		if p, ok := prev[k]; ok && v >= p.v {
			if dt := ts.Sub(p.t).Seconds(); dt > 0 {
				out[k] = append(out[k], (v-p.v)/dt)
			}
		}
		prev[k] = last{ts, v}
	}
	return out
}

// stddev returns the population standard deviation of v, and its mean.
func stddev(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v))), m
}
