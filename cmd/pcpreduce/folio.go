package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/reduce"
)

// folioReduce reduces each host's archives among those args name (folios,
// directories of archives at any depth, archives) into OUTDIR/<host>/<the
// name of the host's first archive>, -j hosts at once, and writes
// OUTDIR/Folio naming the outputs, as pcpextract --folio does. A host that
// fails is reported and does not stop the others; the exit status then
// says so.
func folioReduce(c *cli.Context, opts reduce.Options, args []string) error {
	prog := opts.Prog
	outDir := c.String("o")
	switch {
	case outDir == "" || outDir == "-":
		return toolio.UsageError{Msg: "--folio writes one archive per host: name the output directory with -o DIR"}
	case len(args) == 0:
		return toolio.UsageError{Msg: "--folio: name archive folios or directories of archives"}
	case strings.Contains(c.String("t"), ","):
		// The Folio names one archive per host.
		return toolio.UsageError{Msg: fmt.Sprintf("--folio -t %s: one interval per run (the folio names one archive per host)", c.String("t"))}
	}
	if _, err := nativeOutputs(c, "x"); err != nil {
		return err
	}
	errw := &lockedWriter{w: opts.Stderr}
	opts.Stderr = errw
	warn := func(err error) { fmt.Fprintf(errw, "%s: warning: %v\n", prog, err) }
	hosts, err := folio.Hosts(args, warn)
	if err != nil {
		return err
	}
	work := func(h folio.Host, out string) (err error) {
		// An input cut short under its mapping fails this host only.
		toolio.GuardFaults()
		defer toolio.RecoverFault(&err)
		outs, err := nativeOutputs(c, out)
		if err != nil {
			return err
		}
		o := opts
		o.Prog = prog + ": host " + h.Name
		o.NoProgress = true // hosts run at once: their displays would draw over each other
		return reduce.RunNativeInputs(h.Bases, outs, o)
	}
	report := func(host string, err error) { fmt.Fprintf(errw, "%s: host %s: %v\n", prog, host, err) }
	err = folio.EachHost(hosts, outDir, c.Int("j"), "pcpreduce", work, report)
	var f folio.Failed
	if errors.As(err, &f) {
		fmt.Fprintf(errw, "%s: %v\n", prog, f)
		return toolio.Silent{Code: toolio.ExitFailed}
	}
	return err
}

// lockedWriter serialises the messages of hosts reduced at once.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
