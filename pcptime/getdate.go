package pcptime

import (
	"time"
)

// This file reimplements libpcp's __pmGetDate, the classic public-domain
// getdate grammar (Bellovin, $alz, Berets) that PCP falls back to when a
// -S/-T/-O argument is neither an interval nor an "@" ctime date. It is
// what makes "2004-11-24 23:30:00", "Nov 24, 2004 11:30pm", "yesterday"
// or "2 hours ago" work. The grammar is LALR(1) with eleven shift/reduce
// conflicts that yacc resolves by shifting; the hand-written parser below
// makes the same choices by always taking the longest alternative the
// next token allows.

type gdTok int

const (
	gdEOF gdTok = iota
	gdAgo
	gdDay
	gdDayZone
	gdID
	gdMeridian
	gdMinuteUnit
	gdMonth
	gdMonthUnit
	gdSecUnit
	gdSNumber
	gdUNumber
	gdZone
	gdDST
	gdDAMinuteUnit // date-aligned minute unit: today, tomorrow, yesterday
	gdChar         // any other character, in val
)

const (
	merAM = iota
	merPM
	mer24
)

const (
	dstOn = iota
	dstOff
	dstMaybe
)

type gdToken struct {
	kind gdTok
	val  int64
}

type gdWord struct {
	name string
	kind gdTok
	val  int64
}

var gdMonthDays = []gdWord{
	{"january", gdMonth, 1}, {"february", gdMonth, 2}, {"march", gdMonth, 3},
	{"april", gdMonth, 4}, {"may", gdMonth, 5}, {"june", gdMonth, 6},
	{"july", gdMonth, 7}, {"august", gdMonth, 8}, {"september", gdMonth, 9},
	{"sept", gdMonth, 9}, {"october", gdMonth, 10}, {"november", gdMonth, 11},
	{"december", gdMonth, 12},
	{"sunday", gdDay, 0}, {"monday", gdDay, 1}, {"tuesday", gdDay, 2},
	{"tues", gdDay, 2}, {"wednesday", gdDay, 3}, {"wednes", gdDay, 3},
	{"thursday", gdDay, 4}, {"thur", gdDay, 4}, {"thurs", gdDay, 4},
	{"friday", gdDay, 5}, {"saturday", gdDay, 6},
}

var gdUnits = []gdWord{
	{"year", gdMonthUnit, 12}, {"month", gdMonthUnit, 1},
	{"fortnight", gdMinuteUnit, 14 * 24 * 60}, {"week", gdMinuteUnit, 7 * 24 * 60},
	{"day", gdMinuteUnit, 24 * 60}, {"hour", gdMinuteUnit, 60},
	{"minute", gdMinuteUnit, 1}, {"min", gdMinuteUnit, 1},
	{"second", gdSecUnit, 1}, {"sec", gdSecUnit, 1},
}

var gdOther = []gdWord{
	{"tomorrow", gdDAMinuteUnit, 24 * 60}, {"yesterday", gdDAMinuteUnit, -24 * 60},
	{"today", gdDAMinuteUnit, 0}, {"now", gdMinuteUnit, 0},
	{"last", gdUNumber, -1}, {"this", gdMinuteUnit, 0}, {"next", gdUNumber, 2},
	{"first", gdUNumber, 1}, {"third", gdUNumber, 3}, {"fourth", gdUNumber, 4},
	{"fifth", gdUNumber, 5}, {"sixth", gdUNumber, 6}, {"seventh", gdUNumber, 7},
	{"eighth", gdUNumber, 8}, {"ninth", gdUNumber, 9}, {"tenth", gdUNumber, 10},
	{"eleventh", gdUNumber, 11}, {"twelfth", gdUNumber, 12}, {"ago", gdAgo, 1},
}

