// Command pcpcat reads PCP archives (v2 or v3, plain or compressed) or a
// record stream on standard input, and writes the stream for the next
// filter, an archive (-o), or a readable dump in pmdumplog's views, JSON or
// CSV. With --check it makes pmlogcheck's integrity checks and exits
// non-zero when anything is wrong.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pipe"
)

func main() { toolio.Main(run) }

// opts are pcpcat's options: the output, pmdumplog's views, the checks.
var opts = toolio.Opts{
	toolio.OptOutput,
	toolio.OptVersion,
	toolio.OptZstd,
	toolio.OptXz,
	toolio.OptNoSync,
	toolio.OptOverwrite,
	{Name: "volume-records", Value: "N", Kind: toolio.Int, Usage: "start a new volume every `N` records", Default: "one volume"},
	{Name: "volume-size", Value: "SIZE", Usage: "start a new volume before `SIZE` bytes (e.g. 100MiB)"},
	{Name: "check", Usage: "check archive integrity like pmlogcheck; exit 1 if anything is wrong"},
	toolio.OptQuiet,
	{Name: "w", Usage: "with --check: do not report counter wraps"},
	{Name: "json", Usage: "dump one JSON object per record"},
	{Name: "csv", Usage: "dump one CSV row per sample: time, metric, instance, value"},
	{Name: "a", Usage: "dump everything (-d -i -L -m -s -t)"},
	{Name: "d", Usage: "dump metric descriptors"},
	{Name: "e", Usage: "dump label sets"},
	{Name: "h", Usage: "dump help text"},
	{Name: "i", Usage: "dump instance domains"},
	{Name: "I", Usage: "dump instance domain records as on disk (deltas)"},
	{Name: "l", Usage: "dump the archive label"},
	{Name: "L", Usage: "dump the archive label, verbosely"},
	{Name: "m", Usage: "dump metric values (the default view at a terminal or with metric names)"},
	{Name: "M", Usage: "show <mark> records even when metric names are given"},
	{Name: "r", Usage: "dump records in reverse order"},
	{Name: "s", Usage: "show record sizes"},
	{Name: "t", Usage: "dump the temporal index"},
	{Name: "x", Kind: toolio.Count, Usage: "show dates (-xx: and offsets; -xxx: and epoch seconds)"},
	toolio.OptZ,
	toolio.OptZone,
	toolio.OptStart,
	toolio.OptFinish,
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	for _, name := range []string{"pmdumplog", "pmlogdump"} {
		if len(args) > 0 && toolio.InvokedAs(args[0], name) {
			return runDumplog(name, args, stdout, stderr)
		}
	}
	if len(args) > 0 && toolio.InvokedAs(args[0], "pmlogcheck") {
		return runLogcheck(args, stdout, stderr)
	}
	toolio.GuardFaults()
	defer toolio.CatchPanic("pcpcat", stderr, &status)
	app := toolio.App{
		Name:      "pcpcat",
		Usage:     "read, convert, dump and check PCP archives; the head of a pcp* pipeline",
		UsageText: "pcpcat [options] [archive ...] [metricname ...]\n   pcpcat A B | pcprewrite ... | pcpextract -o OUT\n   pcpcat A -o OUT [-V 3] [--zstd]\n   pcpcat -a A          (pmdumplog's views: -a -d -e -h -i -I -l -L -m -M -s -t -x -z -Z -S -T)\n   pcpcat --check A",
		Opts:      opts,
		Action: func(c *cli.Context) error {
			return action(c, c.Count("x"), stdin, stdout, stderr)
		},
	}
	return toolio.Exit("pcpcat", app.Run(args, stdin, stdout, stderr), stderr)
}

// splitArgs separates archive names from metric names: an argument that
// names an existing archive (a base name, one of its files, or a
// directory) is an archive; the rest, which must follow the archives, are
// metric names.
// With stdin a pipe, a first argument that is no archive is most likely a
// metric name meant for the stream coming in: the error says how.
func splitArgs(args []string, stdin *os.File) (archives, metrics []string, err error) {
	for i, a := range args {
		if isArchive(a) {
			if len(metrics) > 0 {
				return nil, nil, toolio.UsageError{Msg: fmt.Sprintf("archive %q after metric names: name the archives first", a)}
			}
			archives = append(archives, a)
			continue
		}
		if len(archives) == 0 {
			err := fmt.Errorf("%s: no such archive (looked for %s.meta and its compressed forms)", a, a)
			if st, serr := stdin.Stat(); stdin != nil && serr == nil && st.Mode()&os.ModeNamedPipe != 0 {
				err = fmt.Errorf("%w; for metrics of the stream on standard input, name - first: pcpcat - %s", err, strings.Join(args, " "))
			}
			return nil, nil, err
		}
		metrics = append(metrics, args[i])
	}
	return archives, metrics, nil
}

