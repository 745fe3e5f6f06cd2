package pcptime

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// glibcZones are TZ values compared instant by instant with glibc's date(1).
var glibcZones = []string{
	// What PCP archive labels carry.
	"EST-10", "AEST-10", "CET-1", "EST-11", "PST8", "UTC", "GMT", "UTC0", "GMT+0",
	"<+10>-10", "<-0330>3:30", "IST-5:30", "XXX-5:45", "XXX+12", "XXX-14",
	// Zoneinfo names, with and without the colon, and an absolute path.
	":Australia/Melbourne", "Australia/Melbourne", "Europe/Oslo", "America/New_York",
	"EST5EDT", "PST8PDT", "EST", "/usr/share/zoneinfo/Asia/Kolkata",
	// Full POSIX rules.
	"EST5EDT,M3.2.0,M11.1.0", "EST5EDT4,M3.2.0/02:00:00,M11.1.0/02:00:00",
	"AEST-10AEDT,M10.1.0,M4.1.0/3", "NZST-12NZDT,M9.5.0,M4.1.0/3",
	"CET-1CEST,M3.5.0,M10.5.0/3", "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
	"XXX3YYY,J60/2,J300/2", "XXX3YYY,59,300", "XXX3YYY,0/0,365/25",
	"<+0330>-3:30<+0430>,J79/24,J263/24", "WART4WARST,J1/0,J365/25",
	"AAA+3BBB-5,M4.5.6/12:34:56,M9.1.3/-3", "EST5EDT,M3.2.0", "EST5EDT,M3.2.0/-1,M11.1.0/30",
	"EST5:75", "EST25", "XXX-1YYY-3:30,M3.5.0,M10.5.0",
	// DST without a rule: glibc borrows "posixrules".
	"EST-10EDT", "AEST-10AEDT", "CET-1CEST", "AAA+3BBB-5", "EST5EDT6", "XXX0YYY,",
}

// instants returns the times at which zones are compared: a sample every
// step from 1902 to 2045 (a prime number of hours, so that it drifts
// through the hours of the day), every hour of 2004 (not for zoneinfo files), and instants
// around each transition Go sees from 1960 on.
func instants(loc *time.Location, step time.Duration, hourly bool) []int64 {
	var ts []int64
	start := time.Date(1902, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	end := time.Date(2045, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
	for t := start; t < end; t += int64(step / time.Second) {
		ts = append(ts, t)
	}
	for _, y := range []int{2004} {
		if !hourly {
			break
		}
		a := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		for t := a; t < a+366*86400; t += 3600 {
			ts = append(ts, t)
		}
	}
	for t := time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC); t.Unix() < end; {
		_, e := t.In(loc).ZoneBounds()
		if e.IsZero() {
			break
		}
		for d := int64(-3601); d <= 3601; d += 1800 {
			ts = append(ts, e.Unix()+d)
		}
		ts = append(ts, e.Unix()-1, e.Unix(), e.Unix()+1)
		if !e.After(t) {
			// Go's rule evaluation reports the end of the year as a
			// bound; step past it.
			e = t.Add(24 * time.Hour)
		}
		t = e
	}
	return ts
}

func TestLoadZoneMatchesGlibc(t *testing.T) {
	date := needTool(t, "date")
	dir := t.TempDir()
	for i, tz := range glibcZones {
		t.Run(tz, func(t *testing.T) {
			t.Parallel()
			compareWithDate(t, date, filepath.Join(dir, strconv.Itoa(i)), tz)
		})
	}
}

func compareWithDate(t *testing.T, date, file, tz string) {
	{
		loc, err := LoadZone(tz)
		if err != nil {
			t.Fatalf("LoadZone(%q): %v", tz, err)
		}
		// date(1) re-reads a zoneinfo file for every line, which is slow;
		// those zones are Go's own TZif handling, so fewer samples do.
		step, hourly := 97*time.Hour, true
		if _, isFile := loadZoneFile(tz, strings.TrimPrefix(tz, ":")); isFile {
			step, hourly = 401*time.Hour, false
		}
		ts := instants(loc, step, hourly)
		var in strings.Builder
		for _, s := range ts {
			fmt.Fprintf(&in, "@%d\n", s)
		}
		if err := os.WriteFile(file, []byte(in.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		out := run(t, []string{"TZ=" + tz}, date, "-f", file, "+%Y-%m-%d %H:%M:%S %z")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(ts) {
			t.Fatalf("TZ=%q: date printed %d lines for %d instants", tz, len(lines), len(ts))
		}
		bad := 0
		for i, s := range ts {
			got := time.Unix(s, 0).In(loc).Format("2006-01-02 15:04:05 -0700")
			if got != lines[i] {
				if bad < 5 {
					t.Errorf("TZ=%q @%d: glibc %s, LoadZone %s", tz, s, lines[i], got)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("TZ=%q: %d of %d instants differ", tz, bad, len(ts))
		}
	}
}
