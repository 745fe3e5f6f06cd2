package pcptime

import (
	"math/big"
	"strconv"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// The precisions PCP prints fractions of a second with.
const (
	Millis = 3 // pmlogsummary's times and label lines
	Micros = 6 // pmdumplog on v2 archives
	Nanos  = 9 // pmdumplog on v3 archives
)

// PrecisionFor returns the precision pmdumplog uses for an archive of the
// given format version: microseconds for v2, nanoseconds for v3.
func PrecisionFor(version int) int {
	if version >= 3 {
		return Nanos
	}
	return Micros
}

var (
	weekdays = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	months   = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// AppendTime appends ts as pmdumplog prints a record's time without -x:
// HH:MM:SS followed by a '.' and prec digits of the fraction, truncated
// (not rounded), as PCP divides nanoseconds down. prec 0 prints no
// fraction and no dot; prec is clamped to 0..9.
func AppendTime(dst []byte, ts stream.Timestamp, loc *time.Location, prec int) []byte {
	t := ts.Time().In(loc)
	h, m, s := t.Clock()
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	return appendFrac(dst, ts.Nsec, prec)
}

// FormatTime is AppendTime returning a string: "23:10:06.248424".
func FormatTime(ts stream.Timestamp, loc *time.Location, prec int) string {
	return string(AppendTime(make([]byte, 0, 18), ts, loc, prec))
}

// AppendDate appends ts in the long form PCP prints for pmdumplog -x
// records and for the "commencing"/"ending" lines of pmdumplog -l and
// pmlogsummary -l: the first ten characters of asctime(3) ("Wed Nov 24",
// the day of the month padded with a space to two columns), the time as
// AppendTime prints it, and the year: "Wed Nov 24 23:10:06.248424 2004".
// Like PCP, which prints asctime's year with %4.4s, a year beyond 9999
// is cut to its first four digits.
func AppendDate(dst []byte, ts stream.Timestamp, loc *time.Location, prec int) []byte {
	t := ts.Time().In(loc)
	dst = appendDay(dst, t)
	dst = append(dst, ' ')
	dst = AppendTime(dst, ts, loc, prec)
	dst = append(dst, ' ')
	return appendYear(dst, t.Year())
}

// FormatDate is AppendDate returning a string.
func FormatDate(ts stream.Timestamp, loc *time.Location, prec int) string {
	return string(AppendDate(make([]byte, 0, 36), ts, loc, prec))
}

// AppendCtime appends the 24 characters of ctime(3) without its newline,
// as PCP prints them with %24.24s ("Log finished at ..." in pmdumplog -r):
// "Wed Nov 24 23:10:06 2004".
func AppendCtime(dst []byte, ts stream.Timestamp, loc *time.Location) []byte {
	return AppendDate(dst, ts, loc, 0)
}

// FormatCtime is AppendCtime returning a string.
func FormatCtime(ts stream.Timestamp, loc *time.Location) string {
	return string(AppendCtime(make([]byte, 0, 24), ts, loc))
}

func appendDay(dst []byte, t time.Time) []byte {
	dst = append(dst, weekdays[t.Weekday()]...)
	dst = append(dst, ' ')
	dst = append(dst, months[t.Month()-1]...)
	d := t.Day()
	if d < 10 {
		return append(dst, ' ', ' ', byte('0'+d))
	}
	return append(dst, ' ', byte('0'+d/10), byte('0'+d%10))
}

func appendYear(dst []byte, y int) []byte {
	var b [20]byte
	i := len(b)
	neg := y < 0
	if neg {
		y = -y
	}
	for {
		i--
		b[i] = byte('0' + y%10)
		y /= 10
		if y == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	s := b[i:]
	if len(s) > 4 {
		s = s[:4]
	}
	return append(dst, s...)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

func appendFrac(dst []byte, nsec int32, prec int) []byte {
	if prec <= 0 {
		return dst
	}
	if prec > 9 {
		prec = 9
	}
	n := nsec
	if n < 0 || n >= 1e9 {
		n = 0 // not a valid timestamp; never print garbage digits
	}
	var b [9]byte
	for i := 8; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	dst = append(dst, '.')
	return append(dst, b[:prec]...)
}

// AppendElapsed appends ts-since in seconds with prec decimals, as
// pmdumplog -xx prints a record's offset from the archive start (inside
// parentheses, which are not appended here): "60.057537". The difference
// is formed as libpcp's __pmTimestampSub does, in x87 long double then
// rounded to double, and printed rounded as printf("%.*f") prints it.
func AppendElapsed(dst []byte, ts, since stream.Timestamp, prec int) []byte {
	frac := new(big.Float).SetPrec(64).SetInt64(int64(ts.Nsec) - int64(since.Nsec))
	frac.Quo(frac, new(big.Float).SetPrec(64).SetInt64(1e9))
	frac.Add(frac, new(big.Float).SetPrec(64).SetInt64(ts.Sec-since.Sec))
	v, _ := frac.Float64()
	return strconv.AppendFloat(dst, v, 'f', max(prec, 0), 64)
}
