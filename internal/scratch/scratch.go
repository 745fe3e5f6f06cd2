// Package scratch keeps the names of the temporary files and directories
// a tool makes (an output written beside its final name before the rename
// into place, a stream spilled to a scratch archive), so that a tool ended
// by a signal leaves none behind: on SIGINT, SIGTERM, SIGHUP or SIGPIPE
// (a consumer that exits early: `pcpcat A | pcpcat --json -T -1m | head`)
// the handler OnSignals installs removes them, then dies of the signal
// as the tool would have without it.
//
// A rename into place runs under Hold, so that a signal that comes in the
// middle of the renames of an archive's files waits for the last of them:
// the output is then whole under its final name, or not there at all.
package scratch

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	mu       sync.Mutex
	paths    = map[string]struct{}{}
	signaled atomic.Bool
)

// Add records path (a file or a directory) for removal on a signal.
func Add(path string) {
	mu.Lock()
	paths[path] = struct{}{}
	mu.Unlock()
}

// Forget drops path from the record: renamed into place, or removed.
func Forget(path string) {
	mu.Lock()
	delete(paths, path)
	mu.Unlock()
}

// CreateTemp is os.CreateTemp, the file recorded (Add).
func CreateTemp(dir, pattern string) (*os.File, error) {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.CreateTemp(dir, pattern)
	if err == nil {
		paths[f.Name()] = struct{}{}
	}
	return f, err
}

// MkdirTemp is os.MkdirTemp, the directory recorded (Add).
func MkdirTemp(dir, pattern string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	d, err := os.MkdirTemp(dir, pattern)
	if err == nil {
		paths[d] = struct{}{}
	}
	return d, err
}

// RemoveAll is os.RemoveAll, and Forget.
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	Forget(path)
	return err
}

// Hold runs f (renames into place) with the removal on a signal held off
// until it returns. f must not call the other functions of the package.
func Hold(f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	return f()
}

// Signaled reports whether a signal is ending the tool: an error it
// causes (a write to a pipe whose reader has gone) is not worth a word.
func Signaled() bool { return signaled.Load() }

// OnSignals installs the handler (see the package comment).
func OnSignals() {
	c := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		// A signal the tool was started with ignored (SIGINT of a
		// background job) stays ignored.
		if !signal.Ignored(sig) {
			signal.Notify(c, sig)
		}
	}
	go func() {
		var sig os.Signal
		for sig = range c {
			if !handled(sig) {
				break
			}
		}
		signaled.Store(true)
		mu.Lock() // and kept: nothing is made or renamed from here on
		sweep()
		signal.Reset(sig)
		if s, ok := sig.(syscall.Signal); ok {
			syscall.Kill(os.Getpid(), s)
			time.Sleep(time.Second) // (the signal's default action ends it)
			os.Exit(128 + int(s))
		}
		os.Exit(1)
	}()
}

var (
	ownMu sync.Mutex
	own   = map[os.Signal]bool{}
)

// HandledByTool tells the handler to leave sigs to the tool, which stops
// its work on them and finishes its output (pcpmmv record on SIGINT and
// SIGTERM): temporary files are then the tool's to finish or remove.
func HandledByTool(sigs ...os.Signal) {
	ownMu.Lock()
	for _, s := range sigs {
		own[s] = true
	}
	ownMu.Unlock()
}

func handled(sig os.Signal) bool {
	ownMu.Lock()
	defer ownMu.Unlock()
	return own[sig]
}

// Exit removes whatever is still recorded (nothing, when the tool's own
// clean-up ran) and exits with code; after a signal it waits for the
// handler, which ends the process.
func Exit(code int) {
	mu.Lock()
	sweep()
	os.Exit(code)
}

func sweep() {
	for p := range paths {
		os.RemoveAll(p)
	}
}
