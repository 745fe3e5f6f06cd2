// Package toolio is the plumbing every command shares: where records come
// from (archives named on the command line, or the pipe stream on standard
// input) and where they go (an archive with -o, or the pipe stream on
// standard output), with the same errors and hints in every tool.
package toolio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scratch"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// Input is an opened set of inputs.
type Input struct {
	// Archives are the archives named on the command line, sorted by the
	// start time of their labels; empty when reading standard input.
	Archives []*format.Archive
	// Names are the names the archives were given by, in the same order.
	Names []string
	// Iter yields the records of all inputs: archives concatenated in time
	// order, or the stream read from standard input.
	Iter    stream.Iterator
	closers []io.Closer
}

// Close releases the inputs.
func (in *Input) Close() error {
	var first error
	for _, c := range in.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ErrNoInput is returned when no archive is named and standard input is a
// terminal.
var ErrNoInput = errors.New("no input: name one or more archives, or pipe a stream from another pcp* tool into standard input")

// ErrEmptyStdin is returned when no archive is named and standard input
// ends before it starts.
var ErrEmptyStdin = errors.New("standard input: empty, expected a stream from another pcp* tool")

// OpenArchives opens archives by name, sorted by label start time.
func OpenArchives(names []string, warn func(error)) ([]*format.Archive, []string, error) {
	type named struct {
		a    *format.Archive
		name string
	}
	var as []named
	var seen []*format.Archive
	for _, n := range names {
		a, err := format.Open(n, format.WithWarn(warn))
		if err != nil {
			return nil, nil, err
		}
		if i := Repeated(seen, a); i >= 0 {
			WarnRepeat(warn, n, as[i].a, as[i].name, a)
			continue
		}
		seen = append(seen, a)
		as = append(as, named{a, n})
	}
	sort.SliceStable(as, func(i, j int) bool {
		return as[i].a.Label().Start.Before(as[j].a.Label().Start)
	})
	archives := make([]*format.Archive, len(as))
	sorted := make([]string, len(as))
	for i, x := range as {
		archives[i], sorted[i] = x.a, x.name
	}
	return archives, sorted, nil
}

// Repeated returns the index in seen of an archive that is a on disk,
// or -1. Archives named twice (`20261122.*` names one archive by each of
// its files) are read once: pmlogextract merges such an archive with
// itself and triples the data without a word.
func Repeated(seen []*format.Archive, a *format.Archive) int {
	for i, s := range seen {
		if s.SameAs(a) {
			return i
		}
	}
	return -1
}

// WarnRepeat says that name, opened as a, repeats the archive first
// opened as firstName. Two files of one archive (the shell's `20261122.*`)
// are repeats that need no word; another path to the same files (a link,
// a second directory name) might be a mistake, so it is said.
func WarnRepeat(warn func(error), name string, first *format.Archive, firstName string, a *format.Archive) {
	if warn != nil && filepath.Clean(first.Base()) != filepath.Clean(a.Base()) {
		warn(fmt.Errorf("%s: the same archive as %s: read once", name, firstName))
	}
}

// OpenInputs opens the archives named, or, with no names, the stream on
// stdin. Several archives are concatenated in time order (stream.Concat).
// opts apply to each archive's Records.
func OpenInputs(names []string, stdin *os.File, warn func(error), opts ...format.RecordsOption) (*Input, error) {
	in := &Input{}
	if len(names) == 0 {
		if stdin == nil || pipe.IsTerminal(stdin) {
			return nil, ErrNoInput
		}
		growPipe(stdin)
		br := bufio.NewReaderSize(stdin, 1<<20)
		peek, _ := br.Peek(16)
		if !pipe.IsPipeStream(peek) {
			if len(peek) == 0 {
				return nil, ErrEmptyStdin
			}
			return nil, fmt.Errorf("standard input: %s", pipe.NotAStream(peek))
		}
		// Streams that follow one another ((pcpcat A; pcpcat B) | ...)
		// are joined as archives named together are.
		in.Iter = pipe.Concatenated(br, "standard input")
		return in, nil
	}
	archives, sorted, err := OpenArchives(names, warn)
	if err != nil {
		return nil, err
	}
	in.Archives, in.Names = archives, sorted
	its := make([]stream.Iterator, len(archives))
	for i, a := range archives {
		rit := a.Records(opts...)
		its[i] = rit
		in.closers = append(in.closers, rit)
	}
	if len(its) == 1 {
		// One archive: its reader has the whole metadata, which a stream
		// sends up front (Copy) for consumers that need it all first.
		in.Iter = &archiveIter{Iterator: its[0], a: archives[0]}
	} else {
		in.Iter = &concatIter{Iterator: stream.Concat(sorted, its...), archives: archives, names: sorted, opts: opts}
	}
	return in, nil
}

// archiveIter is the records of one archive, with its whole metadata.
type archiveIter struct {
	stream.Iterator
	a *format.Archive
}

func (it *archiveIter) Unwrap() stream.Iterator { return it.Iterator }

// RawRecord implements format.RawSource: the archive's reader's answer.
func (it *archiveIter) RawRecord(rec stream.Record) (format.RawRecord, bool) {
	if rs, ok := it.Iterator.(format.RawSource); ok {
		return rs.RawRecord(rec)
	}
	return format.RawRecord{}, false
}

// Metadata implements pipe.MetadataSource: the .meta file's records in
// file order (the order pmlogextract reads them in). Damage in the .meta
// file gives none: the records then stop at it with its error.
func (it *archiveIter) Metadata() ([]stream.Record, bool) {
	mit := it.a.Records(format.MetaOnly())
	defer mit.Close()
	var recs []stream.Record
	for mit.Next() {
		if _, ok := mit.At().(*stream.Label); !ok {
			recs = append(recs, stream.CloneRecord(mit.At()))
		}
	}
	return recs, mit.Err() == nil
}

// concatIter is the records of several archives of one host joined in
// time order (stream.Concat), with the whole metadata of the join.
type concatIter struct {
	stream.Iterator
	archives []*format.Archive
	names    []string
	opts     []format.RecordsOption // the archives' readers'
}

// RawRecord implements format.RawSource: the answer of the reader whose
// record rec is (the join passes results on as their readers gave them).
func (it *concatIter) RawRecord(rec stream.Record) (format.RawRecord, bool) {
	src, _ := it.Iterator.(interface{ Source() stream.Iterator })
	if src == nil {
		return format.RawRecord{}, false
	}
	if rs, ok := src.Source().(format.RawSource); ok {
		return rs.RawRecord(rec)
	}
	return format.RawRecord{}, false
}

// Metadata implements pipe.MetadataSource: the metadata records the join
// hands out, in its order, found by joining the archives' metadata alone
// under the same rules: each archive's .meta records in file order, less
// what an earlier archive already gave. Where a record falls against an
// archive's data matters (an instance domain that has not changed is
// dropped only before the archive's first data record), so each archive's
// first data record is read, and stands in for its data. Where the join
// would fail (another host, a descriptor that changes) there is none, and
// the records stop with the join's error. pcpcat A B | pcprewrite then
// plans on it rather than spill the stream.
func (it *concatIter) Metadata() ([]stream.Record, bool) {
	its := make([]stream.Iterator, len(it.archives))
	for i, a := range it.archives {
		first, err := firstData(a, it.opts)
		if err != nil {
			return nil, false
		}
		m := a.Records(format.MetaOnly())
		defer m.Close()
		its[i] = &dataAt{Iterator: m, first: first}
	}
	j := stream.Concat(it.names, its...)
	var recs []stream.Record
	for j.Next() {
		switch j.At().(type) {
		case *stream.Label, *stream.Mark:
			continue
		}
		recs = append(recs, stream.CloneRecord(j.At()))
	}
	return recs, j.Err() == nil
}

// firstData returns the first data record of a, read as the join reads
// it (a <mark> stands for it), or nil when a has none.
func firstData(a *format.Archive, opts []format.RecordsOption) (stream.Record, error) {
	d := a.Records(append(opts[:len(opts):len(opts)], format.DataOnly())...)
	defer d.Close()
	for d.Next() {
		switch r := d.At().(type) {
		case *stream.Result, *stream.Mark:
			return &stream.Mark{T: r.Time()}, nil
		}
	}
	return nil, d.Err()
}

// dataAt is an archive's metadata with its first data record (first) where
// the archive's reader places it: before the first instance domain or
// label set stamped later (descriptors and texts go out as soon as they
// are read, the others wait for the data before them).
type dataAt struct {
	stream.Iterator
	first   stream.Record // nil once placed, or when there is no data
	pending stream.Record // the metadata record held back behind first
	cur     stream.Record
}

func (d *dataAt) At() stream.Record { return d.cur }

func (d *dataAt) Next() bool {
	if d.pending != nil {
		d.cur, d.pending = d.pending, nil
		return true
	}
	if !d.Iterator.Next() {
		if d.first != nil && d.Iterator.Err() == nil {
			d.cur, d.first = d.first, nil
			return true
		}
		return false
	}
	d.cur = d.Iterator.At()
	switch d.cur.(type) {
	case *stream.InDom, *stream.LabelSet:
		if d.first != nil && d.cur.Time().After(d.first.Time()) {
			d.pending, d.cur, d.first = d.cur, d.first, nil
		}
	}
	return true
}

// Sink is where records go.
type Sink interface {
	Write(rec stream.Record) error
	// Close completes the output.
	Close() error
	// Abort discards a partial output after err (an archive's temporary
	// files are removed; a stream gets an error frame, so the next tool in
	// the pipe fails with the same message).
	Abort(err error)
}

// ErrTerminal is returned when the binary stream would go to a terminal.
var ErrTerminal = errors.New("refusing to write the binary record stream to a terminal: pipe it into another pcp* tool (pcpcat shows it: pcpcat -m, --json, --csv), or write an archive with -o PREFIX")

// OpenOutput returns a Sink writing an archive at prefix, or the stream on
// stdout when prefix is empty.
func OpenOutput(prefix string, opts format.WriterOptions, stdout io.Writer) (Sink, error) {
	if prefix != "" {
		w, err := format.Create(prefix, opts)
		if err != nil {
			return nil, err
		}
		return archiveSink{w}, nil
	}
	f, ok := stdout.(*os.File)
	if stdout == nil || ok && pipe.IsTerminal(f) {
		return nil, ErrTerminal
	}
	if ok {
		growPipe(f)
	}
	return &pipeSink{w: pipe.NewWriter(stdout)}, nil
}

type archiveSink struct{ w *format.Writer }

func (s archiveSink) Write(rec stream.Record) error { return s.w.Write(rec) }
func (s archiveSink) Close() error                  { return s.w.Close() }
func (s archiveSink) Abort(error)                   { s.w.Abort() }

// ResultSpace is format.Writer.ResultSpace.
func (s archiveSink) ResultSpace(size int) []byte { return s.w.ResultSpace(size) }

type pipeSink struct{ w *pipe.Writer }

func (s *pipeSink) Write(rec stream.Record) error { return s.w.Write(rec) }
func (s *pipeSink) Close() error                  { return s.w.Close() }
func (s *pipeSink) Abort(err error)               { _ = s.w.Fail(err) }

// Flush sends what is buffered, for a producer whose records come over
// time (a recorder): the next tool sees each as it is made.
func (s *pipeSink) Flush() error { return s.w.Flush() }

// Copy writes every record of it to sink and completes it; on any error
// the sink is aborted and the error returned. A result whose metric has no
// descriptor before it is such an error (stream.Described).
//
// When it is an archive's reader, or a stream that came with a METADATA
// frame, and sink is a stream, the metadata goes first in a METADATA
// frame, so that the consumer need not spill the stream. Only it itself is
// asked, never an iterator under it: a stage that filters records must not
// pass on metadata it may have dropped.
func Copy(it stream.Iterator, sink Sink) error {
	return CopyShowing(it, sink, nil)
}

// ErrNoData is Copy's error when what it copied to an archive held no
// data record (no result, no <mark>): PCP cannot open such an archive
// ("Empty archive log file"), so none is written, as pmlogextract and
// pmlogrewrite write none.
var ErrNoData = errors.New("no data records: nothing written")

// CopyShowing is Copy, counting each record in pr (nil: none).
func CopyShowing(it stream.Iterator, sink Sink, pr *Progress) (err error) {
	defer func() { pr.Done(err == nil) }()
	defer AbortOnPanic(sink)
	ms, _ := it.(pipe.MetadataSource)
	ps, _ := sink.(*pipeSink)
	if ps == nil {
		ms = nil
	}
	rs, _ := it.(format.RawSource)
	it = stream.Described(it)
	data := false
	for it.Next() {
		if ms != nil {
			if recs, ok := ms.Metadata(); ok {
				if err := ps.w.WriteMetadata(recs); err != nil {
					sink.Abort(err)
					return err
				}
			}
			ms = nil
		}
		rec := it.At()
		pr.Record(rec)
		if !data {
			k := rec.Kind()
			data = k == stream.KindResult || k == stream.KindMark
		}
		if err := WriteFrom(sink, rs, rec); err != nil {
			sink.Abort(err)
			return err
		}
	}
	if err := it.Err(); err != nil {
		sink.Abort(err)
		return err
	}
	if _, toArchive := sink.(archiveSink); toArchive && !data {
		sink.Abort(ErrNoData)
		return ErrNoData
	}
	if err := sink.Close(); err != nil {
		sink.Abort(err)
		return err
	}
	return nil
}

// WriteFrom writes rec, which src (nil: none) gave, to sink: a result
// going to an archive as it lies in its input's plain volume is copied
// there by the kernel (format.RawSource, format.Writer.WriteRaw), and a
// large one going into a pipe is spliced into it from that volume
// (pipe.Writer.WriteRaw).
func WriteFrom(sink Sink, src format.RawSource, rec stream.Record) error {
	if src == nil {
		return sink.Write(rec)
	}
	switch s := sink.(type) {
	case archiveSink:
		if raw, ok := src.RawRecord(rec); ok {
			return s.w.WriteRaw(rec, raw)
		}
	case *pipeSink:
		if r, isResult := rec.(*stream.Result); isResult {
			if raw, ok := src.RawRecord(rec); ok {
				return s.w.WriteRaw(r, raw)
			}
		}
	}
	return sink.Write(rec)
}

// AbortOnPanic, deferred by whoever writes to sink, discards the partial
// output when a panic (an input cut short under its mapping, say; see
// GuardFaults) passes through, and lets the panic go on to CatchPanic.
func AbortOnPanic(sink Sink) {
	if r := recover(); r != nil {
		sink.Abort(fmt.Errorf("%v", r))
		panic(r)
	}
}

// Spill writes the records of the inputs (archives named, or the stream
// on stdin when names is empty) to a new archive under dir, called name,
// and opens it: for tools that need an archive's whole metadata before its
// first record (dump views, rewrite plans) when the input is a stream.
// The caller removes dir.
func Spill(names []string, stdin *os.File, dir, name string, opts format.WriterOptions, warn func(error)) (*format.Archive, error) {
	in, err := OpenInputs(names, stdin, warn)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return SpillIter(in.Iter, dir, name, opts, warn)
}

// SpillIter is Spill of the records of it.
func SpillIter(it stream.Iterator, dir, name string, opts format.WriterOptions, warn func(error)) (*format.Archive, error) {
	base := filepath.Join(dir, name)
	opts.Warn = warn
	opts.NoSync = true // scratch: the caller removes it, a crash loses nothing
	sink, err := OpenOutput(base, opts, nil)
	if err != nil {
		return nil, err
	}
	if err := Copy(it, sink); err != nil {
		return nil, err
	}
	return format.Open(base, format.WithWarn(warn))
}

// ArchiveSink is the Sink of an archive writer a tool opened itself (to
// set options OpenOutput does not know, such as a RecordHook).
func ArchiveSink(w *format.Writer) Sink { return archiveSink{w} }

// WholeStream reads the head of a stream input (in from OpenInputs with no
// names) for a tool that needs the whole metadata before the first record
// (pcprewrite's rules; dump views, pcpreduce and pcpsummary could too):
// when the producer sent a METADATA frame (docs/stream.md), it returns that
// metadata as format.Archive.Meta would give it and the stream's records,
// label first, checked against it as they come (pipe.Announced); nothing is
// spilled. ok is false when the stream has none (the records are then it,
// for the caller to spill with SpillIter). An empty stream is an error.
func WholeStream(in *Input) (meta *format.Metadata, it stream.Iterator, ok bool, err error) {
	meta, recs, it, ok, err := frameOf(in)
	if ok {
		it = pipe.Announced(it, recs)
	}
	return meta, it, ok, err
}

// frameOf is WholeStream without the check of the records against the
// frame (pipe.Announced): it also returns the frame's records.
func frameOf(in *Input) (meta *format.Metadata, recs []stream.Record, it stream.Iterator, ok bool, err error) {
	it = in.Iter
	if !it.Next() {
		if err := it.Err(); err != nil {
			return nil, nil, nil, false, err
		}
		return nil, nil, nil, false, errors.New("standard input: the stream holds no records")
	}
	first := stream.CloneRecord(it.At())
	it = stream.Prepend(first, it)
	lab, isLabel := first.(*stream.Label)
	ms, has := in.Iter.(pipe.MetadataSource)
	if !isLabel || !has {
		return nil, nil, it, false, nil
	}
	recs, has = ms.Metadata()
	if !has {
		return nil, nil, it, false, nil
	}
	if meta, err = format.MetadataOf(*lab, recs); err != nil {
		return nil, nil, nil, false, fmt.Errorf("the stream's METADATA frame: %v", err)
	}
	return meta, recs, it, true, nil
}

// Stdin is the record stream on standard input, as a tool that reads it
// whole takes it: as it arrives (Meta and Iter set) when it came with its
// whole metadata and the tool can read it so, or spilled to a scratch
// archive first (Spilled set). Close removes the scratch archive.
type Stdin struct {
	Meta *format.Metadata
	// Head, with OpenStdinLate: the metadata before the first data
	// record of a stream that carries the rest as it goes.
	Head    *format.Metadata
	Iter    stream.Iterator
	Spilled *format.Archive
	in      *Input
	dir     string
}

// OpenStdin reads the head of the stream on stdin (WholeStream) and spills
// it to a scratch directory named after prefix unless streamOK and the
// stream carried its metadata.
func OpenStdin(stdin *os.File, prefix string, streamOK bool, warn func(error)) (*Stdin, error) {
	return OpenStdinLate(stdin, prefix, streamOK, nil, warn)
}

// OpenStdinLate is OpenStdin for a tool that can also take a stream's
// metadata as it comes: a stream without a METADATA frame is not spilled
// when late, given the metadata that comes before the first data record
// (the head), says it can do without the rest up front. The Stdin then
// has Head and Iter set: Iter gives the whole stream again from its label,
// and the rest of the metadata comes in it, before the data that needs
// it (docs/stream.md). A nil late takes no such stream as it comes.
func OpenStdinLate(stdin *os.File, prefix string, streamOK bool, late func(head *format.Metadata) bool, warn func(error)) (*Stdin, error) {
	return openStream(nil, stdin, prefix, streamOK, streamOK, late, false, true, warn)
}

// OpenStdinFrameLate is OpenStdinLate for a tool whose reading of the
// metadata as it comes serves a stream with a METADATA frame as well:
// when late takes the frame's metadata, that is the head (Head set, not
// Meta) and the records are not checked against the frame
// (pipe.Announced), so that a stream concatenated after the first may
// bring metadata of its own, as a scratch archive would take it.
func OpenStdinFrameLate(stdin *os.File, prefix string, streamOK bool, late func(head *format.Metadata) bool, warn func(error)) (*Stdin, error) {
	return openStream(nil, stdin, prefix, streamOK, streamOK, late, true, true, warn)
}

// OpenGrowing is OpenStdin for a consumer that files metadata as it
// comes, wherever in the stream it comes (pcpcat's value views), and for
// several archives joined in time (names) as well as for the stream on
// stdin (no names): the records are read as they come when streamOK,
// whether or not a METADATA frame came first, and the metadata of the
// streams joined after the first (Concatenated) is not refused, as it is
// for consumers that plan on the frame (pipe.Announced). Meta is then the
// frame's (a join's: its whole metadata), or else, when late, the
// metadata before the first data record; the rest comes in Iter. Without
// late, a stream without the frame is spilled; so are archives named
// together that have none, which is when their join fails (another host,
// an overlap): the error then comes before any output. frameOK says that
// the consumer can read them as they come when the frame came, though not
// without it (!streamOK: it needs the whole metadata up front); their
// records are then checked against the frame (pipe.Announced), since
// what the consumer printed from it must not be contradicted later.
func OpenGrowing(names []string, stdin *os.File, prefix string, streamOK, frameOK, late bool, warn func(error)) (*Stdin, error) {
	var lateOK func(*format.Metadata) bool
	if late && len(names) == 0 {
		lateOK = func(*format.Metadata) bool { return true }
	}
	s, err := openStream(names, stdin, prefix, streamOK, streamOK || frameOK, lateOK, false, false, warn)
	if s != nil && s.Head != nil {
		s.Meta, s.Head = s.Head, nil
	}
	return s, err
}

// openStream opens the inputs (OpenInputs) and reads them as they come
// when streamOK: with the frame's metadata (Meta), its records checked
// against it when announce; or, when late takes it, with the frame's
// metadata as a head (Head, unchecked: frameLate), or the metadata before
// the first data record of a stream without a frame (Head). With a frame
// and frameOK, but not streamOK, they are read as they come too, their
// records checked against the frame. Else it spills them to a scratch
// archive.
func openStream(names []string, stdin *os.File, prefix string, streamOK, frameOK bool, late func(head *format.Metadata) bool, frameLate, announce bool, warn func(error)) (*Stdin, error) {
	in, err := OpenInputs(names, stdin, warn)
	if err != nil {
		return nil, err
	}
	meta, recs, it, ok, err := frameOf(in)
	if err != nil {
		in.Close()
		return nil, err
	}
	if ok && (streamOK || frameOK) {
		switch {
		case !streamOK:
			it = pipe.Announced(it, recs)
		case frameLate && late != nil && late(meta):
			return &Stdin{Head: meta, Iter: it, in: in}, nil
		case announce:
			it = pipe.Announced(it, recs)
		}
		return &Stdin{Meta: meta, Iter: it, in: in}, nil
	}
	if !ok && streamOK && late != nil {
		head, recs, err := readHead(it)
		if err != nil {
			in.Close()
			return nil, err
		}
		it = stream.PrependAll(recs, it)
		if head != nil && late(head) {
			return &Stdin{Head: head, Iter: it, in: in}, nil
		}
	}
	defer in.Close()
	dir, err := scratch.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	a, err := SpillIter(it, dir, "input", format.WriterOptions{}, warn)
	if err != nil {
		scratch.RemoveAll(dir)
		return nil, err
	}
	return &Stdin{Spilled: a, dir: dir}, nil
}

// readHead reads a stream's records up to its first data record (which it
// leaves unread) and returns copies of them, and the metadata they hold
// (nil when the stream does not start with a label).
func readHead(it stream.Iterator) (*format.Metadata, []stream.Record, error) {
	var recs []stream.Record
	for it.Next() {
		r := it.At()
		switch r.(type) {
		case *stream.Result, *stream.Mark:
			return headMeta(recs), append(recs, stream.CloneRecord(r)), nil
		}
		recs = append(recs, stream.CloneRecord(r))
	}
	return headMeta(recs), recs, it.Err()
}

func headMeta(recs []stream.Record) *format.Metadata {
	if len(recs) == 0 {
		return nil
	}
	lab, ok := recs[0].(*stream.Label)
	if !ok {
		return nil
	}
	for _, r := range recs[1:] {
		if _, ok := r.(*stream.Label); ok {
			return nil // (a second archive's label before any data)
		}
	}
	md, err := format.MetadataOf(*lab, recs[1:])
	if err != nil {
		return nil
	}
	return md
}

// Close closes the stream, or removes the scratch archive.
func (s *Stdin) Close() error {
	if s.in != nil {
		return s.in.Close()
	}
	return scratch.RemoveAll(s.dir)
}

// IndexWarning reports whether a reader's warning is about an archive's
// temporal index only (PCP's tools that read archives sequentially say
// nothing of one, and under their names neither do ours).
func IndexWarning(err error) bool {
	if strings.HasPrefix(err.Error(), "index ") {
		return true
	}
	var fe *format.FormatError
	return errors.As(err, &fe) && strings.Contains(filepath.Base(fe.File), ".index")
}
