// Command pcpexport turns PCP archives, or a record stream on standard
// input, into formats other tools analyse: a Parquet long table
// (--parquet -o F.parquet), OpenMetrics text for promtool (--openmetrics),
// or a Hive-partitioned Parquet dataset of many hosts' archives
// (--dataset DIR). docs/export.md describes them.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/export"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scratch"
	"github.com/pcptools/pcptools/internal/toolio"
)

func main() { toolio.Main(run) }

var opts = toolio.Opts{
	{Name: "parquet", Usage: "write a Parquet long table (time, metric, instance, value) to -o FILE"},
	{Name: "openmetrics", Usage: "write OpenMetrics text (for promtool tsdb create-blocks-from openmetrics) to -o FILE or standard output"},
	{Name: "dataset", Value: "DIR", Usage: "export folios or directories of archives to a Hive-partitioned Parquet dataset in `DIR`"},
	{Name: "o", Aliases: []string{"output"}, Value: "FILE", Usage: "the output file"},
	{Name: "j", Aliases: []string{"jobs"}, Value: "N", Kind: toolio.Int, Usage: "with --dataset: `N` hosts at once", Default: "one per CPU"},
	{Name: "force", Usage: "with --dataset: redo files whose archive has not changed"},
	{Name: "overwrite", Usage: "with -o FILE: replace an existing file (whole, once the new one is complete; never a file of the input archive)"},
	{Name: "rates", Usage: "with --parquet or --dataset: counters as rates per second (NULL for a series' first value, after a <mark> and after a decrease)"},
	toolio.OptStart,
	toolio.OptFinish,
	toolio.OptQuiet,
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	toolio.GuardFaults()
	defer toolio.CatchPanic("pcpexport", stderr, &status)
	app := toolio.App{
		Name:  "pcpexport",
		Usage: "export PCP archives as Parquet or OpenMetrics",
		UsageText: "pcpexport --parquet -o OUT.parquet ARCHIVE|- [metricname ...]\n" +
			"   pcpexport --openmetrics [-o OUT] ARCHIVE|- [metricname ...]\n" +
			"   pcpexport --dataset DIR FOLIO|DIR|ARCHIVE ...",
		Opts: opts,
		Action: func(c *cli.Context) error {
			return action(c, stdin, stdout, stderr)
		},
	}
	return toolio.Exit("pcpexport", app.Run(args, stdin, stdout, stderr), stderr)
}

func warner(stderr io.Writer) func(error) {
	return func(err error) { fmt.Fprintf(stderr, "pcpexport: warning: %v\n", err) }
}

