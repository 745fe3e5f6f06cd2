package dump

import (
	"errors"
	"io"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/stream"
)

// JSONStream is JSON of a record stream read as it arrives: it prints
// what JSON prints of the archive the stream would make. meta is the
// metadata the stream gave before its first data record (its METADATA
// frame, or the records before it); the rest comes in it, and is filed
// as it comes (grow). it is the whole stream from its first label. The
// options must be ExportStreamable: the stream has no end to give before
// it is over, and names can be looked up only in the whole metadata.
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
// stream as it arrives (DumpStream): the values view alone (-m, with its
// time formats and zones), which needs the metadata only as each value
// comes. The views that list the metadata (-d -e -h -i -I) print it
// before the first value, whole (alone, they are MetaStreamable: printed
// once the stream is over); -l, -L, -t, -s and -r need what only a
// whole archive has (its end, its index, its record sizes); a window
// counted back from the end needs the end; and metric names select what
// the whole namespace holds under them, in its order.
func Streamable(opts Options) bool {
	o := opts.normalize()
	return o.Values && !o.Descs && !o.LabelSets && !o.HelpText && !o.InDoms && !o.DiskInDoms &&
		!o.Label && !o.Index && !o.Sizes && !o.Reverse && !o.TracePDU && o.TraceLog == nil &&
		len(o.Metrics) == 0 && !pcptime.NeedsEnd(o.Start, o.Finish)
}

// FrameStreamable reports whether Dump's views in opts can be printed from
// a stream as it arrives when the stream came with its whole metadata up
// front (its METADATA frame, docs/stream.md): then the views that list the
// metadata can print it before the first value, and metric names select
// from the whole namespace, as of an archive. What only a whole archive
// has still needs one: -l (its end), -L, -t, -s and -r, and a window
// counted back from the end.
func FrameStreamable(opts Options) bool {
	o := opts.normalize()
	return !o.Label && !o.Index && !o.Sizes && !o.Reverse && !o.TracePDU && o.TraceLog == nil &&
		!pcptime.NeedsEnd(o.Start, o.Finish)
}

// ExportStreamable is Streamable for JSON and CSV: a window that needs no
// end, and no metric names.
func ExportStreamable(opts Options) bool {
	return ExportFrameStreamable(opts) && len(opts.Metrics) == 0
}

// ExportFrameStreamable is ExportStreamable of a stream that came with its
// METADATA frame: metric names select from the frame's whole namespace.
func ExportFrameStreamable(opts Options) bool {
	return !opts.Reverse && !pcptime.NeedsEnd(opts.Start, opts.Finish)
}

// isStream reports whether a is a stream read as it arrives.
func isStream(a archive) bool {
	_, ok := a.(*streamSource)
	return ok
}

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

// Unwrap: the stream's own iterator, where its position is found.
func (o *oneLabel) Unwrap() stream.Iterator { return o.it }

func (o *oneLabel) At() stream.Record { return o.it.At() }
func (o *oneLabel) Err() error        { return o.it.Err() }
func (o *oneLabel) Close() error      { return nil }

// errIter is an iterator that fails at once.
type errIter struct{ err error }

func (e *errIter) Next() bool        { return false }
func (e *errIter) At() stream.Record { return nil }
func (e *errIter) Err() error        { return e.err }
func (e *errIter) Close() error      { return nil }

// MetaStreamable reports whether opts asks only for the label and the
// views that list the metadata (-l -L -d -e -h -i -I), which
// DumpStreamMeta prints of a stream once it has read it all: no values,
// nothing only an archive's files have (-t, -s), no -r, no metric names,
// no window counted from the end.
func MetaStreamable(opts Options) bool {
	o := opts.normalize()
	return !o.Values && (o.Label || o.Descs || o.LabelSets || o.HelpText || o.InDoms || o.DiskInDoms) &&
		!o.Index && !o.Sizes && !o.Reverse && !o.TracePDU && o.TraceLog == nil &&
		len(o.Metrics) == 0 && !pcptime.NeedsEnd(o.Start, o.Finish)
}

// DumpStreamMeta prints the label and metadata views of opts
// (MetaStreamable) of a stream: it reads the whole stream, keeping its
// first label, its metadata records in the order they come, as the
// archive the stream would make holds them, and the time of its last
// result or <mark> (the end -l prints, as libpcp finds it in that
// archive), and then prints them as Dump prints that archive's. Only the
// metadata is kept, never the results, and nothing is spilled to disk.
// The stream is read to its END, so damage anywhere in it fails the dump,
// as it fails any reader of the stream.
func DumpStreamMeta(w io.Writer, it stream.Iterator, opts Options) error {
	var lab *stream.Label
	var recs []stream.Record
	var src metaSource
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Label:
			if lab == nil {
				lab = stream.CloneRecord(r).(*stream.Label)
			}
		case *stream.Desc, *stream.InDom, *stream.LabelSet, *stream.Text:
			recs = append(recs, stream.CloneRecord(r))
		case *stream.Result, *stream.Mark:
			src.last, src.hasEnd = r.Time(), true
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if lab == nil {
		return errors.New("the stream holds no archive label")
	}
	md, err := format.MetadataOf(*lab, recs)
	if err != nil {
		return err
	}
	src.md = md
	return dumpArchive(w, src, opts)
}

// metaSource is an archive of which only the metadata, and the time of
// its last data record, are known.
type metaSource struct {
	md     *format.Metadata
	last   stream.Timestamp
	hasEnd bool
}

func (s metaSource) label() stream.Label                             { return s.md.Label }
func (s metaSource) meta() (*format.Metadata, error)                 { return s.md, nil }
func (s metaSource) index() ([]format.IndexEntry, error)             { return nil, nil }
func (s metaSource) fileSize(string) (int64, bool)                   { return 0, false }
func (s metaSource) end() (stream.Timestamp, bool, error)            { return s.last, s.hasEnd, nil }
func (s metaSource) records(*stream.Timestamp) stream.CloserIterator { return &errIter{} }
