package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/logimport"
)

// sheet imports CSV with a sheet2pcp mapfile.
func sheet(c *cli.Context, mapfile string, wo format.WriterOptions, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	s, err := sheetOf(c, mapfile)
	if err != nil {
		return err
	}
	if s.Hostname == "" {
		s.Hostname = c.String("h")
	}
	if s.Timezone == "" {
		s.Timezone = c.String("Z")
	}
	var in io.Reader = stdin
	name := "standard input"
	if c.NArg() > 1 {
		return toolio.Usagef("--map takes one CSV input")
	}
	// The display counts the input's bytes and its rows.
	pr := toolio.StartFileProgress(stderr, c.Args().Slice(), c.Bool("quiet"))
	defer func() { pr.Done(err == nil) }()
	if c.NArg() == 1 {
		if name = c.Args().First(); name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			in = pr.Reader(f)
		}
	}
	out := c.String("o")
	o := logimport.SheetOptions{Options: logimport.Options{Version: wo.Version, Zstd: wo.Zstd, NoSync: wo.NoSync, Overwrite: wo.Overwrite},
		EmptyZero: c.Bool("empty-zero"),
		OnRow:     pr.Count,
		Warn:      func(err error) { fmt.Fprintln(stderr, "pcpimport: warning:", err) }}
	if o.Version == 0 {
		o.Version = 2 // sheet2pcp's default (PCP_ARCHIVE_VERSION)
	}
	return logimport.ImportSheet(s, in, name, o, func(opts logimport.Options) (*logimport.Importer, error) {
		if out == "" {
			sink, err := toolio.OpenOutput("", wo, stdout)
			if err != nil {
				return nil, err
			}
			return logimport.New(sink, opts)
		}
		return logimport.Create(out, opts)
	})
}

func sheetOf(c *cli.Context, mapfile string) (*logimport.Sheet, error) {
	if mapfile == "" {
		if c.Int("heading") < 0 {
			return nil, toolio.Usagef("--heading: a number of rows")
		}
		if len(c.StringSlice("c")) == 0 {
			return nil, toolio.Usagef("--csv: say what each column holds with -c, in order: -c time for the date and time, -c skip, -c NAME[INST]:TYPE:SEM:UNITS for a metric (e.g. --csv --heading 1 -c time -c cpu.user:double:instant:none; docs/pcpimport.md)")
		}
		s, err := logimport.CompactSheet(c.StringSlice("c"), c.Int("heading"), c.String("datefmt"))
		if err != nil {
			return nil, toolio.Usagef("-c: %v", err)
		}
		return s, nil
	}
	mf, err := os.Open(mapfile)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	return logimport.ParseSheet(mf, mapfile)
}
