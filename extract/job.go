package extract

// The job of a pcpextract or pmlogextract run: its inputs opened (by any
// name of an archive, a directory, a comma-separated list, or the stream on
// standard input), the window parsed against them, the selection resolved,
// the merge run into an archive or the stream. cmd/pcpextract only turns
// flags into Settings.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// Job is one merge: inputs to an output.
type Job struct {
	Inputs []string
	Out    string // "" for the stream on stdout
	Stdin  *os.File
	Stdout io.Writer
}

// Settings are the options of a run, shared by its jobs (one, or one per
// host of a folio).
type Settings struct {
	Prog        string
	Compat      bool
	Config      []MetricSpec
	ConfigName  string
	Start       string
	Finish      string
	ArchiveZone bool
	Zone        string
	Opts        Options
	Writer      format.WriterOptions
	Desperate   bool
	Stderr      io.Writer
	NoteOut     io.Writer
	Quiet       bool // no zone note (folio jobs)
	NoProgress  bool // no progress display (-q; PCP's name)
	WarnPrefix  string
	// given maps each input archive's base name to the name it was
	// given by (pmlogextract's messages name archives so).
	given map[string]string
}

// givenName returns the name the archive holding file was given by, or
// file.
func (s *Settings) givenName(file string) string {
	for base, name := range s.given {
		if strings.HasPrefix(file, base+".") {
			return name
		}
	}
	return file
}

func (s *Settings) Warn(err error) {
	if s.Compat {
		// Under PCP's name, the warnings PCP's QA tests show are in
		// pmlogextract's words.
		var sw *SkipWarning
		var sk *SkippedWarning
		var tz *TZMismatch
		var fe *format.FormatError
		var ew *EmptyWarning
		switch {
		case toolio.IndexWarning(err), format.TimeOrderWarning(err):
			return // pmlogextract reads no index, and says nothing of one, nor of records out of order
		case errors.As(err, &tz):
			fmt.Fprintf(s.Stderr, "%s: Warning: timezone mismatch for input archives\n", s.WarnPrefix)
			fmt.Fprintf(s.Stderr, "archive: %s timezone: %s [will be used]\n", tz.Used, tz.UsedTZ)
			fmt.Fprintf(s.Stderr, "archive: %s timezone: %s [will be ignored]\n", tz.Other, tz.OtherTZ)
			return
		case errors.Is(err, format.ErrTruncated) && errors.As(err, &fe):
			// libpcp's words for a record cut short.
			fmt.Fprintf(s.Stderr, "%s: Error: __pmLogRead[log %s]: Corrupted record in a PCP archive log\n", s.WarnPrefix, s.givenName(fe.File))
			if st, serr := os.Stat(fe.File); serr == nil {
				fmt.Fprintf(s.Stderr, "%s: Error occurred at byte offset %d into a file of %d bytes.\n", s.WarnPrefix, fe.Offset, st.Size())
			}
			fmt.Fprintln(s.Stderr, "The last record, and the remainder of this file will not be extracted.")
			return
		case errors.As(err, &sw):
			fmt.Fprintf(s.Stderr, "%s: Warning: %s\n", s.WarnPrefix, sw.PCP)
			return
		case errors.As(err, &ew):
			fmt.Fprintf(s.Stderr, "%s: Warning: empty archive \"%s\" will be skipped\n", s.WarnPrefix, ew.Name)
			return
		case errors.As(err, &sk):
			fmt.Fprintln(s.Stderr, "Warning: the metrics below will be missing from the output archive")
			for _, p := range sk.PMIDs {
				fmt.Fprintf(s.Stderr, "\tPMID: %s\n", p)
			}
			return
		}
	}
	fmt.Fprintf(s.Stderr, "%s: warning: %v\n", s.WarnPrefix, err)
}

// pcpError is an error of a run under pmlogextract's name, in its words,
// printed after the program's name.
type pcpError struct{ msg string }

func (e pcpError) Error() string { return e.msg }

// compatError puts err in pmlogextract's words where PCP's QA tests show
// them: a metadata conflict abandons the output ("Archive ... not
// created.").
func (s *Settings) compatError(err error, out string) error {
	if s.Compat && errors.Is(err, ErrAllEmpty) {
		return pcpError{"Warning: all input archive(s) are empty, no output archive created"}
	}
	var hm *HostMismatch
	if s.Compat && errors.As(err, &hm) {
		return pcpError{fmt.Sprintf("Error: host name mismatch for input archives\narchive: %s host: %s\narchive: %s host: %s\nArchive \"%s\" not created.",
			hm.First, hm.FirstHost, hm.Other, hm.OtherHost, out)}
	}
	var ce *ConflictError
	if !s.Compat || !errors.As(err, &ce) || ce.PCP == "" {
		return err
	}
	return pcpError{fmt.Sprintf("Error: %s\nArchive \"%s\" not created.", ce.PCP, out)}
}

