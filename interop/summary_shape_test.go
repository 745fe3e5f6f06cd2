package interop

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pmlogsize -d's lines: a volume's data total, and one metric's share.
var (
	sizeData   = regexp.MustCompile(`^  data: ([0-9]+) bytes \[[0-9]+%, ([0-9]+) records?(?: \(\+ ([0-9]+) <mark> records?\))?\]`)
	sizeMetric = regexp.MustCompile(`^    ([0-9]+\.[0-9]+\.[0-9]+): ([0-9]+) bytes \[[0-9]+%, ([0-9]+) records?, ([0-9]+) values?`)
)

// TestSummaryShape (issue 12): pcpsummary --shape's bytes, results and
// values per metric, and its totals of results, <mark>s and bytes, are
// pmlogsize -d's (summed over the volumes), on every QA archive
// pmlogsize reads.
func TestSummaryShape(t *testing.T) {
	needPCP(t)
	forEach(t, sampledArchives(t), func(t *testing.T, a string) {
		ps := run(slow, nil, "pmlogsize", "-d", a)
		if ps.code != 0 {
			t.Skipf("pmlogsize fails (%d): %s", ps.code, ps.stderr)
		}
		type counts struct{ bytes, records, values, marks int64 }
		want := map[string]*counts{}
		var total counts
		num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
		for _, l := range strings.Split(ps.stdout, "\n") {
			if m := sizeData.FindStringSubmatch(l); m != nil {
				total.bytes += num(m[1])
				total.records += num(m[2])
				total.marks += num(m[3])
			} else if m := sizeMetric.FindStringSubmatch(l); m != nil {
				c := want[m[1]]
				if c == nil {
					c = &counts{}
					want[m[1]] = c
				}
				c.bytes += num(m[2])
				c.records += num(m[3])
				c.values += num(m[4])
			}
		}
		ours := run(slow, nil, ours("pcpsummary"), "--shape", "--json", a)
		if ours.code != 0 {
			t.Skipf("pcpsummary fails (%d): %s", ours.code, ours.stderr)
		}
		got := map[string]*counts{}
		var gotTotal counts
		for _, l := range strings.Split(strings.TrimSpace(ours.stdout), "\n") {
			var o struct {
				Shape, PMID                     string
				Bytes, Records, Values, Results int64
				Marks                           int64
			}
			if err := json.Unmarshal([]byte(l), &o); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			switch o.Shape {
			case "archive":
				gotTotal = counts{bytes: o.Bytes, records: o.Results, marks: o.Marks}
			case "metric":
				got[o.PMID] = &counts{bytes: o.Bytes, records: o.Records, values: o.Values}
			}
		}
		if gotTotal != total {
			t.Errorf("totals: ours %+v, pmlogsize %+v", gotTotal, total)
		}
		if len(got) != len(want) {
			t.Errorf("%d metrics, pmlogsize %d", len(got), len(want))
		}
		for p, w := range want {
			if g := got[p]; g == nil || *g != *w {
				t.Errorf("%s: ours %+v, pmlogsize %+v", p, g, *w)
			}
		}
	})
}
