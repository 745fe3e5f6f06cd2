package summary

import (
	"math/big"

	"github.com/pcptools/pcptools/stream"
)

// timeval is libpcp's struct timeval: pmlogsummary does all its time
// arithmetic on microseconds, whatever the archive's precision.
type timeval struct{ sec, usec int64 }

// toTimeval truncates a timestamp to microseconds, as pmFetchArchive and
// pmGetArchiveEnd do.
func toTimeval(t stream.Timestamp) timeval { return timeval{t.Sec, int64(t.Nsec) / 1000} }

func (a timeval) stamp() stream.Timestamp {
	return stream.Timestamp{Sec: a.sec, Nsec: int32(a.usec * 1000)}
}

// notAfter reports a <= b, pmlogsummary's window test.
func (a timeval) notAfter(b timeval) bool {
	return b.sec > a.sec || b.sec == a.sec && b.usec >= a.usec
}

// tsub is pmlogsummary's tsub: a - b, clipped at zero.
func tsub(a, b timeval) timeval {
	a.sec -= b.sec
	a.usec -= b.usec
	if a.usec < 0 {
		a.usec += 1000000
		a.sec--
	}
	if a.sec < 0 {
		return timeval{}
	}
	return a
}

// tadd is pmtimevalInc.
func tadd(a, b timeval) timeval {
	a.sec += b.sec
	a.usec += b.usec
	if a.usec >= 1000000 {
		a.usec -= 1000000
		a.sec++
	}
	return a
}

// realCache remembers recent conversions: most instances of a record share
// the interval since their last sample, so one conversion serves them all.
type realCache struct {
	ents [64]struct {
		tv  timeval
		ok  bool
		val float64
	}
	q, s, u big.Float
}

// toReal is pmtimevalToReal: sec + usec/1e6 computed in x87 long double
// (64-bit mantissa, round to nearest even at each step) and rounded to a
// double. Plain float64 arithmetic can differ in the last bit, and
// pmlogsummary's averages divide by these values.
func (c *realCache) toReal(t timeval) float64 {
	if t.usec == 0 {
		return float64(t.sec) // exact in long double; one rounding to double
	}
	e := &c.ents[uint64(t.sec*31+t.usec)%uint64(len(c.ents))]
	if e.ok && e.tv == t {
		return e.val
	}
	c.q.SetPrec(64).SetMode(big.ToNearestEven).SetInt64(t.usec)
	c.u.SetPrec(64).SetInt64(1000000)
	c.q.Quo(&c.q, &c.u)
	c.s.SetPrec(64).SetMode(big.ToNearestEven).SetInt64(t.sec)
	c.s.Add(&c.s, &c.q)
	v, _ := c.s.Float64()
	e.tv, e.ok, e.val = t, true, v
	return v
}