// merge runs one extraction.
func (s *Settings) Merge(j Job) (err error) {
	defer func() {
		var fe *format.FormatError
		var pe pcpError
		if s.Compat && err != nil && !errors.As(err, &pe) && errors.As(err, &fe) && strings.HasSuffix(fe.File, ".meta") {
			// libpcp loads the metadata when it opens an archive
			err = pcpError{fmt.Sprintf("Error: cannot open archive \"%s\": %s", s.givenName(fe.File), dump.ErrStrLogRec)}
		}
	}()
	var inputs []Input
	var archives []*format.Archive
	var closers []io.Closer
	var streamLab *stream.Label
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	if len(j.Inputs) == 0 {
		in, err := toolio.OpenInputs(nil, j.Stdin, s.Warn)
		if err != nil {
			return err
		}
		closers = append(closers, in)
		// a result no descriptor came before is refused here as every
		// reader of a stream refuses it (F19: pcpextract wrote one the
		// stream's records left undescribed, from its METADATA frame)
		it, lab, err := streamLabel(stream.Described(in.Iter))
		if err != nil {
			return err
		}
		streamLab = lab
		inputs = append(inputs, Input{Name: "standard input", Stream: it})
	} else {
		for _, name := range j.Inputs {
			as, names, err := s.openInput(name)
			if errors.Is(err, errSkipped) {
				continue
			}
			if err != nil {
				return err
			}
			for i, a := range as {
				if k := toolio.Repeated(archives, a); k >= 0 {
					toolio.WarnRepeat(s.Warn, names[i], archives[k], inputs[k].Name, a)
					continue
				}
				inputs = append(inputs, Input{Name: names[i], Archive: a})
				archives = append(archives, a)
				if s.Compat {
					if s.given == nil {
						s.given = map[string]string{}
					}
					s.given[a.Base()] = names[i]
				}
			}
		}
		format.ForgetDirs()
	}
	if s.Compat && len(j.Inputs) > 0 && len(inputs) == 0 {
		return pcpError{"Warning: all input archive(s) are empty, no output archive created"}
	}
	opts := s.Opts
	opts.Warn = s.Warn
	if s.Compat {
		// libpcp stops reading a volume at a record it calls
		// corrupted; pmlogextract says so and goes on (badlen-1)
		opts.StopAt = func(err error) bool {
			file, at, size, ok := dump.LibpcpBadRecord(err)
			if ok {
				fmt.Fprintf(s.Stderr, "%s: Error: __pmLogRead[log %s]: Corrupted record in a PCP archive log\n", s.WarnPrefix, s.givenName(file))
				fmt.Fprintf(s.Stderr, "%s: Error occurred at byte offset %d into a file of %d bytes.\n", s.WarnPrefix, at, size)
				fmt.Fprintln(s.Stderr, "The last record, and the remainder of this file will not be extracted.")
			}
			return ok
		}
	}
	if len(archives) > 0 {
		start, end, ok, err := Bounds(archives)
		if err != nil {
			return err
		}
		opts.LogEnd, opts.HasLogEnd = end, ok
		if err := s.window(&opts, archives[0].Label(), start, end); err != nil {
			return err
		}
	} else if streamLab != nil {
		// A stream's end is not known until it has been read: a window
		// can be anything but a time counted back from the end.
		for _, spec := range []string{s.Start, s.Finish} {
			if strings.HasPrefix(strings.TrimSpace(spec), "-") {
				return toolio.UsageError{Msg: fmt.Sprintf("%s counts back from the end of the input, which a stream does not give before it ends: name the archive as an argument", spec)}
			}
		}
		if err := s.window(&opts, *streamLab, streamLab.Start, stream.Timestamp{Sec: math.MaxInt64}); err != nil {
			return err
		}
	}
	if s.Config != nil {
		if len(archives) == 0 {
			return toolio.UsageError{Msg: "-c needs archives named as arguments"}
		}
		// The names and instances of a configuration are looked up in
		// the inputs' metadata, loaded whole for that.
		var metas []*format.Metadata
		for _, a := range archives {
			m, err := a.Meta()
			if err != nil {
				return err
			}
			metas = append(metas, m)
		}
		opts.Select = Resolve(s.Config, metas, s.ConfigName, s.Warn)
		if len(opts.Select.PMIDs()) == 0 {
			// pmlogextract extracts everything then; nothing is what
			// was asked for.
			return fmt.Errorf("%s: no metric of the configuration is in the inputs: no output written", s.ConfigName)
		}
	}
	if len(inputs) > manyInputs {
		collectOften()
	}
	x, err := New(inputs, opts)
	if err != nil {
		return s.compatError(err, j.Out)
	}
	defer x.Close()
	wopts := s.Writer
	wopts.Warn = s.Warn
	sink, err := toolio.OpenOutput(j.Out, wopts, j.Stdout)
	if err != nil {
		if s.Compat {
			return toolio.PCPExists(err, s.Stderr, s.Prog+": Error: __pmLogCreate: File exists")
		}
		return err
	}
	defer toolio.AbortOnPanic(sink)
	var total int64
	for _, a := range archives {
		total += a.DataSize()
	}
	// One display at a time: a folio's hosts run as parallel jobs.
	pr := toolio.StartProgress(s.Stderr, total, s.NoProgress || s.Quiet)
	done := false
	defer func() { pr.Done(done) }()
	n := 0
	for x.Next() {
		pr.Record(x.At())
		if err := toolio.WriteFrom(sink, x, x.At()); err != nil {
			sink.Abort(err)
			return err
		}
		switch x.At().(type) {
		case *stream.Result, *stream.Mark:
			n++
		}
	}
	if err := x.Err(); err != nil {
		if s.Desperate && j.Out != "" && n > 0 {
			s.Warn(fmt.Errorf("%v: keeping the %d records written (-d)", err, n))
			if cerr := sink.Close(); cerr != nil {
				return cerr
			}
			return err
		}
		sink.Abort(err)
		var ue *UndescribedError
		if s.Compat && errors.As(err, &ue) {
			return pcpError{fmt.Sprintf("Error: meta data (TYPE_DESC) for pmid %s has not been found.\nArchive \"%s\" not created.", ue.PMID, j.Out)}
		}
		if s.Compat && errors.Is(err, ErrAllEmpty) {
			return s.compatError(err, j.Out)
		}
		return err
	}
	if n == 0 {
		err := fmt.Errorf("%s: no records in the time window or selection%s: no output written", inputsNamed(j.Inputs), outside(archives, opts))
		sink.Abort(err)
		if s.Compat {
			return pcpError{fmt.Sprintf("Warning: no qualifying records found.\nArchive \"%s\" not created.", j.Out)}
		}
		return err
	}
	err = sink.Close()
	done = err == nil
	return err
}

