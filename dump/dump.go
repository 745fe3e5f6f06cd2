// Package dump prints PCP archives for people and for other programs: the
// views of PCP 6.0.3's pmdumplog, byte for byte, and two machine-readable
// forms, JSON lines and CSV (docs/dump-formats.md).
//
//	format.Archive ──Meta()──▶ pcpMeta (libpcp's in-memory shapes) ──▶ -d -e -h -i -I views
//	               ──Records()─▶ results ──▶ -m values, JSON objects, CSV rows
//
// pmdumplog prints much of its metadata by walking libpcp's hash tables,
// so its order depends on how libpcp stores what it loaded: pcpMeta
// rebuilds those structures (the chained hash tables and their growth, the
// namespace tree, the newest-first instance domain lists, the duplicate
// rules for label sets) instead of sorting, which would be simpler and
// wrong.
//
// The value path is the hot one: a 1 GiB archive is tens of millions of
// values. Records are walked in place (stream.VSetIter), each line is
// appended to a reused buffer with strconv, and a metric's "pmid (names):"
// prefix is built once.
//
// Where pmdumplog 6.0.3 and Dump still differ (all outside the QA archives'
// normal reading):
//   - Metric names that only exist as derived metrics (PCP loads
//     /etc/pcp/derived at startup) are unknown names here; pmdumplog
//     accepts them and prints nothing for them.
//   - With -S, -T or -r, libpcp positions itself with the temporal index;
//     where an index entry points past the end of a volume or into a
//     record, pmdumplog fails ("Corrupted record") and prints nothing. Dump
//     reads the records of the window.
//   - Values whose type cannot be decoded (no descriptor, or an encoding
//     that does not match it) are printed from the bytes as libpcp would
//     have byte-swapped them, except event arrays, which libpcp swaps
//     field by field and Dump prints as recorded.
//
// Designs rejected:
//   - fmt.Fprintf per value: clear, but it parses its format at every call
//     and allocates.
//   - Sorting descriptors and instance domains by identifier: readable,
//     but pmdumplog's order is hash order and its users diff outputs.
//   - Resolving instance names through format.Metadata.InstancesAt: it
//     answers "the first version" for times before any version, where
//     pmdumplog prints "???".
package dump

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// Options select what Dump prints; the fields mirror pmdumplog's flags.
// With none of Descs, LabelSets, HelpText, InDoms, DiskInDoms, Label,
// Values and Index set, Values is implied, as in pmdumplog.
type Options struct {
	All          bool // -a: Descs, InDoms, LabelVerbose, Values, Sizes, Index
	Descs        bool // -d
	LabelSets    bool // -e
	HelpText     bool // -h
	InDoms       bool // -i
	DiskInDoms   bool // -I
	Label        bool // -l
	LabelVerbose bool // -L (implies Label)
	Values       bool // -m
	// LibpcpLabel: the label shown (and its timezone) is the first
	// volume's, as pmdumplog shows it, not the .meta's
	LibpcpLabel bool
	Marks       bool // -M: report <mark> records even when Metrics is set
	Reverse     bool // -r (the records of the window are held in memory)
	Sizes       bool // -s
	Index       bool // -t
	TimeFormat  int  // -x count: 1 date, 2 also offset from the start, 3 also epoch seconds

	ArchiveZone bool   // -z: report times in the archive's timezone
	Zone        string // -Z: report times in this timezone
	// Location, when not nil, overrides ArchiveZone, Zone and the local
	// zone (tests use it; the "Note: timezone set" line is then not printed).
	Location *time.Location

	Start  string // -S, PCP time syntax
	Finish string // -T, PCP time syntax

	// Metrics restricts the values to these metrics (leaf or non-leaf
	// names); <mark> records are then reported only with Marks.
	Metrics []string

	// Warn receives what pmdumplog writes to standard error and carries
	// on after (unknown metric names, undecodable event records); nil
	// discards it.
	Warn io.Writer
	// Prog names the tool in those messages (default "pmdumplog", as
	// PCP's QA expects them; pcpcat gives its own name).
	Prog string
	// Unreadable ends Samples' warning of a numeric value that cannot be
	// read as its type, saying what the caller does with it (default
	// "given as the text of its bytes"; OpenMetrics, numbers only, says
	// "left out").
	Unreadable string

	// TracePDU writes libpcp's -Dpdu trace of the data records read to
	// Warn (see tracePDU): pmdumplog -Dpdu.
	TracePDU bool

	// TraceLog, when not nil, traces libpcp's positioning and reading of
	// the archive as pmdumplog -Dlog does (see LogTrace): the caller has
	// traced its opening and end; the dump traces pmSetMode and each
	// fetch.
	TraceLog *LogTrace
	// LibpcpReads, with TraceLog, takes the values view's records from
	// it (LogTrace.Records): what libpcp's fetches return, where
	// libpcp's positioning and reading may part from ours (a window or
	// -r positioned by the temporal index, an index or a last volume
	// that is damaged).
	LibpcpReads bool

	// OnRecord, when set, sees each record the exports (JSON, CSV,
	// Samples) read, in or out of the window: a progress display.
	OnRecord func(stream.Record)
}

