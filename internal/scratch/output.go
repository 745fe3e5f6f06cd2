package scratch

import (
	"errors"
	"os"
	"path/filepath"
)

// Output is a file a tool writes under a temporary name beside its final
// one and renames into place when it is complete (Commit), so that a
// failure leaves no half-written output. Where the final name is not a
// regular file but a device, a FIFO or a socket (`-o /dev/null`, `-o
// /dev/stdout` into a pipe, a named pipe), it is written directly: a
// rename there would replace the device node itself with a regular file.
// A final name that is a symbolic link to a file is followed: the file it
// names is replaced, and the link kept.
type Output struct {
	*os.File
	final  string
	direct bool
}

// Special reports whether path exists and is neither a regular file nor
// a directory (following symbolic links).
func Special(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// CreateOutput starts the output final: a temporary file named by pattern
// (as os.CreateTemp's) in final's directory, recorded for removal on a
// signal, with the mode archives are written with; or final itself,
// opened for writing, where it is Special.
func CreateOutput(final, pattern string) (*Output, error) {
	if Special(final) {
		f, err := os.OpenFile(final, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &Output{File: f, final: final, direct: true}, nil
	}
	if t, err := filepath.EvalSymlinks(final); err == nil {
		final = t
	}
	f, err := CreateTemp(filepath.Dir(final), pattern)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		RemoveAll(f.Name())
		return nil, err
	}
	return &Output{File: f, final: final}, nil
}

// Direct reports whether the output is written in place (Special).
func (o *Output) Direct() bool { return o.direct }

// Commit completes the output: the temporary file synced (with sync),
// closed and renamed into place; a direct one closed.
func (o *Output) Commit(sync bool) error {
	if o.direct {
		return o.Close()
	}
	var err error
	if sync {
		err = o.Sync()
	}
	err = errors.Join(err, o.Close())
	if err == nil {
		err = os.Rename(o.Name(), o.final)
	}
	if err != nil {
		RemoveAll(o.Name())
		return err
	}
	Forget(o.Name())
	return nil
}

// Abort drops the output: the temporary file closed and removed (a direct
// one only closed: what went into it is gone).
func (o *Output) Abort() {
	o.Close()
	if !o.direct {
		RemoveAll(o.Name())
	}
}
