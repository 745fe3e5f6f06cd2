package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
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
// OUTDIR/Folio naming the outputs, as pcpextract --folio does. With several
// intervals (-t 5m,1h) each gets a folio directory of its own,
// OUTDIR/5m and OUTDIR/1h, from the same pass over each host's archives. A host that
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
	}
	ivs, err := nativeOutputs(c, "x")
	if err != nil {
		return err
	}
	// One interval: OUTDIR is the folio. Several: one folio directory
	// per interval, OUTDIR/<interval>, each with its Folio.
	dirs := []string{outDir}
	if len(ivs) > 1 {
		dirs = nil
		for _, p := range strings.Split(c.String("t"), ",") {
			dirs = append(dirs, filepath.Join(outDir, strings.ReplaceAll(strings.TrimSpace(p), string(filepath.Separator), "_")))
		}
	}
	errw := &lockedWriter{w: opts.Stderr}
	opts.Stderr = errw
	warn := func(err error) { fmt.Fprintf(errw, "%s: warning: %v\n", prog, err) }
	hosts, err := folio.Hosts(args, warn)
	if err != nil {
		return err
	}
	work := func(h folio.Host, names []string) (err error) {
		// An input cut short under its mapping fails this host only.
		toolio.GuardFaults()
		defer toolio.RecoverFault(&err)
		outs := slices.Clone(ivs)
		for i := range outs {
			outs[i].Name = names[i]
		}
		o := opts
		o.Prog = prog + ": host " + h.Name
		o.NoProgress = true // hosts run at once: their displays would draw over each other
		return reduce.RunNativeInputs(h.Bases, outs, o)
	}
	report := func(host string, err error) { fmt.Fprintf(errw, "%s: host %s: %v\n", prog, host, err) }
	err = folio.EachHostInto(hosts, dirs, c.Int("j"), "pcpreduce", work, report)
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
