package pcptime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// These tests need no PCP or glibc tools: their expectations were
// recorded from libpcp 6.0.3 (pmParseHighResTimeWindow in a fresh process)
// and pmdumplog, so that the behaviour stays pinned where the tools are
// not installed.

func ts(sec int64, nsec int32) stream.Timestamp { return stream.Timestamp{Sec: sec, Nsec: nsec} }

func TestParseWindowGolden(t *testing.T) {
	cases := []struct {
		tz                 string
		logStart, logEnd   stream.Timestamp
		s, e, o, a         string
		ok                 int // libpcp's status: 1 ok, 0 alignment ignored, -1 error
		start, end, origin stream.Timestamp
	}{
		{"CET-1", ts(1101337806, 248424000), ts(1101340686, 250880000), "@23:30", "", "", "", 1, ts(1101421800, 0), ts(1101340686, 250880000), ts(1101421800, 0)},
		{"CET-1", ts(1101337806, 248424000), ts(1101340686, 250880000), "+10m", "-10m", "", "", 1, ts(1101338406, 248424000), ts(1101340086, 250880000), ts(1101338406, 248424000)},
		{"CET-1", ts(1101337806, 248424000), ts(1101340686, 250880000), "2004-11-25 00:30:00", "+5m", "", "", 1, ts(1101339000, 0), ts(1101339300, 0), ts(1101339000, 0)},
		{"UTC", ts(1101337806, 248424000), ts(1101340686, 250880000), "@ Nov 24 23:30 2004", "@ Wed Nov 24 23:11:06.305961 2004", "", "", 1, ts(1101339000, 0), ts(1101337866, 305960999), ts(1101339000, 0)},
		{"UTC", ts(1101337806, 248424000), ts(1101340686, 250880000), "", "", "", "7m", 1, ts(1101337860, 0), ts(1101340686, 250880000), ts(1101337860, 0)},
		{"UTC", ts(1101337806, 248424000), ts(1101340686, 250880000), "+1m", "-1m", "+5m", "1m", 1, ts(1101337920, 0), ts(1101340626, 250880000), ts(1101338220, 0)},
		{"UTC", ts(1101337806, 248424000), ts(1101340686, 250880000), "2 hours ago", "", "", "", 1, ts(1101337806, 248424000), ts(1101340686, 250880000), ts(1101337806, 248424000)},
		{"UTC", ts(1101337806, 248424000), ts(1101340686, 250880000), "", "20 minutes ago", "", "", 1, ts(1101337806, 248424000), ts(1101339486, 0), ts(1101337806, 248424000)},
		{"UTC", ts(1101337806, 248424000), ts(1101340686, 250880000), "", "", "", "100d", 0, ts(1101337806, 248424000), ts(1101340686, 250880000), ts(1101337806, 248424000)},
		// A skipped hour reads as if the old offset still held; a repeated
		// one resolves as glibc's mktime search does from a fresh process.
		{"EST5EDT,M3.2.0,M11.1.0", ts(1079200000, 0), ts(1079300000, 0), "@ Mar 14 02:30 2004", "", "", "", 1, ts(1079249400, 0), ts(1079300000, 0), ts(1079249400, 0)},
		{"EST5EDT,M3.2.0,M11.1.0", ts(1099700000, 0), ts(1099900000, 0), "@ Nov 7 01:30 2004", "@ Nov 7 01:45 2004", "", "", 1, ts(1099805400, 0), ts(1099806300, 0), ts(1099805400, 0)},
		{"EST5EDT", ts(1081000000, 0), ts(1081100000, 0), "@ Apr 4 02:30 2004", "@ Apr 4 01:59:59.999 2004", "", "", 1, ts(1081063800, 0), ts(1081061999, 999000000), ts(1081063800, 0)},
		{"EST5EDT", ts(1099100000, 0), ts(1099300000, 0), "@ Oct 31 01:30 2004", "@ Oct 31 01:30 2004", "", "", 1, ts(1099200600, 0), ts(1099200600, 0), ts(1099200600, 0)},
		{"AEST-10AEDT,M10.1.0,M4.1.0/3", ts(1096600000, 0), ts(1096800000, 0), "@ Oct 3 02:30 2004", "", "", "", 1, ts(1096734600, 0), ts(1096800000, 0), ts(1096734600, 0)},
		{"AEST-10AEDT,M10.1.0,M4.1.0/3", ts(1080900000, 0), ts(1081100000, 0), "@ Apr 4 02:30 2004", "@ Apr 4 02:30 2004", "", "", 1, ts(1081009800, 0), ts(1081009800, 0), ts(1081009800, 0)},
		{"EST-11", ts(863868162, 25955000), ts(863990562, 21829000), "@ 17 22:00", "@11pm", "", "", 1, ts(863868162, 25955000), ts(863990562, 21829000), ts(863868162, 25955000)},
		{"EST-11", ts(863868162, 25955000), ts(863990562, 21829000), "@ May 18", "May 18 1997 12:00 pm", "", "", -1, ts(0, 0), ts(0, 0), ts(0, 0)},
		{"AEST-10", ts(1648968655, 401624349), ts(1648968664, 732225623), "+1.5s", "-0.000000001", "", "", 1, ts(1648968656, 901624349), ts(1648968664, 732225622), ts(1648968656, 901624349)},
	}
	for _, c := range cases {
		loc, err := NewZone(c.tz)
		if err != nil {
			t.Fatal(err)
		}
		w, err := ParseWindow(c.s, c.e, c.o, c.a, c.logStart, c.logEnd, loc)
		if c.ok < 0 {
			if err == nil {
				t.Errorf("%s -S %q -T %q: no error, want one", c.tz, c.s, c.e)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s -S %q -T %q: %v", c.tz, c.s, c.e, err)
			continue
		}
		if w.Start != c.start || w.End != c.end || w.Origin != c.origin || w.AlignIgnored != (c.ok == 0) {
			t.Errorf("%s -S %q -T %q -O %q -A %q: got %v %v %v ignored=%v, want %v %v %v status %d",
				c.tz, c.s, c.e, c.o, c.a, w.Start, w.End, w.Origin, w.AlignIgnored, c.start, c.end, c.origin, c.ok)
		}
	}
}

func TestParseIntervalTable(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"30": 30 * time.Second, "1.5s": 1500 * time.Millisecond, "2min": 2 * time.Minute,
		"1h30m": 90 * time.Minute, "1 hour 30 mins": 90 * time.Minute, "3days": 72 * time.Hour,
		"10ms": 10 * time.Minute, "10msec": 10 * time.Millisecond, "250usec": 250 * time.Microsecond,
		"7nsec": 7, "0.1": 100 * time.Millisecond, "1e-9": 1, "0.0000000005": 1, "0.0000000004": 0,
		"1.9999999996": 2 * time.Second, "5 s 5": 10 * time.Second, "2 HOURS": 2 * time.Hour, "+5": 5 * time.Second,
	} {
		got, err := ParseInterval(s)
		if err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "1 x", "h", "1 hrx", "1 sss", "nan", "inf", "1e400", "9e18 9e18"} {
		if d, err := ParseInterval(s); err == nil {
			t.Errorf("ParseInterval(%q) = %v, want an error", s, d)
		}
	}
	var se *SyntaxError
	_, err := ParseInterval("1h 30 x")
	if !errors.As(err, &se) || se.Offset != 6 {
		t.Errorf("ParseInterval error %v, want a SyntaxError at offset 6", err)
	} else if want := "1h 30 x\n      ^ -- unexpected value"; se.Caret() != want {
		t.Errorf("Caret() = %q, want %q", se.Caret(), want)
	}
}

