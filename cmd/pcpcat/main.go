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
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/stream/pipe"
)

func main() {
	stop := toolio.ProfileFromEnv()
	code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// valued lists the flags that take a value, for toolio.Permute.
var valued = map[string]bool{"o": true, "output": true, "V": true, "Z": true, "S": true, "T": true,
	"start": true, "finish": true, "volume-records": true, "volume-size": true}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	toolio.GuardFaults()
	defer toolio.CatchPanic("pcpcat", stderr, &status)
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Usage: "show help"}
	var xcount int
	app := &cli.App{
		Name:                   "pcpcat",
		Usage:                  "read, convert, dump and check PCP archives; the head of a pcp* pipeline",
		UsageText:              "pcpcat [options] [archive ...] [metricname ...]\n   pcpcat A B | pcprewrite ... | pcpextract -o OUT\n   pcpcat A -o OUT [-V 3] [--zstd]\n   pcpcat -a A          (pmdumplog's views: -a -d -e -h -i -I -l -L -m -M -s -t -x -z -Z -S -T)\n   pcpcat --check A",
		HideVersion:            true,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write an archive with base name `PREFIX`"},
			&cli.IntFlag{Name: "V", Usage: "output archive `version` (2 or 3; default: the input's)"},
			&cli.BoolFlag{Name: "zstd", Usage: "write data volumes as seekable zstd (.N.zst; PCP reads them from 6.3.2)"},
			&cli.BoolFlag{Name: "no-sync", Usage: toolio.NoSyncUsage},
			&cli.IntFlag{Name: "volume-records", Usage: "start a new volume every `N` records"},
			&cli.StringFlag{Name: "volume-size", Usage: "start a new volume before `SIZE` bytes (e.g. 100MiB)"},
			&cli.BoolFlag{Name: "check", Usage: "check archive integrity like pmlogcheck; exit 1 if anything is wrong"},
			&cli.BoolFlag{Name: "w", Usage: "with --check: do not report counter wraps"},
			&cli.BoolFlag{Name: "json", Usage: "dump one JSON object per record"},
			&cli.BoolFlag{Name: "csv", Usage: "dump one CSV row per sample: time, metric, instance, value"},
			&cli.BoolFlag{Name: "a", Usage: "dump everything (-d -i -L -m -s -t)"},
			&cli.BoolFlag{Name: "d", Usage: "dump metric descriptors"},
			&cli.BoolFlag{Name: "e", Usage: "dump label sets"},
			&cli.BoolFlag{Name: "h", Usage: "dump help text"},
			&cli.BoolFlag{Name: "i", Usage: "dump instance domains"},
			&cli.BoolFlag{Name: "I", Usage: "dump instance domain records as on disk (deltas)"},
			&cli.BoolFlag{Name: "l", Usage: "dump the archive label"},
			&cli.BoolFlag{Name: "L", Usage: "dump the archive label, verbosely"},
			&cli.BoolFlag{Name: "m", Usage: "dump metric values (the default view)"},
			&cli.BoolFlag{Name: "M", Usage: "show <mark> records even when metric names are given"},
			&cli.BoolFlag{Name: "r", Usage: "dump records in reverse order"},
			&cli.BoolFlag{Name: "s", Usage: "show record sizes"},
			&cli.BoolFlag{Name: "t", Usage: "dump the temporal index"},
			&cli.BoolFlag{Name: "x", Count: &xcount, Usage: "show dates (-xx: and offsets; -xxx: and epoch seconds)"},
			&cli.BoolFlag{Name: "z", Usage: "use the archive's timezone"},
			&cli.StringFlag{Name: "Z", Usage: "use timezone `TZ`"},
			&cli.StringFlag{Name: "S", Aliases: []string{"start"}, Usage: "start of the time window (PCP time syntax)"},
			&cli.StringFlag{Name: "T", Aliases: []string{"finish"}, Usage: "end of the time window (PCP time syntax)"},
		},
		Action: func(c *cli.Context) error {
			return action(c, xcount, stdin, stdout, stderr)
		},
	}
	if err := app.Run(toolio.Permute(args, valued)); err != nil {
		var ue usageError
		if errors.As(err, &ue) || strings.Contains(err.Error(), "flag provided but not defined") {
			fmt.Fprintf(stderr, "pcpcat: %v\nTry 'pcpcat --help'.\n", err)
			return toolio.ExitUsage
		}
		fmt.Fprintf(stderr, "pcpcat: %v\n", err)
		return toolio.ExitFailed
	}
	return toolio.ExitOK
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// splitArgs separates archive names from metric names: an argument that
// names an existing archive (a base name, one of its files, or a
// directory) is an archive; the rest, which must follow the archives, are
// metric names.
func splitArgs(args []string) (archives, metrics []string, err error) {
	for i, a := range args {
		if isArchive(a) {
			if len(metrics) > 0 {
				return nil, nil, usageError{fmt.Sprintf("archive %q after metric names: name the archives first", a)}
			}
			archives = append(archives, a)
			continue
		}
		if len(archives) == 0 {
			return nil, nil, fmt.Errorf("%s: no such archive (looked for %s.meta and its compressed forms)", a, a)
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
	archives, metrics, err := splitArgs(c.Args().Slice())
	if err != nil {
		return err
	}
	if c.Bool("check") {
		return check(c, archives, stdout)
	}
	views := viewOptions(c, xcount, metrics)
	dumping := views.any() || c.Bool("json") || c.Bool("csv")
	if len(metrics) > 0 && !dumping {
		return usageError{"metric names select what a dump shows: add a view (-m, -a, --json, ...) or use pcpextract to select metrics"}
	}
	if dumping {
		if c.String("o") != "" {
			return usageError{"-o writes an archive; it does not go with a dump view"}
		}
		return dumpArchives(c, archives, views, stdin, stdout, stderr)
	}
	opts, err := writerOptions(c, stderr)
	if err != nil {
		return err
	}
	return copyArchives(archives, c.String("o"), opts, stdin, stdout, stderr)
}

func writerOptions(c *cli.Context, stderr io.Writer) (format.WriterOptions, error) {
	o := format.WriterOptions{Version: c.Int("V"), Zstd: c.Bool("zstd"), VolumeRecords: c.Int("volume-records"), NoSync: c.Bool("no-sync"), Warn: warner(stderr)}
	// A plain copy keeps the input's volumes; asking for a roll-over policy
	// replaces them.
	o.KeepVolumes = o.VolumeRecords == 0 && c.String("volume-size") == ""
	if o.Version != 0 && o.Version != 2 && o.Version != 3 {
		return o, usageError{fmt.Sprintf("-V %d: the archive version must be 2 or 3", o.Version)}
	}
	if s := c.String("volume-size"); s != "" {
		n, err := toolio.ParseSize(s)
		if err != nil {
			return o, usageError{"--volume-size: " + err.Error()}
		}
		o.VolumeBytes = n
	}
	return o, nil
}

func copyArchives(names []string, out string, opts format.WriterOptions, stdin *os.File, stdout, stderr io.Writer) error {
	if f, ok := stdout.(*os.File); out == "" && ok && pipe.IsTerminal(f) {
		return toolio.ErrTerminal // before opening anything
	}
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
	return toolio.Copy(in.Iter, sink)
}
