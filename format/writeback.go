package format

import (
	"fmt"
	"io"
	"os"
)

// writebackEvery is how much a file written may grow before its
// write-back to disk is started (see writeback).
const writebackEvery = 8 << 20

// writeback passes writes on to an output file and, every writebackEvery
// bytes, asks the kernel to start writing them to disk (without waiting).
// The writer syncs every file before renaming it into place; started
// early, the disk writes overlap the rest of the work, and the sync at the
// end has little left to wait for. Where the system has no such call,
// nothing is started and the final sync does it all.
type writeback struct {
	f       *os.File
	written int64
	started int64
	off     bool // the file is not synced (WriterOptions.NoSync): start nothing
}

func (w *writeback) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.written += int64(n)
	if !w.off && w.written-w.started >= writebackEvery {
		startWriteback(w.f, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}

// kernelCopy is copyRange (tests stand in one that cannot copy).
var kernelCopy = copyRange

// copyFrom appends n bytes of src at off (the kernel's copy where it can
// make one, else through a buffer), and starts their write-back as Write
// does.
func (w *writeback) copyFrom(src *os.File, off, n int64) error {
	k, ok, err := kernelCopy(w.f, src, off, n)
	if !ok {
		k, err = io.CopyN(w.f, io.NewSectionReader(src, off, n), n)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	w.written += k
	if !w.off && w.written-w.started >= writebackEvery {
		startWriteback(w.f, w.started, w.written-w.started)
		w.started = w.written
	}
	if err != nil {
		return fmt.Errorf("copying %d bytes at offset %d of %s: %w", n, off, src.Name(), err)
	}
	return nil
}
