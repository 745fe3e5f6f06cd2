// Command pcpextract merges, windows and selects PCP archives of one host
// (what pmlogextract does), streaming, in bounded memory, with no limit on
// the number of inputs; and merges whole multi-host folios, one host per
// core. Invoked as pmlogextract (a symlink), it takes pmlogextract's
// command line: options, inputs, and the output last.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
	"github.com/pcptools/pcptools/stream/pipe"
)

func main() { toolio.Main(run) }

// opts are pmlogextract's options, and ours (Native) beside them.
var opts = toolio.Opts{
	{Name: "c", Aliases: []string{"config"}, Value: "FILE", Usage: "extract only the metrics (and instances) listed in `FILE`"},
	toolio.OptDebug,
	{Name: "d", Aliases: []string{"desperate"}, Usage: "keep the output written so far when something fails"},
	{Name: "f", Aliases: []string{"first"}, Usage: "take the output timezone from the first input, not the last"},
	{Name: "m", Aliases: []string{"mark"}, Usage: "always put a <mark> between inputs"},
	toolio.OptStart,
	{Name: "s", Aliases: []string{"samples"}, Value: "N", Kind: toolio.Int, Usage: "stop after `N` records"},
	toolio.OptFinish,
	toolio.OptVersion,
	toolio.OptVolumes,
	{Name: "w", Usage: "repeat the -S..-T window (within one day) every day"},
	{Name: "x", Usage: "leave out metrics whose metadata differs between inputs, with a warning, instead of failing"},
	toolio.OptZ,
	toolio.OptZone,
	toolio.OptOutput,
	toolio.OptFolio,
	toolio.OptJobs,
	toolio.OptZstd,
	toolio.OptXz,
	toolio.OptNoSync,
	toolio.OptOverwrite,
	{Name: "no-carry", Native: true, Usage: "with -S, do not carry the values of discrete metrics logged before the window to its start"},
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	prog, compat := toolio.Names(args, "pcpextract", "pmlogextract")
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	usage := "pcpextract [options] [archive ...] [-o OUT]\n   pcpcat A | pcpextract -S @10:00 -T @11:00 -o OUT\n   pcpextract --folio F ... -o DIR     (or directories of per-host archives)"
	if compat {
		usage = "pmlogextract [-dfmwxz] [-c configfile] [-S start] [-s samples] [-T finish] [-V version] [-v volsamples] [-Z tz] input [...] output"
	}
	app := toolio.App{
		Name:      prog,
		Usage:     "merge, window and select PCP archives (pmlogextract)",
		UsageText: usage,
		Opts:      opts,
		Compat:    compat,
		Action: func(c *cli.Context) error {
			return action(c, prog, compat, stdin, stdout, stderr)
		},
	}
	return toolio.Exit(prog, app.Run(args, stdin, stdout, stderr), stderr)
}

// job is one merge: inputs to an output.
type job struct {
	inputs []string
	out    string // "" for the stream on stdout
	stdin  *os.File
	stdout io.Writer
}

// settings are the parsed options shared by every job.
type settings struct {
	prog     string
	compat   bool
	config   []extract.MetricSpec
	cfgName  string
	start    string
	finish   string
	zone     bool
	tz       string
	opts     extract.Options
	wopts    format.WriterOptions
	desp     bool
	stderr   io.Writer
	noteOut  io.Writer
	quiet    bool // no zone note (folio jobs)
	warnPref string
}

func action(c *cli.Context, prog string, compat bool, stdin *os.File, stdout, stderr io.Writer) error {
	// pmlogextract prints its timezone note on standard output, and
	// scripts see it there; pcpextract's standard output may carry the
	// record stream, which nothing else may enter.
	s := &settings{prog: prog, compat: compat, stderr: stderr, noteOut: stderr}
	if compat {
		s.noteOut = stdout
	}
	s.start, s.finish = c.String("S"), c.String("T")
	s.zone, s.tz = c.Bool("z"), c.String("Z")
	if s.zone && s.tz != "" {
		return toolio.UsageError{Msg: "-z and -Z are mutually exclusive"}
	}
	s.opts = extract.Options{Samples: c.Int("s"), AlwaysMark: c.Bool("m"), SkipConflicts: c.Bool("x"),
		FirstTZ: c.Bool("f"), Version: c.Int("V"), Daily: c.Bool("w")}
	if c.IsSet("s") && s.opts.Samples <= 0 {
		return toolio.Usagef("-s %d: the number of samples must be positive", c.Int("s"))
	}
	s.desp = c.Bool("d")
	s.wopts = format.WriterOptions{StartAtFirstRecord: true, DeltaInDoms: true, IndexRepeats: true}
	if err := toolio.WriterFlags(c, &s.wopts); err != nil {
		return err
	}
	if !compat {
		// pmlogextract loses what was logged once before -S; under its
		// own name pcpextract carries it to the window's start.
		s.opts.CarryDiscrete = !c.Bool("no-carry")
	}
	if f := c.String("c"); f != "" {
		specs, err := extract.ReadConfig(f)
		if err != nil {
			return err
		}
		s.config, s.cfgName = specs, f
	}
	args := c.Args().Slice()
	if compat {
		if len(args) < 2 {
			return toolio.UsageError{Msg: "name at least one input archive and the output archive (last)"}
		}
		s.warnPref = prog
		return s.merge(job{inputs: args[:len(args)-1], out: args[len(args)-1]})
	}
	out := toolio.StdioOutput(c.String("o"))
	if c.Bool("folio") {
		if out == "" {
			return toolio.UsageError{Msg: "--folio writes one archive per host: name the output directory with -o DIR"}
		}
		if len(args) == 0 {
			return toolio.UsageError{Msg: "--folio: name archive folios or directories of archives"}
		}
		return s.folio(args, out, c.Int("j"))
	}
	args, err := toolio.StdioInputs(args)
	if err != nil {
		return toolio.UsageError{Msg: err.Error()}
	}
	if out == "" {
		if f, ok := stdout.(*os.File); ok && pipe.IsTerminal(f) {
			return toolio.ErrTerminal
		}
	}
	s.warnPref = prog
	return s.merge(job{inputs: args, out: out, stdin: stdin, stdout: stdout})
}