// TestGetDateRelative pins forms resolved against the present, with a
// fixed clock: 2026-11-22 07:14:01 UTC, a Sunday.
func TestGetDateRelative(t *testing.T) {
	old := nowFunc
	defer func() { nowFunc = old }()
	now := time.Date(2026, 11, 22, 7, 14, 1, 0, time.UTC)
	nowFunc = func() time.Time { return now }
	logStart, logEnd := ts(1795000000, 500), ts(1795900000, 0) // 2026-11-18 .. 2026-11-28
	midnight := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).Unix()
	for spec, want := range map[string]int64{
		"today":              midnight,
		"yesterday":          midnight - 86400,
		"tomorrow":           midnight + 86400,
		"now":                now.Unix(),
		"23:30":              midnight + 23*3600 + 1800,
		"11:30pm":            midnight + 23*3600 + 1800,
		"Nov 20":             midnight - 2*86400,
		"2026-11-20":         midnight - 2*86400,
		"20261120 12:00":     midnight - 2*86400 + 12*3600,
		"11/20":              midnight - 2*86400,
		"thursday":           midnight + 4*86400,
		"last thursday":      midnight - 3*86400,
		"2 hours ago":        logEnd.Sec - 7200,
		"last hour":          logEnd.Sec - 3600,
		"next week":          logStart.Sec + 2*7*86400,
		"Nov 20 12:00 EST":   midnight - 2*86400 + 17*3600,
		"Nov 20 12:00 EDT":   midnight - 2*86400 + 16*3600,
		"Nov 20 12:00 +0100": midnight - 2*86400 + 11*3600,
		"1 month ago":        time.Date(2026, 10, 28, 21, 6, 40, 0, time.UTC).Unix(),
	} {
		got, err := ParseTime(spec, logStart, logEnd, time.UTC)
		if err != nil || got != ts(want, 0) {
			t.Errorf("ParseTime(%q) = %v, %v; want %d", spec, got, err, want)
		}
	}
	// Intervals win over getdate: "1 day 2 hours" is start plus 26 hours
	// (with start's nanoseconds), "20261120" is that many seconds.
	if got, _ := ParseTime("1 day 2 hours", logStart, logEnd, time.UTC); got != ts(logStart.Sec+93600, 500) {
		t.Errorf("ParseTime(1 day 2 hours) = %v", got)
	}
	for _, spec := range []string{"Nov 31", "25:00", "1969-01-01", "23:30 23:40", "foo", "Nov"} {
		if got, err := ParseTime(spec, logStart, logEnd, time.UTC); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", spec, got)
		}
	}
}

