// Command pcpsummary prints statistics for each metric and instance of a
// PCP archive: averages, minima and maxima with their times, counts, sums
// and histograms. Invoked as pmlogsummary (a symlink), it takes
// pmlogsummary's command line and prints what PCP 6.0.3's pmlogsummary
// prints, byte for byte. Under its own name it also reads a record
// stream from another pcp* tool on standard input.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/summary"
)

func main() { toolio.Main(run) }

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	prog, compat := toolio.Names(args, "pcpsummary", "pmlogsummary")
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	if !compat {
		if done, err := toolio.GenerateFromUsage(prog, "statistics per metric and instance of PCP archives (pmlogsummary's and more)",
			fmt.Sprintf(usageText, prog)+ownUsage, stdout); done {
			return toolio.StatusOf(err, prog, stderr)
		}
	}
	usage := func(msg string) int {
		if msg != "" {
			fmt.Fprintln(stderr, msg)
		}
		fmt.Fprintf(stderr, usageText, prog)
		if !compat {
			fmt.Fprint(stderr, ownUsage)
			return toolio.ExitUsage
		}
		return 1 // pmlogsummary's status for a usage error
	}
	cmd, err := summary.ParseCommandLine(prog, args[1:])
	var ue *summary.UsageError
	switch {
	case errors.As(err, &ue):
		return usage(ue.Msg)
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return toolio.ExitFailed
	case cmd.Version && compat:
		fmt.Fprintf(stdout, "%s version 6.0.3\n", prog)
		return toolio.ExitOK
	case cmd.Version:
		fmt.Fprintf(stdout, "%s version %s\n", prog, toolio.Version())
		return toolio.ExitOK
	case cmd.Help && compat:
		return usage("")
	case cmd.Help:
		fmt.Fprintf(stdout, usageText, prog)
		fmt.Fprint(stdout, ownUsage)
		return toolio.ExitOK
	case cmd.Archive == "" && compat:
		return usage("Error: no archive specified\n")
	case cmd.Namespace != "":
		fmt.Fprintf(stderr, "%s: -n %s: alternative namespaces are not supported; the archive's own names are used by default\n", prog, cmd.Namespace)
		return toolio.ExitFailed
	}
	_, cmd.CounterWrap = os.LookupEnv("PCP_COUNTER_WRAP")
	cmd.Warn = stderr
	var truncated error
	// Under pmlogsummary's name, libpcp's view of damage (dump.LibpcpView):
	// it refuses an archive whose .index label is bad (the reader ignores
	// the index), and a data volume that ends inside a record may hide
	// the archive's end from it; of the rest of our reader's warnings it
	// says nothing (an index it cannot use, records out of time order).
	var lv dump.LibpcpView
	warn := func(err error) {
		lv.Note(err)
		if errors.Is(err, format.ErrTruncated) {
			truncated = err
		}
		if !compat {
			fmt.Fprintf(stderr, "%s: warning: %v\n", prog, err)
		}
	}

	if cmd.Folio {
		return runFolio(prog, cmd, stdout, stderr)
	}
	if !compat {
		// "pcpsummary A B": B taken for a metric name would be "unknown"
		// (a directory is not taken for an archive here: "kernel" may
		// be both a directory and a metric name)
		for _, m := range cmd.Metrics {
			if st, err := os.Stat(m); (err != nil || !st.IsDir()) && cmd.Archive != "" && cmd.Archive != "-" && toolio.IsArchive(m) {
				return usage(fmt.Sprintf("%s is an archive, not a metric name: name one archive, then metric names (several archives of one host: pcpcat A B | %s -; of many hosts: %s --folio A B)\n", m, prog, prog))
			}
		}
	}
	var a summary.Archive
	if cmd.Archive == "-" && !compat {
		// standard input, as for the other tools (so that metric names
		// can follow); under pmlogsummary's name, a file named "-"
		cmd.Archive = ""
	}
	if cmd.Archive == "" {
		if a, err = summary.OpenStdin(stdin, &cmd.Options, warn); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return toolio.ExitFailed
		}
		if c, ok := a.(io.Closer); ok {
			defer c.Close()
		}
	} else if a, err = summary.Open(cmd.Archive, warn); err != nil || compat && lv.IndexErr != nil {
		switch {
		case err == nil:
			err = errors.New(dump.LibpcpOpenError(lv.IndexErr))
		case compat:
			err = errors.New(dump.LibpcpOpenError(err)) // (pmErrStr's words, as scripts expect)
		}
		fmt.Fprintf(stderr, "%s: Cannot open archive %q: %v\n", prog, cmd.Archive, err)
		return toolio.ExitFailed
	}
	if fa, ok := a.(*format.Archive); ok && compat && dump.LibpcpRefusal(fa) != nil {
		fmt.Fprintf(stderr, "%s: Cannot open archive %q: %s\n", prog, cmd.Archive, dump.LibpcpOpenError(dump.LibpcpRefusal(fa)))
		return toolio.ExitFailed
	} else if none, refused := summary.NoData(a); none && compat && refused != nil {
		fmt.Fprintf(stderr, "%s: Cannot open archive %q: %s\n", prog, cmd.Archive, dump.LibpcpOpenError(refused))
		return toolio.ExitFailed
	} else if none && !compat {
		fmt.Fprintf(stderr, "%s: warning: %s: no data records: nothing to summarise\n", prog, cmd.Archive)
	}
	fetched := false // libpcp's fetches (emulated) are what is read
	if fa, ok := a.(*format.Archive); ok && compat {
		// pmlogsummary finds the archive's end first, and says when it
		// cannot.
		fa.End()
		// libpcp's reading, emulated (dump.LogTrace, as for pmdumplog):
		// the end it finds is the window's, and its fetches are the
		// records where the two readers may part: a window it finds by
		// a temporal index we do not trust, a damaged last volume.
		var lost bool
		tr := dump.NewLogTrace(cmd.Archive, io.Discard)
		defer tr.Close()
		if _, err := fa.Meta(); err == nil && tr.Open() {
			lost = !tr.End()
			fetched = cmd.Start != "" || cmd.Finish != "" || fa.IndexUnsound() || lv.Tail != nil
			a = summary.LibpcpReads(fa, tr, fetched)
		} else {
			lost = lv.LosesEnd(fa)
		}
		if lost {
			fmt.Fprint(stderr, dump.LostEndWarning(prog, cmd.Archive))
		}
	}
	o := cmd.Options
	said := false
	if compat {
		// pmlogsummary says so when a fetch fails, before it prints
		// the statistics of what it read (stderr is not buffered).
		o.OnFetchError = func(err error) {
			var fe *format.FormatError
			if errors.As(err, &fe) && !strings.HasSuffix(fe.File, ".meta") {
				fmt.Fprintf(stderr, "%s: fetch failed: %s\n", prog, dump.ErrStrLogRec)
				said = true
			}
		}
	}
	if pr := toolio.StartProgress(stderr, summary.DataSize(a), compat || cmd.Quiet); pr != nil {
		// The display ends before the summary is printed.
		done := false
		o.OnRecord = pr.Record
		o.AfterRead = func(ok bool) { done = true; pr.Done(ok) }
		defer func() {
			if !done {
				pr.Done(false)
			}
		}()
	}
	if err := summary.Run(stdout, a, o); err != nil {
		var ne *summary.NamesError
		var fe *format.FormatError
		switch {
		case errors.Is(err, syscall.EPIPE):
			// the reader of the summary has gone (pcpsummary A | head):
			// said as the other tools say it, by dying of SIGPIPE quietly
			return toolio.Exit(prog, err, stderr)
		case compat && errors.As(err, &ne):
		case compat && errors.As(err, &fe):
			// Damage, in libpcp's words: it loads the metadata when it
			// opens the archive, and meets damage in the data when it
			// fetches.
			if strings.HasSuffix(fe.File, ".meta") {
				fmt.Fprintf(stderr, "%s: Cannot open archive %q: %s\n", prog, cmd.Archive, dump.ErrStrLogRec)
			} else if !said {
				fmt.Fprintf(stderr, "%s: fetch failed: %s\n", prog, dump.ErrStrLogRec)
			}
			return toolio.ExitFailed
		default:
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return toolio.ExitFailed
		}
	}
	if truncated != nil {
		if compat && (lv.TailIsEnd() || fetched) {
			// libpcp takes those few bytes as the end, or its
			// fetches (emulated) read on to the end without failing
			return toolio.ExitOK
		}
		// pmlogsummary prints what it read, then fails ("fetch failed").
		if compat {
			fmt.Fprintf(stderr, "%s: fetch failed: %s\n", prog, dump.ErrStrLogRec)
		} else {
			fmt.Fprintf(stderr, "%s: the summary stops at the last good record before the damage\n", prog)
		}
		return toolio.ExitFailed
	}
	return toolio.ExitOK
}
