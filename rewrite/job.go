package rewrite

// Job is one run of pcprewrite (or pmlogrewrite): rules compiled against
// an archive's metadata, the archive's records rewritten to an archive, to
// the record stream, or in place.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

// Job says what to rewrite, how, and where to.
type Job struct {
	Prog    string
	Compat  bool
	Stderr  io.Writer
	In      string // "" for standard input
	Out     string // "" for standard output (native only)
	InPlace bool
	Check   bool
	Quick   bool
	Verbose bool
	// VerboseFiles: pmlogrewrite's -vv, which names each rules file
	// as it reads it ("Start configfile: FILE").
	VerboseFiles bool
	Warnings     bool
	Desperate    bool
	Version      int
	Config       *rules.Config
	Scale        bool
	damage       error // a truncated input record, met while reading
	NoSync       bool  // --no-sync (never with -i: the input is at stake)
	Overwrite    bool  // --overwrite: replace an existing output archive
	// NoProgress: no progress display (--quiet). There is never one
	// under PCP's names, nor for a stream on standard input.
	NoProgress bool
	// DebugLog: -Dlog (or -Dall); as pmlogrewrite, only the short read of
	// a truncated record is said (no other debugging output).
	DebugLog bool
	// DebugValue: -Dvalue (or -Dall); libpcp's trace of the values
	// rescaled and retyped (pmExtractValue, pmConvScale), on Stderr.
	DebugValue bool
	// DebugPDUBuf: -Dpdubuf (or -Dall): at a successful end, libpcp's
	// report of the PDU buffers still held, which is empty here (there
	// are none to hold), as pmlogrewrite prints it.
	DebugPDUBuf bool
	// DebugAppl1: -Dappl1 (or -Dall): pmlogrewrite's trace of its
	// metadata changes, on Stderr (rules.Plan.PCPRefTrace, and
	// Options.TraceMeta).
	DebugAppl1 bool
}

// CompatError prints err as pmlogrewrite does when it is an error in the
// rules (its own wording, no program name) and returns the exit status to
// give; other errors are returned as they are.
func CompatError(err error, stderr io.Writer) error {
	if e, ok := rules.AsError(err); ok {
		fmt.Fprintln(stderr, e.PCPText())
		return toolio.Silent{Code: toolio.ExitFailed}
	}
	return err
}

func (j *Job) warn(err error) {
	if errors.Is(err, format.ErrTruncated) && j.damage == nil {
		j.damage = err
	}
	if j.Compat {
		// pmlogrewrite reads on without a word where our reader warns
		// (index entries past the end of a volume, ...); a truncated
		// record is reported when the rewrite fails (pcpDamage).
		return
	}
	fmt.Fprintf(j.Stderr, "%s: Warning: %v\n", j.Prog, err)
}

// warnings prints the rules' warnings: all with -w, else those
// pmlogrewrite prints regardless; as pmlogrewrite, in its words and order.
func (j *Job) warnings(ws []rules.Warning) {
	if j.Compat {
		ws = append([]rules.Warning(nil), ws...)
		rules.SortPCP(ws, j.Config.Files)
	}
	for _, w := range ws {
		if !j.Warnings && !w.Always {
			continue
		}
		if j.Compat {
			fmt.Fprintln(j.Stderr, w.PCPText())
		} else {
			fmt.Fprintf(j.Stderr, "%s: %s\n", j.Prog, w)
		}
	}
}

// Run runs the job: the input from j.In, or the stream on stdin; the
// output to j.Out, or the stream on stdout. A Silent error carries the exit
// status of a run that has said what it had to say.
func (j *Job) Run(stdin *os.File, stdout io.Writer) (err error) {
	if j.Compat {
		// What pmlogrewrite prints on its standard output (the -v
		// summary) reaches a pipe at exit, after its standard error.
		// (-D makes no difference: 6.0.3 leaves stdout buffered.)
		var buf bytes.Buffer
		defer func() { stdout.Write(buf.Bytes()) }()
		defer func() {
			if err != nil {
				err = CompatError(err, j.Stderr)
			}
		}()
		return j.run(stdin, stdout, &buf)
	}
	return j.run(stdin, stdout, stdout)
}

