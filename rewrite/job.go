package rewrite

// Job is one run of pcprewrite (or pmlogrewrite): rules compiled against
// an archive's metadata, the archive's records rewritten to an archive, to
// the record stream, or in place.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

// Job says what to rewrite, how, and where to.
type Job struct {
	Prog      string
	Compat    bool
	Stderr    io.Writer
	In        string // "" for standard input
	Out       string // "" for standard output (native only)
	InPlace   bool
	Check     bool
	Quick     bool
	Verbose   bool
	Warnings  bool
	Desperate bool
	Version   int
	Config    *rules.Config
	Scale     bool
	damage    error // a truncated input record, met while reading
	NoSync    bool  // --no-sync (never with -i: the input is at stake)
	Overwrite bool  // --overwrite: replace an existing output archive
}

func (j *Job) warn(err error) {
	if errors.Is(err, format.ErrTruncated) && j.damage == nil {
		j.damage = err
	}
	fmt.Fprintf(j.Stderr, "%s: Warning: %v\n", j.Prog, err)
}

// Run runs the job: the input from j.In, or the stream on stdin; the
// output to j.Out, or the stream on stdout. A Silent error carries the exit
// status of a run that has said what it had to say.
func (j *Job) Run(stdin *os.File, stdout io.Writer) error {
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
	plan, err := rules.Compile(j.Config, meta, rules.CompileOptions{OutputVersion: outVer, Scale: j.Scale})
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		if j.Warnings || w.Always {
			fmt.Fprintf(j.Stderr, "%s: %s\n", j.Prog, w)
		}
	}
	if j.Verbose {
		Report(j.Stderr, plan)
	}
	if j.Check {
		return nil
	}
	if j.Quick && !plan.Changes() {
		return nil
	}
	rw := New(stream.Described(src.it), plan, Options{OutputVersion: outVer, Meta: meta, Index: src.index, KeepDescriptors: !j.Compat})

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
			return err
		}
		sink = toolio.ArchiveSink(w)
		rw.EncodeInto(w) // every result is written before the next Next
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
		if j.Desperate && out != "" && !j.InPlace && rw.DataRecords() > 0 {
			if cerr := closeArchive(); cerr == nil {
				fmt.Fprintf(j.Stderr, "%s: %v\n%s: the partial archive %q is kept (-d)\n", j.Prog, err, j.Prog, out)
				return toolio.Silent{Code: toolio.ExitFailed}
			}
		}
		sink.Abort(err)
		if j.Compat && !j.InPlace {
			return fmt.Errorf("%v\nno archive %q written", err, out)
		}
		return err
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
			fmt.Fprintf(j.Stderr, "%s: Warning: %q has no data: skipped\n", j.Prog, j.In)
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
	return nil
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
	a, err := format.Open(name, format.WithWarn(j.warn))
	if err != nil {
		return nil, fmt.Errorf("cannot open archive %q: %w", name, err)
	}
	meta, err := a.Meta()
	if err != nil {
		return nil, err
	}
	index, _ := a.Index()
	it := a.Records()
	return &source{name: name, meta: meta, version: a.Version(), index: index, it: it,
		base: a.Base(), closers: []func(){func() { it.Close() }}}, nil
}
