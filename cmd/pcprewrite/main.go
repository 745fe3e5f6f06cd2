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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/rewrite"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream/pipe"
)

func main() {
	stop := toolio.ProfileFromEnv()
	code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

var valued = map[string]bool{"c": true, "config": true, "r": true, "rules": true, "o": true, "output": true,
	"V": true, "version": true, "D": true}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// quiet ends a run with a status and nothing more to say.
type quiet struct{ code int }

func (quiet) Error() string { return "" }

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	prog := "pcprewrite"
	compat := len(args) > 0 && toolio.InvokedAs(args[0], "pmlogrewrite")
	if compat {
		prog = "pmlogrewrite"
	}
	toolio.GuardFaults()
	defer toolio.CatchPanic(prog, stderr, &status)
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"?"}, Usage: "show help"}
	usage := "pcprewrite [-c config]... [-r rules]... [options] [archive] [-o OUT]\n   pcpcat A | pcprewrite -r fix.rules | pcpextract -o OUT\n   pcprewrite -i -c /var/lib/pcp/config/pmlogrewrite ARCHIVE"
	if compat {
		usage = "pmlogrewrite [-Cdiqsvw] [-c config] [-V version] inlog [outlog]"
	}
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "c", Aliases: []string{"config"}, Usage: "pmlogrewrite rules from `FILE` or from every file of a directory (repeatable)"},
		&cli.BoolFlag{Name: "C", Aliases: []string{"check"}, Usage: "check the rules against the archive and stop (implies -v -w)"},
		&cli.BoolFlag{Name: "d", Aliases: []string{"desperate"}, Usage: "keep the output written so far when something fails"},
		&cli.BoolFlag{Name: "i", Usage: "rewrite the input archive in place (safely: the input is untouched on any error)"},
		&cli.BoolFlag{Name: "q", Aliases: []string{"quick"}, Usage: "exit at once, writing nothing, when no rule changes the archive"},
		&cli.BoolFlag{Name: "s", Aliases: []string{"scale"}, Usage: "rescale values when units change in scale only"},
		&cli.BoolFlag{Name: "v", Aliases: []string{"verbose"}, Usage: "say what the rules change"},
		&cli.BoolFlag{Name: "w", Aliases: []string{"warnings"}, Usage: "warn about rules that do not apply or change nothing"},
		&cli.IntFlag{Name: "V", Aliases: []string{"version"}, Usage: "output archive `version` (2 or 3; upgrade only)"},
		&cli.StringFlag{Name: "D", Usage: "PCP debug flags (accepted and ignored)", Hidden: true},
	}
	if !compat {
		flags = append(flags,
			&cli.StringSliceFlag{Name: "r", Aliases: []string{"rules"}, Usage: "rules in pcprewrite's expression language from `FILE` (repeatable; docs/rules.md)"},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write an archive with base name `PREFIX` (default: the stream on standard output)"},
			&cli.BoolFlag{Name: "no-sync", Usage: toolio.NoSyncUsage},
		)
	}
	app := &cli.App{
		Name:                   prog,
		Usage:                  "rewrite PCP archives with rules (pmlogrewrite)",
		UsageText:              usage,
		HideVersion:            true,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		Flags:                  flags,
		Action: func(c *cli.Context) error {
			return action(c, prog, compat, stdin, stdout, stderr)
		},
	}
	if compat {
		// PCP's getopt: option values may follow their letter directly.
		args = toolio.SplitGetopt(args, "c:CdD:iqsvV:w?")
	}
	if err := app.Run(toolio.Permute(args, valued)); err != nil {
		var q quiet
		if errors.As(err, &q) {
			return q.code
		}
		var ue usageError
		if errors.As(err, &ue) || strings.Contains(err.Error(), "flag provided but not defined") || strings.Contains(err.Error(), "invalid value") {
			fmt.Fprintf(stderr, "%s: %v\nUsage: %s\n", prog, err, strings.SplitN(usage, "\n", 2)[0])
			if compat {
				// pmlogrewrite exits 1 on a usage error.
				return toolio.ExitFailed
			}
			return toolio.ExitUsage
		}
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return toolio.ExitFailed
	}
	return toolio.ExitOK
}

type job struct {
	prog     string
	compat   bool
	stderr   io.Writer
	in       string // "" for standard input
	out      string // "" for standard output (native only)
	inPlace  bool
	check    bool
	quick    bool
	verbose  bool
	warnings bool
	desp     bool
	version  int
	cfg      *rules.Config
	scale    bool
	damage   error // a truncated input record, met while reading
	noSync   bool  // --no-sync (never with -i: the input is at stake)
}

