//go:build !linux

package pipe

import "io"

// newFrameBuf returns the Writer's buffer: a bufio.Writer of size bytes.
func newFrameBuf(w io.Writer, size int) frameBuf { return newBufio(w, size) }

var noSplice = false
