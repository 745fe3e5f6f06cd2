package interop

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSummaryPresence checks pcpsummary's per-instance presence (samples,
// first and last seen, gaps, counter resets, marks) against an independent
// computation from the rows pcpcat --csv prints and the <mark>s pmdumplog
// prints, on archives whose process instances come and go and on archives
// with <mark>s.
func TestSummaryPresence(t *testing.T) {
	needPCP(t)
	churned, gapped, reset := 0, 0, 0
	// the archives, and how many named metric-instances each has at least
	least := map[string]int{"proc": 20, "pcp-atop": 20, "pcp-zeroconf": 20, "dyninsts": 1, "changeinst": 1,
		"late": 1, "mirage-3": 20, "mark-bug": 10, "count-mark": 1}
	for _, name := range []string{"proc", "pcp-atop", "pcp-zeroconf", "dyninsts", "changeinst", "late", "mirage-3", "mark-bug", "count-mark"} {
		t.Run(name, func(t *testing.T) {
			a := filepath.Join(qaDir, name)
			sems := semanticsOf(t, a)
			marks := markTimes(t, a)
			want := presenceOf(t, a, sems, &marks)
			r := run(slow, nil, ours("pcpsummary"), "--json", a)
			if r.code != 0 {
				t.Fatalf("pcpsummary: %s", r.stderr)
			}
			checked, nameless := 0, 0
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var st struct {
					Metric    string    `json:"metric"`
					Instance  *string   `json:"instance"`
					Inst      *int      `json:"inst"`
					Samples   int       `json:"samples"`
					FirstSeen time.Time `json:"first_seen"`
					LastSeen  time.Time `json:"last_seen"`
					Gaps      int       `json:"gaps"`
					Resets    int       `json:"resets"`
					Marks     int       `json:"marks"`
				}
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				inst, named := instanceKey(st.Instance, st.Inst)
				if !named {
					continue // an instance with no name: the CSV cannot say which
				}
				if st.Inst != nil && inst != strconv.Itoa(*st.Inst) {
					if _, ok := want[st.Metric+"\x00"+strconv.Itoa(*st.Inst)]; ok {
						// pcpcat names the instance by number where the
						// indom did not name it then: its rows are split
						nameless++
						continue
					}
				}
				w, ok := want[st.Metric+"\x00"+inst]
				if !ok {
					t.Errorf("%s[%s]: not in pcpcat --csv's output", st.Metric, inst)
					continue
				}
				checked++
				if w.late {
					churned++
				}
				if w.gaps > 0 {
					gapped++
				}
				if w.resets > 0 {
					reset++
				}
				nm := 0 // marks after the first value
				for _, m := range marks.at {
					if m.After(w.first) {
						nm++
					}
				}
				if st.Samples != w.samples || !st.FirstSeen.Equal(w.first) || !st.LastSeen.Equal(w.last) ||
					st.Gaps != w.gaps || st.Resets != w.resets || st.Marks != nm {
					t.Errorf("%s[%s]: samples %d, seen %v to %v, gaps %d, resets %d, marks %d; want %d, %v to %v, %d, %d, %d",
						st.Metric, inst, st.Samples, st.FirstSeen, st.LastSeen, st.Gaps, st.Resets, st.Marks,
						w.samples, w.first, w.last, w.gaps, w.resets, nm)
				}
			}
			if checked < least[name] {
				t.Errorf("only %d metric-instances checked", checked)
			}
			t.Logf("%d metric-instances checked (%d left out: nameless for a while), %d marks", checked, nameless, len(marks.at))
		})
	}
	if churned == 0 || gapped == 0 {
		t.Errorf("%d instances came late, %d had gaps: the archives test too little about churn", churned, gapped)
	}
	t.Logf("%d metric-instances came late, %d had gaps, %d had counter resets", churned, gapped, reset)
}

// instanceKey is the instance column pcpcat --csv prints for a JSON
// object's instance ("" for a singular metric); false when it has no name.
func instanceKey(name *string, num *int) (string, bool) {
	switch {
	case name != nil:
		return *name, true
	case num != nil:
		return "", false
	}
	return "", true
}

type presenceWant struct {
	samples, gaps, resets int
	first, last           time.Time
	seq                   int
	prev                  float64
	numeric               bool
	late                  bool // first seen after its metric's first row
}

type markList struct {
	at []time.Time // each <mark>'s time
}

var markLine = regexp.MustCompile(`^(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\.\d{6} \d{4})\s+<mark>`)