func action(c *cli.Context, prog string, compat bool, stdin *os.File, stdout, stderr io.Writer) error {
	j := &job{prog: prog, compat: compat, stderr: stderr, inPlace: c.Bool("i"), check: c.Bool("C"),
		quick: c.Bool("q"), verbose: c.Bool("v") || c.Bool("C"), warnings: c.Bool("w") || c.Bool("C"),
		desp: c.Bool("d"), version: c.Int("V"), scale: c.Bool("s"), noSync: !compat && c.Bool("no-sync")}
	if v := j.version; v != 0 && v != 2 && v != 3 {
		return usageError{fmt.Sprintf("-V %d: unsupported version (2 or 3)", v)}
	}
	args := c.Args().Slice()
	if compat {
		// pmlogrewrite wants inlog and outlog, or inlog alone with -i,
		// even with -C.
		want := 2
		if j.inPlace {
			want = 1
		}
		if len(args) != want {
			return usageError{"name the input archive and the output archive (the input alone with -i)"}
		}
		j.in = args[0]
		if !j.inPlace {
			j.out = args[1]
		}
	} else {
		if len(args) > 1 {
			return usageError{"name at most one input archive (pipe several through pcpcat)"}
		}
		if len(args) == 1 {
			j.in = args[0]
		}
		j.out = c.String("o")
		if j.inPlace && (j.in == "" || j.out != "") {
			return usageError{"-i rewrites the archive named as argument: name one, and no -o"}
		}
		if !j.inPlace && !j.check && j.out == "" {
			if f, ok := stdout.(*os.File); ok && pipe.IsTerminal(f) {
				return toolio.ErrTerminal
			}
		}
	}
	cfg := &rules.Config{}
	if paths := c.StringSlice("c"); len(paths) > 0 {
		pc, err := rules.LoadPmlogrewrite(paths...)
		if err != nil {
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
	j.cfg = cfg
	return j.run(stdin, stdout)
}

func (j *job) warn(err error) {
	if errors.Is(err, format.ErrTruncated) && j.damage == nil {
		j.damage = err
	}
	fmt.Fprintf(j.stderr, "%s: Warning: %v\n", j.prog, err)
}

func (j *job) run(stdin *os.File, stdout io.Writer) error {
	name := j.in
	if name == "" {
		// A stream on stdin: the plan needs the whole metadata before the
		// first record, so spool the stream to a temporary archive.
		dir, err := os.MkdirTemp("", "pcprewrite-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if _, err := toolio.Spill(nil, stdin, dir, "stdin", format.WriterOptions{KeepVolumes: true}, j.warn); err != nil {
			return err
		}
		name = filepath.Join(dir, "stdin")
	}
	a, err := format.Open(name, format.WithWarn(j.warn))
	if err != nil {
		return fmt.Errorf("cannot open archive %q: %w", name, err)
	}
	meta, err := a.Meta()
	if err != nil {
		return err
	}
	inVer := a.Version()
	outVer := j.version
	if outVer == 0 {
		outVer = inVer
	}
	if outVer < inVer {
		return fmt.Errorf("cannot create a v%d archive from v%d (%s)", outVer, inVer, name)
	}
	plan, err := rules.Compile(j.cfg, meta, rules.CompileOptions{OutputVersion: outVer, Scale: j.scale})
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		if j.warnings || w.Always {
			fmt.Fprintf(j.stderr, "%s: %s\n", j.prog, w)
		}
	}
	if j.verbose {
		report(j.stderr, plan)
	}
	if j.check {
		return nil
	}
	if j.quick && !plan.Changes() {
		return nil
	}
	index, _ := a.Index()
	it := a.Records()
	defer it.Close()
	rw := rewrite.New(it, plan, rewrite.Options{OutputVersion: outVer, Meta: meta, Index: index})

	out := j.out
	var tmpBase string
	if j.inPlace {
		dir := filepath.Dir(a.Base())
		f, err := os.CreateTemp(dir, ".pcprewrite-")
		if err != nil {
			return err
		}
		tmpBase = f.Name()
		f.Close()
		os.Remove(tmpBase)
		out = tmpBase
	}
	wopts := format.WriterOptions{Version: outVer, StartAtFirstRecord: true, DeltaInDoms: true,
		KeepVolumes: true, IndexRepeats: true, Warn: j.warn, NoSync: j.noSync && !j.inPlace}
	sink, err := toolio.OpenOutput(out, wopts, stdout)
	if err != nil {
		return err
	}
	defer toolio.AbortOnPanic(sink)
	if sp, ok := sink.(rewrite.ResultSpacer); ok {
		rw.EncodeInto(sp) // every result is written before the next Next
	}
	for rw.Next() {
		if err := sink.Write(rw.At()); err != nil {
			sink.Abort(err)
			return err
		}
	}
	if err := rw.Err(); err != nil {
		if j.desp && out != "" && !j.inPlace && rw.DataRecords() > 0 {
			if cerr := sink.Close(); cerr == nil {
				fmt.Fprintf(j.stderr, "%s: %v\n%s: the partial archive %q is kept (-d)\n", j.prog, err, j.prog, out)
				return quiet{toolio.ExitFailed}
			}
		}
		sink.Abort(err)
		if j.compat && !j.inPlace {
			return fmt.Errorf("%v\nno archive %q written", err, out)
		}
		return err
	}
	if j.damage != nil && !j.desp {
		// A rewrite (in place above all) must not shorten an archive
		// silently; pmlogrewrite refuses too.
		sink.Abort(j.damage)
		return fmt.Errorf("%v: the input is damaged, nothing written (-d writes what precedes the damage)", j.damage)
	}
	if rw.DataRecords() == 0 {
		sink.Abort(errors.New("empty"))
		if j.compat {
			fmt.Fprintf(j.stderr, "%s: Warning: %q has no data: skipped\n", j.prog, j.in)
			return nil
		}
		return fmt.Errorf("%s: no data records: nothing written", name)
	}
	if err := sink.Close(); err != nil {
		sink.Abort(err)
		return err
	}
	if out == "" {
		return nil
	}
	// Synced like every archive the tools write (pmlogrewrite syncs
	// only with -i): a crash soon after must not leave a renamed but
	// empty file.
	if err := rewrite.FixIndex(out, outVer, rw.IndexHints(), true); err != nil {
		removeArchive(out)
		return err
	}
	if j.inPlace {
		return replace(a, tmpBase)
	}
	return nil
}

// report is -v: what the plan changes.
func report(w io.Writer, plan *rules.Plan) {
	g := &plan.Global
	if g.Hostname != nil {
		fmt.Fprintf(w, "Global: hostname -> %s\n", *g.Hostname)
	}
	if g.TimeZone != nil {
		fmt.Fprintf(w, "Global: timezone -> %s\n", *g.TimeZone)
	}
	if g.ZoneInfo != nil {
		fmt.Fprintf(w, "Global: zoneinfo -> %s\n", *g.ZoneInfo)
	}
	if g.Features != nil {
		fmt.Fprintf(w, "Global: features -> %d\n", *g.Features)
	}
	if g.Shift != nil {
		fmt.Fprintf(w, "Global: time -> %s\n", g.Shift)
	}
	for _, ip := range plan.InDoms {
		fmt.Fprintf(w, "InDom: %s -> %s (%d instance changes)\n", ip.Old, ip.New, len(ip.Insts))
	}
	for id, mp := range plan.Metrics {
		name := id.String()
		if len(mp.Old.Names) > 0 {
			name = mp.Old.Names[0]
		}
		fmt.Fprintf(w, "Metric: %s (%s):", name, id)
		if mp.Changes&rules.ChangeDelete != 0 {
			fmt.Fprint(w, " delete")
		}
		if mp.Changes&rules.ChangePMID != 0 {
			fmt.Fprintf(w, " pmid -> %s", mp.New.PMID)
		}
		if mp.Changes&rules.ChangeName != 0 {
			fmt.Fprintf(w, " name -> %s", strings.Join(mp.New.Names, " "))
		}
		if mp.Changes&rules.ChangeType != 0 {
			fmt.Fprintf(w, " type -> %s", rules.TypeName(mp.New.Type))
		}
		if mp.Changes&rules.ChangeSem != 0 {
			fmt.Fprintf(w, " sem -> %s", rules.SemName(mp.New.Sem))
		}
		if mp.Changes&rules.ChangeUnits != 0 {
			fmt.Fprint(w, " units changed")
			if mp.Changes&rules.ChangeRescale != 0 {
				fmt.Fprint(w, " (rescale)")
			}
		}
		if mp.Changes&rules.ChangeInDom != 0 {
			fmt.Fprintf(w, " indom -> %s output %s", mp.New.InDom, mp.Output)
		}
		if mp.Changes&rules.ChangeValue != 0 {
			fmt.Fprintf(w, " value = %s", mp.Value.Src)
		}
		fmt.Fprintln(w)
	}
}

// archiveFiles lists the files of the archive written at base.
func archiveFiles(base string) []string {
	files, _ := format.ArchiveFiles(base)
	return files
}

func removeArchive(base string) {
	for _, f := range archiveFiles(base) {
		os.Remove(f)
	}
}

// replace puts the archive written at tmp in the place of the input a:
// the input's files are first moved aside, then the new ones renamed into
// place, then the old ones removed; any failure puts the input back.
func replace(a *format.Archive, tmp string) error {
	base := a.Base()
	olds := a.Files()
	news := archiveFiles(tmp)
	type mv struct{ from, to string }
	var aside, placed []mv
	undo := func() {
		for _, m := range placed {
			os.Rename(m.to, m.from)
		}
		for _, m := range aside {
			os.Rename(m.to, m.from)
		}
		removeArchive(tmp)
	}
	for i, f := range olds {
		m := mv{f, fmt.Sprintf("%s.pcprewrite-old-%d", tmp, i)}
		if err := os.Rename(m.from, m.to); err != nil {
			undo()
			return fmt.Errorf("in place: %w (the input is unchanged)", err)
		}
		aside = append(aside, m)
	}
	for _, f := range news {
		// The suffix (.meta, .0, ...) after the temporary name; compared
		// by file name, as the paths may be spelled differently (./x).
		m := mv{f, base + strings.TrimPrefix(filepath.Base(f), filepath.Base(tmp))}
		if err := os.Rename(m.from, m.to); err != nil {
			undo()
			return fmt.Errorf("in place: %w (the input is unchanged)", err)
		}
		placed = append(placed, m)
	}
	if d, err := os.Open(filepath.Dir(base)); err == nil {
		d.Sync()
		d.Close()
	}
	for _, m := range aside {
		os.Remove(m.to)
	}
	return nil
}
