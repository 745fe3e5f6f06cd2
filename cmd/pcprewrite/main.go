// Command pcprewrite rewrites PCP archives: renames, renumbers, retypes,
// rescales and reshapes metrics, instance domains, help text and labels,
// with pmlogrewrite's configuration files (-c) or with rules whose
// selectors and values are expr-lang expressions (-r, docs/rules.md). It
// reads an archive or the record stream on standard input and writes an
// archive (-o), the stream on standard output, or the input in place (-i).
// Invoked as pmlogrewrite (a symlink), it takes pmlogrewrite's command
// line exactly: pmlogrewrite [-Cdiqsvw] [-c config]... [-V version] inlog [outlog].
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/rewrite"
	"github.com/pcptools/pcptools/rules"
)

func main() { toolio.Main(run) }

// opts are pmlogrewrite's options, and ours (Native) beside them.
var opts = toolio.Opts{
	{Name: "c", Aliases: []string{"config"}, Value: "FILE", Kind: toolio.Strings, Usage: "pmlogrewrite rules from `FILE` or from every file of a directory (repeatable)"},
	{Name: "C", Aliases: []string{"check"}, Usage: "check the rules against the archive and stop (implies -v -w)"},
	{Name: "d", Aliases: []string{"desperate"}, Usage: "keep the output written so far when something fails"},
	toolio.OptDebug,
	{Name: "i", Usage: "rewrite the input archive in place (safely: the input is untouched on any error)"},
	{Name: "q", Aliases: []string{"quick"}, Usage: "exit at once, writing nothing, when no rule changes the archive"},
	{Name: "s", Aliases: []string{"scale"}, Usage: "rescale values when units change in scale only"},
	{Name: "v", Aliases: []string{"verbose"}, Kind: toolio.Count, Usage: "say what the rules change (-vv, as pmlogrewrite: and name each rules file read)"},
	toolio.OptVersion,
	{Name: "w", Aliases: []string{"warnings"}, Usage: "warn about rules that do not apply or change nothing"},
	{Name: "r", Aliases: []string{"rules"}, Value: "FILE", Kind: toolio.Strings, Native: true, Usage: "rules in pcprewrite's expression language from `FILE` (repeatable; docs/rules.md)"},
	{Name: "redact", Native: true, Usage: "first apply the standard redaction rules (pmlogredact's: host names, addresses, user names; docs/pcprewrite.md)"},
	toolio.OptOutput,
	toolio.OptNoSync,
	toolio.OptOverwrite,
	toolio.OptQuietLong, // -q is pmlogrewrite's (quick)
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	if len(args) > 0 && toolio.InvokedAs(args[0], "pmlogredact") {
		return runRedact(args, stdin, stdout, stderr)
	}
	prog, compat := toolio.Names(args, "pcprewrite", "pmlogrewrite")
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	usage := "pcprewrite [-c config]... [-r rules]... [options] [archive] [-o OUT]\n   pcpcat A | pcprewrite -r fix.rules | pcpextract -o OUT\n   pcprewrite -i -c /var/lib/pcp/config/pmlogrewrite ARCHIVE"
	if compat {
		usage = "pmlogrewrite [-Cdiqsvw] [-c config] [-V version] inlog [outlog]"
	}
	app := toolio.App{
		Name:      prog,
		Usage:     "rewrite PCP archives with rules (pmlogrewrite)",
		UsageText: usage,
		Opts:      opts,
		Compat:    compat,
		Action: func(c *cli.Context) error {
			return action(c, prog, compat, pcpVerbosity(args[1:]), stdin, stdout, stderr)
		},
	}
	err := app.Run(args, stdin, stdout, stderr)
	if err != nil && toolio.IsUsage(err) {
		fmt.Fprintf(stderr, "%s: %v\nUsage: %s\n", prog, err, strings.SplitN(usage, "\n", 2)[0])
		if compat {
			return toolio.ExitFailed // as pmlogrewrite
		}
		return toolio.ExitUsage
	}
	return toolio.Exit(prog, err, stderr)
}

