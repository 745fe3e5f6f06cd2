package summary

import (
	"errors"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// Streamed is an Archive over a record stream that came with its whole
// metadata up front (a METADATA frame, docs/stream.md): it is summarised
// as it arrives, in one pass, with nothing spilled to disk. The stream's
// end is known only once it is read, so the window's end (pmlogsummary
// takes the archive's) is set after the pass: nothing printed before
// then depends on it (the label, with -l, is printed after the pass).
//
// It serves runs that need one look at the records and no end up front
// (CanStream); the others spill the stream to a scratch archive first.
type Streamed struct {
	meta *format.Metadata
	it   stream.Iterator
	used bool
	end  stream.Timestamp
	seen bool // a data record was read (end is its time)
	// from: records before it are left out (-S; an archive's Records
	// takes format.From for it)
	from stream.Timestamp
}

// skipBefore leaves the records before t out of Records.
func (s *Streamed) skipBefore(t stream.Timestamp) { s.from = t }

// NewStreamed summarises the records of it (the label, metadata records
// and data records of one archive's stream), whose metadata is meta.
func NewStreamed(meta *format.Metadata, it stream.Iterator) *Streamed {
	return &Streamed{meta: meta, it: it}
}

// CanStream reports whether a summary with o reads its input once and
// needs no end before reading: no -B (a second look at the values), no
// -S or -T that counts from the archive's end (pcptime.NeedsEnd), no
// traces.
func CanStream(o *Options) bool {
	d := o.Debug
	return o.Bins == 0 && !pcptime.NeedsEnd(o.Start, o.Finish) && !d.Appl0 && !d.Appl1 && !d.Appl2
}

func (s *Streamed) Label() stream.Label             { return s.meta.Label }
func (s *Streamed) Meta() (*format.Metadata, error) { return s.meta, nil }

// End is not known before the stream is read: see readEnd.
func (s *Streamed) End() (stream.Timestamp, bool, error) { return stream.Timestamp{}, false, nil }

// readEnd is the time of the last data record read, as pmGetArchiveEnd
// gives an archive's.
func (s *Streamed) readEnd() (stream.Timestamp, bool) { return s.end, s.seen }

// Records returns the stream's data records (results and <mark>s), once.
// The options are those of a first pass from the label's start, which
// these records are.
func (s *Streamed) Records(...format.RecordsOption) stream.CloserIterator {
	if s.used {
		return &streamedIter{err: errors.New("a stream is read once: this summary needs it spilled")}
	}
	s.used = true
	return &streamedIter{s: s}
}

type streamedIter struct {
	s   *Streamed
	cur stream.Record
	err error
}

func (it *streamedIter) Next() bool {
	if it.s == nil {
		return false
	}
	for it.s.it.Next() {
		switch r := it.s.it.At().(type) {
		case *stream.Result, *stream.Mark:
			it.s.end, it.s.seen = r.Time(), true
			if r.Time().Before(it.s.from) {
				continue
			}
			it.cur = r
			return true
		}
	}
	return false
}

func (it *streamedIter) At() stream.Record { return it.cur }

func (it *streamedIter) Err() error {
	if it.err != nil || it.s == nil {
		return it.err
	}
	return it.s.it.Err()
}

func (it *streamedIter) Close() error { return nil }
