package pcptime

import (
	"time"
)

// brokenTime is PCP's use of struct tm while parsing: -1 marks a field
// that was not given, and nsec carries the fraction of a second (PCP keeps
// it in tm_yday).
type brokenTime struct {
	year, mon, mday, hour, min, sec int // year is the full year, mon 0..11
	nsec                            int64
}

var (
	ctimeDays   = [...]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	ctimeMonths = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	ctimeAmPm   = [...]string{"am", "pm"}
)

// parseCtime is __pmParseCtime: the "@" form of -S/-T/-O, a ctime(3)-like
// date of which any leading part may be left out:
//
//	[Www] [Mmm] [DD] [HH[:MM[:SS[.frac]]]] [am|pm] [YYYY]
//
// Weekday names are checked for spelling and otherwise ignored; names are
// matched on their first three letters only, in any case. Fields left out
// after the first one given default to their smallest value; fields before
// it come from the reference time (see convertTime).
func parseCtime(spec string) (brokenTime, *SyntaxError) {
	tm := brokenTime{year: -1, mon: -1, mday: -1, hour: -1, min: -1, sec: -1, nsec: -1}
	wday, pos := parse3(spec, 0, ctimeDays[:])
	tm.mon, pos = parse3(spec, pos, ctimeMonths[:])
	tm.mday, pos = parseIntRange(spec, pos, 0, 31)
	tm.hour, pos = parseIntRange(spec, pos, 0, 23)
	if tm.mday == 0 && tm.hour != -1 {
		tm.mday = -1
	}
	if tm.hour == -1 && tm.mday >= 0 && tm.mday <= 23 && (tm.mon == -1 || peek(spec, pos) == ':') {
		tm.hour, tm.mday = tm.mday, -1
	}
	if ok, npos := parseChar(spec, pos, ':'); ok {
		pos = npos
		if tm.hour == -1 {
			tm.hour = 0
		}
		tm.min = 0
		if v, npos := parseIntRange(spec, pos, 0, 59); v != -1 {
			tm.min, pos = v, npos
		} else {
			pos = npos
		}
		if ok, npos := parseChar(spec, pos, ':'); ok {
			pos = npos
			if d, npos, ok := parseDouble(spec, pos, 0, 61); ok {
				pos = npos
				tm.sec = int(d)
				tm.nsec = ldMulAddTrunc(d-float64(tm.sec), 1e9, 0)
			}
		}
	}
	if pm, npos := parse3(spec, pos, ctimeAmPm[:]); pm != -1 {
		pos = npos
		if tm.hour > 12 || tm.hour == -1 {
			pos -= 2 // PCP un-reads it, which makes it an error below
		} else if pm == 1 {
			if tm.hour < 12 {
				tm.hour += 12
			}
		} else if tm.hour == 12 {
			tm.hour = 0
		}
	}
	if y, npos := parseIntRange(spec, pos, 1900, 9999); y != -1 {
		tm.year, pos = y, npos
	}
	for pos < len(spec) && isSpace(spec[pos]) {
		pos++
	}
	if pos < len(spec) {
		return tm, &SyntaxError{Spec: spec, Offset: pos, Msg: msgUnexpected}
	}
	if (wday != -1 && tm.mon == -1 && tm.mday == -1) ||
		(tm.hour != -1 && tm.min == -1 && tm.mday == -1 && tm.mon == -1 && tm.year == -1) {
		return tm, &SyntaxError{Spec: spec, Offset: pos, Msg: msgMore}
	}
	dflt := tm.year != -1
	fill := func(f *int, v int) {
		if *f != -1 {
			dflt = true
		} else if dflt {
			*f = v
		}
	}
	fill(&tm.mon, 0)
	fill(&tm.mday, 1)
	fill(&tm.hour, 0)
	fill(&tm.min, 0)
	if tm.sec == -1 && dflt {
		tm.sec, tm.nsec = 0, 0
	}
	return tm, nil
}

func peek(s string, pos int) byte {
	if pos < len(s) {
		return s[pos]
	}
	return 0
}