func (s *settings) warn(err error) {
	fmt.Fprintf(s.stderr, "%s: warning: %v\n", s.warnPref, err)
}

// merge runs one extraction.
func (s *settings) merge(j job) (err error) {
	var inputs []extract.Input
	var archives []*format.Archive
	var closers []io.Closer
	var streamLab *stream.Label
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	if len(j.inputs) == 0 {
		in, err := toolio.OpenInputs(nil, j.stdin, s.warn)
		if err != nil {
			return err
		}
		closers = append(closers, in)
		it, lab, err := streamLabel(in.Iter)
		if err != nil {
			return err
		}
		streamLab = lab
		inputs = append(inputs, extract.Input{Name: "standard input", Stream: it})
	} else {
		for _, name := range j.inputs {
			as, names, err := openInput(name, s.warn)
			if err != nil {
				return err
			}
			for i, a := range as {
				if k := toolio.Repeated(archives, a); k >= 0 {
					toolio.WarnRepeat(s.warn, names[i], archives[k], inputs[k].Name, a)
					continue
				}
				inputs = append(inputs, extract.Input{Name: names[i], Archive: a})
				archives = append(archives, a)
			}
		}
	}
	opts := s.opts
	opts.Warn = s.warn
	if len(archives) > 0 {
		start, end, ok, err := extract.Bounds(archives)
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
		for _, spec := range []string{s.start, s.finish} {
			if strings.HasPrefix(strings.TrimSpace(spec), "-") {
				return toolio.UsageError{Msg: fmt.Sprintf("%s counts back from the end of the input, which a stream does not give before it ends: name the archive as an argument", spec)}
			}
		}
		if err := s.window(&opts, *streamLab, streamLab.Start, stream.Timestamp{Sec: math.MaxInt64}); err != nil {
			return err
		}
	}
	if s.config != nil {
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
		opts.Select = extract.Resolve(s.config, metas, s.cfgName, s.warn)
		if len(opts.Select.PMIDs()) == 0 {
			// pmlogextract extracts everything then; nothing is what
			// was asked for.
			return fmt.Errorf("%s: no metric of the configuration is in the inputs: no output written", s.cfgName)
		}
	}
	x, err := extract.New(inputs, opts)
	if err != nil {
		return err
	}
	defer x.Close()
	wopts := s.wopts
	wopts.Warn = s.warn
	sink, err := toolio.OpenOutput(j.out, wopts, j.stdout)
	if err != nil {
		return err
	}
	defer toolio.AbortOnPanic(sink)
	n := 0
	for x.Next() {
		if err := sink.Write(x.At()); err != nil {
			sink.Abort(err)
			return err
		}
		switch x.At().(type) {
		case *stream.Result, *stream.Mark:
			n++
		}
	}
	if err := x.Err(); err != nil {
		if s.desp && j.out != "" && n > 0 {
			s.warn(fmt.Errorf("%v: keeping the %d records written (-d)", err, n))
			if cerr := sink.Close(); cerr != nil {
				return cerr
			}
			return err
		}
		sink.Abort(err)
		return err
	}
	if n == 0 {
		err := errors.New("no records in the time window or selection: no output written")
		sink.Abort(err)
		return err
	}
	return sink.Close()
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
func (s *settings) window(opts *extract.Options, lab stream.Label, start, end stream.Timestamp) error {
	loc, err := pcptime.ChooseZone(s.zone, s.tz, lab.Timezone, lab.Zoneinfo)
	if err != nil {
		return err
	}
	if note := pcptime.ZoneNote(s.zone, s.tz, lab.Hostname); note != "" && !s.quiet {
		fmt.Fprint(s.noteOut, note)
	}
	if s.start == "" && s.finish == "" {
		if s.opts.Daily {
			s.warn(errors.New("-w needs -S and -T: ignored"))
		}
		opts.Daily = false
		return nil
	}
	w, err := pcptime.ParseWindow(s.start, s.finish, "", "", start, end, loc)
	if err != nil {
		return toolio.UsageError{Msg: fmt.Sprintf("invalid time window: %v", err)}
	}
	if s.start != "" {
		opts.Start, opts.HasStart = w.Start, true
	}
	if s.finish != "" {
		opts.End, opts.HasEnd = w.End, true
		if s.compat {
			// pmlogextract adds a second to the end of the window (its
			// comment: to dodge truncation from microseconds to
			// nanoseconds); as pmlogextract we do the same, so that
			// scripts and PCP's QA see the same records.
			opts.End.Sec++
		}
	}
	if opts.Daily {
		if !opts.HasStart || !opts.HasEnd || opts.Start.Add(24*time.Hour).Before(opts.End) {
			s.warn(errors.New("-w needs -S and -T within one day: ignored"))
			opts.Daily = false
		}
	}
	return nil
}
