package dump

import (
	"errors"
	"io"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// JSONStream is JSON of a record stream that came with its whole metadata
// up front (meta: a METADATA frame's, docs/stream.md), read as it
// arrives: it prints what JSON prints of the archive the stream would
// make. it is the whole stream from its first label. The window must not
// need the stream's end (ExportStreamable): the stream has none to give
// before it is over, and the window ends only at the end of the stream.
func JSONStream(w io.Writer, meta *format.Metadata, it stream.Iterator, opts Options) error {
	return jsonArchive(w, newStreamSource(meta, it), opts)
}

// CSVStream is CSV of such a stream (see JSONStream).
func CSVStream(w io.Writer, meta *format.Metadata, it stream.Iterator, opts Options) error {
	return csvArchive(w, newStreamSource(meta, it), opts)
}

// DumpStream is Dump of such a stream, for the views Streamable allows.
func DumpStream(w io.Writer, meta *format.Metadata, it stream.Iterator, opts Options) error {
	return dumpArchive(w, newStreamSource(meta, it), opts)
}

// Streamable reports whether Dump's views in opts can be printed from a
// stream as it arrives (DumpStream), given its metadata up front: all but
// those that need what only a whole archive has: the label (-l, -L,
// which print its end), the temporal index (-t), record sizes (-s), -r,
// a window counted back from the end, and libpcp's traces.
func Streamable(opts Options) bool {
	o := opts.normalize()
	return !o.Label && !o.Index && !o.Sizes && !o.Reverse && !o.TracePDU && o.TraceLog == nil &&
		!pcptime.NeedsEnd(o.Start, o.Finish)
}

// ExportStreamable is Streamable for JSON, CSV and SourceSamples: a
// window that needs no end.
func ExportStreamable(opts Options) bool {
	return !opts.Reverse && !pcptime.NeedsEnd(opts.Start, opts.Finish)
}

// Source is what the exporters read values from (SourceSamples): an
// archive, or a record stream that came with its whole metadata, read
// once as it arrives (see JSONStream for what such a stream allows).
type Source struct {
	src  archive
	name string
}

// ArchiveSource is the Source of an archive.
func ArchiveSource(a *format.Archive) Source {
	return Source{src: newArchiveSource(a), name: a.Base()}
}

// StreamSource is the Source of a stream and its metadata, called name in
// messages; it can be read only once.
func StreamSource(name string, meta *format.Metadata, it stream.Iterator) Source {
	return Source{src: newStreamSource(meta, it), name: name}
}

// Label is the archive's label (the stream's first).
func (s Source) Label() stream.Label { return s.src.label() }

// Meta is the archive's metadata.
func (s Source) Meta() (*format.Metadata, error) { return s.src.meta() }

// Name is the archive's base name, or the stream's name.
func (s Source) Name() string { return s.name }

// streamSource adapts a stream with its metadata to what JSON, CSV and
// the Streamable views need: the label and the metadata up front, the
// records once, no index, no end and no files.
type streamSource struct {
	md   *format.Metadata
	it   stream.Iterator
	used bool
}

func newStreamSource(md *format.Metadata, it stream.Iterator) *streamSource {
	return &streamSource{md: md, it: it}
}

func (s *streamSource) label() stream.Label                 { return s.md.Label }
func (s *streamSource) meta() (*format.Metadata, error)     { return s.md, nil }
func (s *streamSource) index() ([]format.IndexEntry, error) { return nil, nil }
func (s *streamSource) fileSize(string) (int64, bool)       { return 0, false }

// end: none before the stream is over (the window then ends with it).
func (s *streamSource) end() (stream.Timestamp, bool, error) { return stream.Timestamp{}, false, nil }

// records gives the stream, once, from its first record (the exporter
// skips what comes before the window itself). Labels after the first are
// left out: archives joined in a stream (pcpcat A B), and the volumes of
// one, make one archive, which has one label.
func (s *streamSource) records(*stream.Timestamp) stream.CloserIterator {
	if s.used {
		return &errIter{err: errors.New("a stream can be read only once")}
	}
	s.used = true
	return &oneLabel{it: s.it}
}

// oneLabel passes on the records of it but the labels after the first.
type oneLabel struct {
	it      stream.Iterator
	labeled bool
}

func (o *oneLabel) Next() bool {
	for o.it.Next() {
		if _, ok := o.it.At().(*stream.Label); ok {
			if o.labeled {
				continue
			}
			o.labeled = true
		}
		return true
	}
	return false
}

func (o *oneLabel) At() stream.Record { return o.it.At() }
func (o *oneLabel) Err() error        { return o.it.Err() }
func (o *oneLabel) Close() error      { return nil }

// errIter is an iterator that fails at once.
type errIter struct{ err error }

func (e *errIter) Next() bool        { return false }
func (e *errIter) At() stream.Record { return nil }
func (e *errIter) Err() error        { return e.err }
func (e *errIter) Close() error      { return nil }
