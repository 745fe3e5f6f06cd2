// Command pcpimport makes a PCP archive (or the record stream) from data
// that knows nothing of PCP: the JSON lines `pcpcat --json` writes (a round
// trip: pcpcat --json A | jq ... | pcpimport --json -o B). Its logic is in
// package logimport; see docs/pcpimport.md.
package main

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/logimport"
)

func main() { toolio.Main(run) }

var opts = toolio.Opts{
	{Name: "json", Native: true, Usage: "the input is JSON lines as pcpcat --json writes them"},
	{Name: "map", Value: "MAPFILE", Native: true, Usage: "the input is CSV, its columns mapped by sheet2pcp's `MAPFILE`"},
	{Name: "csv", Native: true, Usage: "the input is CSV, its columns given by -c"},
	{Name: "c", Aliases: []string{"column"}, Value: "SPEC", Kind: toolio.Strings, Native: true, Usage: "with --csv, the next column: time, skip or NAME[INST]:TYPE:SEM:UNITS (see docs/pcpimport.md)"},
	{Name: "heading", Value: "N", Kind: toolio.Int, Native: true, Usage: "with --csv, skip `N` heading rows"},
	{Name: "datefmt", Value: "DMY|MDY|YMD", Native: true, Usage: "with --csv, the order of dates that are not RFC 3339 (default YMD)"},
	{Name: "empty-zero", Native: true, Usage: "with --map, an empty cell is 0 (or \"\"), as sheet2pcp takes it, instead of no value and a warning"},
	{Name: "h", Aliases: []string{"host"}, Value: "HOST", Usage: "the archive's hostname (the mapfile's wins)"},
	{Name: "Z", Aliases: []string{"timezone"}, Value: "+HHMM", Usage: "the sheet's timezone (the mapfile's wins)"},
	toolio.OptOutput,
	toolio.OptVersion.WithDefault("with --json the input's, else 3; with --map or --csv 2, as sheet2pcp"),
	toolio.OptZstd,
	toolio.OptNoSync,
	toolio.OptOverwrite,
	toolio.OptQuiet,
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	prog, _ := toolio.Names(args, "pcpimport", "pcpimport")
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	app := toolio.App{
		Name:      prog,
		Usage:     "make a PCP archive from JSON lines (pcpcat --json)",
		UsageText: "pcpimport --json [file ...] [-o OUT] [-V 2|3] [--zstd]\n   pcpcat --json A | jq -c 'select(...)' | pcpimport --json -o B",
		Opts:      opts,
		Action: func(c *cli.Context) error {
			var wo format.WriterOptions
			if err := toolio.WriterFlags(c, &wo); err != nil {
				return err
			}
			if m := c.String("map"); m != "" || c.Bool("csv") {
				return sheet(c, m, wo, stdin, stdout, stderr)
			}
			if !c.Bool("json") {
				return toolio.Usagef("say what the input is: --json, --map MAPFILE or --csv -c ...")
			}
			// The display counts the input's bytes and its lines.
			pr := toolio.StartFileProgress(stderr, c.Args().Slice(), c.Bool("quiet"))
			defer pr.Done(false)
			in := logimport.NewJSONFiles(c.Args().Slice(), stdin, func(n string) (io.ReadCloser, error) {
				f, err := os.Open(n)
				if err != nil {
					return nil, err
				}
				return struct {
					io.Reader
					io.Closer
				}{pr.Reader(f), f}, nil
			})
			defer in.Close()
			sink, err := toolio.OpenOutput(c.String("o"), wo, stdout)
			if err != nil {
				return err
			}
			return toolio.CopyShowing(in, sink, pr)
		},
	}
	return toolio.Exit(prog, app.Run(args, stdin, stdout, stderr), stderr)
}