func isArchive(name string) bool {
	if st, err := os.Stat(name); err == nil {
		return st.IsDir() || st.Mode().IsRegular()
	}
	m, _ := filepath.Glob(globQuote(name) + ".meta*")
	return len(m) > 0
}

func globQuote(s string) string {
	r := strings.NewReplacer("*", `\*`, "?", `\?`, "[", `\[`)
	return r.Replace(s)
}

func warner(stderr io.Writer) func(error) {
	return func(err error) { fmt.Fprintf(stderr, "pcpcat: warning: %v\n", err) }
}

func action(c *cli.Context, xcount int, stdin *os.File, stdout, stderr io.Writer) error {
	args := c.Args().Slice()
	var archives, metrics []string
	if len(args) > 0 && args[0] == "-" {
		// "-" is standard input; metric names may follow.
		metrics = args[1:]
	} else {
		if slices.Contains(args, "-") {
			_, err := toolio.StdioInputs(args)
			return toolio.UsageError{Msg: err.Error()}
		}
		var err error
		if archives, metrics, err = splitArgs(args, stdin); err != nil {
			return err
		}
	}
	if c.Bool("check") {
		return check(c, archives, stdout, stderr)
	}
	out := toolio.StdioOutput(c.String("o"))
	views := viewOptions(c, xcount, metrics)
	dumping := views.any() || c.Bool("json") || c.Bool("csv")
	if !dumping && out == "" && (len(metrics) > 0 || isTerminal(stdout)) {
		// -m is the default view: for metric names, and for a person at
		// a terminal, where the binary stream would be no use.
		views.Values, dumping = true, true
	}
	if dumping {
		if out != "" {
			return toolio.UsageError{Msg: "-o writes an archive; it does not go with a dump view"}
		}
		return dumpArchives(c, archives, views, stdin, stdout, stderr)
	}
	opts, err := writerOptions(c, stderr)
	if err != nil {
		return err
	}
	return copyArchives(archives, out, opts, c.Bool("q"), stdin, stdout, stderr)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && pipe.IsTerminal(f)
}

func writerOptions(c *cli.Context, stderr io.Writer) (format.WriterOptions, error) {
	o := format.WriterOptions{VolumeRecords: c.Int("volume-records"), Warn: warner(stderr)}
	if err := toolio.WriterFlags(c, &o); err != nil {
		return o, err
	}
	// A plain copy keeps the input's volumes; asking for a roll-over policy
	// replaces them.
	o.KeepVolumes = o.VolumeRecords == 0 && c.String("volume-size") == ""
	if s := c.String("volume-size"); s != "" {
		n, err := toolio.ParseSize(s)
		if err != nil {
			return o, toolio.Usagef("--volume-size: %v", err)
		}
		o.VolumeBytes = n
	}
	return o, nil
}

func copyArchives(names []string, out string, opts format.WriterOptions, quiet bool, stdin *os.File, stdout, stderr io.Writer) error {
	var ropts []format.RecordsOption
	if out != "" {
		// A copy does next to nothing per record, and the writer has a
		// goroutine of its own: a third one checking ahead only competes
		// with the two (measured: docs/benchmarks.md).
		ropts = append(ropts, format.NoCheckAhead())
	}
	in, err := toolio.OpenInputs(names, stdin, warner(stderr), ropts...)
	if err != nil {
		return err
	}
	defer in.Close()
	sink, err := toolio.OpenOutput(out, opts, stdout)
	if err != nil {
		return err
	}
	var total int64
	for _, a := range in.Archives {
		total += a.DataSize()
	}
	err = toolio.CopyShowing(in.Iter, sink, toolio.StartProgress(stderr, total, quiet))
	if errors.Is(err, toolio.ErrNoData) && len(names) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(names, ", "), err)
	}
	return err
}