// inputsNamed names the inputs in a message: the one, the first and how
// many more, or standard input.
func inputsNamed(names []string) string {
	switch len(names) {
	case 0:
		return "standard input"
	case 1:
		return names[0]
	}
	return fmt.Sprintf("%s and %d more inputs", names[0], len(names)-1)
}

// outside says, for a merge that kept no record, where the first input
// whose first data record lies outside the window (or past the inputs'
// end, where reading stops) has it: damage (a flipped bit in its time)
// does that too. "" when none does.
func outside(archives []*format.Archive, o Options) string {
	for _, a := range archives {
		it := a.Records(format.DataOnly())
		found := false
		for !found && it.Next() {
			k := it.At().Kind()
			found = k == stream.KindResult || k == stream.KindMark
		}
		if !found {
			it.Close()
			continue
		}
		t := it.At().Time()
		where := stream.Where(it)
		it.Close()
		var why string
		switch {
		case o.HasStart && t.Before(o.Start):
			why = fmt.Sprintf("before the window's start %s", o.Start)
		case o.HasEnd && t.After(o.End):
			why = fmt.Sprintf("after the window's end %s", o.End)
		case o.HasLogEnd && t.After(o.LogEnd):
			why = fmt.Sprintf("after the inputs' last record, at %s", o.LogEnd)
		default:
			continue
		}
		if where != "" {
			where = " (" + where + ")"
		}
		return fmt.Sprintf("; the first record of %s%s is at %s, %s", a.Base(), where, t, why)
	}
	return ""
}

// errSkipped: an input pmlogextract skips (an empty archive), having
// said so.
var errSkipped = errors.New("input skipped")

// openInput is openInput, as pmlogextract opens its inputs under its name:
// libpcp refuses an archive whose .index has a bad label, skips an empty
// one with a warning, says its own words for one it cannot open, and
// fails at once where it cannot find an archive's end.
func (s *Settings) openInput(name string) ([]*format.Archive, []string, error) {
	if !s.Compat {
		return openInput(name, s.Warn)
	}
	var lv dump.LibpcpView
	opening := true
	warn := func(err error) {
		// (the first truncated volume met in opening is said below,
		// unless libpcp fails on it)
		first := lv.Tail == nil
		if lv.Note(err) && (errors.Is(err, format.ErrLabel) || opening && first) || errors.Is(err, format.ErrNoVolume) {
			return
		}
		s.Warn(err)
	}
	as, names, err := openInput(name, warn)
	if err == nil && lv.IndexErr != nil {
		err = lv.IndexErr
	}
	for i := 0; err == nil && i < len(as); i++ {
		// libpcp will not open it (an empty one is skipped below)
		err = dump.LibpcpRefusal(as[i])
	}
	if err == nil {
		for i, a := range as {
			if s.given == nil {
				s.given = map[string]string{}
			}
			s.given[a.Base()] = names[i]
			a.End()
			if lv.LosesEnd(a) {
				return nil, nil, pcpError{fmt.Sprintf("Error: cannot get end of archive (%s): %s", name, dump.ErrStrLogRec)}
			}
		}
		opening = false
		if lv.TailErr != nil {
			s.Warn(lv.TailErr)
		}
		return as, names, nil
	}
	if errors.Is(err, format.ErrEmptyFile) {
		fmt.Fprintf(s.Stderr, "%s: Warning: empty archive \"%s\" will be skipped\n", s.WarnPrefix, name)
		return nil, nil, errSkipped
	}
	return nil, nil, pcpError{fmt.Sprintf("Error: cannot open archive \"%s\": %s", name, dump.LibpcpOpenError(err))}
}