// run is Run; report is where pmlogrewrite's -v summary goes (compat mode).
func (j *Job) run(stdin *os.File, stdout, report io.Writer) error {
	var src *source
	var err error
	if j.In == "" {
		src, err = j.openStream(stdin)
	} else {
		src, err = j.openArchive(j.In)
	}
	if src != nil {
		defer src.close()
	}
	if err != nil {
		return err
	}
	name, meta := src.name, src.meta
	inVer := src.version
	outVer := j.Version
	if outVer == 0 {
		outVer = inVer
	}
	if outVer < inVer {
		return fmt.Errorf("cannot create a v%d archive from v%d (%s)", outVer, inVer, name)
	}
	if j.VerboseFiles && j.Config != nil {
		// pmlogrewrite reads its rules once the input is open.
		for _, f := range j.Config.Files {
			fmt.Fprintf(j.Stderr, "Start configfile: %s\n", f)
		}
	}
	plan, err := rules.Compile(j.Config, meta, rules.CompileOptions{OutputVersion: outVer, Scale: j.Scale, PCPTrace: j.DebugAppl1})
	if err != nil {
		if e, ok := rules.AsError(err); ok && j.Compat {
			// pmlogrewrite has warned about the clauses before it
			// finds the error.
			j.warnings(e.Warnings)
		}
		return err
	}
	j.warnings(plan.Warnings)
	if j.Verbose {
		if j.Compat {
			plan.ReportPCP(report, &meta.Label, printNewLabels)
		} else {
			Report(j.Stderr, plan)
		}
	}
	if j.Check {
		return nil
	}
	if j.Quick && !plan.Changes() {
		return nil
	}
	pr := toolio.StartProgress(j.Stderr, src.size, j.Compat || j.NoProgress)
	defer pr.Done(false) // a run that fails; Done(true) comes first on success
	rw := New(stream.Described(toolio.Showing(src.it, pr)), plan, Options{OutputVersion: outVer, Meta: meta, Index: src.index, KeepDescriptors: !j.Compat, TraceValues: j.traceValues(), TraceMeta: j.traceMeta()})

	out := j.Out
	if j.InPlace {
		// The writer replaces the input when it closes, atomically as far
		// as the directory allows, and puts it back on any failure.
		out = src.base
	}
	wopts := format.WriterOptions{Version: outVer, StartAtFirstRecord: true, DeltaInDoms: true,
		KeepVolumes: true, IndexRepeats: true, Warn: j.warn, NoSync: j.NoSync && !j.InPlace,
		Overwrite: j.InPlace || j.Overwrite}
	var w *format.Writer
	var place *indexPlacer
	var sink toolio.Sink
	if out == "" {
		if sink, err = toolio.OpenOutput("", wopts, stdout); err != nil {
			return err
		}
	} else {
		if !src.stream {
			// pmlogrewrite's index follows the input's (an archive
			// with no usable index included); a stream has none, and
			// the writer then makes its own.
			place = newIndexPlacer(rw)
			wopts.ManualIndex, wopts.RecordHook = true, place.hook
		}
		if w, err = format.Create(out, wopts); err != nil {
			if j.Compat {
				return toolio.PCPExists(err, j.Stderr, fmt.Sprintf("%s: Error: __pmLogCreate(%s,v%d): File exists", j.Prog, out, outVer))
			}
			return err
		}
		sink = toolio.ArchiveSink(w)
		rw.EncodeInto(w) // every result is written before the next Next
	}
	if t := j.traceMeta(); t != nil {
		// pmlogrewrite counts its domains' references once its output
		// is made.
		io.WriteString(t, plan.PCPRefTrace())
	}
	defer toolio.AbortOnPanic(sink)
	closeArchive := func() error {
		if place != nil {
			if err := place.addEntries(w); err != nil {
				return err
			}
		}
		return sink.Close()
	}
	for rw.Next() {
		if err := sink.Write(rw.At()); err != nil {
			sink.Abort(err)
			return err
		}
	}
	if err := rw.Err(); err != nil {
		var ce *ConvError
		pcpConv := j.Compat && errors.As(err, &ce)
		if j.Desperate && out != "" && !j.InPlace && rw.DataRecords() > 0 {
			if cerr := closeArchive(); cerr == nil {
				pr.Done(false)
				if pcpConv {
					j.pcpConvError(ce, meta, out, true)
				} else {
					fmt.Fprintf(j.Stderr, "%s: %v\n%s: the partial archive %q is kept (-d)\n", j.Prog, err, j.Prog, out)
				}
				return toolio.Silent{Code: toolio.ExitFailed}
			}
		}
		sink.Abort(err)
		if pcpConv {
			j.pcpConvError(ce, meta, out, false)
			return toolio.Silent{Code: toolio.ExitFailed}
		}
		if _, _, _, bad := dump.LibpcpBadRecord(err); j.Compat && !j.Desperate && bad {
			// libpcp's words for a record it cannot read
			fmt.Fprint(j.Stderr, pcpDamage(j.Prog, j.In, err, j.DebugLog))
			if !j.InPlace && out != "" {
				fmt.Fprintf(j.Stderr, "Archive \"%s\" not created.\n", out)
			}
			return toolio.Silent{Code: toolio.ExitFailed}
		}
		if j.Compat && !j.InPlace {
			return fmt.Errorf("%v\nno archive %q written", err, out)
		}
		return err
	}
	if j.damage != nil && !j.Desperate && j.Compat {
		sink.Abort(j.damage)
		fmt.Fprint(j.Stderr, pcpDamage(j.Prog, j.In, j.damage, j.DebugLog))
		if !j.InPlace && out != "" {
			// pmlogrewrite's abandon(), but in place (-i)
			fmt.Fprintf(j.Stderr, "Archive \"%s\" not created.\n", out)
		}
		return toolio.Silent{Code: toolio.ExitFailed}
	}
	if j.damage != nil && !j.Desperate {
		// A rewrite (in place above all) must not shorten an archive
		// silently; pmlogrewrite refuses too.
		sink.Abort(j.damage)
		return fmt.Errorf("%v: the input is damaged, nothing written (-d writes what precedes the damage)", j.damage)
	}
	if rw.DataRecords() == 0 {
		sink.Abort(errors.New("empty"))
		if j.Compat {
			fmt.Fprintf(j.Stderr, "%s: Warning: empty archive \"%s\" will be skipped\n", j.Prog, j.In)
			return nil
		}
		return fmt.Errorf("%s: no data records: nothing written", name)
	}
	if err := closeArchive(); err != nil {
		sink.Abort(err)
		if j.InPlace {
			return fmt.Errorf("in place: %w (the input is unchanged)", err)
		}
		return err
	}
	pr.Done(true)
	if j.DebugPDUBuf {
		fmt.Fprintln(j.Stderr, "__pmFindPDUBuf(DEBUG)")
	}
	return nil
}

