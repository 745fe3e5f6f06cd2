package pipe

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Streams reads the streams that follow one another on one input, as
// `(pcpcat A; pcpcat B) | pcpcat -m` makes them: each stream, header to END
// frame, then the next. Bytes after an END frame that do not start another
// stream are an error that says so; nothing is ever dropped in silence.
//
// Use it through Concatenated, which joins the streams as several archives
// named on a command line are joined (stream.Concat: one host, in time
// order, a <mark> between them).
type Streams struct {
	br    *bufio.Reader
	name  string
	cur   *Reader
	first *Reader
	n     int
}

// NewStreams reads the streams on r, naming them name in errors.
func NewStreams(r io.Reader, name string) *Streams {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < BufferSize {
		br = bufio.NewReaderSize(r, BufferSize)
	}
	return &Streams{br: br, name: name}
}

// Next returns a Reader of the next stream, nil after the last one. It
// must be called only after the Reader before it has returned false from
// its Next; a stream that ended in an error has no successor.
func (s *Streams) Next() (*Reader, error) {
	var off int64
	if s.cur != nil {
		if !s.cur.done || s.cur.err != nil {
			return nil, nil
		}
		off = s.cur.off
		peek, err := s.br.Peek(HeaderSize)
		if len(peek) == 0 {
			if err != nil && err != io.EOF {
				return nil, &format.FormatError{File: s.name, Offset: off, Msg: "reading after the END frame", Err: err}
			}
			return nil, nil
		}
		cut := len(peek) < HeaderSize && strings.HasPrefix(Magic, string(peek[:min(len(peek), len(Magic))]))
		if !IsPipeStream(peek) && !cut {
			return nil, &format.FormatError{File: s.name, Offset: off, Msg: fmt.Sprintf("%q follows the END frame: bytes after a stream must be another stream", peek[:min(len(peek), 8)])}
		}
	}
	s.n++
	name := s.name
	if s.n > 1 {
		name = fmt.Sprintf("%s (stream %d)", s.name, s.n)
	}
	s.cur = &Reader{br: s.br, name: name, off: off}
	if s.first == nil {
		s.first = s.cur
	}
	return s.cur, nil
}

// Concatenated returns the records of every stream on r, joined by
// stream.Concat's rules: streams of one host, each starting after the one
// before it ends, a <mark> between them, metadata not repeated.
//
// The iterator is a MetadataSource: the METADATA frame of the first
// stream, if it had one (see Reader.Metadata).
func Concatenated(r io.Reader, name string) stream.Iterator {
	s := NewStreams(r, name)
	return &concatenated{Iterator: stream.ConcatSeq(func() (stream.Iterator, string, error) {
		rd, err := s.Next()
		if rd == nil || err != nil {
			return nil, "", err
		}
		return rd, rd.name, nil
	}), s: s}
}

// MetadataSource is an iterator that can give the whole metadata of its
// first archive once it has returned that archive's label: an archive's
// reader, or a stream whose producer sent a METADATA frame. ok is false
// when it cannot.
type MetadataSource interface {
	Metadata() (recs []stream.Record, ok bool)
}

type concatenated struct {
	stream.Iterator
	s *Streams
}

func (c *concatenated) Metadata() ([]stream.Record, bool) {
	if c.s.first == nil {
		return nil, false
	}
	return c.s.first.Metadata()
}

// Where implements stream.Locator.
func (c *concatenated) Where() (string, int64, bool) {
	if l, ok := stream.As[stream.Locator](c.Iterator); ok {
		return l.Where()
	}
	return "", 0, false
}

// Unwrap lets stream.As find the capabilities of the streams' readers.
func (c *concatenated) Unwrap() stream.Iterator { return c.Iterator }