// gdZones holds zone names in minutes west of UTC; DAYZONE entries are the
// standard offset of a daylight zone (an hour is taken off later).
var gdZones = []gdWord{
	{"gmt", gdZone, 0}, {"ut", gdZone, 0}, {"utc", gdZone, 0}, {"wet", gdZone, 0},
	{"bst", gdDayZone, 0}, {"wat", gdZone, 60}, {"at", gdZone, 120},
	{"ast", gdZone, 240}, {"adt", gdDayZone, 240}, {"est", gdZone, 300},
	{"edt", gdDayZone, 300}, {"cst", gdZone, 360}, {"cdt", gdDayZone, 360},
	{"mst", gdZone, 420}, {"mdt", gdDayZone, 420}, {"pst", gdZone, 480},
	{"pdt", gdDayZone, 480}, {"yst", gdZone, 540}, {"ydt", gdDayZone, 540},
	{"hst", gdZone, 600}, {"hdt", gdDayZone, 600}, {"cat", gdZone, 600},
	{"ahst", gdZone, 600}, {"nt", gdZone, 660}, {"idlw", gdZone, 720},
	{"cet", gdZone, -60}, {"met", gdZone, -60}, {"mewt", gdZone, -60},
	{"mest", gdDayZone, -60}, {"swt", gdZone, -60}, {"sst", gdDayZone, -60},
	{"fwt", gdZone, -60}, {"fst", gdDayZone, -60}, {"eet", gdZone, -120},
	{"bt", gdZone, -180}, {"zp4", gdZone, -240}, {"zp5", gdZone, -300},
	{"zp6", gdZone, -360}, {"wast", gdZone, -420}, {"wadt", gdDayZone, -420},
	{"cct", gdZone, -480}, {"jst", gdZone, -540}, {"east", gdZone, -600},
	{"eadt", gdDayZone, -600}, {"gst", gdZone, -600}, {"nzt", gdZone, -720},
	{"nzst", gdZone, -720}, {"nzdt", gdDayZone, -720}, {"idle", gdZone, -720},
}

func lookupWord(list []gdWord, w string) (gdToken, bool) {
	for _, e := range list {
		if e.name == w {
			return gdToken{e.kind, e.val}, true
		}
	}
	return gdToken{}, false
}

// gdLookup classifies a word (letters and dots, lower-cased, at most 19
// characters kept) as getdate's LookupWord does, in the same order.
func gdLookup(w string) gdToken {
	if w == "am" || w == "a.m." {
		return gdToken{gdMeridian, merAM}
	}
	if w == "pm" || w == "p.m." {
		return gdToken{gdMeridian, merPM}
	}
	abbrev := false
	if len(w) == 3 {
		abbrev = true
	} else if len(w) == 4 && w[3] == '.' {
		abbrev = true
		w = w[:3]
	}
	for _, e := range gdMonthDays {
		if abbrev && e.name[:3] == w || !abbrev && e.name == w {
			return gdToken{e.kind, e.val}
		}
	}
	if t, ok := lookupWord(gdZones, w); ok {
		return t
	}
	if w == "dst" {
		return gdToken{gdDST, 0}
	}
	if t, ok := lookupWord(gdUnits, w); ok {
		return t
	}
	if w[len(w)-1] == 's' {
		if t, ok := lookupWord(gdUnits, w[:len(w)-1]); ok {
			return t
		}
	}
	if t, ok := lookupWord(gdOther, w); ok {
		return t
	}
	if len(w) == 1 && isAlpha(w[0]) {
		if v, ok := militaryZone(w[0]); ok {
			return gdToken{gdZone, v}
		}
	}
	nodots := make([]byte, 0, len(w))
	for i := 0; i < len(w); i++ {
		if w[i] != '.' {
			nodots = append(nodots, w[i])
		}
	}
	if len(nodots) != len(w) {
		if t, ok := lookupWord(gdZones, string(nodots)); ok {
			return t
		}
	}
	return gdToken{gdID, 0}
}

// militaryZone maps the single-letter military zones (all but 'j') to
// minutes west of UTC.
func militaryZone(c byte) (int64, bool) {
	switch {
	case c >= 'a' && c <= 'i':
		return int64(c-'a'+1) * 60, true
	case c >= 'k' && c <= 'm':
		return int64(c-'k'+10) * 60, true
	case c >= 'n' && c <= 'y':
		return -int64(c-'n'+1) * 60, true
	case c == 'z':
		return 0, true
	}
	return 0, false
}

type gdLexer struct {
	s   string
	pos int
}

