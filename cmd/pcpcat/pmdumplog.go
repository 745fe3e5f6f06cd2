package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
)

// dumplogUsage is the usage message pmdumplog 6.0.3 prints on a bad
// command line (same options, same order).
const dumplogUsage = `Usage: %s [options] [archive [metricname ...]]

Options:
  -a, --all             dump everything
  -d, --descs           dump metric descriptions
  -e, --labelsets       dump all metric label metadata
  -h, --helptext        dump all metric help text
  -I, --on-disk-insts   dump on-disk instance domain descriptions
  -i, --insts           dump instance domain descriptions
  -L                    more verbose form of archive label dump
  -l, --label           dump the archive label
  -M, --markrecs        report <mark> records
  -m, --metrics         dump values of the metrics (default)
  -n FILE, --namespace=FILE
                        use an alternative PMNS
  -r, --reverse         process archive in reverse chronological order
  -S TIME, --start=TIME start of the time window
  -s, --sizes           report size of data records in archive
  -T TIME, --finish=TIME
                        end of the time window
  -t                    dump the temporal index
  -v FILE               verbose hex dump of a physical file in raw format
  -x                    include date, usec (-xx) and Epoch (-xxx) in reported timestamps
  -Z TZ, --timezone=TZ  set reporting timezone
  -z, --hostzone        set reporting timezone to local time of metrics source
  -V, --version         display version number and exit
  -?, --help            show this usage message and exit
`

// dumplogOpts is pmdumplog's command line, as PCP 6.0.3 takes it.
var dumplogOpts = toolio.Opts{
	{Name: "a", Aliases: []string{"all"}, Usage: "dump everything"},
	{Name: "d", Aliases: []string{"descs"}, Usage: "dump metric descriptions"},
	{Name: "e", Aliases: []string{"labelsets"}, Usage: "dump all metric label metadata"},
	{Name: "h", Aliases: []string{"helptext"}, Usage: "dump all metric help text"},
	{Name: "I", Aliases: []string{"on-disk-insts"}, Usage: "dump on-disk instance domain descriptions"},
	{Name: "i", Aliases: []string{"insts"}, Usage: "dump instance domain descriptions"},
	{Name: "L", Usage: "more verbose form of archive label dump"},
	{Name: "l", Aliases: []string{"label"}, Usage: "dump the archive label"},
	{Name: "M", Aliases: []string{"markrecs"}, Usage: "report <mark> records"},
	{Name: "m", Aliases: []string{"metrics"}, Usage: "dump values of the metrics (default)"},
	{Name: "n", Aliases: []string{"namespace"}, Value: "FILE", Usage: "use an alternative PMNS (accepted; names come from the archive)"},
	{Name: "r", Aliases: []string{"reverse"}, Usage: "process archive in reverse chronological order"},
	{Name: "s", Aliases: []string{"sizes"}, Usage: "report size of data records in archive"},
	{Name: "t", Usage: "dump the temporal index"},
	{Name: "v", Value: "FILE", Usage: "verbose hex dump of a physical file in raw format (not supported)"},
	{Name: "x", Kind: toolio.Count, Usage: "include date, usec (-xx) and Epoch (-xxx) in reported timestamps"},
	toolio.OptDebug,
	toolio.OptZ,
	toolio.OptZone,
	toolio.OptStart,
	toolio.OptFinish,
}

// runDumplog is pcpcat invoked as pmdumplog or pmlogdump: PCP's command
// line, PCP's messages and exit status (1 for every failure).
func runDumplog(prog string, args []string, stdout, stderr io.Writer) int {
	return pcpMode{
		prog:  prog,
		about: "dump a PCP archive (pmdumplog)",
		usage: fmt.Sprintf(dumplogUsage, prog),
		opts:  dumplogOpts,
		action: func(c *cli.Context, stdout, stderr io.Writer) error {
			return dumplogAction(c, prog, stdout, stderr)
		},
	}.run(args, stdout, stderr)
}

