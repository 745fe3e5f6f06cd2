package logimport

import (
	"bufio"
	"io"
)

// peekReader lets the first line be looked at before it is read.
type peekReader struct{ *bufio.Reader }

func newPeekReader(r io.Reader) peekReader { return peekReader{bufio.NewReaderSize(r, 1<<16)} }

func (p peekReader) firstLine() string {
	b, _ := p.Peek(1 << 16)
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