// traceMeta is where -Dappl1's trace goes (nil: none).
func (j *Job) traceMeta() io.Writer {
	if j.DebugAppl1 {
		return j.Stderr
	}
	return nil
}

// traceValues is where -Dvalue's trace goes (nil: none).
func (j *Job) traceValues() io.Writer {
	if j.DebugValue {
		return j.Stderr
	}
	return nil
}

// pcpConvError says what pmlogrewrite says of a value it cannot convert to
// its metric's new type: its error, libpcp's dump of the result it was
// rewriting (the value set it stopped in cut short there), and that the
// output was not made (or, with -d, kept short).
func (j *Job) pcpConvError(ce *ConvError, meta *format.Metadata, out string, kept bool) {
	fmt.Fprintf(j.Stderr, "%s: Error: %s (%s): extracting value from type %s to %s: %s\n", j.Prog, ce.Name, ce.PMID,
		rules.TypeName(ce.From), rules.TypeName(ce.To), rules.UpperFirst(ce.Why.Error()))
	if am, err := dump.NewArchiveMeta(meta); err == nil && ce.Result != nil {
		j.Stderr.Write(dump.AppendResultDump(nil, ce.Result, am, time.Local, ce.Set, ce.Done))
	}
	switch {
	case kept:
		fmt.Fprintf(j.Stderr, "Archive \"%s\" creation truncated.\n", out)
	case !j.InPlace:
		fmt.Fprintf(j.Stderr, "Archive \"%s\" not created.\n", out)
	}
}

