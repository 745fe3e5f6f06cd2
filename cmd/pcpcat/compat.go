package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/internal/toolio"
)

// pcpMode is pcpcat invoked under one of PCP's names: PCP's command line,
// PCP's usage text and exit status 1 for every failure.
type pcpMode struct {
	prog  string
	about string      // the one-line description (urfave/cli's Usage)
	usage string      // PCP's usage text, printed on a bad command line
	opts  toolio.Opts // PCP's options
	// action does the work; a toolio.UsageError's message is printed
	// as it is, followed by the usage text.
	action func(c *cli.Context, stdout, stderr io.Writer) error
}

func (m pcpMode) run(args []string, stdout, stderr io.Writer) (status int) {
	// PCP's standard output is a buffered stdio stream: it is flushed
	// before each message on stderr so the two interleave as they would
	// in a file both go to.
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	errw := flushFirst{bw, stderr}
	usage := func(msg string) int {
		if msg != "" {
			fmt.Fprintln(errw, msg)
		}
		fmt.Fprint(errw, m.usage)
		return 1
	}
	for _, a := range toolio.SplitGetopt(args, m.opts.Getopt())[1:] {
		if a == "--" {
			break
		}
		if a == "-?" || a == "--help" {
			return usage("")
		}
	}
	toolio.GuardFaults()
	defer toolio.CatchPanic(m.prog, stderr, &status)
	app := toolio.App{
		Name:   m.prog,
		Usage:  m.about,
		Opts:   m.opts,
		Compat: true,
		Action: func(c *cli.Context) error { return m.action(c, bw, errw) },
	}
	err := app.Run(args, nil, bw, errw)
	var ue toolio.UsageError
	switch {
	case err == nil:
		return toolio.ExitOK
	case errors.As(err, &ue):
		return usage(ue.Msg)
	case toolio.IsUsage(err):
		return usage(m.prog + ": " + getoptMessage(err))
	}
	var s toolio.Silent
	if !errors.As(err, &s) {
		fmt.Fprintf(errw, "%s: %v\n", m.prog, err)
	}
	return 1
}

// getoptMessage turns urfave/cli's complaint into getopt(3)'s words.
func getoptMessage(err error) string {
	var name string
	if _, e := fmt.Sscanf(err.Error(), "flag provided but not defined: -%s", &name); e == nil {
		if len(name) == 1 {
			return fmt.Sprintf("invalid option -- '%s'", name)
		}
		return fmt.Sprintf("unrecognized option '--%s'", name)
	}
	return err.Error()
}

// flushFirst writes to w after flushing the buffered standard output.
type flushFirst struct {
	out *bufio.Writer
	w   io.Writer
}

func (f flushFirst) Write(p []byte) (int, error) {
	f.out.Flush()
	return f.w.Write(p)
}
