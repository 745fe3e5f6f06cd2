package toolio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scratch"
)

// Opt describes one command-line option once. From a list of them a
// command gets its urfave/cli flags (native mode), the value-taking names
// Permute needs, the getopt(3) string of its PCP-name mode, and its help;
// the options several tools share (the window, the zone, the output and
// its version, volumes, sync, folios) are defined below and used by all.
type Opt struct {
	Name    string   // a letter ("S") or a word ("zstd")
	Aliases []string // further names ("start")
	Value   string   // placeholder for its value ("TIME"); "" for a switch
	Kind    OptKind
	Usage   string
	// Default is what --help and the man page say the value is when the
	// option is not given (an Int option without one would show "0",
	// which for most of them means "not set": all volumes, every CPU).
	Default string
	Hidden  bool
	// Native: only under the tool's own name, not in its PCP-name mode
	// (whose getopt string leaves it out).
	Native bool
}

// OptKind is the type of an option's value.
type OptKind int

// Option value kinds. A switch has no Value; String is the default for
// one that has.
const (
	String  OptKind = iota
	Int             // a whole number
	Strings         // repeatable, each occurrence a value
	Count           // a switch counted (-xx)
)

// Opts is the options of one command.
type Opts []Opt

// The options several tools share.
var (
	OptStart  = Opt{Name: "S", Aliases: []string{"start"}, Value: "TIME", Usage: "start of the time window (PCP time syntax: @10:00, +1h, -30m, ...)"}
	OptFinish = Opt{Name: "T", Aliases: []string{"finish"}, Value: "TIME", Usage: "end of the time window (PCP time syntax)"}
	OptZ      = Opt{Name: "z", Aliases: []string{"hostzone"}, Usage: "times in the archive's timezone (the host's)"}
	OptZone   = Opt{Name: "Z", Aliases: []string{"timezone"}, Value: "TZ", Usage: "times in timezone `TZ`"}
	OptOutput = Opt{Name: "o", Aliases: []string{"output"}, Value: "PREFIX", Native: true,
		Usage: "write an archive with base name `PREFIX` (- or none: the record stream on standard output)"}
	OptVersion = Opt{Name: "V", Aliases: []string{"output-version"}, Value: "N", Kind: Int,
		Usage: "output archive `version` (2 or 3)", Default: "the input's"}
	OptZstd   = Opt{Name: "zstd", Native: true, Usage: "write data volumes as seekable zstd (.N.zst; PCP reads them from 6.3.2)"}
	OptXz     = Opt{Name: "xz", Native: true, Usage: "write data volumes as xz (.N.xz, in blocks with an index, compressed on every core; PCP 6.0.3 reads them)"}
	OptNoSync = Opt{Name: "no-sync", Native: true, Usage: NoSyncUsage}
	// OptOverwrite replaces an existing output archive the way -i replaces
	// an input: the old archive stays whole until the new one is complete,
	// and is put back if the replacement fails.
	OptOverwrite = Opt{Name: "overwrite", Native: true, Usage: "replace an existing output archive (the old one stays whole until the new one is complete)"}
	OptDebug     = Opt{Name: "D", Value: "FLAGS", Hidden: true, Usage: "PCP debug flags (accepted; the traces PCP's QA compares are written, others ignored)"}
	OptFolio     = Opt{Name: "folio", Native: true, Usage: "the arguments are archive folios or directories of archives of several hosts: one output per host, in directory -o DIR"}
	OptJobs      = Opt{Name: "j", Aliases: []string{"jobs"}, Value: "N", Kind: Int, Native: true, Usage: "with --folio, work on at most `N` hosts at once", Default: "the number of CPUs"}
)

// WithDefault returns the option with what help says its default is.
func (o Opt) WithDefault(d string) Opt {
	o.Default = d
	return o
}

// Window is -S, -T, -z and -Z.
var Window = Opts{OptStart, OptFinish, OptZ, OptZone}