// printNewLabels prints the NEW labels of one of pmlogrewrite's label
// specs as its -v summary does (pmPrintLabelSets).
func printNewLabels(ty, ident uint32, inst int32, labels []rules.NewLabel) string {
	l := make([]label, len(labels))
	for i, n := range labels {
		l[i] = label{name: n.Name, value: n.Value, flags: uint8(ty)}
	}
	return string(dump.AppendLabelSets(nil, ident, ty, []stream.OneLabelSet{buildSet(inst, l)}))
}

// Report is -v: what the plan changes.
func Report(w io.Writer, plan *rules.Plan) {
	g := &plan.Global
	if g.Hostname != nil {
		fmt.Fprintf(w, "Global: hostname -> %s\n", *g.Hostname)
	}
	if g.TimeZone != nil {
		fmt.Fprintf(w, "Global: timezone -> %s\n", *g.TimeZone)
	}
	if g.ZoneInfo != nil {
		fmt.Fprintf(w, "Global: zoneinfo -> %s\n", *g.ZoneInfo)
	}
	if g.Features != nil {
		fmt.Fprintf(w, "Global: features -> %d\n", *g.Features)
	}
	if g.Shift != nil {
		fmt.Fprintf(w, "Global: time -> %s\n", g.Shift)
	}
	for _, ip := range plan.InDoms {
		fmt.Fprintf(w, "InDom: %s -> %s (%d instance changes)\n", ip.Old, ip.New, len(ip.Insts))
	}
	for id, mp := range plan.Metrics {
		name := id.String()
		if len(mp.Old.Names) > 0 {
			name = mp.Old.Names[0]
		}
		fmt.Fprintf(w, "Metric: %s (%s):", name, id)
		if mp.Changes&rules.ChangeDelete != 0 {
			fmt.Fprint(w, " delete")
		}
		if mp.Changes&rules.ChangePMID != 0 {
			fmt.Fprintf(w, " pmid -> %s", mp.New.PMID)
		}
		if mp.Changes&rules.ChangeName != 0 {
			fmt.Fprintf(w, " name -> %s", strings.Join(mp.New.Names, " "))
		}
		if mp.Changes&rules.ChangeType != 0 {
			fmt.Fprintf(w, " type -> %s", rules.TypeName(mp.New.Type))
		}
		if mp.Changes&rules.ChangeSem != 0 {
			fmt.Fprintf(w, " sem -> %s", rules.SemName(mp.New.Sem))
		}
		if mp.Changes&rules.ChangeUnits != 0 {
			fmt.Fprint(w, " units changed")
			if mp.Changes&rules.ChangeRescale != 0 {
				fmt.Fprint(w, " (rescale)")
			}
		}
		if mp.Changes&rules.ChangeInDom != 0 {
			fmt.Fprintf(w, " indom -> %s output %s", mp.New.InDom, mp.Output)
		}
		if mp.Changes&rules.ChangeValue != 0 {
			fmt.Fprintf(w, " value = %s", mp.Value.Src)
		}
		fmt.Fprintln(w)
	}
}