// normalize applies pmdumplog's implications between flags.
// ReadsValues reports whether the dump reads the archive's data records
// (the values view, given or taken by default).
func (o Options) ReadsValues() bool { return o.normalize().Values }

func (o Options) normalize() Options {
	if o.All {
		o.Descs, o.InDoms, o.LabelVerbose, o.Label, o.Values, o.Sizes, o.Index = true, true, true, true, true, true, true
	}
	if o.LabelVerbose {
		o.Label = true
	}
	if !o.Descs && !o.LabelSets && !o.HelpText && !o.DiskInDoms && !o.InDoms && !o.Label && !o.Values && !o.Index {
		o.Values = true
	}
	return o
}

// archive is what the views need from an archive; *format.Archive
// provides it through archiveSource, tests through hand-built fakes.
type archive interface {
	label() stream.Label
	meta() (*format.Metadata, error)
	index() ([]format.IndexEntry, error)
	// records iterates the archive's records from the first with a time
	// at or after from (all of them when from is nil).
	records(from *stream.Timestamp) stream.CloserIterator
	// end is the time of the archive's last data record (ok false when
	// it has none).
	end() (t stream.Timestamp, ok bool, err error)
	// fileSize reports the size of a physical file of the archive by
	// suffix ("meta", "0", "1", ...), as stat(2) on "<base>.<suffix>"
	// would: a compressed file does not count.
	fileSize(suffix string) (int64, bool)
}

type dumper struct {
	w     *bufio.Writer
	b     []byte // the line being built
	opts  Options
	a     archive
	lab   stream.Label
	vers  int
	prec  int // digits of second fractions: 6 for v2, 9 for v3
	loc   *time.Location
	meta  *pcpMeta
	start stream.Timestamp // label start, for -xx offsets
	warn  io.Writer
	prog  string          // the name warnings go out under
	src   stream.Iterator // what the records being dumped come from

	metrics map[stream.PMID]*metricInfo
	// growing: the records are a stream's, whose metadata comes as it
	// goes (grow).
	growing   bool
	startMeta *format.Metadata // what a growing dumper started from
	fromStart map[indomKey]int // its instance domain records (grow)
	tcache    timeCache
	diff      diffCalc
}

