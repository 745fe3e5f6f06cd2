package summary

import (
	"io"
	"math"
	"strconv"

	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/stream"
)

// Debug selects pmlogsummary's diagnostic traces (-D appl0,appl1,appl2),
// which PCP's QA tests compare: appl0 the first values, counter bases, bin
// choices and marks; appl1 every update; appl2 new minima and maxima.
type Debug struct{ Appl0, Appl1, Appl2 bool }

// ParseDebug reads a -D argument: PCP's debug option names, separated by
// commas; those other than appl0, appl1, appl2 and all change nothing here.
func ParseDebug(arg string, d Debug) Debug {
	return Debug{d.Appl0 || toolio.DebugOn(arg, "appl0"), d.Appl1 || toolio.DebugOn(arg, "appl1"),
		d.Appl2 || toolio.DebugOn(arg, "appl2")}
}

// tracer writes the traces as pmlogsummary does: to standard error,
// unbuffered, except the mark lines, which go to standard output.
type tracer struct {
	w     io.Writer // standard error
	out   io.Writer // standard output (buffered)
	names func(stream.PMID) []string
	inst  func(stream.InDomID, int32) (string, bool)
	stamp func([]byte, timeval) []byte // pmPrintStamp
	// markStamp is printstamp(ts, '\n'): the mark lines' time.
	markStamp func([]byte, timeval) []byte
	prec      int
	b         []byte
}

// head starts a line with the metric's names.
func (t *tracer) head(p stream.PMID) {
	t.b = t.b[:0]
	t.appendNames(p)
}

func (t *tracer) appendNames(p stream.PMID) {
	for i, n := range t.names(p) {
		if i > 0 {
			t.b = append(t.b, " or "...)
		}
		t.b = append(t.b, n...)
	}
}

func (t *tracer) f(v float64) { t.b = appendC(t.b, v, 6) }

func (t *tracer) s(s string) { t.b = append(t.b, s...) }

func (t *tracer) d(v int64) { t.b = strconv.AppendInt(t.b, v, 10) }

func (t *tracer) flush() { t.w.Write(t.b) }

// appendC appends v as printf("%.*f") does (a negative precision means
// the default, 6; NaN and infinities as glibc spells them).
func appendC(b []byte, v float64, prec int) []byte {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	if prec < 0 {
		prec = 6
	}
	return strconv.AppendFloat(b, v, 'f', prec, 64)
}

func (t *tracer) initially(p stream.PMID, min, max float64) {
	t.head(p)
	t.s(" Initially - min/max=")
	t.f(min)
	t.s("/")
	t.f(max)
	t.s("\n")
	t.flush()
}

func (t *tracer) base(p stream.PMID, val float64, count uint32) {
	t.head(p)
	t.s(" base value is ")
	t.f(val)
	t.s(", count ")
	t.d(int64(int32(count + 1)))
	t.s("\n")
	t.flush()
}

func (t *tracer) wrapped(p stream.PMID) {
	t.head(p)
	t.s(" counter wrapped or <mark>\n")
	t.flush()
}

func (t *tracer) extreme(which string, p stream.PMID, indom stream.InDomID, inst int32, rate float64, ts timeval) {
	t.b = append(t.b[:0], "new "...)
	t.s(which)
	t.s(" value for ")
	t.appendNames(p)
	name, _ := t.inst(indom, inst)
	t.s(" (inst[")
	t.s(name)
	t.s("]: ")
	t.f(rate)
	t.s(") at ")
	t.b = t.stamp(t.b, ts)
	t.s("\n")
	t.flush()
}

func (t *tracer) update(p stream.PMID, counter bool, is *instStats, diff, rate, val, span float64) {
	t.b = append(t.b[:0], "++ "...)
	t.appendNames(p)
	t.s(" timedelta=")
	t.f(diff)
	t.s(" count=")
	t.d(int64(int32(is.count)))
	t.s("\nsum=")
	t.f(is.sum)
	t.s(" min=")
	t.f(is.min)
	t.s(" max=")
	t.f(is.max)
	t.s(" stocsum=")
	t.f(is.stocave)
	if counter {
		t.s("\nrate=")
		t.f(rate)
		t.s(" timesum=")
		t.f(is.timeave)
		t.s(" (+")
		t.f(float64(diff*(val-is.lastval)) / 2)
	} else {
		t.s("\nlastval=")
		t.f(is.lastval)
		t.s(" timesum=")
		t.f(is.timeave)
		t.s(" (+")
		t.f(float64(is.lastval * diff))
	}
	t.s(") timespan=")
	t.f(span)
	t.s("\n")
	t.flush()
}

func (t *tracer) bin(p stream.PMID, index, nbins int, val, min, max float64) {
	t.head(p)
	t.s(" selected bin ")
	t.d(int64(index))
	t.s("/")
	t.d(int64(nbins))
	t.s(" (val=")
	t.b = appendC(t.b, val, t.prec)
	t.s(", min=")
	t.b = appendC(t.b, min, t.prec)
	t.s(", max=")
	t.b = appendC(t.b, max, t.prec)
	t.s(")\n")
	t.flush()
}

func (t *tracer) mark(ts timeval) {
	b := t.markStamp(t.b[:0], ts)
	b = append(b, " - mark record\n\n"...)
	t.out.Write(b)
	t.b = b
}
