package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
)

// checkUsage is the usage message pmlogcheck 6.0.3 prints on a bad
// command line.
const checkUsage = `Usage: pmlogcheck [options] archive

Options:
  -l, --label           print the archive label
  -m, --metadataonly    skip checking log data volumes
  -n FILE, --namespace=FILE
                        use an alternative PMNS
  -S TIME, --start=TIME start of the time window
  -T TIME, --finish=TIME
                        end of the time window
  -v, --verbose         verbose output
  -w, --nowrap          suppress counter wrap warnings
  -Z TZ, --timezone=TZ  set reporting timezone
  -z, --hostzone        set reporting timezone to local time of metrics source
  -?, --help            show this usage message and exit
`

// logcheckOpts is pmlogcheck's command line, as PCP 6.0.3 takes it.
var logcheckOpts = toolio.Opts{
	{Name: "l", Aliases: []string{"label"}, Usage: "print the archive label"},
	{Name: "m", Aliases: []string{"metadataonly"}, Usage: "skip checking log data volumes"},
	{Name: "n", Aliases: []string{"namespace"}, Value: "FILE", Usage: "use an alternative PMNS (accepted; names come from the archive)"},
	{Name: "v", Aliases: []string{"verbose"}, Usage: "verbose output"},
	{Name: "w", Aliases: []string{"nowrap"}, Usage: "suppress counter wrap warnings"},
	toolio.OptDebug,
	toolio.OptZ,
	toolio.OptZone,
	toolio.OptStart,
	toolio.OptFinish,
}

// runLogcheck is pcpcat invoked as pmlogcheck: PCP's command line, words
// and exit status (see checkOne).
func runLogcheck(args []string, stdout, stderr io.Writer) int {
	return pcpMode{
		prog:   "pmlogcheck",
		about:  "check a PCP archive (pmlogcheck)",
		usage:  checkUsage,
		opts:   logcheckOpts,
		action: logcheckAction,
	}.run(args, stdout, stderr)
}

func logcheckAction(c *cli.Context, stdout, stderr io.Writer) error {
	if c.Bool("z") && c.String("Z") != "" {
		return toolio.UsageError{Msg: "pmlogcheck: at most one of -Z and -z allowed"}
	}
	if c.NArg() == 0 {
		return toolio.UsageError{Msg: "Error: no archive specified\n"}
	}
	// pmlogcheck's findings go to stderr as they come, while its standard
	// output (the "Note: timezone" line) stays in stdio's buffer until it
	// exits: into one pipe or file, the findings come first. So they
	// skip the flush pcpMode does before each message on stderr.
	if ff, ok := stderr.(flushFirst); ok {
		stderr = ff.w
	}
	// pmlogcheck 6.0.3 takes further arguments without complaint, and
	// checks the first archive only.
	damaged, err := checkOne(c, c.Args().First(), stdout, stderr)
	if err != nil {
		return err
	}
	if damaged {
		return toolio.Silent{Code: 1}
	}
	return nil
}

// checkOne checks one archive and prints what pmlogcheck 6.0.3 would, in
// its words and order, and reports whether pmlogcheck would exit 1: for
// damage its pass 0 finds, an archive libpcp cannot open, or a value it
// cannot extract where it first meets the metric's instance. What passes
// 1 to 3 otherwise find (index entries, descriptors, timestamps, counter
// wraps) is printed with exit status 0 (see format.PCPReport).
func checkOne(c *cli.Context, name string, stdout, stderr io.Writer) (bool, error) {
	// pmlogcheck's pass 0 takes any of the archive's files: a missing
	// .meta or data volume is one of its findings
	opts := format.CheckOptions{NoWrap: c.Bool("w"), MetaOnly: c.Bool("m"), Verbose: c.Bool("v"), EveryRecord: true}
	werr := checkWindow(c, name, &opts, stderr)
	findings, err := format.Check(name, opts)
	if errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("no PCP archive files match %q", name)
	}
	if err != nil {
		return false, err
	}
	run := format.PCPReport(findings, debugFlag(c.String("D"), "logmeta"))
	printLines(stderr, run.Pass0)
	if !run.Opened {
		printLines(stderr, run.Lines)
		return run.Failed, nil
	}
	if werr != nil {
		return false, werr
	}
	switch {
	case c.Bool("z"):
		a, err := format.Open(name, format.WithWarn(func(error) {}))
		if err != nil {
			return false, err
		}
		fmt.Fprintf(stdout, "Note: timezone set to local timezone of host %q from archive\n\n", a.Label().Hostname)
	case c.String("Z") != "":
		fmt.Fprintf(stdout, "Note: timezone set to \"TZ=%s\"\n\n", c.String("Z"))
	}
	if c.Bool("l") {
		// pmlogcheck prints the label on stderr, once libpcp has opened
		// the archive.
		if err := printCheckLabel(c, stderr, name); err != nil {
			return false, err
		}
	}
	printLines(stderr, run.Lines)
	return run.Failed, nil
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// debugFlag reports whether the PCP debug options of -D (a comma separated
// list) name flag.
func debugFlag(opts, flag string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == flag || o == "all" {
			return true
		}
	}
	return false
}

// printCheckLabel prints the archive label as pmlogcheck -l does: times
// to the millisecond, in the reporting timezone (local unless -z or -Z).
func printCheckLabel(c *cli.Context, w io.Writer, name string) error {
	a, err := format.Open(name, format.WithWarn(func(error) {}))
	if err != nil {
		return err
	}
	lab := a.Label()
	loc, err := pcptime.ChooseZone(c.Bool("z"), c.String("Z"), lab.Timezone, lab.Zoneinfo)
	if err != nil {
		return err
	}
	end, ok, err := a.End()
	if err != nil {
		return err
	}
	if !ok {
		end = lab.Start
	}
	stamp := func(t time.Time) string { return t.In(loc).Format("Mon Jan _2 15:04:05.000 2006") }
	fmt.Fprintf(w, "Log Label (Log Format Version %d)\nPerformance metrics from host %s\n", lab.Version, lab.Hostname)
	fmt.Fprintf(w, "  commencing %s\n  ending     %s\n", stamp(lab.Start.Time()), stamp(end.Time()))
	return nil
}