// source is what a job rewrites: the records, and the whole metadata the
// rules compile against.
type source struct {
	name    string
	meta    *format.Metadata
	version int
	index   []format.IndexEntry // nil for a stream
	size    int64               // of the data volumes, for the progress display (0: none)
	stream  bool                // read from a stream, not an archive
	it      stream.Iterator
	base    string // the archive's base name, for -i
	closers []func()
}

func (s *source) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func (j *Job) openArchive(name string) (*source, error) {
	var lv dump.LibpcpView
	a, err := format.Open(name, format.WithWarn(func(err error) { lv.Note(err); j.warn(err) }))
	if j.Compat {
		// libpcp refuses an archive without a data volume, or whose
		// .index has a bad label, and reads all metadata as it opens one
		// (a.Meta keeps it)
		switch {
		case err != nil:
		case dump.LibpcpRefusal(a) != nil:
			err = dump.LibpcpRefusal(a)
		case lv.IndexErr != nil:
			err = lv.IndexErr
		default:
			_, err = a.Meta()
		}
		if err != nil {
			return nil, j.pcpOpenError(name, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open archive %q: %w", name, err)
	}
	meta, err := a.Meta()
	if err != nil {
		return nil, err
	}
	index, _ := a.Index()
	it := a.Records()
	return &source{name: name, meta: meta, version: a.Version(), index: index, it: it, size: a.DataSize(),
		base: a.Base(), closers: []func(){func() { it.Close() }}}, nil
}

// pcpOpenError says, in pmlogrewrite's words, why it cannot open an
// archive (libpcp's), and returns the status to end with: an empty file
// is skipped, with success, as pmlogextract skips it.
func (j *Job) pcpOpenError(name string, err error) error {
	if errors.Is(err, format.ErrEmptyFile) {
		fmt.Fprintf(j.Stderr, "%s: Warning: empty archive \"%s\" will be skipped\n", j.Prog, name)
		return toolio.Silent{Code: toolio.ExitOK}
	}
	fmt.Fprintf(j.Stderr, "%s: Error: cannot open archive \"%s\": %s\n", j.Prog, name, dump.LibpcpOpenError(err))
	return toolio.Silent{Code: toolio.ExitFailed}
}

// pcpDamage is what pmlogrewrite 6.0.3 prints when its read of an archive
// meets a truncated record: the short read, libpcp's error and where it
// occurred (at the end of the volume: the read stops there).
func pcpDamage(prog, archive string, err error, debug bool) string {
	var fe *format.FormatError
	var rlen, left int64
	if !errors.As(err, &fe) {
		return fmt.Sprintf("%s: Error: __pmLogRead[log %s]: Corrupted record in a PCP archive log\n", prog, archive)
	}
	detail := fe.Msg
	if fe.Err != nil {
		detail = fe.Err.Error()
	}
	var b strings.Builder
	if _, e := fmt.Sscanf(detail, "record of %d bytes runs past the end of the file (%d bytes left)", &rlen, &left); e == nil && debug {
		// pmlogrewrite has read the record's length (4 bytes) and
		// wants the rest but its trailer.
		fmt.Fprintf(&b, "Error: data fread got %d expected %d\n", left-4, rlen-8)
	}
	fmt.Fprintf(&b, "%s: Error: __pmLogRead[log %s]: Corrupted record in a PCP archive log\n", prog, archive)
	// Where the volume's file descriptor is then: libpcp seeks back to
	// the start of a record cut short; a length of 0 sends it to the
	// end of the file (badlen-2, badlog-1, ok-truncbin;
	// archive-20150417.131733).
	at := fe.Offset
	if left == 0 {
		if _, e := fmt.Sscanf(detail, "impossible record length 0 (%d bytes left in the file)", &left); e == nil {
			at += left
		}
	}
	if _, pos, size, ok := dump.LibpcpBadRecord(err); ok {
		at, left = pos, size-fe.Offset // (badlen-1)
	}
	if left > 0 {
		fmt.Fprintf(&b, "%s: Error occurred at byte offset %d into a file of %d bytes.\n", prog, at, fe.Offset+left)
	}
	return b.String()
}