// parse3 is PCP's parse3char: skip white space, read up to three letters
// and look them up in codes (lower case). It returns the index, or -1 and
// the position after the white space.
func parse3(s string, pos int, codes []string) (int, int) {
	for pos < len(s) && isSpace(s[pos]) {
		pos++
	}
	end := pos
	for end < len(s) && end-pos < 3 && isAlpha(s[end]) {
		end++
	}
	if end == pos {
		return -1, pos
	}
	word := s[pos:end]
	for i, c := range codes {
		if len(c) == len(word) && equalFoldASCII(word, c) {
			return i, end
		}
	}
	return -1, pos
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// parseIntRange is PCP's parseInt: skip white space, read an integer as
// strtol(3) would, and accept it only in [lo, hi]. It returns -1 (which is
// never a valid value here) and the position after the white space when
// there is no acceptable number.
func parseIntRange(s string, pos, lo, hi int) (int, int) {
	for pos < len(s) && isSpace(s[pos]) {
		pos++
	}
	i := pos
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	v, end := parseDigits(s, i)
	if end == i {
		return -1, pos
	}
	if neg {
		v = -v
	}
	if v < lo || v > hi {
		return -1, pos
	}
	return v, end
}

func parseChar(s string, pos int, c byte) (bool, int) {
	for pos < len(s) && isSpace(s[pos]) {
		pos++
	}
	if pos < len(s) && s[pos] == c {
		return true, pos + 1
	}
	return false, pos
}

// convertTime is the absolute case of __pmConvertHighResTime: a fully
// given date is taken as is; a partial one takes the missing leading
// fields from origin in the reporting zone and, when the most significant
// given field is smaller than origin's, rolls the next larger field on
// (so "@23:30" after an origin of 23:45 means 23:30 the next day, and
// "@ Feb" in November means February next year).
func (p *timeParser) convertTime(tm brokenTime, origin timespec) timespec {
	var year, mon, mday, hour, minute, sec int
	nsec := origin.nsec
	if tm.year != -1 {
		year, mon, mday, hour, minute, sec = tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec
		nsec = tm.nsec
	} else {
		t := time.Unix(origin.sec, 0).In(p.loc)
		year, mon, mday = t.Year(), int(t.Month())-1, t.Day()
		hour, minute, sec = t.Clock()
		switch {
		case tm.mon != -1:
			if tm.mon < mon {
				year++
			}
			mon, mday, hour, minute, sec, nsec = tm.mon, tm.mday, tm.hour, tm.min, tm.sec, tm.nsec
		case tm.mday != -1:
			if tm.mday < mday {
				mon++
			}
			mday, hour, minute, sec, nsec = tm.mday, tm.hour, tm.min, tm.sec, tm.nsec
		case tm.hour != -1:
			if tm.hour < hour {
				mday++
			}
			hour, minute, sec, nsec = tm.hour, tm.min, tm.sec, tm.nsec
		case tm.min != -1:
			if tm.min < minute {
				hour++
			}
			minute, sec, nsec = tm.min, tm.sec, tm.nsec
		case tm.sec != -1:
			if tm.sec < sec {
				minute++
			}
			sec, nsec = tm.sec, tm.nsec
		}
	}
	return timespec{sec: p.mktime(year, mon, mday, hour, minute, sec), nsec: nsec}
}

// timespec is PCP's struct timespec while parsing.
type timespec struct {
	sec, nsec int64
}

// mktime is glibc's mktime(3) with tm_isdst = -1 in the reporting zone,
// fields not necessarily in range. It follows glibc's search exactly,
// because the search decides which instant a wall time means when the
// zone skips or repeats it: glibc starts from the UTC offset its previous
// call found (p.mkoff, 0 in a fresh process; PCP calls mktime nowhere
// else, so a tool's -S, -A, -T and -O share it in that order), then
// corrects by the offset at each guess. In a spring-forward gap it gives
// the time as if the old offset still applied (02:30 in a 02:00-03:00 gap
// is 03:30); in a repeated hour it gives whichever of the two the search
// reaches first.
func (p *timeParser) mktime(year, mon, mday, hour, minute, sec int) int64 {
	year += floorDiv(mon, 12)
	mon = floorMod(mon, 12)
	reqSec := sec
	sec = max(0, min(sec, 59))
	wall := (daysFromCivil(year, mon+1, 1)+int64(mday-1))*86400 +
		int64(hour)*3600 + int64(minute)*60 + int64(sec)
	t0 := wall + p.mkoff
	t, t1, t2 := t0, t0, t0
	dst2 := false
	for probes := 6; ; {
		lt := time.Unix(t, 0).In(p.loc)
		_, off := lt.Zone()
		isDST := lt.IsDST()
		dt := wall - (t + int64(off))
		if dt == 0 {
			break
		}
		if t == t1 && t != t2 && (!dst2 || isDST) {
			break // oscillating across a gap; take this side
		}
		if probes--; probes == 0 {
			return -1
		}
		t1, t2, t, dst2 = t2, t, t+dt, isDST
	}
	p.mkoff = t - wall
	return t + int64(reqSec-sec)
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int) int { return a - floorDiv(a, b)*b }
