package toolio

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Exit statuses shared by every command.
const (
	ExitOK       = 0
	ExitFailed   = 1 // bad input, a failed check, an error while writing
	ExitUsage    = 2
	ExitInternal = 3
)

// InvokedAs reports whether a command was started under the name name (a
// symlink such as pmlogextract -> pcpextract).
func InvokedAs(arg0, name string) bool {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe") == name
}

// CatchPanic, deferred at the top of a command's run, turns a panic into an
// internal-error message and ExitInternal instead of a crash.
func CatchPanic(prog string, stderr io.Writer, status *int) {
	if r := recover(); r != nil {
		fmt.Fprintf(stderr, "%s: internal error: %v (please report this with the input that caused it)\n", prog, r)
		*status = ExitInternal
	}
}
