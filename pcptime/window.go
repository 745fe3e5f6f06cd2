package pcptime

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// timeParser holds what PCP's time parsing depends on besides its
// arguments: the reporting zone, the wall clock (forms such as
// "2004-11-24" without a sign or "@" are taken relative to the present),
// and glibc mktime's memory of the last offset it found.
type timeParser struct {
	loc   *time.Location
	now   time.Time
	mkoff int64
}

// nowFunc is the wall clock; tests replace it.
var nowFunc = time.Now

func newTimeParser(loc *time.Location) *timeParser {
	if loc == nil {
		loc = time.UTC
	}
	return &timeParser{loc: loc, now: nowFunc()}
}

// Window is a resolved time window, PCP's -S, -T, -O and -A options.
type Window struct {
	Start  stream.Timestamp // first instant of interest (-S, maybe aligned by -A)
	End    stream.Timestamp // last instant of interest (-T)
	Origin stream.Timestamp // -O, Start when not given

	// Align is the -A interval, 0 when not given. AlignIgnored reports that
	// it was given but could not be applied because the aligned time falls
	// outside the archive (or, for -O, the window); PCP then carries on
	// with the unaligned time, and so does ParseWindow.
	Align        time.Duration
	AlignIgnored bool
}

// Contains reports whether t lies in the window. Both ends are included,
// as pmdumplog includes a record stamped exactly at -S or -T.
func (w Window) Contains(t stream.Timestamp) bool {
	return !t.Before(w.Start) && !t.After(w.End)
}

// ParseTime resolves one -S, -T or -O argument as PCP's
// __pmParseHighResTime does, against start and end (for -S the archive's
// bounds; for -T the window start and the archive end; for -O the window),
// with absolute times taken in loc:
//
//   - "@" and a ctime-like date, [Www] [Mmm] [DD] [HH[:MM[:SS[.frac]]]]
//     [am|pm] [YYYY], of which leading parts may be left out: "@ Wed Nov
//     24 23:10:06.5 2004", "@Nov 24 23:30", "@24 23:30", "@23:30",
//     "@ 1:30pm". Names match on their first three letters in any case;
//     the weekday is ignored. Fields after the first one given default to
//     their lowest value; fields before it come from start, rolling on to
//     the next year, month, day, hour or minute when the given field is
//     earlier than start's.
//   - "-interval": end minus the interval ("-10m").
//   - "[+]interval": start plus the interval ("+1h30m", "90").
//   - anything else goes to PCP's copy of the classic getdate grammar:
//     "2004-11-24 23:30:00", "Nov 24, 2004 23:30", "11/24/2004 11:30pm",
//     "20041124 23:30", "24-Nov-2004", "23:30 EST", "2004-11-24 23:30
//     +0100". These are absolute, and any part of the date left out comes
//     from today, not from the archive. Relative words ("2 hours ago",
//     "last week", "3 weeks") count from end when the text has "last",
//     "ago" or a leading '-', otherwise from start; "yesterday", "today",
//     "thursday" and "now" are relative to the present. The result of a
//     getdate form has no fraction of a second. An '@' before a getdate
//     form is ignored.
//
// The -S/-T/-O defaults and clamping around it are ParseWindow's.
func ParseTime(spec string, start, end stream.Timestamp, loc *time.Location) (stream.Timestamp, error) {
	p := newTimeParser(loc)
	ts, err := p.parseTime(spec, toSpec(start), toSpec(end))
	if err != nil {
		return stream.Timestamp{}, err
	}
	return fromSpec(ts), nil
}