// markTimes reads the <mark>s' times from pmdumplog -x (in UTC).
func markTimes(t *testing.T, a string) markList {
	var out markList
	for _, l := range strings.Split(run(slow, nil, "pmdumplog", "-x", "-Z", "UTC", a).stdout, "\n") {
		if m := markLine.FindStringSubmatch(l); m != nil {
			ts, err := time.Parse("Mon Jan _2 15:04:05.000000 2006", m[1])
			if err != nil {
				t.Fatal(err)
			}
			out.at = append(out.at, ts)
		}
	}
	return out
}

// presenceOf computes each metric-instance's presence from pcpcat --csv:
// a gap is a return after rows of the metric (at other times) that lacked
// the instance; a reset a counter value below the one before it with no
// <mark> between them.
func presenceOf(t *testing.T, a string, sems map[string]string, marks *markList) map[string]*presenceWant {
	r := run(slow, nil, ours("pcpcat"), "--csv", a)
	if r.code != 0 {
		t.Fatalf("pcpcat --csv: %s", r.stderr)
	}
	rd := csv.NewReader(bufio.NewReader(strings.NewReader(r.stdout)))
	rd.FieldsPerRecord = 4
	if _, err := rd.Read(); err != nil { // the header
		t.Fatal(err)
	}
	type metricSeq struct {
		first, last time.Time
		seq         int
	}
	seqs := map[string]*metricSeq{}
	out := map[string]*presenceWant{}
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		ts, err := time.Parse(time.RFC3339Nano, rec[0])
		if err != nil {
			t.Fatal(err)
		}
		ms := seqs[rec[1]]
		if ms == nil {
			ms = &metricSeq{first: ts}
			seqs[rec[1]] = ms
		}
		if !ms.last.Equal(ts) || ms.seq == 0 {
			ms.seq++
			ms.last = ts
		}
		v, verr := strconv.ParseFloat(rec[3], 64)
		k := rec[1] + "\x00" + rec[2]
		p := out[k]
		if p == nil {
			p = &presenceWant{first: ts, late: ts.After(ms.first)}
			out[k] = p
		} else if ms.seq > p.seq+1 {
			p.gaps++
		}
		if sems[rec[1]] == "counter" && verr == nil && p.numeric && v < p.prev && ts.After(p.last) {
			reset := true
			for _, m := range marks.at {
				if m.After(p.last) && !m.After(ts) {
					reset = false
				}
			}
			if reset {
				p.resets++
			}
		}
		p.samples++
		p.last, p.seq = ts, ms.seq
		p.prev, p.numeric = v, verr == nil
	}
	return out
}

// TestSummaryCSV checks that --csv's rows carry what --json's objects
// carry, field for field, percentiles included.
func TestSummaryCSV(t *testing.T) {
	needPCP(t)
	for _, name := range []string{"20041125", "proc", "mark-bug"} {
		t.Run(name, func(t *testing.T) {
			a := filepath.Join(qaDir, name)
			j := run(slow, nil, ours("pcpsummary"), "--json", "--percentiles", "50,99.9", a)
			c := run(slow, nil, ours("pcpsummary"), "--csv", "--percentiles", "50,99.9", a)
			if j.code != 0 || c.code != 0 {
				t.Fatalf("pcpsummary: %s%s", j.stderr, c.stderr)
			}
			rows, err := csv.NewReader(strings.NewReader(c.stdout)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			objs := strings.Split(strings.TrimSpace(j.stdout), "\n")
			if len(rows) != len(objs)+1 {
				t.Fatalf("%d CSV rows, %d JSON objects (and a header)", len(rows), len(objs))
			}
			head := rows[0]
			for i, line := range objs {
				d := json.NewDecoder(strings.NewReader(line))
				d.UseNumber()
				var o map[string]any
				if err := d.Decode(&o); err != nil {
					t.Fatal(err)
				}
				for c, col := range head {
					var v any
					var ok bool
					if p, isP := strings.CutPrefix(col, "p"); isP && col != "p" {
						if ps, has := o["percentiles"].(map[string]any); has {
							v, ok = ps[p]
						}
					} else {
						v, ok = o[col]
					}
					want := ""
					switch x := v.(type) {
					case json.Number:
						want = x.String()
					case string:
						want = x
					case bool:
						want = strconv.FormatBool(x)
					}
					if !ok && (col == "insufficient" || col == "sparse") {
						continue // JSON leaves out what is false, or has no meaning
					}
					if rows[i+1][c] != want {
						t.Errorf("row %d, %s: CSV %q, JSON %q (%s)", i+1, col, rows[i+1][c], want, line)
					}
				}
			}
		})
	}
}