// Flags returns the urfave/cli flags of the options; compat (a PCP-name
// mode) leaves out the Native ones.
func (s Opts) Flags(compat bool) []cli.Flag {
	var out []cli.Flag
	for _, o := range s {
		if compat && o.Native {
			continue
		}
		usage := o.Usage
		if o.Value != "" && !strings.Contains(usage, "`") {
			usage = "(" + "`" + o.Value + "`" + ") " + usage
		}
		// A switch's "(default: false)" says nothing: left out.
		switch {
		case o.Value == "" && o.Kind == Count:
			out = append(out, &cli.BoolFlag{Name: o.Name, Aliases: o.Aliases, Usage: usage, Hidden: o.Hidden, Count: new(int), DisableDefaultText: true})
		case o.Value == "":
			out = append(out, &cli.BoolFlag{Name: o.Name, Aliases: o.Aliases, Usage: usage, Hidden: o.Hidden, DisableDefaultText: true})
		case o.Kind == Int:
			out = append(out, &cli.IntFlag{Name: o.Name, Aliases: o.Aliases, Usage: usage, Hidden: o.Hidden, DefaultText: o.Default})
		case o.Kind == Strings:
			out = append(out, &cli.StringSliceFlag{Name: o.Name, Aliases: o.Aliases, Usage: usage, Hidden: o.Hidden, DefaultText: o.Default})
		default:
			out = append(out, &cli.StringFlag{Name: o.Name, Aliases: o.Aliases, Usage: usage, Hidden: o.Hidden, DefaultText: o.Default})
		}
	}
	return out
}

// Valued returns every name of the options that take a value, for
// Permute.
func (s Opts) Valued() map[string]bool {
	m := map[string]bool{}
	for _, o := range s {
		if o.Value == "" {
			continue
		}
		m[o.Name] = true
		for _, a := range o.Aliases {
			m[a] = true
		}
	}
	return m
}

// Getopt returns the getopt(3) string of the PCP-name mode: the
// one-letter options that are not Native, ':' after those taking a
// value, and '?' for help.
func (s Opts) Getopt() string {
	var b strings.Builder
	for _, o := range s {
		if o.Native || len(o.Name) != 1 {
			continue
		}
		b.WriteString(o.Name)
		if o.Value != "" {
			b.WriteByte(':')
		}
	}
	b.WriteByte('?')
	return b.String()
}

// UsageError is a mistake on the command line: the command says it, points
// at --help, and exits ExitUsage.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// Usagef makes a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Sprintf(format, args...)} }

// IsUsage reports whether err is a command-line mistake: a UsageError, or
// urfave/cli's complaint about a flag.
func IsUsage(err error) bool {
	var ue UsageError
	if errors.As(err, &ue) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "flag provided but not defined") || strings.Contains(s, "invalid value") ||
		strings.Contains(s, "flag needs an argument")
}

// App is the urfave/cli application every command runs: one line on
// standard error for a usage mistake (QuietUsage), --version, and the
// command's flags permuted so that options may follow the arguments.
type App struct {
	Name, Usage, UsageText string
	Opts                   Opts
	Compat                 bool // a PCP-name mode: getopt's syntax, no --version
	Action                 func(*cli.Context) error
}

// Run runs the application on args and returns the error its action (or
// the flag parsing) gave.
func (a App) Run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cli.VersionFlag = VersionFlag
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"?"}, Usage: "show help", DisableDefaultText: true}
	app := &cli.App{
		Name:                   a.Name,
		Usage:                  a.Usage,
		UsageText:              a.UsageText,
		HideVersion:            a.Compat,
		Version:                Version(),
		HideHelpCommand:        true,
		OnUsageError:           QuietUsage,
		UseShortOptionHandling: true,
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		Flags:                  a.Opts.Flags(a.Compat),
		Action:                 a.Action,
	}
	if !a.Compat && a.Action != nil {
		app.Action = func(c *cli.Context) error {
			// -o "$OUT" with OUT unset: not standard output, which a
			// 1 GiB binary stream would then fill
			if c.IsSet("o") && c.String("o") == "" {
				return Usagef("-o needs a name (- for standard output)")
			}
			return a.Action(c)
		}
	}
	if what := os.Getenv(GenerateEnv); what != "" && !a.Compat {
		return generate(app, what, stdout)
	}
	if a.Compat {
		// PCP's getopt: option values may follow their letter directly.
		args = SplitGetopt(args, a.Opts.Getopt())
	}
	return app.Run(Permute(args, a.Opts.Valued()))
}