func (l *gdLexer) next() gdToken {
	for {
		for l.pos < len(l.s) && isSpace(l.s[l.pos]) {
			l.pos++
		}
		if l.pos >= len(l.s) {
			return gdToken{gdEOF, 0}
		}
		c := l.s[l.pos]
		if isDigit(c) || c == '-' || c == '+' {
			sign := int64(0)
			if c == '-' || c == '+' {
				sign = 1
				if c == '-' {
					sign = -1
				}
				l.pos++
				if l.pos >= len(l.s) || !isDigit(l.s[l.pos]) {
					continue // a lone sign is skipped
				}
			}
			var n int64
			for l.pos < len(l.s) && isDigit(l.s[l.pos]) {
				n = n*10 + int64(l.s[l.pos]-'0') // wraps like C's long long
				l.pos++
			}
			if sign == 0 {
				return gdToken{gdUNumber, n}
			}
			return gdToken{gdSNumber, sign * n}
		}
		if isAlpha(c) {
			var buf [19]byte
			n := 0
			for l.pos < len(l.s) && (isAlpha(l.s[l.pos]) || l.s[l.pos] == '.') {
				if n < len(buf) {
					b := l.s[l.pos]
					if 'A' <= b && b <= 'Z' {
						b += 'a' - 'A'
					}
					buf[n] = b
					n++
				}
				l.pos++
			}
			return gdLookup(string(buf[:n]))
		}
		if c != '(' {
			l.pos++
			return gdToken{gdChar, int64(c)}
		}
		// A parenthesised comment, possibly nested; unterminated ends input.
		depth := 0
		for {
			if l.pos >= len(l.s) {
				return gdToken{gdEOF, 0}
			}
			c = l.s[l.pos]
			l.pos++
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			}
			if depth <= 0 {
				break
			}
		}
	}
}

// gdState is getdate's PARSER structure.
type gdState struct {
	dstMode                                        int
	dayOrdinal, dayNumber                          int64
	haveDate, haveDay, haveRel, haveTime, haveZone int
	haveDateAlign                                  int
	timezone                                       int64 // minutes west
	day, hour, minutes, month, seconds, year       int64
	meridian                                       int
	relMonth, relSeconds                           int64
}

type gdParser struct {
	lex gdLexer
	tok gdToken
	st  *gdState
}

func (p *gdParser) advance()           { p.tok = p.lex.next() }
func (p *gdParser) is(k gdTok) bool    { return p.tok.kind == k }
func (p *gdParser) isChar(c byte) bool { return p.tok.kind == gdChar && p.tok.val == int64(c) }

// parse runs the grammar; it reports false on a syntax error.
func (p *gdParser) parse() bool {
	p.advance()
	for !p.is(gdEOF) {
		if !p.item() {
			return false
		}
	}
	return true
}

func isUnit(k gdTok) bool {
	return k == gdMinuteUnit || k == gdSecUnit || k == gdMonthUnit || k == gdDAMinuteUnit
}

func (p *gdParser) item() bool {
	st := p.st
	t := p.tok
	switch t.kind {
	case gdUNumber:
		p.advance()
		return p.afterUNumber(t.val)
	case gdSNumber:
		p.advance()
		if !isUnit(p.tok.kind) {
			return false
		}
		p.relunit(t.val, true)
		return true
	case gdMonth:
		p.advance()
		if !p.is(gdUNumber) {
			return false
		}
		st.month, st.day = t.val, p.tok.val
		p.advance()
		if p.isChar(',') {
			p.advance()
			if !p.is(gdUNumber) {
				return false
			}
			st.year = p.tok.val
			p.advance()
		}
		st.haveDate++
	case gdDay:
		p.advance()
		if p.isChar(',') {
			p.advance()
		}
		st.dayOrdinal, st.dayNumber = 0, t.val
		st.haveDay++
	case gdZone:
		p.advance()
		st.timezone, st.dstMode = t.val, dstOff
		if p.is(gdDST) {
			p.advance()
			st.dstMode = dstOn
		}
		st.haveZone++
	case gdDayZone:
		p.advance()
		st.timezone, st.dstMode = t.val, dstOn
		st.haveZone++
	case gdMinuteUnit, gdSecUnit, gdMonthUnit, gdDAMinuteUnit:
		p.relunit(0, false)
	default:
		return false
	}
	return true
}

