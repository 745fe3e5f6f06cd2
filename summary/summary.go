package summary

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// Options select the columns and the window, as pmlogsummary's flags do.
// The zero value prints the time average (with no decimals) and the units.
type Options struct {
	Stochastic bool // -b, -x, -a: the stochastic average
	NoTimeAve  bool // -x, -s: no time average
	Sum        bool // -s: the sum (counters: of the deltas, in native units)
	Min        bool // -m
	Max        bool // -M
	MinTime    bool // -i
	MaxTime    bool // -I
	Count      bool // -y
	Label      bool // -l
	Header     bool // -H
	// Delim separates the fields: ' ' (the default when 0), '\t' (-f)
	// or ',' (-F).
	Delim byte
	// Bins is -B: a histogram of each instance's values (of its rates,
	// for counters) in this many bins between its minimum and maximum.
	Bins int
	// Precision is -p, digits after the decimal point (ParseCommandLine
	// starts from DefaultPrecision, 3); a negative value means 6, as
	// printf("%.*f") has it.
	Precision int

	Start, Finish string // -S, -T in PCP's time syntax
	ArchiveZone   bool   // -z
	Zone          string // -Z

	// Metrics restricts the output to these specifications (leaf or
	// non-leaf names, with instances); empty: every metric.
	Metrics []string

	// JSON prints one JSON object per metric-instance instead of
	// pmlogsummary's lines (see json.go); no zone note, no header.
	JSON bool
	// Percentiles (in percent) adds these percentiles to the JSON
	// objects (spread.go).
	Percentiles []float64
	// CSV prints a header and one row per metric-instance, with the
	// JSON objects' fields (csv.go).
	CSV bool
	// HostColumn starts each JSON object with "host":Host and each CSV
	// row (and the header) with a host column: for summaries of many
	// hosts (RunHosts). NoCSVHeader leaves the CSV header out.
	HostColumn  bool
	Host        string
	NoCSVHeader bool

	// OnRecord, when set, sees each record of the first pass as it is
	// read, and AfterRead is called once the archive has been read,
	// before anything is printed (a progress display).
	OnRecord  func(stream.Record)
	AfterRead func(ok bool)
	// OnFetchError, when set, is told when the records could not all be
	// read, as the reading stops and before the statistics are printed
	// (pmlogsummary says "fetch failed" then); Run still returns a
	// *FetchError.
	OnFetchError func(error)

	// CounterWrap treats a counter that went down as one that wrapped
	// (pmlogsummary does when $PCP_COUNTER_WRAP is set).
	CounterWrap bool

	// Prog names the tool in messages ("pmlogsummary" or "pcpsummary").
	Prog string
	// Warn receives what pmlogsummary writes on standard error and
	// carries on after (unknown metric names, bad specifications, and
	// with Verbose, per-metric fetch problems); nil discards it.
	Warn    io.Writer
	Verbose bool // -v
	// Debug turns on pmlogsummary's traces (-D appl0,appl1,appl2), on
	// Warn; the mark traces go to w.
	Debug Debug
	// Workers is how many goroutines share the metrics between them
	// while reading (parallel.go): 0 picks one per core (GOMAXPROCS),
	// at most maxWorkers; 1 reads and summarises on one goroutine.
	// Traces (-D), -v and reduced archives always take one.
	Workers int
	// Shape (pcpsummary --shape) follows the summary with the archive's
	// shape: bytes, values and churn per metric and instance domain
	// (shape.go).
	Shape bool
	// Fleet (pcpsummary --folio --fleet): RunHosts follows the hosts'
	// summaries with one line per metric and instance over every host
	// (rollup.go).
	Fleet bool
	// OnStat, when set, sees each metric-instance's statistics as they
	// are printed (the fleet roll-up collects them).
	OnStat func(*Stat)
	// Location, when not nil, overrides ArchiveZone, Zone and the local
	// zone, and no note about the zone is printed (tests).
	Location *time.Location
}

// DefaultPrecision is pmlogsummary's -p default.
const DefaultPrecision = 3

// Archive is what Run reads: *format.Archive.
type Archive interface {
	Label() stream.Label
	Meta() (*format.Metadata, error)
	End() (stream.Timestamp, bool, error)
	Records(opts ...format.RecordsOption) stream.CloserIterator
}

