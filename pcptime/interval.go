package pcptime

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// SyntaxError reports a time or interval specification PCP would reject.
type SyntaxError struct {
	Spec   string
	Offset int // byte offset in Spec where parsing stopped
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("time specification %q: offset %d: %s", e.Spec, e.Offset, e.Msg)
}

// Caret renders the error the way PCP prints it: the specification, then a
// caret under the offending character and the message.
func (e *SyntaxError) Caret() string {
	var b strings.Builder
	b.WriteString(e.Spec)
	b.WriteByte('\n')
	for i := 0; i < e.Offset && i < len(e.Spec); i++ {
		if c := e.Spec[i]; c > ' ' && c < 0x7f {
			b.WriteByte(' ')
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteString("^ -- ")
	b.WriteString(e.Msg)
	return b.String()
}

const (
	msgUnexpected = "unexpected value"
	msgMore       = "more information expected"
	msgAlign      = "alignment specified by -A switch could not be applied"
)

// maxTimeT is PM_MAX_TIME_T on 64-bit systems, the largest interval PCP
// accepts.
const maxTimeT = math.MaxInt64

// intervalUnits are PCP's interval scale names, matched case-insensitively
// against the whole alphabetic word after a number, with one trailing 's'
// dropped first (so "ms" is "m", minutes, exactly as in PCP).
var intervalUnits = []struct {
	name  string
	scale float64 // seconds per unit; negative means divide by -scale
}{
	{"nanosecond", -1e9}, {"microsecond", -1e6}, {"millisecond", -1e3},
	{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400},
	{"msec", -1e3}, {"usec", -1e6}, {"nsec", -1e9},
	{"sec", 1}, {"min", 60}, {"hr", 3600},
	{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400},
}

// ParseInterval parses an interval the way pmParseHighResInterval does:
// one or more numbers, each optionally followed by a unit, summed. Numbers
// are non-negative decimals ("1.5", "2e3"); units are nanosecond,
// microsecond, millisecond, second, minute, hour, day and the short forms
// nsec, usec, msec, sec, min, hr, s, m, h, d, in any case, with an
// optional trailing 's'; a number with no unit is seconds. Spaces may
// separate everything: "30", "1.5s", "2min", "1h30m", "1 hour 30 mins",
// "3days". Beware PCP's reading of "10ms": the trailing 's' is dropped
// and "m" is minutes.
//
// The sum is computed in float64 and rounded to nanoseconds as PCP does.
// Negative intervals are not intervals; the sign forms of -S and -T are
// handled by ParseWindow.
func ParseInterval(s string) (time.Duration, error) {
	sec, nsec, err := parseInterval(s)
	if err != nil {
		return 0, err
	}
	if sec > math.MaxInt64/int64(time.Second)-1 {
		return 0, &SyntaxError{Spec: s, Offset: 0, Msg: "interval too long for a time.Duration"}
	}
	return time.Duration(sec)*time.Second + time.Duration(nsec), nil
}

// parseInterval returns the interval as PCP's struct timespec.
func parseInterval(s string) (sec, nsec int64, err error) {
	secs, err := parseIntervalSeconds(s)
	if err != nil {
		return 0, 0, err
	}
	if secs >= maxTimeT {
		// PCP's conversion to time_t is undefined here.
		return 0, 0, &SyntaxError{Spec: s, Offset: 0, Msg: "interval too long"}
	}
	sec, nsec = timespecFromReal(secs)
	return sec, nsec, nil
}

func parseIntervalSeconds(spec string) (float64, error) {
	if spec == "" {
		return 0, &SyntaxError{Spec: spec, Msg: "Null or empty specification"}
	}
	pos := 0
	sum := 0.0
	for pos < len(spec) {
		d, end, ok := parseDouble(spec, pos, 0, maxTimeT)
		if !ok {
			break
		}
		pos = end
		for pos < len(spec) && isSpace(spec[pos]) {
			pos++
		}
		w := pos
		for w < len(spec) && isAlpha(spec[w]) {
			w++
		}
		word := spec[pos:w]
		if len(word) > 1 && (word[len(word)-1] == 's' || word[len(word)-1] == 'S') {
			word = word[:len(word)-1]
		}
		if word == "" {
			sum += d
			pos = w
			continue
		}
		found := false
		for _, u := range intervalUnits {
			if strings.EqualFold(word, u.name) {
				if u.scale < 0 {
					sum += d / -u.scale
				} else {
					sum += d * u.scale
				}
				found = true
				break
			}
		}
		if !found {
			break
		}
		pos = w
	}
	if pos < len(spec) {
		return 0, &SyntaxError{Spec: spec, Offset: pos, Msg: msgUnexpected}
	}
	return sum, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// parseDouble is PCP's parseDouble: skip white space, read a number as
// strtod(3) would, and accept it only if it lies in [lo, hi]. On failure
// the position is left where it was (PCP leaves it after the white space,
// which only matters for error offsets).
//
// Unlike strtod this reads decimal numbers only: hexadecimal, "inf" and
// "nan" are rejected.
func parseDouble(s string, pos int, lo, hi float64) (float64, int, bool) {
	i := pos
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, pos, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	v, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil && !isRangeErr(err) {
		return 0, pos, false
	}
	if v < lo || v > hi {
		return 0, pos, false
	}
	return v, i, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// timespecFromReal is pmtimespecFromReal: whole seconds by truncation, and
// the fraction scaled and rounded in x87 long double arithmetic.
func timespecFromReal(secs float64) (int64, int64) {
	sec := int64(secs)
	nsec := ldMulAddTrunc(secs-float64(sec), 1e9, 0.5)
	if nsec >= 1e9 {
		sec++
		nsec -= 1e9
	}
	return sec, nsec
}

// ldMulAddTrunc computes (long)((long double)a * m + add) as C does on
// x86-64, where long double has a 64-bit mantissa: each operation rounds
// to 64 bits, the conversion truncates toward zero. Doing it in float64
// would occasionally land on the other side of an integer (6.248424 read
// as a double is 6.24842399999999983..., whose fraction times 1e9 is an
// integer in float64 but 248423999.99999983 in long double).
func ldMulAddTrunc(a, m, add float64) int64 {
	x := new(big.Float).SetPrec(64).SetFloat64(a)
	x.Mul(x, new(big.Float).SetPrec(64).SetFloat64(m))
	if add != 0 {
		x.Add(x, new(big.Float).SetPrec(64).SetFloat64(add))
	}
	v, _ := x.Int64() // truncates toward zero
	return v
}