// openInput opens a command-line input: an archive (by any of its names),
// or a directory or comma-separated list of archives (as PCP opens a
// multi-archive context), each of which becomes an input of its own.
func openInput(name string, warn func(error)) ([]*format.Archive, []string, error) {
	var names []string
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		as, err := format.OpenDir(name, format.WithWarn(warn))
		if err != nil {
			return nil, nil, err
		}
		for _, a := range as {
			names = append(names, a.Base())
		}
		return as, names, nil
	}
	parts := []string{name}
	if strings.Contains(name, ",") && !exists(name) {
		parts = strings.Split(name, ",")
	}
	var as []*format.Archive
	for _, p := range parts {
		a, err := format.Open(p, format.WithWarn(warn))
		if err != nil {
			return nil, nil, err
		}
		as = append(as, a)
		names = append(names, p)
	}
	return as, names, nil
}

// streamLabel reads the label at the head of a stream and returns the
// whole stream again, label first.
func streamLabel(it stream.Iterator) (stream.Iterator, *stream.Label, error) {
	if !it.Next() {
		if err := it.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, errors.New("standard input: empty stream")
	}
	l, ok := it.At().(*stream.Label)
	if !ok {
		return nil, nil, errors.New("standard input: the stream does not start with a label")
	}
	l = stream.CloneRecord(l).(*stream.Label)
	return stream.Prepend(l, it), l, nil
}

func exists(name string) bool {
	_, err := os.Stat(name)
	if err == nil {
		return true
	}
	m, _ := filepath.Glob(name + ".meta*")
	return len(m) > 0
}

// window parses -S and -T against the inputs' bounds, in the zone -z or -Z
// chose (local time by default, as PCP does).
func (s *Settings) window(opts *Options, lab stream.Label, start, end stream.Timestamp) error {
	loc, err := pcptime.ChooseZone(s.ArchiveZone, s.Zone, lab.Timezone, lab.Zoneinfo)
	if err != nil {
		return err
	}
	if note := pcptime.ZoneNote(s.ArchiveZone, s.Zone, lab.Hostname); note != "" && !s.Quiet {
		fmt.Fprint(s.NoteOut, note)
	}
	if s.Start == "" && s.Finish == "" {
		if s.Opts.Daily {
			s.Warn(errors.New("-w needs -S and -T: ignored"))
		}
		opts.Daily = false
		return nil
	}
	w, err := pcptime.ParseWindow(s.Start, s.Finish, "", "", start, end, loc)
	if err != nil {
		return toolio.UsageError{Msg: fmt.Sprintf("invalid time window: %v", err)}
	}
	if s.Start != "" {
		opts.Start, opts.HasStart = w.Start, true
	}
	if s.Finish != "" {
		opts.End, opts.HasEnd = w.End, true
		if s.Compat {
			// pmlogextract adds a second to the end of the window (its
			// comment: to dodge truncation from microseconds to
			// nanoseconds); as pmlogextract we do the same, so that
			// scripts and PCP's QA see the same records.
			opts.End.Sec++
		}
	}
	if opts.Daily {
		if !opts.HasStart || !opts.HasEnd || opts.Start.Add(24*time.Hour).Before(opts.End) {
			s.Warn(errors.New("-w needs -S and -T within one day: ignored"))
			opts.Daily = false
		}
	}
	return nil
}

// collectOften has the garbage collector run when the heap has grown by
// half (rather than doubled), for the rest of the process: a merge of
// many inputs decodes every input's metadata, most of it duplicates that
// are garbage at once, and the heap's high-water mark is most of what
// the process holds beyond its code. Merging 100 copies of a QA archive,
// the peak RSS fell by 1-2 MiB; the collections cost up to 0.2 s of CPU
// at 2,000 inputs (docs/benchmarks.md).
var collectOften = sync.OnceFunc(func() {
	if old := debug.SetGCPercent(50); old < 50 {
		debug.SetGCPercent(old) // (GOGC asked for less, or off)
	}
})