// relunit applies [number] unit [ago]; the current token is the unit.
func (p *gdParser) relunit(n int64, haveNum bool) {
	st := p.st
	u := p.tok
	p.advance()
	switch u.kind {
	case gdMinuteUnit:
		if haveNum {
			st.relSeconds += n * u.val * 60
		} else {
			st.relSeconds += u.val * 60
		}
	case gdSecUnit:
		if haveNum {
			st.relSeconds += n
		} else {
			st.relSeconds++
		}
	case gdMonthUnit:
		if haveNum {
			st.relMonth += n * u.val
		} else {
			st.relMonth += u.val
		}
	case gdDAMinuteUnit:
		if haveNum {
			st.relSeconds += n * u.val * 60
		} else {
			st.relSeconds += u.val * 60
		}
		st.haveDateAlign++
	}
	if p.is(gdAgo) {
		p.advance()
		st.relSeconds, st.relMonth = -st.relSeconds, -st.relMonth
	}
	st.haveRel++
}

func (p *gdParser) afterUNumber(n int64) bool {
	st := p.st
	switch {
	case p.is(gdMeridian):
		st.hour, st.minutes, st.seconds, st.meridian = n, 0, 0, int(p.tok.val)
		p.advance()
		st.haveTime++
	case p.isChar(':'):
		p.advance()
		if !p.is(gdUNumber) {
			return false
		}
		m := p.tok.val
		p.advance()
		st.hour, st.minutes = n, m
		if p.isChar(':') {
			p.advance()
			if !p.is(gdUNumber) {
				return false
			}
			st.seconds = p.tok.val
			p.advance()
		} else if !p.is(gdSNumber) {
			st.seconds = 0
		}
		switch {
		case p.is(gdMeridian):
			st.meridian = int(p.tok.val)
			p.advance()
		case p.is(gdSNumber):
			// HH:MM[:SS] -hhmm: a numeric zone.
			z := p.tok.val
			p.advance()
			st.meridian, st.dstMode = mer24, dstOff
			st.timezone = -(z%100 + (z/100)*60)
		default:
			st.meridian = mer24
		}
		st.haveTime++
	case p.is(gdDay):
		st.dayOrdinal, st.dayNumber = n, p.tok.val
		p.advance()
		st.haveDay++
	case p.isChar('/'):
		p.advance()
		if !p.is(gdUNumber) {
			return false
		}
		b := p.tok.val
		p.advance()
		if p.isChar('/') {
			p.advance()
			if !p.is(gdUNumber) {
				return false
			}
			c := p.tok.val
			p.advance()
			if n >= 100 {
				st.year, st.month, st.day = n, b, c
			} else {
				st.month, st.day, st.year = n, b, c
			}
		} else {
			st.month, st.day = n, b
		}
		st.haveDate++
	case p.is(gdSNumber):
		// yyyy-mm-dd
		m := p.tok.val
		p.advance()
		if !p.is(gdSNumber) {
			return false
		}
		st.year, st.month, st.day = n, -m, -p.tok.val
		p.advance()
		st.haveDate++
	case p.is(gdMonth):
		mon := p.tok.val
		p.advance()
		st.month, st.day = mon, n
		switch {
		case p.is(gdSNumber): // 17-JUN-1992
			st.year = -p.tok.val
			p.advance()
		case p.is(gdUNumber):
			st.year = p.tok.val
			p.advance()
		}
		st.haveDate++
	case isUnit(p.tok.kind):
		p.relunit(n, true)
	default:
		// A bare number: a year once a date and a time are known, a
		// yyyymmdd date when above 10000, otherwise HH or HHMM.
		if st.haveTime > 0 && st.haveDate > 0 && st.haveRel == 0 {
			st.year = n
		} else if n > 10000 {
			st.haveDate++
			st.day, st.month, st.year = n%100, (n/100)%100, n/10000
		} else {
			st.haveTime++
			if n < 100 {
				st.hour, st.minutes = n, 0
			} else {
				st.hour, st.minutes = n/100, n%100
			}
			st.seconds, st.meridian = 0, mer24
		}
	}
	return true
}

