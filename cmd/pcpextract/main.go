// Command pcpextract merges, windows and selects PCP archives of one host
// (what pmlogextract does), streaming, in bounded memory, with no limit on
// the number of inputs; and merges whole multi-host folios, one host per
// core. Invoked as pmlogextract (a symlink), it takes pmlogextract's
// command line: options, inputs, and the output last.
package main

import (
	"bytes"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/extract"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pipe"
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
	{Name: "s", Aliases: []string{"samples"}, Value: "N", Kind: toolio.Int, Usage: "stop after `N` records", Default: "no limit"},
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
	toolio.OptQuiet,
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
	// pmlogextract's standard output, when not a terminal, is buffered
	// until it exits, so its timezone note comes after its warnings and
	// errors: scripts (PCP's QA tests, 2>&1) see that order.
	noteOut := stdout
	var deferred bytes.Buffer
	if f, ok := stdout.(*os.File); compat && !(ok && pipe.IsTerminal(f)) {
		noteOut = &deferred
	}
	app := toolio.App{
		Name:      prog,
		Usage:     "merge, window and select PCP archives (pmlogextract)",
		UsageText: usage,
		Opts:      opts,
		Compat:    compat,
		Action: func(c *cli.Context) error {
			return action(c, prog, compat, stdin, stdout, stderr, noteOut)
		},
	}
	status = toolio.Exit(prog, app.Run(args, stdin, stdout, stderr), stderr)
	stdout.Write(deferred.Bytes())
	return status
}

func action(c *cli.Context, prog string, compat bool, stdin *os.File, stdout, stderr, noteOut io.Writer) error {
	// pmlogextract prints its timezone note on standard output, and
	// scripts see it there; pcpextract's standard output may carry the
	// record stream, which nothing else may enter.
	s := &extract.Settings{Prog: prog, Compat: compat, Stderr: stderr, NoteOut: stderr}
	if compat {
		s.NoteOut = noteOut
	}
	s.Start, s.Finish = c.String("S"), c.String("T")
	s.ArchiveZone, s.Zone = c.Bool("z"), c.String("Z")
	if s.ArchiveZone && s.Zone != "" {
		return toolio.UsageError{Msg: "-z and -Z are mutually exclusive"}
	}
	s.Opts = extract.Options{Samples: c.Int("s"), AlwaysMark: c.Bool("m"), SkipConflicts: c.Bool("x"),
		FirstTZ: c.Bool("f"), Version: c.Int("V"), Daily: c.Bool("w")}
	if c.IsSet("s") && s.Opts.Samples <= 0 {
		return toolio.Usagef("-s %d: the number of samples must be positive", c.Int("s"))
	}
	s.Desperate = c.Bool("d")
	s.NoProgress = compat || c.Bool("q")
	s.Writer = format.WriterOptions{StartAtFirstRecord: true, DeltaInDoms: true, IndexRepeats: true}
	if err := toolio.WriterFlags(c, &s.Writer); err != nil {
		return err
	}
	if !compat {
		// pmlogextract loses what was logged once before -S; under its
		// own name pcpextract carries it to the window's start.
		s.Opts.CarryDiscrete = !c.Bool("no-carry")
	}
	if f := c.String("c"); f != "" {
		specs, err := extract.ReadConfig(f)
		if err != nil {
			return err
		}
		s.Config, s.ConfigName = specs, f
	}
	args := c.Args().Slice()
	if compat {
		if len(args) < 2 {
			return toolio.UsageError{Msg: "name at least one input archive and the output archive (last)"}
		}
		s.WarnPrefix = prog
		return s.Merge(extract.Job{Inputs: args[:len(args)-1], Out: args[len(args)-1]})
	}
	out := toolio.StdioOutput(c.String("o"))
	if c.Bool("folio") {
		if out == "" {
			return toolio.UsageError{Msg: "--folio writes one archive per host: name the output directory with -o DIR"}
		}
		if len(args) == 0 {
			return toolio.UsageError{Msg: "--folio: name archive folios or directories of archives"}
		}
		return folioMerge(s, args, out, c.Int("j"))
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
	s.WarnPrefix = prog
	return s.Merge(extract.Job{Inputs: args, Out: out, Stdin: stdin, Stdout: stdout})
}