// lateMeta is an Archive whose metadata comes as its records are read
// (Streamed of a stream without a METADATA frame): descSource gives the
// descriptors so far (nil: Meta is whole), wholeMeta the whole metadata
// once the records are read.
type lateMeta interface {
	descSource() descSource
	wholeMeta() (*format.Metadata, error)
}

// FetchError is a failure to read the window's records after some were
// summarised: the summary of what was read is printed (as pmlogsummary
// prints it), and the tool still fails.
type FetchError struct{ Err error }

func (e *FetchError) Error() string { return "fetch failed: " + e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// maxTime is PM_MAX_TIME_T, the end of a window whose archive has no end.
const maxTime = math.MaxInt64

type summarizer struct {
	o      Options
	w      *bufio.Writer
	warn   io.Writer
	a      Archive
	meta   *dump.ArchiveMeta
	descs  descSource // what the accumulators look descriptors up in (meta, or a late stream's)
	acc    *accumulator
	loc    *time.Location
	start  timeval
	finish timeval
	// logspan is the window's length in seconds, dayflag whether times
	// print with their date (windows over a day).
	logspan float64
	dayflag bool
	spec    *MetricSpec
	b       []byte
	md      *format.Metadata
	shape   *shape // --shape's measures, nil without it
	// red holds the aggregates of an archive reduced by pcpreduce
	// (reduced.go); nil otherwise, and always for pmlogsummary.
	red *reduced
}

// Run prints the summary of archive a, as pmlogsummary prints it, on w.
func Run(w io.Writer, a Archive, o Options) (err error) {
	if o.Delim == 0 {
		o.Delim = ' '
	}
	if o.Prog == "" {
		o.Prog = "pcpsummary"
	}
	// Standard output is buffered as stdio buffers a file (4 KiB blocks),
	// and standard error not at all, so that the two interleave as
	// pmlogsummary's do when they go to one file (PCP's QA tests).
	s := &summarizer{o: o, w: bufio.NewWriterSize(w, 4096), a: a, warn: o.Warn}
	if s.warn == nil {
		s.warn = io.Discard
	}
	defer func() {
		if ferr := s.w.Flush(); err == nil {
			err = ferr
		}
	}()
	return s.run()
}

func (s *summarizer) run() error {
	lab := s.a.Label()
	md, err := s.a.Meta()
	if err != nil {
		return err
	}
	if s.meta, err = dump.NewArchiveMeta(md); err != nil {
		return err
	}
	s.md = md
	if s.o.Shape {
		s.shape = newShape()
	}
	if s.o.Location != nil {
		s.loc = s.o.Location
	} else {
		if s.loc, err = pcptime.ChooseZone(s.o.ArchiveZone, s.o.Zone, lab.Timezone, lab.Zoneinfo); err != nil {
			if s.o.Zone == "" {
				return err
			}
			// glibc reads a $TZ it cannot parse as UTC, and so does
			// pmlogsummary with -Z.
			fmt.Fprintf(s.warn, "%s: warning: %v; reporting in UTC, as PCP does\n", s.o.Prog, err)
			s.loc = time.UTC
		}
		if !s.o.JSON && !s.o.CSV {
			s.w.WriteString(pcptime.ZoneNote(s.o.ArchiveZone, s.o.Zone, lab.Hostname))
		}
	}
	var descs descSource = s.meta
	lm, isLate := s.a.(lateMeta)
	if isLate {
		if d := lm.descSource(); d != nil {
			descs = d
		} else {
			isLate = false
		}
	}
	s.descs = descs
	s.acc = newAccumulator(&s.o, descs)
	if s.o.Prog != "pmlogsummary" {
		var mu sync.Mutex // (the workers of parallel.go share it)
		s.acc.say = func(m string) {
			mu.Lock()
			io.WriteString(s.warn, m)
			mu.Unlock()
		}
	}
	s.red = newReduced(&s.o, md, func(format string, args ...any) {
		fmt.Fprintf(s.warn, "%s: warning: "+format, append([]any{s.o.Prog}, args...)...)
	})
	if s.red != nil && !s.o.JSON && !s.o.CSV {
		fmt.Fprintf(s.w, "Note: reduced archive (pcpreduce, %g s intervals): statistics from its aggregates; minimum and maximum times are interval ends\n", s.red.interval)
	}
	if err := s.window(lab); err != nil {
		return err
	}
	late, lateEnd := s.a.(interface {
		readEnd() (stream.Timestamp, bool)
	})
	if !lateEnd {
		s.printAnyLabel(lab)
	}
	if s.o.Verbose {
		s.acc.warnf = s.pmiderr
	}
	if d := s.o.Debug; d.Appl0 || d.Appl1 || d.Appl2 {
		s.acc.dbg = d
		s.acc.tr = &tracer{w: s.warn, out: s.w, names: s.meta.Names, inst: s.meta.InstName, prec: s.o.Precision,
			stamp: func(b []byte, t timeval) []byte {
				return pcptime.AppendTime(b, t.stamp(), s.loc, pcptime.Millis)
			},
			markStamp: func(b []byte, t timeval) []byte { return s.printstamp(b, t, '\n') },
		}
	}
	var fetchErr error
	if n := s.workers(); n > 1 {
		if fetchErr = s.parallel(n); fetchErr != nil && s.acc.fatal != nil {
			return s.acc.fatal
		}
	} else {
		if err := s.pass(s.acc.add); err != nil {
			if s.acc.fatal != nil {
				return s.acc.fatal
			}
			fetchErr = err
		}
		if s.o.Bins > 0 {
			s.acc.binning = true
			if s.o.Debug.Appl0 {
				io.WriteString(s.warn, "resetting for second iteration\n")
			}
			if err := s.pass(s.acc.bin); err != nil && fetchErr == nil {
				fetchErr = err
			}
		}
	}
	if lateEnd {
		// A stream's end is its last record's time, known now; nothing
		// printed so far depends on it.
		if t, ok := late.readEnd(); ok {
			s.finish = toTimeval(t)
			if s.o.Start != "" || s.o.Finish != "" {
				// -S and -T need no end to filter the records
				// (CanStream), but the window printed is theirs
				// resolved against it, as for an archive.
				w, err := pcptime.ParseWindow(s.o.Start, s.o.Finish, "", "", lab.Start, t, s.loc)
				if err != nil {
					return err
				}
				s.start, s.finish = toTimeval(w.Start), toTimeval(w.End)
			}
			s.logspan = s.acc.rc.toReal(s.finish) - s.acc.rc.toReal(s.start)
			s.dayflag = tsub(s.finish, s.start).sec > 86400
		}
		s.printAnyLabel(lab)
	}
	if isLate {
		// The output is made from the stream's whole metadata.
		md, err := lm.wholeMeta()
		if err != nil {
			if fetchErr == nil {
				fetchErr = err
			}
		} else if s.meta, err = dump.NewArchiveMeta(md); err != nil {
			return err
		} else {
			s.md = md
		}
	}
	if s.o.AfterRead != nil {
		s.o.AfterRead(fetchErr == nil)
	}
	if fetchErr != nil && s.o.OnFetchError != nil {
		s.o.OnFetchError(fetchErr)
	}
	if s.o.CSV && !s.o.NoCSVHeader {
		s.b = appendCSVHeaderFor(s.b[:0], &s.o, s.o.HostColumn)
		s.w.Write(s.b)
	} else if s.o.Header && !s.o.JSON {
		s.printHeader()
	}
	var bad []string
	if len(s.o.Metrics) == 0 {
		s.meta.Traverse("", s.printMetric)
	} else {
		for _, m := range s.o.Metrics {
			spec, err := ParseMetricSpec(m)
			if err != nil {
				fmt.Fprint(s.warn, err.Error())
				bad = append(bad, m)
				continue
			}
			s.spec = &spec
			if !s.meta.Traverse(spec.Metric, s.printMetric) {
				fmt.Fprintf(s.warn, "%s: PMNS traversal failed for %s: Unknown metric name\n", s.o.Prog, spec.Metric)
				bad = append(bad, m)
			}
			s.spec = nil
		}
	}
	if s.shape != nil {
		s.shape.print(s, s.md)
	}
	if fetchErr != nil {
		return &FetchError{fetchErr}
	}
	if len(bad) > 0 {
		return &NamesError{bad}
	}
	return nil
}

// NamesError reports metric specifications that did not parse or name
// nothing in the archive; the others were summarised, and each bad one
// was reported on Warn. pmlogsummary says so and exits 0; pcpsummary
// fails.
type NamesError struct{ Specs []string }

func (e *NamesError) Error() string {
	return fmt.Sprintf("%d of the metric names given are unknown or malformed: %s", len(e.Specs), strings.Join(e.Specs, ", "))
}

func (s *summarizer) pmiderr(p stream.PMID, format string, args ...any) {
	fmt.Fprintf(s.warn, "%s: ", s.o.Prog)
	names := s.meta.Names(p)
	for i, n := range names {
		if i > 0 {
			fmt.Fprint(s.warn, " or ")
		}
		fmt.Fprint(s.warn, n)
	}
	fmt.Fprintf(s.warn, "(%s) - ", p)
	fmt.Fprintf(s.warn, format, args...)
}

// window resolves -S and -T against the archive's bounds, in
// microseconds, as pmGetContextOptions does for pmlogsummary.
func (s *summarizer) window(lab stream.Label) error {
	start := toTimeval(lab.Start)
	end, ok, err := s.a.End()
	if err != nil {
		return err
	}
	finish := timeval{maxTime, 0}
	if ok {
		finish = toTimeval(end)
	}
	if s.o.Start != "" || s.o.Finish != "" {
		w, err := pcptime.ParseWindow(s.o.Start, s.o.Finish, "", "", start.stamp(), finish.stamp(), s.loc)
		if err != nil {
			return err
		}
		start, finish = toTimeval(w.Start), toTimeval(w.End)
	}
	s.start, s.finish = start, finish
	if st, ok := s.a.(interface{ skipBefore(stream.Timestamp) }); ok {
		st.skipBefore(start.stamp())
	}
	s.logspan = s.acc.rc.toReal(finish) - s.acc.rc.toReal(start)
	s.dayflag = tsub(finish, start).sec > 86400
	return nil
}

// pass reads the window's records once, handing each result to f.
func (s *summarizer) pass(f func(*stream.Result, timeval) error) error {
	it := s.a.Records(format.DataOnly(), format.From(s.start.stamp()))
	defer it.Close()
	s.acc.loc, _ = stream.As[stream.Locator](it)
	defer func() { s.acc.loc = nil }()
	seen := s.o.OnRecord
	if s.acc.binning {
		seen = nil // the second look at the values (-B) is not counted again
	}
	for it.Next() {
		if seen != nil {
			seen(it.At())
		}
		var ts timeval
		switch r := it.At().(type) {
		case *stream.Mark:
			ts = toTimeval(r.T)
			if !ts.notAfter(s.finish) {
				return nil
			}
			s.acc.mark(ts)
			if s.red != nil {
				s.red.mark(ts)
			}
			if s.shape != nil && !s.acc.binning {
				s.shape.mark()
			}
		case *stream.Result:
			ts = toTimeval(r.T)
			if !ts.notAfter(s.finish) {
				return nil
			}
			if s.shape != nil && !s.acc.binning {
				if r.NumPMID() == 0 {
					s.shape.mark()
				} else if err := s.shape.add(r); err != nil {
					return err
				}
			}
			if r.NumPMID() == 0 {
				s.acc.mark(ts)
				if s.red != nil {
					s.red.mark(ts)
				}
				continue
			}
			if err := f(r, ts); err != nil {
				return err
			}
			if s.red != nil {
				if err := s.red.add(r, ts); err != nil {
					return err
				}
			}
		}
	}
	return it.Err()
}

// printAnyLabel prints the label in the output's form, when -l asks.
func (s *summarizer) printAnyLabel(lab stream.Label) {
	if s.o.CSV {
		// (no label line: a CSV file has one shape of row)
	} else if s.o.Label && s.o.JSON {
		s.w.Write(s.appendJSONLabel(s.b[:0], lab))
	} else if s.o.Label {
		s.printLabel(lab)
	}
}

func (s *summarizer) printLabel(lab stream.Label) {
	b := s.b[:0]
	b = append(b, "Log Label (Log Format Version "...)
	b = strconv.AppendInt(b, int64(lab.Version), 10)
	b = append(b, ")\nPerformance metrics from host "...)
	b = append(b, lab.Hostname...)
	b = append(b, "\n  commencing "...)
	b = pcptime.AppendDate(b, s.start.stamp(), s.loc, pcptime.Millis)
	b = append(b, "\n  ending     "...)
	if s.finish.sec == maxTime {
		b = append(b, "UNKNOWN"...)
	} else {
		b = pcptime.AppendDate(b, s.finish.stamp(), s.loc, pcptime.Millis)
	}
	b = append(b, '\n')
	s.w.Write(b)
	s.b = b[:0]
}

func (s *summarizer) printHeader() {
	d := string(s.o.Delim)
	h := "metric"
	if s.o.Stochastic {
		h += d + "stochastic_average"
	}
	if !s.o.NoTimeAve {
		h += d + "time_average"
	}
	if s.o.Sum {
		h += d + "sum"
	}
	if s.o.Min {
		h += d + "minimum"
	}
	if s.o.MinTime {
		h += d + "minimum_time"
	}
	if s.o.Max {
		h += d + "maximum"
	}
	if s.o.MaxTime {
		h += d + "maximum_time"
	}
	if s.o.Count {
		h += d + "count"
	}
	if s.o.Bins > 0 {
		h += d + "bins"
	}
	h += d + "units\n"
	s.w.WriteString(h)
}

// appendNum appends v as printf("%.*f", precision) prints it.
func (s *summarizer) appendNum(b []byte, v float64) []byte { return appendC(b, v, s.o.Precision) }

// appendStamp appends a minimum or maximum time as printstamp does.
func (s *summarizer) appendStamp(b []byte, t timeval) []byte { return s.printstamp(b, t, s.o.Delim) }

// printstamp is pmlogsummary's printstamp: the delimiter, then the time,
// with its date and in quotes when the window is longer than a day.
func (s *summarizer) printstamp(b []byte, t timeval, delim byte) []byte {
	b = append(b, delim)
	if s.dayflag {
		b = append(b, '\'')
		b = pcptime.AppendDate(b, t.stamp(), s.loc, pcptime.Millis)
		return append(b, '\'')
	}
	return pcptime.AppendTime(b, t.stamp(), s.loc, pcptime.Millis)
}

// printMetric is pmlogsummary's printsummary for one leaf name: every
// instance of the metric, once (a metric with several names prints under
// the first the traversal meets).
func (s *summarizer) printMetric(name string) {
	pmid, ok := s.meta.Lookup(name)
	if !ok {
		return
	}
	m := s.acc.metrics[pmid]
	if m == nil {
		return
	}
	delete(s.acc.metrics, pmid)
	if s.red != nil && s.spec == nil && s.red.hides(pmid) {
		return // an aggregate of a metric summarised from its aggregates
	}
	filter := s.spec != nil && len(s.spec.Insts) > 0
	for _, is := range m.insts {
		iname, named := s.meta.InstName(m.indom, is.inst)
		if !named && filter && m.indom == stream.InDomNull {
			break
		}
		if named && filter && !contains(s.spec.Insts, iname) {
			continue
		}
		st := s.stat(name, m, is)
		st.InstName, st.Named = iname, named
		if ri := s.red.lookup(pmid, is.inst); ri != nil {
			s.red.apply(ri, &st, &s.o)
		}
		if s.o.OnStat != nil {
			s.o.OnStat(&st)
		}
		if s.o.JSON {
			s.b = s.appendJSON(s.b[:0], &st)
		} else if s.o.CSV {
			s.b = s.appendCSV(s.b[:0], &st)
		} else {
			s.b = s.appendText(s.b[:0], &st)
		}
		s.w.Write(s.b)
	}
}

// Stat is one line of the summary: the statistics of one instance of one
// metric over the window, as pmlogsummary computes them.
type Stat struct {
	Metric   string
	Indom    bool   // the metric has an instance domain
	Inst     int32  // the instance (PM_IN_NULL for a singular metric)
	InstName string // its name, when Named
	Named    bool
	Units    string // as printed: rate units for counters, "none" for none
	// Sparse marks a counter whose samples cover 10% of the window or
	// less (pmlogsummary's '*'); Insufficient one with no interval at
	// all, which has no statistics.
	Sparse, Insufficient bool

	StochasticAverage, TimeAverage, Sum, Min, Max float64
	MinTime, MaxTime                              stream.Timestamp
	Count                                         uint32
	Bins                                          []Bin

	// pcpsummary's own, in --json and --csv: the population standard
	// deviation of the values (the rates, for counters) and the
	// percentiles asked for (spread.go); Values is how many there were.
	StdDev      float64
	Values      uint64
	Percentiles []Percentile

	// The instance's presence in the window (presence.go), which
	// pmlogsummary's Count and times do not tell.
	Samples             uint64
	FirstSeen, LastSeen stream.Timestamp
	Gaps, Resets, Marks uint32

	// FromAggregates says that the statistics come from the aggregates
	// of an archive reduced by pcpreduce (reduced.go), of intervals of
	// ReduceInterval seconds.
	FromAggregates bool
	ReduceInterval float64
}

// Bin is one bin of a histogram: the values up to Upper (and above the
// previous bin's). Empty is pmlogsummary's "[]" bin, after the first when
// every value was the same.
type Bin struct {
	Upper float64
	Count uint32
	Empty bool
}

// stat completes the statistics of one instance (pmlogsummary's
// printsummary arithmetic: this changes is, and runs once per instance).
func (s *summarizer) stat(name string, m *metricStats, is *instStats) Stat {
	rc := &s.acc.rc
	if m.sem == stream.SemDiscrete {
		diff := rc.toReal(tsub(s.finish, is.last))
		is.stocave += is.lastval
		is.timeave += float64(is.lastval * diff)
		is.last = s.finish
		is.count++
	}
	span := rc.toReal(tsub(is.last, is.first))
	st := Stat{Metric: name, Indom: m.indom != stream.InDomNull, Inst: is.inst, Units: m.units.String()}
	if st.Units == "" {
		st.Units = "none"
	}
	st.Sparse = m.sem == stream.SemCounter && span/s.logspan <= 0.1
	is.pres.fill(&st)
	if m.sem == stream.SemCounter {
		if span <= 0 {
			st.Insufficient = true
			return st
		}
		is.stocave /= float64(is.count)
		is.timeave /= float64(span * m.scale)
	} else {
		is.stocave /= float64(is.count)
		if span == 0 {
			span = 1 // a single value: report it
		}
		is.timeave /= span
	}
	if m.sem == stream.SemDiscrete { // the added mark and end points
		is.count = is.count - uint32(is.markcount) - 1
	}
	st.StochasticAverage, st.TimeAverage, st.Sum = is.stocave, is.timeave, is.sum
	st.Min, st.Max, st.MinTime, st.MaxTime = is.min, is.max, is.mintime.stamp(), is.maxtime.stamp()
	st.Count = is.count
	st.StdDev, st.Values = is.spread.stddev(), uint64(is.spread.n)
	if len(s.o.Percentiles) > 0 {
		st.Percentiles = is.spread.percentiles(s.o.Percentiles)
	}
	for j := 0; j < s.o.Bins; j++ {
		if j > 0 && is.min == is.max {
			st.Bins = append(st.Bins, Bin{Empty: true})
			continue
		}
		st.Bins = append(st.Bins, Bin{Upper: float64((is.max-is.min)/float64(s.o.Bins)*float64(j+1)) + is.min, Count: is.bin[j]})
	}
	return st
}

// appendText appends a summary line as pmlogsummary prints it.
func (s *summarizer) appendText(b []byte, st *Stat) []byte {
	d := s.o.Delim
	if st.Sparse {
		b = append(b, '*')
	}
	b = append(b, st.Metric...)
	b = append(b, d)
	switch {
	case st.Named:
		b = append(b, '[', '"')
		b = append(b, st.InstName...)
		b = append(b, '"', ']')
	case st.Indom:
		b = append(b, '[')
		b = strconv.AppendUint(b, uint64(uint32(st.Inst)), 10)
		b = append(b, ']')
	}
	if st.Insufficient {
		b = append(b, d)
		return append(b, "- insufficient archive data.\n"...)
	}
	if s.o.Stochastic {
		b = s.appendNum(append(b, d), st.StochasticAverage)
	}
	if !s.o.NoTimeAve {
		b = s.appendNum(append(b, d), st.TimeAverage)
	}
	if s.o.Sum {
		b = s.appendNum(append(b, d), st.Sum)
	}
	if s.o.Min {
		b = s.appendNum(append(b, d), st.Min)
	}
	if s.o.MinTime {
		b = s.appendStamp(b, toTimeval(st.MinTime))
	}
	if s.o.Max {
		b = s.appendNum(append(b, d), st.Max)
	}
	if s.o.MaxTime {
		b = s.appendStamp(b, toTimeval(st.MaxTime))
	}
	if s.o.Count {
		b = append(b, d)
		b = strconv.AppendUint(b, uint64(st.Count), 10)
	}
	for _, bin := range st.Bins {
		if bin.Empty {
			b = append(b, d, '[', ']', d, '0')
			continue
		}
		b = append(b, d)
		b = append(b, "[<="...)
		b = s.appendNum(b, bin.Upper)
		b = append(b, ']', d)
		b = strconv.AppendUint(b, uint64(bin.Count), 10)
	}
	b = append(b, d)
	b = append(b, st.Units...)
	return append(b, '\n')
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func errText(code int32) string { return dump.ErrStr(code) }
