package pcptime

import (
	"fmt"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Archive bounds used for the comparisons: the QA archives 20041125
// (v2, CET-1), rattle (v2, EST-11, 37 hours), omnibus_v3 (ns), and two
// synthetic spans across DST changes.
var windowBounds = []struct {
	name       string
	start, end stream.Timestamp
}{
	{"20041125", stream.Timestamp{Sec: 1101337806, Nsec: 248424000}, stream.Timestamp{Sec: 1101340686, Nsec: 250880000}},
	{"rattle", stream.Timestamp{Sec: 863868162, Nsec: 25955000}, stream.Timestamp{Sec: 863990562, Nsec: 21829000}},
	{"omnibus_v3", stream.Timestamp{Sec: 1648968655, Nsec: 401624349}, stream.Timestamp{Sec: 1648968664, Nsec: 732225623}},
	{"us-spring-2004", stream.Timestamp{Sec: 1079200000, Nsec: 999999999}, stream.Timestamp{Sec: 1079300000, Nsec: 1}},
	{"au-autumn-2022", stream.Timestamp{Sec: 1648900000, Nsec: 500000000}, stream.Timestamp{Sec: 1649000000, Nsec: 0}},
}

var windowZones = []string{
	"UTC", "CET-1", "EST-11", "AEST-10", ":Australia/Melbourne", "EST5EDT",
	"EST5EDT,M3.2.0,M11.1.0", "EST", "<+0530>-5:30", "America/New_York",
}

// startSpecs are -S arguments, every one tried with every zone and span.
var startSpecs = []string{
	"", "30", "+30", "1.5s", "2min", "1h30m", "1 hour 30 mins", "3days", "+10m", "10ms",
	"0.000001", "1e2", "+0.1", "1.0000000005", "-1h", "-10m", "-0", "-1.25s", "-48h",
	"@23:30", "@ 23:30:00.5", "@23:30:06.248424", "@ 0:15", "@12", "@ 12:00", "@11:45pm", "@ 12am",
	"@ 12:30 pm", "@1:00", "@ 02:30", "@ 03:30", "@:30", "@ :05:07",
	"@ Nov 24 23:30 2004", "@ Wed Nov 24 23:30:06.248424 2004", "@Nov 25", "@ Nov 24",
	"@ 25", "@ 24", "@ 31", "@ 17 22:22", "@ May 18", "@ Apr 3 17:00 2022", "@ Apr  3 02:30 2022",
	"@ Mar 14 02:30 2004", "@ Mar 14 03:30 2004", "@2004", "@ Nov 2004", "@ Sat May 17 12:00 1997",
	"@ Nov 24 23:59:60 2004", "@ Nov 24 23:59:61.5 2004", "@ Feb 29 12:00 2004", "@ Feb 30 12:00 2004",
	"@ Nov 0 2004", "@ Jan", "@ Dec", "@ sat", "@ Monday", "@ 24 11pm", "@ 13pm", "@ 99", "@ 1:2:3",
	"2004-11-24 23:30:00", "2004-11-24 23:30", "2004-11-25", "Nov 24, 2004 23:30", "11/24/2004 23:30",
	"11/24/04 11:30pm", "2004/11/24 23:30:10", "24-Nov-2004 23:30", "24 Nov 2004 23:30", "20041124",
	"20041124 2330", "23:30 Nov 24 2004", "Nov 24 23:30 2004", "Wed Nov 24 23:30:00 2004",
	"2004-11-24 23:30:00 +0100", "2004-11-24 23:30 UTC", "2004-11-24 23:30 cet", "2004-11-24 11:30 pm EST",
	"1997-05-17 22:00 EDT", "2022-04-03 02:30:00", "2004-03-14 02:30:00", "2004-11-07 01:30",
	"May 17 1997 12:00:00", "17-May-97 12:00", "Sat May 17 12:00:00 1997 (comment)",
	"2 hours ago", "1 day ago", "last hour", "30 minutes ago", "2 hours", "+2 hours", "10 minutes",
	"1 day 2 hours ago", "-2 hours", "@ 2 hours ago", "3 weeks ago", "1 month ago", "last year",
	"2 hours 30 min", "1 fortnight ago", "3 sec ago", "next hour",
	// Forms taken relative to today (the oracle and the test share the
	// date, barring a run that straddles midnight).
	"today", "yesterday", "tomorrow", "thursday", "last thursday", "next friday", "Nov 20", "11/20",
	"23:30", "11:30pm", "Nov 20 12:00 EST", "noon", "this week", "2 days ago 10:00", "sunday 09:00",
	"x", "@", "@ x", "+", "-", "1h30", "1 h 30", "@ Nov 24 23:30 2004 junk", "1 hr", "2 hrs",
}

// endSpecs are -T arguments, tried with -S "+1m" and with no -S.
var endSpecs = []string{
	"", "+10m", "10m", "-10m", "-0", "+0", "@23:40", "@ 23:40:00.25", "@ Nov 24 23:45 2004",
	"2004-11-24 23:45:00", "1 hour ago", "+1 hour", "@ 00:00", "-1e9", "+1e9", "9999d",
}

// combos exercise -O and -A together with -S and -T.
var combos = [][4]string{ // S, T, O, A
	{"", "", "", "1m"}, {"", "", "", "10s"}, {"", "", "", "1h"}, {"", "", "", "7m"},
	{"", "", "", "0.5s"}, {"", "", "", "1d"}, {"", "", "", "100d"}, {"", "", "", "0"},
	{"+1m", "-1m", "+5m", ""}, {"+1m", "-1m", "@23:35", ""}, {"+1m", "-1m", "-2m", ""},
	{"+1m", "-1m", "+5m", "1m"}, {"+1m", "-1m", "+5m", "7m"}, {"", "", "-0", "1m"},
	{"+10m", "+5m", "+1m", "10s"}, {"", "", "+1000d", "1m"}, {"", "", "x", ""}, {"", "", "", "x"},
	{"+1m", "+2m", "", "1h"}, {"@23:20", "@23:30", "@23:25", "30s"},
}

func oracleCases() []oracleReq {
	var reqs []oracleReq
	for _, tz := range windowZones {
		for _, b := range windowBounds {
			base := oracleReq{Op: "window", TZ: tz,
				LS: [2]int64{b.start.Sec, int64(b.start.Nsec)}, LE: [2]int64{b.end.Sec, int64(b.end.Nsec)}}
			for _, s := range startSpecs {
				r := base
				r.S = s
				reqs = append(reqs, r)
			}
			for _, e := range endSpecs {
				for _, s := range []string{"", "+1m"} {
					r := base
					r.S, r.T = s, e
					reqs = append(reqs, r)
				}
			}
			for _, c := range combos {
				r := base
				r.S, r.T, r.O, r.A = c[0], c[1], c[2], c[3]
				reqs = append(reqs, r)
			}
		}
	}
	return reqs
}

// TestParseWindowMatchesLibpcp puts several thousand -S/-T/-O/-A
// combinations through libpcp and through ParseWindow and compares the
// windows to the nanosecond.
func TestParseWindowMatchesLibpcp(t *testing.T) {
	reqs := oracleCases()
	now := time.Now()
	resps := askPCP(t, reqs)
	p := &timeParser{now: now}
	bad := 0
	zones := map[string]*time.Location{}
	for i, r := range reqs {
		loc := zones[r.TZ]
		if loc == nil {
			var err error
			if loc, err = NewZone(r.TZ); err != nil {
				t.Fatalf("NewZone(%q): %v", r.TZ, err)
			}
			zones[r.TZ] = loc
		}
		p.loc = loc
		w, err := p.parseWindow(r.S, r.T, r.O, r.A,
			timespec{r.LS[0], r.LS[1]}, timespec{r.LE[0], r.LE[1]})
		want := resps[i]
		var got string
		switch {
		case err != nil:
			got = "error"
		case w.AlignIgnored:
			got = "warning " + fmtWindow(w)
		default:
			got = "ok " + fmtWindow(w)
		}
		var exp string
		switch want.Sts {
		case -1:
			exp = "error"
		case 0:
			exp = "warning " + fmtResp(want)
		default:
			exp = "ok " + fmtResp(want)
		}
		if got != exp {
			if bad < 25 {
				t.Errorf("TZ=%q bounds %v..%v -S %q -T %q -O %q -A %q:\n\tlibpcp %s\n\tgo     %s",
					r.TZ, r.LS, r.LE, r.S, r.T, r.O, r.A, exp, got)
			}
			bad++
		}
	}
	t.Logf("%d windows compared, %d differ", len(reqs), bad)
	if bad > 0 {
		t.Errorf("%d of %d windows differ from libpcp", bad, len(reqs))
	}
}

func fmtWindow(w Window) string {
	return fmt.Sprintf("%d.%09d %d.%09d %d.%09d", w.Start.Sec, w.Start.Nsec, w.End.Sec, w.End.Nsec, w.Origin.Sec, w.Origin.Nsec)
}

// fmtResp normalises libpcp's timespecs, which may carry nsec == 1e9.
func fmtResp(r oracleResp) string {
	n := func(v [2]int64) stream.Timestamp { return fromSpec(timespec{v[0], v[1]}) }
	s, e, o := n(r.Start), n(r.End), n(r.Origin)
	return fmt.Sprintf("%d.%09d %d.%09d %d.%09d", s.Sec, s.Nsec, e.Sec, e.Nsec, o.Sec, o.Nsec)
}

var intervalSpecs = []string{
	"30", "1.5s", "2min", "1h30m", "1 hour 30 mins", "3days", "10ms", "1 msec", "250usec",
	"7nsec", "1 nanosecond", "2 microseconds", "3 milliseconds", "1.1", "0.1", "0.000000001",
	"0.0000000005", "1e-9", "1.5e3", "5 s 5", "1d2h3m4s", "1 day", "2 HOURS", "4 Mins",
	"1.0000000004", "1.9999999996", "0.3333333333", "86399.999999999", "12345678.123456789",
	"", "-1", "1 x", "h", "1hr", "2hrs", "s", "1 ss", ".5", "5.", "+5", "1 2 3",
}

func TestParseIntervalMatchesLibpcp(t *testing.T) {
	var reqs []oracleReq
	for _, s := range intervalSpecs {
		reqs = append(reqs, oracleReq{Op: "interval", S: s})
	}
	resps := askPCP(t, reqs)
	for i, s := range intervalSpecs {
		d, err := ParseInterval(s)
		want := resps[i]
		if want.Sts < 0 {
			if err == nil {
				t.Errorf("ParseInterval(%q) = %v, libpcp rejects it", s, d)
			}
			continue
		}
		exp := time.Duration(want.Start[0])*time.Second + time.Duration(want.Start[1])
		if err != nil || d != exp {
			t.Errorf("ParseInterval(%q) = %v, %v; libpcp %v", s, d, err, exp)
		}
	}
}

// TestNeedsEnd: only a window counted back from the archive's end, or one
// that does not parse, needs the end before the records are read.
func TestNeedsEnd(t *testing.T) {
	for _, c := range []struct {
		start, finish string
		want          bool
	}{
		{"", "", false},
		{"10m", "", false},
		{"", "20m", false},
		{"30s", "1h", false},
		{"@ 2000-01-02 03:04:05", "@ 2000-01-03", false},
		{"", "-10m", true},
		{"-1h", "", true},
		{"not a time", "", true},
	} {
		if got := NeedsEnd(c.start, c.finish); got != c.want {
			t.Errorf("NeedsEnd(%q, %q) = %v, want %v", c.start, c.finish, got, c.want)
		}
	}
}