// ParseWindow applies PCP's pmParseHighResTimeWindow rules to the -S
// (startSpec), -T (endSpec), -O (offsetSpec) and -A (alignSpec)
// arguments, "" meaning not given, for an archive spanning logStart to
// logEnd (the label's start and the last record's time), absolute times
// in loc (nil means UTC):
//
//  1. Start defaults to logStart; -S is parsed against (logStart, logEnd),
//     and a start before logStart is moved to logStart.
//  2. -A rounds Start up to a multiple of the interval (counted from the
//     epoch); if that leaves the archive, the alignment is ignored.
//  3. End defaults to logEnd; -T is parsed against (Start, logEnd), so
//     "+10m" is ten minutes after the window start and "-10m" ten minutes
//     before the archive end; an end after logEnd is moved to logEnd.
//  4. -O is parsed against (Start, End), clamped into the window, and
//     aligned like -S but rounding down if rounding up would pass End.
//
// As in PCP, a Start after End is not an error (the window is empty).
func ParseWindow(startSpec, endSpec, offsetSpec, alignSpec string, logStart, logEnd stream.Timestamp, loc *time.Location) (Window, error) {
	p := newTimeParser(loc)
	return p.parseWindow(startSpec, endSpec, offsetSpec, alignSpec, toSpec(logStart), toSpec(logEnd))
}

// NeedsEnd reports whether -S start and -T finish need the archive's end
// to say where the window starts, or where it ends other than at the end:
// an offset counted back from the end ("-T -10m") does; an absolute time
// ("@ 9:00") or an offset from the start ("-S 10m") does not, so a tool
// can apply such a window to a record stream as it arrives. It resolves
// the window against two ends far apart (a century and two centuries
// after a start) and sees whether anything moves but an end that is the
// archive's; a window that does not parse needs the end, so that its
// error comes as it does for an archive.
func NeedsEnd(start, finish string) bool {
	if start == "" && finish == "" {
		return false
	}
	from := stream.Timestamp{Sec: 1e9}
	e1, e2 := stream.Timestamp{Sec: from.Sec + 100*366*86400}, stream.Timestamp{Sec: from.Sec + 200*366*86400}
	w1, err1 := ParseWindow(start, finish, "", "", from, e1, time.UTC)
	w2, err2 := ParseWindow(start, finish, "", "", from, e2, time.UTC)
	if err1 != nil || err2 != nil {
		return true
	}
	return w1.Start != w2.Start || w1.End != w2.End && (w1.End != e1 || w2.End != e2)
}

func toSpec(t stream.Timestamp) timespec { return timespec{t.Sec, int64(t.Nsec)} }

func fromSpec(t timespec) stream.Timestamp {
	sec, nsec := t.sec, t.nsec
	sec += floorDiv64(nsec, 1e9)
	nsec -= floorDiv64(nsec, 1e9) * 1e9
	return stream.Timestamp{Sec: sec, Nsec: int32(nsec)}
}

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func cmpSpec(a, b timespec) int {
	switch {
	case a.sec < b.sec:
		return -1
	case a.sec > b.sec:
		return 1
	case a.nsec < b.nsec:
		return -1
	case a.nsec > b.nsec:
		return 1
	}
	return 0
}

func (p *timeParser) parseWindow(sS, tS, oS, aS string, logStart, logEnd timespec) (Window, error) {
	var w Window
	start, end := logStart, logEnd
	var err error
	if sS != "" {
		if start, err = p.parseTime(sS, start, end); err != nil {
			return w, err
		}
	}
	if cmpSpec(start, logStart) < 0 {
		start = logStart
	}
	var delta int64
	if aS != "" {
		sec, nsec, err := parseInterval(aS)
		if err != nil {
			return w, err
		}
		if sec == 0 && nsec == 0 {
			return w, &SyntaxError{Spec: aS, Offset: 0, Msg: msgAlign}
		}
		if sec > math.MaxInt64/int64(time.Second)-1 {
			return w, &SyntaxError{Spec: aS, Offset: 0, Msg: "alignment interval too long"}
		}
		delta = sec*1e9 + nsec
		w.Align = time.Duration(delta)
		a := alignUp(start, delta)
		if cmpSpec(a, logStart) >= 0 && cmpSpec(a, logEnd) <= 0 {
			start = a
		} else {
			w.AlignIgnored = true
		}
	}
	if tS != "" {
		if end, err = p.parseTime(tS, start, end); err != nil {
			return w, err
		}
	}
	if cmpSpec(end, logEnd) > 0 {
		end = logEnd
	}
	origin := start
	if oS != "" {
		if origin, err = p.parseTime(oS, start, end); err != nil {
			return w, err
		}
		if cmpSpec(origin, start) < 0 {
			origin = start
		} else if cmpSpec(origin, end) > 0 {
			origin = end
		}
		if aS != "" {
			a := alignUp(origin, delta)
			if cmpSpec(a, end) > 0 {
				a = fromNanos(toNanos(a) - delta)
			}
			if cmpSpec(a, start) >= 0 && cmpSpec(a, end) <= 0 {
				origin = a
			} else {
				w.AlignIgnored = true
			}
		}
	}
	w.Start, w.End, w.Origin = fromSpec(start), fromSpec(end), fromSpec(origin)
	return w, nil
}