func TestFormat(t *testing.T) {
	loc, _ := NewZone("CET-1")
	x := ts(1101337866, 305961000)
	for _, c := range []struct{ got, want string }{
		{FormatTime(x, time.UTC, Micros), "23:11:06.305961"},
		{FormatTime(x, loc, Nanos), "00:11:06.305961000"},
		{FormatTime(x, loc, 0), "00:11:06"},
		{FormatTime(x, loc, Millis), "00:11:06.305"},
		{FormatDate(x, time.UTC, Micros), "Wed Nov 24 23:11:06.305961 2004"},
		{FormatDate(ts(1648968655, 401624349), time.UTC, Nanos), "Sun Apr  3 06:50:55.401624349 2022"},
		{FormatCtime(x, loc), "Thu Nov 25 00:11:06 2004"},
		{FormatDate(ts(253402300800, 0), time.UTC, Millis), "Sat Jan  1 00:00:00.000 1000"},
		{string(AppendElapsed(nil, ts(1101337866, 305961000), ts(1101337806, 248424000), Micros)), "60.057537"},
		{string(AppendElapsed(nil, ts(1648968655, 422385141), ts(1648968655, 401624349), Nanos)), "0.020760792"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		var b [64]byte
		AppendDate(b[:0], x, loc, Micros)
	}); n != 0 {
		t.Errorf("AppendDate allocates %v times", n)
	}
}