func action(c *cli.Context, prog string, compat bool, vflag int, stdin *os.File, stdout, stderr io.Writer) error {
	j := &rewrite.Job{Prog: prog, Compat: compat, Stderr: stderr, InPlace: c.Bool("i"), Check: c.Bool("C"),
		Quick: c.Bool("q"), Verbose: c.Bool("v") || c.Bool("C"), VerboseFiles: compat && vflag > 1, Warnings: c.Bool("w") || c.Bool("C"),
		Desperate: c.Bool("d"), Version: c.Int("V"), Scale: c.Bool("s"), NoSync: !compat && c.Bool("no-sync"),
		Overwrite: !compat && c.Bool("overwrite"), DebugLog: compat && debugFlag(c.String("D"), "log"), DebugValue: compat && debugFlag(c.String("D"), "value"),
		DebugPDUBuf: compat && debugFlag(c.String("D"), "pdubuf"), DebugAppl1: compat && debugFlag(c.String("D"), "appl1"),
		NoProgress: compat || c.Bool("quiet")}
	if v := j.Version; v != 0 && v != 2 && v != 3 {
		return toolio.UsageError{Msg: fmt.Sprintf("-V %d: unsupported version (2 or 3)", v)}
	}
	args := c.Args().Slice()
	if compat {
		// pmlogrewrite wants inlog and outlog, or inlog alone with -i,
		// even with -C.
		want := 2
		if j.InPlace {
			want = 1
		}
		if len(args) != want {
			return toolio.UsageError{Msg: "name the input archive and the output archive (the input alone with -i)"}
		}
		j.In = args[0]
		if !j.InPlace {
			j.Out = args[1]
		}
	} else {
		args, err := toolio.StdioInputs(args)
		if err != nil {
			return toolio.UsageError{Msg: err.Error()}
		}
		if len(args) > 1 {
			msg := "name at most one input archive (pipe several through pcpcat)"
			if len(args) == 2 && !c.IsSet("o") {
				// pmlogrewrite's "inlog outlog", typed from habit
				msg += fmt.Sprintf("; to write the archive %s, name it with -o %s", args[1], args[1])
			}
			return toolio.UsageError{Msg: msg}
		}
		if len(args) == 1 {
			j.In = args[0]
		}
		j.Out = toolio.StdioOutput(c.String("o"))
		if j.InPlace && (j.In == "" || j.Out != "") {
			return toolio.UsageError{Msg: "-i rewrites the archive named as argument: name one, and no -o"}
		}
		if !j.InPlace && !j.Check && j.Out == "" {
			if f, ok := stdout.(*os.File); ok && pipe.IsTerminal(f) {
				return toolio.ErrTerminal
			}
		}
	}
	cfg := &rules.Config{}
	if !compat && c.Bool("redact") {
		std, err := rewrite.StandardRedaction()
		if err != nil {
			return err
		}
		cfg.Append(std)
	}
	if paths := c.StringSlice("c"); len(paths) > 0 {
		// Under its own name, pcprewrite reads PCP 6.1's grammar (value
		// and instance name substitutions); as pmlogrewrite, 6.0.3's.
		load := rules.LoadPmlogrewrite61
		if compat {
			load = rules.LoadPmlogrewrite
		}
		pc, err := load(paths...)
		if err != nil {
			if compat {
				return rewrite.CompatError(err, stderr)
			}
			return err
		}
		cfg.Append(pc)
	}
	if !compat {
		for _, f := range c.StringSlice("r") {
			src, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			ec, err := rules.ParseExpr(f, string(src))
			if err != nil {
				return err
			}
			cfg.Append(ec)
		}
	}
	j.Config = cfg
	return j.Run(stdin, stdout)
}

// debugFlag reports whether PCP debug flags (-D) include name (or "all").
func debugFlag(flags, name string) bool {
	for _, f := range strings.Split(flags, ",") {
		if f = strings.TrimSpace(f); f == name || f == "all" {
			return true
		}
	}
	return false
}

// pcpVerbosity is pmlogrewrite's vflag after its command line: each -v
// adds one, and -C sets it to 1, so that "-C -v" is 2 but "-v -C" is 1.
func pcpVerbosity(args []string) int {
	valued := map[string]bool{}
	for _, o := range opts {
		valued["-"+o.Name] = o.Value != ""
	}
	v := 0
	split := toolio.SplitGetopt(append([]string{"pmlogrewrite"}, args...), opts.Getopt())
	for i := 1; i < len(split); i++ {
		switch a := split[i]; {
		case a == "--":
			return v
		case a == "-v":
			v++
		case a == "-C":
			v = 1
		case valued[a]:
			i++ // its value
		}
	}
	return v
}
