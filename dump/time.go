package dump

import (
	"math/big"
	"strconv"
	"time"

	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// timeCache formats the seconds part of timestamps, remembering the last
// second it converted: records come in time order, and a zone conversion
// costs more than the rest of a record's line.
type timeCache struct {
	loc   *time.Location
	valid bool
	sec   int64
	clock [8]byte  // HH:MM:SS
	date  []byte   // "Www Mmm DD "
	year  []byte   // "YYYY"
	dbuf  [40]byte // backing for date and year
}

func (c *timeCache) fill(sec int64) {
	if c.valid && c.sec == sec {
		return
	}
	c.valid, c.sec = true, sec
	ts := stream.Timestamp{Sec: sec}
	full := pcptime.AppendDate(c.dbuf[:0], ts, c.loc, 0) // "Www Mmm DD HH:MM:SS YYYY"
	copy(c.clock[:], full[11:19])
	c.date = full[:11]
	c.year = full[20:]
}

// appendTime appends HH:MM:SS and the fraction with prec digits.
func (c *timeCache) appendTime(dst []byte, t stream.Timestamp, prec int) []byte {
	c.fill(t.Sec)
	dst = append(dst, c.clock[:]...)
	return appendFrac(dst, int64(t.Nsec), prec)
}

// appendDate appends "Www Mmm DD HH:MM:SS.frac YYYY".
func (c *timeCache) appendDate(dst []byte, t stream.Timestamp, prec int) []byte {
	c.fill(t.Sec)
	dst = append(dst, c.date...)
	dst = append(dst, c.clock[:]...)
	dst = appendFrac(dst, int64(t.Nsec), prec)
	dst = append(dst, ' ')
	return append(dst, c.year...)
}

// diffCalc computes time differences as pmdumplog prints them with -xx:
// the whole seconds and the fraction (nanoseconds over 1e9, or
// microseconds over 1e6 for event records) are added in long double
// (64-bit mantissa) and the sum is rounded to a double before printf
// rounds it to the decimals shown. The exact sum is a whole number of
// nanoseconds, so any double within an ulp of it prints the same nine
// decimals while that ulp is well under half a nanosecond: below 2^20
// seconds float64 arithmetic gives the same digits. Beyond that (archives
// of more than twelve days, with -xx) the long double arithmetic is
// reproduced with big.Float.
type diffCalc struct {
	q, s, u big.Float
}

// appendDiff appends ds + dn/unit with prec decimals.
func (c *diffCalc) appendDiff(dst []byte, ds, dn int64, unit float64, prec int) []byte {
	var f float64
	if ds > -1<<20 && ds < 1<<20 {
		f = float64(ds) + float64(dn)/unit
	} else {
		c.q.SetPrec(64).SetInt64(dn)
		c.u.SetPrec(64).SetFloat64(unit)
		c.q.Quo(&c.q, &c.u)
		c.s.SetPrec(64).SetInt64(ds)
		c.s.Add(&c.s, &c.q)
		f, _ = c.s.Float64()
	}
	return strconv.AppendFloat(dst, f, 'f', prec, 64)
}