func TestZones(t *testing.T) {
	at := time.Date(2004, 7, 1, 12, 0, 0, 0, time.UTC)
	offset := func(loc *time.Location) int { _, o := at.In(loc).Zone(); return o }
	for tz, want := range map[string]int{
		"AEST-10": 36000, "<+0530>-5:30": 19800, "PST8PDT": -7 * 3600, "EST5EDT,M3.2.0,M11.1.0": -4 * 3600,
		"AEST-10AEDT,M10.1.0,M4.1.0/3": 36000, "EST25": -24 * 3600, "XXX-1:75": 3600 + 59*60, "": 0, ":": 0,
	} {
		loc, err := LoadZone(tz)
		if err != nil || offset(loc) != want {
			t.Errorf("LoadZone(%q) offset %v, %v; want %d", tz, loc, err, want)
		}
	}
	// PCP's three-character rule: "EST" given to -Z, or found in a label,
	// is EST+0, that is UTC.
	for _, tz := range []string{"EST", "CET", "UTC", "GMT", "XYZ"} {
		loc, err := NewZone(tz)
		if err != nil || offset(loc) != 0 {
			t.Errorf("NewZone(%q) offset %v, %v; want 0", tz, loc, err)
		}
	}
	if loc, err := ZoneForLabel("AEST-10", ":America/New_York"); err != nil || offset(loc) != 36000 {
		t.Errorf("ZoneForLabel uses zoneinfo: %v %v", loc, err)
	}
	if loc, err := ZoneForLabel("", ":Asia/Tokyo"); err != nil || offset(loc) != 9*3600 {
		t.Errorf("ZoneForLabel without timezone: %v %v", loc, err)
	}
	for _, tz := range []string{"XY5", "EST", "Local", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.2.0,M11.1.0x", "EST5EDT,J0,J100", "<ab>5", "EST5,M3.2.0,M11.1.0", "Foo/Bar"} {
		if tz == "EST" {
			continue // a zoneinfo file on most systems
		}
		if loc, err := LoadZone(tz); err == nil {
			t.Errorf("LoadZone(%q) = %v, want an error", tz, loc)
		}
	}
	if _, err := ChooseZone(true, "UTC", "AEST-10", ""); err == nil {
		t.Error("ChooseZone accepted both -z and -Z")
	}
}

// TestNoPosixrules checks the fallback when the zoneinfo directory has no
// posixrules file: glibc then uses the US rule M3.2.0,M11.1.0.
func TestNoPosixrules(t *testing.T) {
	t.Setenv("TZDIR", t.TempDir())
	loc, err := LoadZone("XXX3YYY")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want int
	}{
		{time.Date(2004, 3, 14, 4, 59, 59, 0, time.UTC), -3 * 3600},
		{time.Date(2004, 3, 14, 5, 0, 0, 0, time.UTC), -2 * 3600},
		{time.Date(2004, 11, 7, 3, 59, 59, 0, time.UTC), -2 * 3600},
		{time.Date(2004, 11, 7, 4, 0, 0, 0, time.UTC), -3 * 3600},
	} {
		if _, off := c.at.In(loc).Zone(); off != c.want {
			t.Errorf("%v: offset %d, want %d", c.at, off, c.want)
		}
	}
}

func TestTZifRoundTrip(t *testing.T) {
	p, zerr := parsePOSIX("AEST-10AEDT,M10.1.0,M4.1.0/3")
	if zerr != nil {
		t.Fatal(zerr)
	}
	trans, idx := p.transitions(2000, 2010)
	in := &tzifData{trans: trans, idx: idx, types: []tzifType{{off: 36000, abbr: "AEST"}, {off: 39600, isDST: true, abbr: "AEDT"}}, footer: p.footer()}
	out, err := parseTZif(appendTZif(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.trans) != len(in.trans) || out.footer != in.footer || out.types[1].abbr != "AEDT" {
		t.Errorf("round trip: %+v", out)
	}
	if in.footer != "<AEST>-10<AEDT>-11,M10.1.0/2,M4.1.0/3" {
		t.Errorf("footer %q", in.footer)
	}
	// Truncations of a real file must fail cleanly, never panic.
	b, err := os.ReadFile(filepath.Join(defaultTZDir, "Europe/Oslo"))
	if err != nil {
		t.Skip(err)
	}
	for i := 0; i < len(b); i += 7 {
		if _, err := parseTZif(b[:i]); err == nil && !strings.Contains(string(b[:i]), "\n") {
			t.Errorf("truncated to %d bytes: no error", i)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	loc, err := LoadZone("AEST-10AEDT,M10.1.0,M4.1.0/3")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendTime(buf[:0], ts(1101337806+int64(i), 248424000), loc, Micros)
	}
}

func BenchmarkAppendDate(b *testing.B) {
	loc, err := LoadZone(":Australia/Melbourne")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendDate(buf[:0], ts(1101337806+int64(i), 248424000), loc, Nanos)
	}
}

func BenchmarkLoadZoneRule(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := LoadZone("AEST-10AEDT,M10.1.0,M4.1.0/3"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseWindow(b *testing.B) {
	loc, _ := LoadZone("CET-1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseWindow("@23:30", "2004-11-25 00:40:00", "", "1m", ts(1101337806, 248424000), ts(1101340686, 250880000), loc); err != nil {
			b.Fatal(err)
		}
	}
}
