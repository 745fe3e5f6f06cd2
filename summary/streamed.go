package summary

import (
	"errors"
	"sync"

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
	// late: the stream came without a METADATA frame, and meta is its
	// head (NewStreamedLate): the rest of its metadata is gathered as it
	// passes (descs for the accumulators at once, every record for the
	// whole metadata that the output needs once the stream is read).
	late    bool
	descs   *lateDescs
	metaRec []stream.Record
	done    bool // the stream was read to its end
	used    bool
	end     stream.Timestamp
	seen    bool // a data record was read (end is its time)
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

// NewStreamedLate summarises the records of it, a stream without a
// METADATA frame, whose metadata before its first data record is head:
// the metadata that comes later is read as it comes (a descriptor comes
// before the first result that needs it, docs/stream.md), and the output,
// printed once the stream is read, is made from the whole of it.
func NewStreamedLate(head *format.Metadata, it stream.Iterator) *Streamed {
	s := &Streamed{meta: head, it: it, late: true, descs: &lateDescs{}}
	for _, d := range head.Descs {
		s.descs.add(d)
	}
	return s
}

// lateDescs are the descriptors of a late stream so far, the first of
// each PMID (pmLookupDesc's), safe to read while the reading goroutine
// adds more (parallel.go's workers look up metrics as they first see
// them).
type lateDescs struct{ m sync.Map }

func (l *lateDescs) add(d *stream.Desc) { l.m.LoadOrStore(d.PMID, d) }

// Desc implements descSource.
func (l *lateDescs) Desc(p stream.PMID) (*stream.Desc, bool) {
	v, ok := l.m.Load(p)
	if !ok {
		return nil, false
	}
	return v.(*stream.Desc), true
}

// descSource is where accumulators find descriptors: the late stream's
// own, or nil for the whole metadata's.
func (s *Streamed) descSource() descSource {
	if s.late {
		return s.descs
	}
	return nil
}

// wholeMeta reads a late stream to its end and returns its whole
// metadata (what its head held and every metadata record after it); the
// metadata given up front otherwise.
func (s *Streamed) wholeMeta() (*format.Metadata, error) {
	if !s.late {
		return s.meta, nil
	}
	for !s.done && s.it.Next() {
		s.keep(s.it.At())
	}
	if err := s.it.Err(); err != nil {
		return nil, err
	}
	s.done = true
	// (the stream gives its head again, so metaRec holds it too)
	return format.MetadataOf(s.meta.Label, s.metaRec)
}

// keep takes a late stream's metadata record as it passes.
func (s *Streamed) keep(r stream.Record) {
	switch r := r.(type) {
	case *stream.Desc:
		d := stream.CloneRecord(r).(*stream.Desc)
		s.descs.add(d)
		s.metaRec = append(s.metaRec, d)
	case *stream.InDom, *stream.LabelSet, *stream.Text:
		s.metaRec = append(s.metaRec, stream.CloneRecord(r))
	}
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
		case *stream.Desc, *stream.InDom, *stream.LabelSet, *stream.Text:
			if it.s.late {
				it.s.keep(r)
			}
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

// Unwrap lets stream.As find the stream reader's capabilities (where it
// read the current record: stream.Locator).
func (it *streamedIter) Unwrap() stream.Iterator {
	if it.s == nil {
		return nil
	}
	return it.s.it
}

// CanStreamLate reports whether a stream without a METADATA frame, whose
// metadata before its first data record is head, can be summarised as it
// arrives (NewStreamedLate): not when head says it is a reduced archive,
// whose aggregates are matched with their metrics before any record is
// read.
func CanStreamLate(head *format.Metadata) bool {
	_, reduced := reduceLabel(head)
	return !reduced
}