// getDate is __pmGetDate: it interprets s relative to now in the parser's
// zone and returns whole seconds (PCP's result has no fraction).
func (p *timeParser) getDate(s string, now int64) (int64, bool) {
	nowT := time.Unix(now, 0).In(p.loc)
	_, off := nowT.Zone()
	tzoff := int64(-off) / 60
	if nowT.IsDST() {
		tzoff += 60
	}
	st := &gdState{
		year: int64(nowT.Year()), month: int64(nowT.Month()), day: int64(nowT.Day()),
		timezone: tzoff, dstMode: dstMaybe, meridian: mer24,
	}
	gp := &gdParser{lex: gdLexer{s: s}, st: st}
	if !gp.parse() || st.haveTime > 1 || st.haveZone > 1 || st.haveDate > 1 ||
		st.haveDay > 1 || st.haveDateAlign > 1 {
		return 0, false
	}
	var start int64
	if st.haveDate > 0 || st.haveTime > 0 || st.haveDay > 0 || st.haveDateAlign > 0 {
		start = p.gdConvert(st, st.month, st.day, st.year, st.hour, st.minutes, st.seconds, st.meridian, st.dstMode)
		if start < 0 {
			return 0, false
		}
	} else {
		start = now
		if st.haveRel == 0 {
			h, m, sec := nowT.Clock()
			start -= int64(h*3600 + m*60 + sec)
		}
	}
	start += st.relSeconds
	start += p.gdRelativeMonth(st, start, st.relMonth)
	if st.haveDay > 0 && st.haveDate == 0 {
		start += p.gdRelativeDate(start, st.dayOrdinal, st.dayNumber)
	}
	return start, true
}

func gdToSeconds(h, m, s int64, mer int) int64 {
	if m < 0 || m > 59 || s < 0 || s > 59 {
		return -1
	}
	switch mer {
	case mer24:
		if h < 0 || h > 23 {
			return -1
		}
	default:
		if h < 1 || h > 12 {
			return -1
		}
		if h == 12 {
			h = 0
		}
		if mer == merPM {
			h += 12
		}
	}
	return (h*60+m)*60 + s
}

// gdConvert is getdate's Convert. Two-digit years are 1969..2068 with 69
// as the pivot; years before 1970 are rejected. Its count of days to the
// year treats every fourth year as leap (so it is a day out from 2100
// on), as the original does.
func (p *timeParser) gdConvert(st *gdState, month, day, year, h, m, s int64, mer, dst int) int64 {
	if year < 0 {
		year = -year
	}
	if year < 69 {
		year += 2000
	} else if year < 100 {
		year += 1900
	}
	if year < 1970 || year > 1e9 || month < 1 || month > 12 || day < 1 {
		return -1
	}
	leap := year%4 == 0 && (year%100 != 0 || year%400 == 0)
	if day > int64(daysIn(int(month), leap)) {
		return -1
	}
	julian := day - 1 + int64(daysBefore(int(month), false))
	if leap && month > 2 {
		julian++
	}
	years := year - 1970
	julian += years*365 + (year-1-1968)/4 // multiples of 4 in [1970, year)
	julian *= 86400
	julian += st.timezone * 60
	tod := gdToSeconds(h, m, s, mer)
	if tod < 0 {
		return -1
	}
	julian += tod
	if dst == dstOn || (dst == dstMaybe && time.Unix(julian, 0).In(p.loc).IsDST()) {
		julian -= 3600
	}
	return julian
}

func (p *timeParser) localHour(t int64) int64 {
	return int64(time.Unix(t, 0).In(p.loc).Hour())
}

func (p *timeParser) gdDSTCorrect(start, future int64) int64 {
	startDay := (p.localHour(start) + 1) % 24
	futureDay := (p.localHour(future) + 1) % 24
	return (future - start) + (startDay-futureDay)*3600
}

func (p *timeParser) gdRelativeDate(start, ordinal, number int64) int64 {
	wd := int64(time.Unix(start, 0).In(p.loc).Weekday())
	off := start + 86400*((number-wd+7)%7)
	if ordinal <= 0 {
		off += 7 * 86400 * ordinal
	} else {
		off += 7 * 86400 * (ordinal - 1)
	}
	return p.gdDSTCorrect(start, off)
}

func (p *timeParser) gdRelativeMonth(st *gdState, start, rel int64) int64 {
	if rel == 0 {
		return 0
	}
	t := time.Unix(start, 0).In(p.loc)
	month := 12*int64(t.Year()) + int64(t.Month()-1) + rel
	year := month / 12
	month = month%12 + 1
	h, m, s := t.Clock()
	return p.gdDSTCorrect(start, p.gdConvert(st, month, int64(t.Day()), year, int64(h), int64(m), int64(s), mer24, dstMaybe))
}