// alignUp rounds t up to a multiple of delta nanoseconds, in int64
// nanoseconds as PCP does (C division, truncating toward zero).
func alignUp(t timespec, delta int64) timespec {
	a := toNanos(t)
	b := (a / delta) * delta
	if b < a {
		b += delta
	}
	return fromNanos(b)
}

func toNanos(t timespec) int64 { return t.nsec + 1e9*t.sec }

func fromNanos(n int64) timespec { return timespec{n / 1e9, n % 1e9} }

// parseTime is __pmParseHighResTime.
func (p *timeParser) parseTime(spec string, start, end timespec) (timespec, error) {
	pos := 0
	var firstErr error
	if ok, npos := parseChar(spec, 0, '@'); ok {
		pos = npos
		tm, err := parseCtime(spec[pos:])
		if err == nil {
			return p.convertTime(tm, start), nil
		}
		err.Spec, err.Offset = spec, err.Offset+pos
		firstErr = err
	} else if ok, npos := parseChar(spec, 0, '-'); ok && end.sec < math.MaxInt64 {
		pos = npos
		sec, nsec, err := parseInterval(spec[pos:])
		if err == nil {
			r := end
			if r.nsec < nsec {
				r.nsec += 1e9
				r.sec--
			}
			r.nsec -= nsec
			r.sec -= sec
			return r, nil
		}
		firstErr = shiftErr(err, spec, pos)
	} else {
		if ok, npos := parseChar(spec, 0, '+'); ok {
			pos = npos
		}
		sec, nsec, err := parseInterval(spec[pos:])
		if err == nil {
			r := start
			r.nsec += nsec
			if r.nsec > 1e9 {
				r.nsec -= 1e9
				r.sec++
			}
			r.sec += sec
			return r, nil
		}
		firstErr = shiftErr(err, spec, pos)
	}
	// Neither form: try getdate on what is left, without a second '@'.
	if ok, npos := parseChar(spec, pos, '@'); ok {
		pos = npos
	}
	rest := spec[pos:]
	ref := p.now.Unix()
	switch relativeDirection(rest) {
	case relBackward:
		ref = end.sec
	case relForward:
		ref = start.sec
	}
	if sec, ok := p.getDate(rest, ref); ok {
		return timespec{sec: sec}, nil
	}
	return timespec{}, firstErr
}

func shiftErr(err error, spec string, pos int) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		return &SyntaxError{Spec: spec, Offset: se.Offset + pos, Msg: se.Msg}
	}
	return err
}

const (
	relNone = iota
	relBackward
	relForward
)

// relativeDirection is PCP's heuristic (glib_relative_date) for whether a
// getdate string is relative, and to which end: a unit word preceded by a
// space makes it relative; "last", "ago" or a leading '-' make it count
// back from the archive end.
func relativeDirection(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	u := strings.ToUpper(s)
	for _, w := range []string{" YEAR", " MONTH", " FORTNIGHT", " WEEK", " DAY", " HOUR", " MINUTE", " MIN", " SECOND", " SEC"} {
		if strings.Contains(u, w) {
			if strings.Contains(u, "LAST") || strings.Contains(u, "AGO") || strings.HasPrefix(s, "-") {
				return relBackward
			}
			return relForward
		}
	}
	return relNone
}
