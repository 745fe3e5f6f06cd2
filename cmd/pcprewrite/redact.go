package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/rewrite"
	"github.com/pcptools/pcptools/rules"
)

// redactOpts are pmlogredact's options (PCP 6.1).
var redactOpts = toolio.Opts{
	{Name: "c", Aliases: []string{"config"}, Value: "FILE", Kind: toolio.Strings, Usage: "more rules from `FILE` or from every file of a directory (repeatable)"},
	toolio.OptDebug,
	{Name: "v", Aliases: []string{"verbose"}, Usage: "say what the rules change"},
	{Name: "x", Aliases: []string{"exclude-std"}, Usage: "leave out the standard redaction rules"},
}

const redactUsage = "pmlogredact [-vx] [-c config]... inarch outarch"

// runRedact is pcprewrite invoked as pmlogredact: PCP 6.1's wrapper that
// runs pmlogrewrite with its standard rules (unless -x) and the -c files,
// in PCP 6.1's grammar. Messages are pmlogrewrite's, as the wrapper's are.
func runRedact(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	const prog = "pmlogredact"
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	app := toolio.App{
		Name:      prog,
		Usage:     "remove host names, addresses and user names from a PCP archive",
		UsageText: redactUsage,
		Opts:      redactOpts,
		Compat:    true,
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return toolio.UsageError{Msg: "name the input archive and the output archive"}
			}
			cfg := &rules.Config{}
			if !c.Bool("x") {
				std, err := rewrite.StandardRedaction()
				if err != nil {
					return err
				}
				cfg.Append(std)
			}
			if paths := c.StringSlice("c"); len(paths) > 0 {
				pc, err := rules.LoadPmlogrewrite61(paths...)
				if err != nil {
					return err
				}
				cfg.Append(pc)
			}
			j := &rewrite.Job{Prog: "pmlogrewrite", Compat: true, Stderr: stderr, Verbose: c.Bool("v"),
				In: c.Args().Get(0), Out: c.Args().Get(1), Config: cfg}
			return j.Run(stdin, stdout)
		},
	}
	err := app.Run(args, stdin, stdout, stderr)
	if err != nil && toolio.IsUsage(err) {
		fmt.Fprintf(stderr, "%s: %v\nUsage: %s\n", prog, err, redactUsage)
		return toolio.ExitFailed
	}
	return toolio.Exit("pmlogrewrite", err, stderr)
}