func action(c *cli.Context, stdin *os.File, stdout, stderr io.Writer) (err error) {
	modes := 0
	for _, m := range []bool{c.Bool("parquet"), c.Bool("openmetrics"), c.String("dataset") != ""} {
		if m {
			modes++
		}
	}
	if modes != 1 {
		return toolio.UsageError{Msg: "choose one of --parquet, --openmetrics and --dataset"}
	}
	dopts := dump.Options{Start: c.String("S"), Finish: c.String("T"), Prog: "pcpexport", Warn: stderr}
	if dir := c.String("dataset"); dir != "" {
		if c.NArg() == 0 {
			return toolio.UsageError{Msg: "--dataset needs folios, directories or archives to export"}
		}
		return dataset(c, dir, dopts, stderr)
	}
	args := c.Args().Slice()
	if len(args) == 0 {
		return toolio.UsageError{Msg: "name an archive, or - for a stream on standard input"}
	}
	name, metrics := args[0], args[1:]
	dopts.Metrics = metrics
	out := c.String("o")
	if c.Bool("parquet") && (out == "" || out == "-") {
		return toolio.UsageError{Msg: "--parquet needs -o FILE (Parquet is written to a file, not a pipe)"}
	}
	a, size, inputs, cleanup, err := open(name, stdin, dopts, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if out != "" && out != "-" {
		if err := outputFree(out, name, inputs, c.Bool("overwrite")); err != nil {
			return err
		}
	}
	// No display of a stream on standard input, as for pcpcat.
	pr := toolio.StartProgress(stderr, size, c.Bool("quiet") || name == "-")
	defer func() { pr.Done(err == nil) }()
	if pr != nil {
		dopts.OnRecord = pr.Record
	}
	if c.Bool("parquet") {
		write := export.Parquet
		if c.Bool("rates") {
			write = export.ParquetRates
		}
		_, err := write(out, a, dopts)
		return err
	}
	if c.Bool("rates") {
		return toolio.UsageError{Msg: "--rates goes with --parquet or --dataset (OpenMetrics has counters of its own)"}
	}
	if out != "" && out != "-" {
		return openMetricsFile(out, a, dopts)
	}
	// The text is gathered first, then written: the display ends
	// before it comes out, on a terminal too.
	_, _, err = export.OpenMetrics(pr.Ending(stdout), a, dopts)
	return err
}

// open opens an archive (and gives its data's size and its files), or the stream on
// standard input ("-"): read as it arrives when it came with its
// METADATA frame (as pcpcat's of an archive; pcpextract's and
// pcprewrite's streams have none) and the
// options allow (dump.ExportFrameStreamable), else spilled to a temporary
// archive first.
func open(name string, stdin *os.File, dopts dump.Options, stderr io.Writer) (src *export.Source, size int64, files []string, cleanup func(), err error) {
	if name != "-" {
		a, err := format.Open(name, format.WithWarn(warner(stderr)))
		if err != nil {
			return nil, 0, nil, nil, err
		}
		src, err := export.FromArchive(a)
		// (an .index that is not used is a file of the archive too)
		return src, a.DataSize(), append(a.Files(), a.Base()+".index"), func() {}, err
	}
	in, err := toolio.OpenStdin(stdin, "pcpexport-", dump.ExportFrameStreamable(dopts), warner(stderr))
	if err != nil {
		return nil, 0, nil, nil, err
	}
	if in.Spilled == nil {
		return export.FromStream(in.Meta, in.Iter), 0, nil, func() { in.Close() }, nil
	}
	src, err = export.FromArchive(in.Spilled)
	if err != nil {
		in.Close()
		return nil, 0, nil, nil, err
	}
	return src, 0, nil, func() { in.Close() }, nil
}

// outputFree refuses an output file that exists, unless overwrite, and
// always one of the input archive's files (inputs; none for a stream),
// which the export would replace.
func outputFree(out, name string, inputs []string, overwrite bool) error {
	st, err := os.Stat(out)
	if err != nil {
		return nil // (a path that cannot be written fails when it is created)
	}
	for _, f := range inputs {
		if fs, err := os.Stat(f); err == nil && os.SameFile(st, fs) {
			return fmt.Errorf("%s: a file of the input archive %s: the export would replace it", out, name)
		}
	}
	if !overwrite && !scratch.Special(out) { // (-o /dev/null: written into, not replaced)
		return fmt.Errorf("%s: file exists: remove it first, or replace it with --overwrite", out)
	}
	return nil
}

// openMetricsFile writes the text beside out and renames it into place
// (or into out itself, a device or a FIFO: scratch.Output).
func openMetricsFile(out string, a *export.Source, dopts dump.Options) (err error) {
	f, err := scratch.CreateOutput(out, ".pcpexport.tmp-*")
	if err != nil {
		return err
	}
	if _, _, err = export.OpenMetrics(f, a, dopts); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(false)
}

func dataset(c *cli.Context, dir string, dopts dump.Options, stderr io.Writer) error {
	o := export.DatasetOptions{
		Jobs: c.Int("j"), Force: c.Bool("force"), Rates: c.Bool("rates"), Dump: dopts, Warn: warner(stderr),
		Report: func(host string, err error) { fmt.Fprintf(stderr, "pcpexport: host %s: %v\n", host, err) },
	}
	// A failed host was reported as it failed; the error says how many.
	return export.Dataset(dir, c.Args().Slice(), o)
}
