// Command pcpreduce subsamples a PCP archive for long-term storage. Invoked
// as pmlogreduce (a symlink), it takes pmlogreduce's command line (options,
// the input archive, the output archive) and writes the archive PCP
// 6.0.3's pmlogreduce writes.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/reduce"
	"github.com/pcptools/pcptools/stream"
)

func main() { toolio.Main(run) }

// pmlogreduce's usage message (pmUsageMessage), printed on its usage errors.
const compatUsage = `Usage: pmlogreduce [options] input-archive output-archive

Options:
  -A TIME, --align=TIME align sample times on natural boundaries
  -S TIME, --start=TIME start of the time window
  -s N, --samples=N     terminate after this many samples
  -T TIME, --finish=TIME
                        end of the time window
  -t DELTA, --interval=DELTA
                        sample output interval [default 10min]
  -v NUM                switch log volumes after this many samples
  -Z TZ, --timezone=TZ  set reporting timezone
  -z, --hostzone        set reporting timezone to local time of metrics source
  -?, --help            show this usage message and exit
`

// opts are pmlogreduce's options, and ours (Native) beside them.
var opts = toolio.Opts{
	{Name: "A", Aliases: []string{"align"}, Value: "INTERVAL", Usage: "align the output times on multiples of `INTERVAL`"},
	{Name: "ignore-marks", Value: "GAP", Native: true, Usage: "drop the input's <mark>s whose results before and after are at most `GAP` apart (all: every <mark>), as $PCP_IGNORE_MARK_RECORDS does for libpcp (which is read when this is not given)"},
	toolio.OptDebug,
	toolio.OptStart,
	{Name: "s", Aliases: []string{"samples"}, Value: "N", Usage: "stop after `N` records"},
	toolio.OptFinish,
	{Name: "t", Aliases: []string{"interval"}, Value: "INTERVAL", Usage: "output `INTERVAL` (default 10m); pcpreduce: a comma-separated list, one archive each (OUT.5m, OUT.1h)"},
	{Name: "v", Value: "N", Usage: "start a new volume every `N` records"},
	toolio.OptZ,
	toolio.OptZone,
	toolio.OptOutput,
	toolio.OptFolio,
	toolio.OptJobs,
	toolio.OptNoSync,
	toolio.OptOverwrite,
	toolio.OptZstd,
	toolio.OptQuiet,
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	prog, compat := toolio.Names(args, "pcpreduce", "pmlogreduce")
	if compat {
		// pmlogreduce's stdout (its timezone note) is a buffered stdio
		// stream: in a pipe it comes out at exit, after its stderr.
		bw := bufio.NewWriter(stdout)
		defer bw.Flush()
		stdout = bw
		for _, a := range toolio.SplitGetopt(args, opts.Getopt())[1:] {
			if a == "-?" || a == "--help" {
				fmt.Fprint(stderr, compatUsage)
				return 1
			}
		}
	}
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	app := toolio.App{
		Name:      prog,
		Usage:     "subsample a PCP archive (pmlogreduce)",
		UsageText: "pcpreduce [options] [archive ...] [-o OUT | -o - | OUT]\n   pcpcat A | pcpreduce -t 1h -o OUT\n   pcpreduce --folio -t 1h FOLIO|DIR ... -o OUTDIR",
		Opts:      opts,
		Compat:    compat,
		Action: func(c *cli.Context) error {
			return action(c, prog, compat, stdin, stdout, stderr)
		},
	}
	err := app.Run(args, stdin, stdout, stderr)
	switch {
	case err == nil:
		return toolio.ExitOK
	case compat && toolio.IsUsage(err):
		fmt.Fprintf(stderr, "%s: %v\n%s", prog, err, compatUsage)
		return toolio.ExitFailed
	case compat:
		var fe *format.FormatError
		if errors.As(err, &fe) || errors.Is(err, reduce.ErrCorrupt) {
			// damage met in the records, in libpcp's words
			err = errors.New("pmFetch failed: " + dump.ErrStrLogRec)
		}
		if toolio.PCPExists(err, stderr, prog+": Error: __pmLogCreate: File exists") == err {
			fmt.Fprintf(stderr, "%s: Error: %v\n", prog, err)
		}
		return toolio.ExitFailed
	}
	return toolio.Exit(prog, err, stderr)
}