// OptVolumes is pmlogextract's -v: a new volume every N records, or (ours)
// before a size such as 100MiB.
var OptVolumes = Opt{Name: "v", Aliases: []string{"volsamples"}, Value: "N|SIZE",
	Usage: "start a new volume every `N` records, or before a size such as 100MiB"}

// WriterFlags reads the options of the archive written (-V, --zstd,
// --no-sync, and -v when the command has it) into o.
func WriterFlags(c *cli.Context, o *format.WriterOptions) error {
	o.Version = c.Int("V")
	if v := o.Version; v != 0 && v != 2 && v != 3 {
		return Usagef("-V %d: the archive version must be 2 or 3", v)
	}
	o.Zstd = o.Zstd || c.Bool("zstd")
	o.Xz = o.Xz || c.Bool("xz")
	if o.Zstd && o.Xz {
		return Usagef("--zstd and --xz: choose one compression")
	}
	o.NoSync = o.NoSync || c.Bool("no-sync")
	o.Overwrite = o.Overwrite || c.Bool("overwrite")
	if v := c.String("v"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			if n <= 0 {
				return Usagef("-v %s: the number of records per volume must be positive", v)
			}
			o.VolumeRecords = n
		} else {
			n, err := ParseSize(v)
			if err != nil {
				return Usagef("-v %s: neither a number of records nor a size (%v)", v, err)
			}
			o.VolumeBytes = n
		}
	}
	return nil
}

// Exit reports err on stderr as prog and returns the exit status:
// ExitUsage (with a pointer to --help) for a usage mistake, ExitFailed for
// anything else.
func Exit(prog string, err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var q Silent
	if errors.As(err, &q) {
		return q.Code
	}
	if scratch.Signaled() || errors.Is(err, syscall.EPIPE) {
		// A signal ends the tool (scratch.OnSignals), or the reader of
		// its output has gone: it dies of SIGPIPE, as it would have
		// without the handler, and says nothing.
		return 128 + int(syscall.SIGPIPE)
	}
	if IsUsage(err) {
		fmt.Fprintf(stderr, "%s: %v\nTry '%s --help'.\n", prog, err, prog)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return ExitFailed
}

// Main runs a command's run function with the profile hook and exits.
// A signal that ends it removes its temporary files first
// (scratch.OnSignals).
func Main(run func(args []string, stdin *os.File, stdout, stderr io.Writer) int) {
	scratch.OnSignals()
	stop := ProfileFromEnv()
	code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	scratch.Exit(code)
}

// PCPExists prints what PCP's archive-writing tools print when their
// output archive exists (libpcp's __pmLogNewFile, then the tool's own
// line, e.g. "pmlogextract: Error: __pmLogCreate: File exists") and
// returns the Silent failure to end with; for any other error, or an
// archive libpcp would not stop at, it returns err unchanged.
func PCPExists(err error, stderr io.Writer, line string) error {
	var ee *format.ExistsError
	if !errors.As(err, &ee) || ee.PCPFile() == "" {
		return err
	}
	fmt.Fprintf(stderr, "__pmLogNewFile: %q already exists, not over-written\n%s\n", ee.PCPFile(), line)
	return Silent{Code: ExitFailed}
}

// Silent ends a command with a status and nothing more to say: it said
// what went wrong as it happened.
type Silent struct{ Code int }

func (Silent) Error() string { return "" }

// RecoverFault, deferred on a goroutine that reads mapped inputs (after
// GuardFaults), turns a memory fault into *err; any other panic goes on.
func RecoverFault(err *error) {
	if r := recover(); r != nil {
		if e := AsFault(r); e != nil {
			*err = e
			return
		}
		panic(r)
	}
}

// Names returns the name a command reports under and whether it runs in
// its PCP-name mode: invoked as pcpName (a symlink such as pmlogextract ->
// pcpextract) it takes PCP's command line.
func Names(args []string, native, pcpName string) (prog string, compat bool) {
	if len(args) > 0 && InvokedAs(args[0], pcpName) {
		return pcpName, true
	}
	return native, false
}

// DebugOn reports whether a -D argument (PCP's debug option names,
// separated by commas) turns on the option name, itself or through "all".
func DebugOn(arg, name string) bool {
	for _, f := range strings.Split(arg, ",") {
		if f == name || f == "all" {
			return true
		}
	}
	return false
}