func dumpArchive(w io.Writer, a archive, opts Options) error {
	opts = opts.normalize()
	d := &dumper{
		w:       bufio.NewWriterSize(w, 256<<10),
		opts:    opts,
		a:       a,
		lab:     a.label(),
		metrics: map[stream.PMID]*metricInfo{},
		warn:    opts.Warn,
		growing: isStream(a),
	}
	if d.warn == nil {
		d.warn = io.Discard
	}
	d.prog = opts.Prog
	if d.prog == "" {
		d.prog = "pmdumplog"
	}
	d.vers = d.lab.Version
	d.prec = pcptime.PrecisionFor(d.vers)
	d.start = d.lab.Start
	err := d.run()
	d.flush()
	if ferr := d.w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (d *dumper) run() error {
	loc, note, err := chooseZone(d.opts, d.lab)
	if err != nil {
		return err
	}
	d.loc = loc
	d.tcache.loc = loc
	m, err := d.a.meta()
	if err != nil {
		return err
	}
	d.meta = newPCPMeta(m)
	if d.meta.descErr != nil {
		return d.meta.descErr
	}
	d.startMeta = m
	if d.opts.TracePDU {
		d.traceEnd()
	}
	if note != "" {
		d.b = append(d.b, note...)
		d.flush()
	}
	win, err := d.window()
	if err != nil {
		return err
	}
	var pmids []stream.PMID
	if len(d.opts.Metrics) > 0 {
		if pmids, err = d.lookupMetrics(); err != nil {
			return err
		}
	}
	if tr := d.opts.TraceLog; tr != nil {
		if d.opts.TracePDU && d.opts.LibpcpReads {
			// -Dpdu: every record libpcp reads from here on,
			// positioning included
			tr.OnDecode, tr.OnRead = d.tracePDUDecoded, d.tracePDUWords
		}
		// pmdumplog sets the context's mode before any view
		tr.SetZone(d.loc)
		if d.opts.Reverse {
			tr.SetTime(win.end, true)
		} else {
			tr.SetTime(win.start, false)
		}
	}
	if d.opts.Label {
		if err := d.dumpLabel(); err != nil {
			return err
		}
	}
	if d.opts.Descs {
		d.dumpDescs()
	}
	if d.opts.LabelSets {
		d.dumpLabelSets()
	}
	if d.opts.HelpText {
		d.dumpHelpText()
	}
	if d.opts.DiskInDoms {
		d.dumpDiskInDoms(m)
	}
	if d.opts.InDoms {
		d.dumpInDoms()
	}
	if d.opts.Index {
		if err := d.dumpIndex(); err != nil {
			return err
		}
	}
	if d.opts.Values {
		return d.dumpValues(win, pmids)
	}
	return nil
}

// chooseZone picks the reporting zone as pmdumplog does, and the note
// pmdumplog prints on standard output when -z or -Z chose it.
func chooseZone(o Options, lab stream.Label) (*time.Location, string, error) {
	if o.Location != nil {
		return o.Location, "", nil
	}
	loc, err := pcptime.ChooseZone(o.ArchiveZone, o.Zone, lab.Timezone, lab.Zoneinfo)
	if err != nil {
		return nil, "", err
	}
	switch {
	case o.ArchiveZone:
		return loc, "Note: timezone set to local timezone of host \"" + lab.Hostname + "\" from archive\n\n", nil
	case o.Zone != "":
		return loc, "Note: timezone set to \"TZ=" + o.Zone + "\"\n\n", nil
	}
	return loc, "", nil
}

// lookupMetrics resolves the metric names as pmdumplog does: unknown
// names are reported and skipped, and none left is an error.
func (d *dumper) lookupMetrics() ([]stream.PMID, error) {
	var pmids []stream.PMID
	for _, name := range d.opts.Metrics {
		ps, ok := d.meta.ns.lookup(name)
		if !ok {
			fmt.Fprintf(d.warn, "%s: pmLookupName(%s): Unknown metric name\n", d.prog, name)
			continue
		}
		pmids = append(pmids, ps...)
	}
	if len(pmids) == 0 {
		return nil, errors.New("No metric names can be translated, dump abandoned")
	}
	return pmids, nil
}

// flush hands the line buffer to the writer.
func (d *dumper) flush() {
	d.w.Write(d.b)
	d.b = d.b[:0]
}

// maybeFlush flushes once the buffer holds a good amount, so that a
// record's lines are appended without a write call per line.
func (d *dumper) maybeFlush() {
	if len(d.b) >= 64<<10 {
		d.flush()
	}
}

// appendStamp appends a timestamp as pmdumplog's dump_pmTimestamp: with
// -x the date, then the time, the year, with -xx the offset from the
// label's start, with -xxx the epoch seconds.
func (d *dumper) appendStamp(dst []byte, t stream.Timestamp) []byte {
	x := d.opts.TimeFormat
	if x == 0 {
		return d.tcache.appendTime(dst, t, d.prec)
	}
	dst = d.tcache.appendDate(dst, t, d.prec)
	if x >= 2 {
		dst = append(dst, " ("...)
		dst = d.diff.appendDiff(dst, t.Sec-d.start.Sec, int64(t.Nsec)-int64(d.start.Nsec), 1e9, d.prec)
		dst = append(dst, ')')
	}
	if x >= 3 {
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(t.Sec), 10)
	}
	return dst
}

// appendShortStamp appends HH:MM:SS.frac (myPrintTimestamp).
func (d *dumper) appendShortStamp(dst []byte, t stream.Timestamp) []byte {
	return d.tcache.appendTime(dst, t, d.prec)
}

// fileSizer finds the physical files of an archive on disk, as libpcp's
// __pmStat does: a plain file gives its size; failing that, a compressed
// one exists but its size is unknown (-1), so pmdumplog checks nothing
// against it.
type fileSizer struct{ base string }

func (f fileSizer) fileSize(suffix string) (int64, bool) {
	if f.base == "" {
		return 0, false
	}
	p := f.base + "." + suffix
	if st, err := os.Stat(p); err == nil {
		return st.Size(), true
	}
	for _, s := range pcpCompressSuffixes {
		if _, err := os.Stat(p + s); err == nil {
			return -1, true
		}
	}
	return 0, false
}

// pcpCompressSuffixes are the compressed file suffixes PCP 6.0.3 knows.
var pcpCompressSuffixes = []string{".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z"}