func action(c *cli.Context, prog string, compat bool, stdin *os.File, stdout, stderr io.Writer) error {
	opts := reduce.Options{Mode: reduce.Compat, Prog: prog, Stdout: stdout, Stderr: stderr, Samples: -1,
		Start: c.String("S"), Finish: c.String("T"), Align: c.String("A"),
		ArchiveZone: c.Bool("z"), Zone: c.String("Z")}
	opts.Trace = compat && toolio.DebugOn(c.String("D"), "appl0")
	if opts.ArchiveZone && opts.Zone != "" {
		return toolio.UsageError{Msg: "at most one of -Z and/or -z allowed"}
	}
	count := func(flag, what string) (int, error) {
		n, err := strconv.Atoi(c.String(flag))
		if err != nil || n < 0 {
			if compat {
				return 0, toolio.UsageError{Msg: fmt.Sprintf("-%s requires numeric argument", flag)}
			}
			return 0, toolio.UsageError{Msg: fmt.Sprintf("-%s %s: %s must be a number, 0 or more", flag, c.String(flag), what)}
		}
		return n, nil
	}
	var err error
	if c.IsSet("s") {
		if opts.Samples, err = count("s", "the number of records"); err != nil {
			return err
		}
	}
	if c.IsSet("v") {
		if opts.VolSamples, err = count("v", "the number of records per volume"); err != nil {
			return err
		}
	}
	if c.IsSet("t") && compat {
		d, err := pcptime.ParseInterval(c.String("t"))
		if err != nil {
			return toolio.UsageError{Msg: fmt.Sprintf("-t %s: %v", c.String("t"), err)}
		}
		// pmlogreduce keeps its interval in microseconds.
		if d = d.Truncate(time.Microsecond); d <= 0 {
			return toolio.UsageError{Msg: fmt.Sprintf("-t %s: the interval must be positive", c.String("t"))}
		}
		opts.Interval = d
	}
	args := c.Args().Slice()
	if compat {
		if len(args) != 2 {
			return toolio.UsageError{Msg: "Error: insufficient arguments"}
		}
		opts.IgnoreMarks, opts.IgnoreAllMarks = libpcpIgnoreMarks(prog, stderr)
		return reduce.Run(args[0], args[1], opts)
	}
	opts.NoSync, opts.Overwrite, opts.NoProgress = c.Bool("no-sync"), c.Bool("overwrite"), c.Bool("quiet")
	if err := checkFirst(c); err != nil {
		return err
	}
	if opts.AlignTo, err = nativeAlign(c); err != nil {
		return err
	}
	if opts.IgnoreMarks, opts.IgnoreAllMarks, err = ignoreMarks(c, stderr); err != nil {
		return err
	}
	opts.Mode, opts.Align, opts.Zstd = reduce.Native, "", c.Bool("zstd")
	if c.Bool("folio") {
		return folioReduce(c, opts, args)
	}
	ins, out, err := toolio.InputsAndOutput(c.IsSet("o"), c.String("o"), args)
	if err != nil {
		return err
	}
	outs, err := nativeOutputs(c, out)
	if err != nil {
		return err
	}
	if out == "" {
		if opts.Zstd {
			return toolio.UsageError{Msg: "--zstd compresses an archive's volumes: write an archive (-o OUT), not the record stream"}
		}
		if f, ok := stdout.(*os.File); ok && pipe.IsTerminal(f) {
			return toolio.ErrTerminal
		}
	}
	if len(ins) == 0 {
		// A stream is reduced as it arrives, taking the metadata as it
		// comes (pcpextract's, pcprewrite's streams) from what it
		// brings up front (a METADATA frame: pcpcat of an archive
		// sends one; a stream concatenated after the first may bring
		// more); a reduced archive's stream is read with its frame's
		// whole metadata, checked against it, or else spilled first, as
		// is a stream whose -S/-T counts back from the end. As for
		// pcpcat, no progress display of a stream.
		opts.NoProgress = true
		warn := func(err error) { fmt.Fprintf(stderr, "%s: warning: %v\n", prog, err) }
		in, err := toolio.OpenStdinFrameLate(stdin, "pcpreduce", !pcptime.NeedsEnd(opts.Start, opts.Finish), reduce.CanStreamLate, warn)
		if err != nil {
			if out != "" && !c.IsSet("o") {
				return toolio.OutputTaken(err, out)
			}
			return err
		}
		defer in.Close()
		// (a result with no descriptor before it is an error, as in a
		// copy: stream.Described)
		switch {
		case in.Meta != nil:
			return reduce.RunNativeStream(in.Meta, stream.Described(in.Iter), outs, opts)
		case in.Head != nil:
			return reduce.RunNativeStreamLate(in.Head, stream.Described(in.Iter), outs, opts)
		}
		ins = []string{in.Spilled.Base()}
	}
	return reduce.RunNativeInputs(ins, outs, opts)
}

// checkFirst refuses native-mode options before a stream is read.
func checkFirst(c *cli.Context) error {
	if _, err := nativeAlign(c); err != nil {
		return err
	}
	return nil
}
