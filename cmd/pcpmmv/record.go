package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scratch"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/mmv"
	"github.com/pcptools/pcptools/pcptime"
)

// recordOpts are pmlogger's -t, -T and -s, and the shared writer options.
var recordOpts = toolio.Opts{
	{Name: "t", Aliases: []string{"interval"}, Value: "DURATION", Usage: "sample every `DURATION` (default 1s; Go's 500ms, 1m30s or pmlogger's 10sec, 2min, 1 hour)"},
	{Name: "T", Aliases: []string{"duration"}, Value: "DURATION", Usage: "stop after `DURATION` (as -t)"},
	{Name: "s", Aliases: []string{"samples"}, Value: "N", Kind: toolio.Int, Usage: "stop after `N` samples", Default: "no limit"},
	{Name: "o", Aliases: []string{"output"}, Value: "ARCHIVE", Usage: "write the archive with base name `ARCHIVE` (- or none: the record stream on standard output)"},
	toolio.OptVersion.WithDefault("3"),
	toolio.OptZstd,
	toolio.OptXz,
	toolio.OptNoSync,
	toolio.OptOverwrite,
}

func record(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	app := toolio.App{
		Name:      "pcpmmv record",
		Usage:     "record MMV files into an archive, as pmlogger through pmcd and pmdammv would, with neither",
		UsageText: "pcpmmv record [-t 1s] [-T DURATION | -s N] FILE|DIR [-o ARCHIVE | -o -]",
		Opts:      recordOpts,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return toolio.Usagef("name one MMV file or directory (and -o ARCHIVE, or the record stream goes to standard output)")
			}
			o := mmv.RecordOptions{Count: c.Int("s")}
			if os.Getenv("PCPTOOLS_RECORDSTATS") != "" { // (scripts/bench-mmv.sh)
				o.Stats = func(n int, user, sys time.Duration) {
					fmt.Fprintf(stderr, "pcpmmv: %d samples after the first: CPU per sample %.3f ms (user %.3f, system %.3f)\n",
						n, float64(user+sys)/1e6, float64(user)/1e6, float64(sys)/1e6)
				}
			}
			var err error
			if o.Interval, err = duration(c.String("t")); err != nil {
				return err
			}
			if o.Duration, err = duration(c.String("T")); err != nil {
				return err
			}
			warn := func(err error) { fmt.Fprintf(stderr, "pcpmmv: warning: %v\n", err) }
			o.Writer = format.WriterOptions{Warn: warn}
			if err := toolio.WriterFlags(c, &o.Writer); err != nil {
				return err
			}
			// SIGINT and SIGTERM end the recording, whose archive is
			// then finished, not removed.
			scratch.HandledByTool(os.Interrupt, syscall.SIGTERM)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if o.Writer.Version == 0 {
				o.Writer.Version = 3
			}
			// A path that is not there at the start is a mistake, not
			// an application yet to start (its directory would be).
			if _, err := os.Stat(c.Args().First()); err != nil {
				return err
			}
			out, err := toolio.OpenOutput(toolio.StdioOutput(c.String("o")), o.Writer, stdout)
			if err != nil {
				return err
			}
			_, err = mmv.RecordTo(ctx, &mmv.Sampler{Path: c.Args().First(), Warn: warn}, out, o)
			return err
		},
	}
	return toolio.Exit("pcpmmv", app.Run(append([]string{"pcpmmv record"}, args...), stdin, stdout, stderr), stderr)
}

// duration reads -t and -T: Go's syntax (500ms, 1m30s) or, where that
// fails, pmlogger's (10sec, 2min, 1 hour, or a number of seconds). A
// spelling both read, such as 10m or 1h, means the same to both, except
// "10ms": milliseconds here, where PCP drops the "s" and reads minutes.
func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if pd, perr := pcptime.ParseInterval(s); perr == nil {
			d, err = pd, nil
		}
	}
	if err == nil && d <= 0 {
		err = fmt.Errorf("not positive")
	}
	if err != nil {
		return 0, toolio.Usagef("bad duration %q: %v", s, err)
	}
	return d, nil
}