func dumplogAction(c *cli.Context, prog string, stdout, stderr io.Writer) error {
	if c.Bool("z") && c.String("Z") != "" {
		return toolio.UsageError{Msg: prog + ": at most one of -Z and -z allowed"}
	}
	if c.IsSet("v") {
		return errors.New("-v (a raw hex dump of one physical file) is not supported")
	}
	args := c.Args().Slice()
	if len(args) == 0 {
		return toolio.UsageError{}
	}
	name, metrics := args[0], args[1:]
	// The reader's warnings that libpcp acts on: an .index with a bad
	// label (libpcp refuses the archive), a data volume that ends inside
	// a record (libpcp may fail to locate the end, and its fetch fails
	// there when the view reads the values).
	var lv dump.LibpcpView
	var trace *dump.LogTrace
	debugLog := toolio.DebugOn(c.String("D"), "log")
	if debugLog {
		// libpcp's -Dlog trace: what it would do, traced from the
		// files themselves (dump.LogTrace)
		trace = dump.NewLogTrace(name, stderr)
		defer trace.Close()
		if !trace.Open() {
			trace = nil
		}
	}
	a, err := format.Open(name, format.WithWarn(func(err error) { lv.Note(err) }))
	if err == nil && lv.IndexErr != nil {
		err = lv.IndexErr
	}
	if err != nil {
		return fmt.Errorf("Cannot open archive %q: %s", name, dump.LibpcpOpenError(err))
	}
	if a.LabelsOnly() || a.LabelOnlyFile() {
		// no data record in any volume: libpcp will not open it
		return fmt.Errorf("Cannot open archive %q: %s", name, dump.LibpcpOpenError(dump.NoDataError(a)))
	}
	o := viewOptions(c, c.Count("x"), metrics).Options
	o.Warn, o.Prog, o.LibpcpLabel = stderr, prog, true
	o.TracePDU = toolio.DebugOn(c.String("D"), "pdu")
	// pmdumplog finds the archive's end before anything else (libpcp's
	// option parsing does, and says when it cannot); ours notes a
	// damaged last volume as it looks.
	a.End()
	if _, err := a.Meta(); err != nil {
		// libpcp loads the metadata as it opens the archive: it
		// fails before it looks for the end (the dump says how)
		trace = nil
	} else {
		// libpcp's reading, emulated (dump.LogTrace): its search for
		// the end (a few reads) settles the end the label shows, the
		// window's and the warning; its fetches (slower than our
		// reader) are the values where the two may part: a damaged
		// last volume, a temporal index we do not trust, a window or
		// a reverse dump, which libpcp positions by the index.
		values := o.ReadsValues() && (a.IndexUnsound() || o.Start != "" || o.Finish != "" || o.Reverse)
		if trace == nil && !debugLog {
			trace = dump.NewLogTrace(name, io.Discard)
			defer trace.Close()
			if !trace.Open() {
				trace = nil
			}
		}
		o.LibpcpReads = trace != nil && o.ReadsValues() && (values || lv.Tail != nil)
	}
	lost := false
	if trace != nil {
		trace.SetZone(dump.Zone(a, o))
		lost = !trace.End()
		o.TraceLog = trace
	} else {
		lost = lv.LosesEnd(a)
	}
	if lost {
		fmt.Fprint(stderr, dump.LostEndWarning(prog, name))
	}
	if err := dump.Dump(stdout, a, o); err != nil {
		var fe *format.FormatError
		if errors.As(err, &fe) {
			// Damage, in libpcp's words: libpcp loads the metadata
			// when it opens the archive, and meets damage in the data
			// when it fetches.
			if strings.HasSuffix(fe.File, ".meta") {
				return fmt.Errorf("Cannot open archive %q: %s", name, dump.ErrStrLogRec)
			}
			return errors.New("pmFetch: " + dump.ErrStrLogRec)
		}
		return err
	}
	if lv.Tail != nil && o.ReadsValues() && !lv.TailIsEnd() && !o.LibpcpReads {
		return errors.New("pmFetch: " + dump.ErrStrLogRec)
	}
	return nil
}
