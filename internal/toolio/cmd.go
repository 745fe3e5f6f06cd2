package toolio

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit statuses shared by every command.
const (
	ExitOK       = 0
	ExitFailed   = 1 // bad input, a failed check, an error while writing
	ExitUsage    = 2
	ExitInternal = 3
)

// NoSyncUsage is the help text of every command's --no-sync.
const NoSyncUsage = "do not sync the output to disk before renaming it into place (as PCP's tools do): faster, less safe"

// InvokedAs reports whether a command was started under the name name (a
// symlink such as pmlogextract -> pcpextract).
func InvokedAs(arg0, name string) bool {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe") == name
}

// GuardFaults, called at the top of a command's run, makes a memory fault
// on the calling goroutine a panic that CatchPanic reports, rather than a
// crash. Plain data volumes are read through a memory mapping (see
// format/compress.Mapper), and a volume cut short by another process while
// it is read faults when the lost pages are touched.
func GuardFaults() { debug.SetPanicOnFault(true) }

// CatchPanic, deferred at the top of a command's run, turns a panic into an
// internal-error message and ExitInternal instead of a crash; a memory
// fault (see GuardFaults) into a message about the input that changed.
func CatchPanic(prog string, stderr io.Writer, status *int) {
	r := recover()
	if r == nil {
		return
	}
	if err := AsFault(r); err != nil {
		fmt.Fprintf(stderr, "%s: %v; the output is incomplete and was not put in place\n", prog, err)
		*status = ExitFailed
		return
	}
	fmt.Fprintf(stderr, "%s: internal error: %v (please report this with the input that caused it)\n", prog, r)
	*status = ExitInternal
}

// AsFault returns the error to report for a recovered panic that is a
// memory fault (see GuardFaults), or nil for any other panic.
func AsFault(r any) error {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("an input file was cut short while it was being read (memory fault at %#x)", f.Addr())
	}
	return nil
}

// QuietUsage is every command's cli.App.OnUsageError: a bad flag is
// reported once, on standard error, by the command's own handler ("Try
// 'pcpcat --help'"), instead of urfave/cli printing the whole help on
// standard output, where it would corrupt the stream a filter writes.
func QuietUsage(_ *cli.Context, err error, _ bool) error { return err }

// VersionFlag is every command's --version: the toolkit's version. (The
// output archive's version is -V, --output-version, in every command.)
var VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the toolkit's version and exit", DisableDefaultText: true}

// Version is the toolkit's version: the module version when built from a
// release, else the commit it was built from.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev == "":
		return "devel"
	case dirty:
		return "devel-" + rev + "-dirty"
	}
	return "devel-" + rev
}
