package format

// The archive writer: a stream of records in, the files of a PCP archive
// out.
//
//	stream.Record ──Write──▶ base.meta   metadata, in stream order
//	                        base.N      results and marks, in stream order,
//	                                    a new volume when a limit is reached
//	                        base.index  rebuilt from what was written
//
// Everything is written to hidden temporary files in the destination
// directory (.base.meta.tmpXXXX, ...); Close syncs them and renames them
// into place, Abort removes them. A failed or abandoned write therefore
// never leaves half an archive, and never replaces an existing one.
//
// Pass-through is the common case (pcpcat, pcpextract): a Result whose
// encoding already matches the output version is copied as bytes, with no
// decoding and no allocation, so a copy runs at the speed of the disk.
//
// When the temporal index gets an entry follows pmlogextract and pmlogger
// (PCP 6.0.3): at the first data record of each volume, at a data record
// preceded by instance domain metadata, and when the volume has grown more
// than 100000 bytes since the last entry; never twice for one timestamp;
// and a final entry at the end, pointing at the last record (or at the end
// of the volume when the last record already had its entry). An entry holds
// the record's timestamp, the volume, the .meta offset before the metadata
// that preceded the record, and the volume offset before the record
// (uncompressed, also for .zst volumes). pmlogextract means to skip a
// second entry for one timestamp too, but forgets the last one between
// results, so it can write two (it does on the QA archive pcp-mpstat3).
//
// Version conversion: results are re-based by AppendResult (pointer
// offsets differ between v2 and v3), label sets and instance domains are
// re-encoded, v3 to v2 is refused where v2 cannot hold the data (see
// Writer). v2 instance domains written to a v3 archive become deltas where
// pmlogextract -V 3 makes them deltas (see deltaInDom), with two
// exceptions that keep the archive readable by libpcp (see pendMeta).
//
// Designs rejected:
//   - Writing straight to the final names and deleting them on error: a
//     crash (or kill -9) would leave a half archive that PCP's tools would
//     happily read.
//   - Streaming the .index to disk as entries are made: it is small (one
//     entry per 100 kB of data at most, plus one per indom change), and
//     built in memory its label needs no rewrite when the start changes.
//   - Re-encoding v3 instance domain records with PCP's delta rule: a copy
//     of a v3 archive would then be byte-identical only as long as
//     pmlogger's choices and the rule agree (they do on PCP's QA archives,
//     but nothing forces them to). v3 records pass through as given; only
//     v2 records written to a v3 archive are considered for a delta.
//   - Computing deltas exactly as PCP does: its walk assumes sorted lists,
//     and on the unsorted lists of some v2 archives it writes deltas that
//     crash libpcp when read back (pmlogextract -V 3 on the QA archives
//     mirage-3, pcp-atop-boot, bigace_v2: pmdumplog -a aborts on its output).
//   - Dropping metadata that no result needs, as pmlogextract does: the
//     writer writes the stream it is given; selection is a filter's job.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/internal/scratch"
	"github.com/pcptools/pcptools/stream"
)

const (
	// indexEvery is how far (in bytes) a volume may grow between two
	// index entries, as in pmlogger and pmlogextract.
	indexEvery = 100000
	// maxVolumeV2 is the largest v2 data volume: index offsets are 32-bit.
	maxVolumeV2 = math.MaxInt32
	// writeBuffer is the size of each output file's buffer.
	writeBuffer = 64 << 10
)

// Writer writes a stream of records as a PCP archive. Create one with
// Create, Write the records (the first must be a *stream.Label), then
// Close to finish the archive, or Abort to throw it away.
//
// Output version 3 to version 2 conversion: the label's features must be
// zero, the hostname at most 63 bytes, the timezone at most 39 bytes, every
// timestamp's seconds must fit 32 bits; delta instance domains are written
// as full records. Otherwise Write fails with an error saying what does
// not fit. The zoneinfo is dropped (v2 has no place for it) and timestamps
// are truncated to microseconds, v2's resolution.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	base string // the archive's path without suffix
	dir  string
	name string // filepath.Base(base)
	opts WriterOptions
	hook fileHook

	raw    RawRecord // WriteRaw's record, while rawSet
	rawSet bool

	version int
	// rollPending: the input started a new volume (KeepVolumes).
	rollPending bool
	started     bool
	host        string       // hostname of the first label, to check later ones
	label       stream.Label // written to every file (Vol set per file)
	labelT0     stream.Timestamp
	volLimit    int64

	meta  *outFile
	vol   *outFile   // current data volume, nil before the first data record
	files []*outFile // every file created, in creation order
	nvol  int32      // number of the current volume

	// Temporal index state.
	index      []IndexEntry
	metaMark   int64 // .meta size after the previous data record
	indomSince bool  // an indom record was written since the last data record
	flushAt    int64 // an entry is due when the volume grows past this
	lastIdxT   stream.Timestamp
	haveIdx    bool
	volRecs    int // data records in the current volume
	ndata      int64
	nmeta      int64            // metadata records written (RecordHook)
	lastT      stream.Timestamp // of the last data record
	lastOff    int64            // volume offset before the last data record
	lastIdxed  bool             // the last data record got an index entry

	indoms   *stream.InDomTracker
	indomT   map[stream.InDomID]stream.Timestamp // time of each domain's last record
	deltaAt  map[stream.InDomID]stream.Timestamp // time of each domain's last delta
	pending  []pendMeta                          // see pendMeta
	pendT    stream.Timestamp                    // latest time of a pending delta
	scratch  []byte
	hdr      [32]byte
	warnedNs bool

	err    error // sticky: the first failure
	closed bool
	done   bool // renamed into place: Abort must not touch anything
}

// fileHook lets tests put a writer (a full disk, say) between the buffer
// and the file.
type fileHook func(final string, w io.Writer) io.Writer

// outFile is one output file: a temporary in the destination directory,
// buffered, with a count of the (uncompressed) bytes written.
type outFile struct {
	final  string
	tmp    string
	f      *os.File
	z      io.WriteCloser // nil unless the file is compressed
	bw     *bufio.Writer  // nil when aw is used
	aw     *asyncWriter   // data volumes: see asyncWriter
	off    int64
	open   bool
	noSync bool // see WriterOptions.NoSync
}

// Create starts an archive whose files are base.meta, base.index and
// base.0, base.1, ... (base.N.zst with opts.Zstd, base.N.xz with opts.Xz),
// mode 0644. It fails if
// any file of an archive named base exists, unless opts.Overwrite is set;
// an archive replaced under Overwrite loses all its files (including
// volumes and compressed variants the new archive does not have) when
// Close succeeds, and is untouched until then.
func Create(base string, opts WriterOptions) (*Writer, error) {
	return create(base, opts, nil)
}

func create(base string, opts WriterOptions, hook fileHook) (*Writer, error) {
	if base == "" || strings.HasSuffix(base, string(filepath.Separator)) {
		return nil, fmt.Errorf("archive name %q: need a base name, such as dir/name", base)
	}
	if opts.Version != 0 && opts.Version != 2 && opts.Version != 3 {
		return nil, fmt.Errorf("%s: archive version %d: only 2 and 3 exist", base, opts.Version)
	}
	if opts.VolumeRecords < 0 || opts.VolumeBytes < 0 {
		return nil, fmt.Errorf("%s: negative volume limit", base)
	}
	w := &Writer{
		base:    base,
		dir:     filepath.Dir(base),
		name:    filepath.Base(base),
		opts:    opts,
		hook:    hook,
		indoms:  stream.NewInDomTracker(),
		indomT:  map[stream.InDomID]stream.Timestamp{},
		deltaAt: map[stream.InDomID]stream.Timestamp{},
	}
	if !opts.Overwrite {
		if err := w.checkFree(); err != nil {
			return nil, err
		}
	}
	// The .meta temporary is created now so that an unwritable directory
	// is reported before the caller starts reading its input.
	m, err := w.newFile(base+".meta", "", false)
	if err != nil {
		return nil, err
	}
	w.meta = m
	return w, nil
}

// ArchiveFiles lists the files of the archive at base (a path without
// suffix): base.meta, base.index and base.N, each maybe with a compression
// suffix. Tools that replace or remove an archive use it.
func ArchiveFiles(base string) ([]string, error) {
	return archiveFiles(filepath.Dir(base), filepath.Base(base))
}

// archiveFiles lists the files of dir that belong to an archive called
// name.
func archiveFiles(dir, name string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, name+".") {
			continue
		}
		rest, _ := compress.SplitSuffix(n[len(name)+1:])
		if rest == "meta" || rest == "index" || isDigits(rest) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ExistsError is an output that names an existing archive: Files are its
// files (volumes, .meta, .index, compressed or not).
type ExistsError struct {
	Base  string
	Files []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s: archive exists (%s): remove it first, or replace it with --overwrite", e.Base, strings.Join(e.Files, ", "))
}

// PCPFile is the file libpcp's __pmLogCreate stops at: the first of
// BASE.index, BASE.meta and BASE.0 (the order it creates them in) that
// exists; "" when none does (PCP's tools would then write the archive).
func (e *ExistsError) PCPFile() string {
	for _, suf := range []string{".index", ".meta", ".0"} {
		for _, f := range e.Files {
			if f == e.Base+suf || filepath.Clean(f) == filepath.Clean(e.Base+suf) {
				return e.Base + suf
			}
		}
	}
	return ""
}

func (w *Writer) checkFree() error {
	have, err := archiveFiles(w.dir, w.name)
	if err != nil {
		return fmt.Errorf("%s: %w", w.base, err)
	}
	if len(have) > 0 {
		return &ExistsError{Base: w.base, Files: have}
	}
	return nil
}

// newFile creates an output file; suffix is its compression ("", ".zst"
// or ".xz").
func (w *Writer) newFile(final string, suffix string, async bool) (*outFile, error) {
	f, err := scratch.CreateTemp(w.dir, "."+filepath.Base(final)+".tmp*")
	if err != nil {
		return nil, fileErr(final, "create", err)
	}
	o := &outFile{final: final, tmp: f.Name(), f: f, open: true, noSync: w.opts.NoSync}
	w.files = append(w.files, o)
	var sink io.Writer = &writeback{f: f, off: w.opts.NoSync}
	if w.hook != nil {
		sink = w.hook(final, sink)
	}
	chunk := asyncChunk
	switch suffix {
	case ".zst":
		o.z = compress.NewSeekableWriter(sink)
		sink, chunk = o.z, asyncChunkZ
	case ".xz":
		o.z = compress.NewXZWriter(sink)
		sink, chunk = o.z, asyncChunkZ
	}
	switch {
	case async && suffix == "":
		o.aw = newPlainWriter(sink)
		if wb, ok := sink.(*writeback); ok {
			o.aw.rc = wb // (not under a test's hook)
		}
	case async:
		o.aw = newAsyncWriterSize(sink, chunk)
	default:
		o.bw = bufio.NewWriterSize(sink, writeBuffer)
	}
	return o, nil
}

// fileErr names the file and the operation, and says plainly when the
// disk is full.
func fileErr(file, op string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%s: %s: disk full: %w", file, op, err)
	}
	return fmt.Errorf("%s: %s: %w", file, op, err)
}

func (o *outFile) write(b []byte) error {
	if o.aw != nil {
		n, err := o.aw.Write(b)
		o.off += int64(n)
		if err != nil {
			return fileErr(o.final, "write", err)
		}
		return nil
	}
	n, err := o.bw.Write(b)
	o.off += int64(n)
	if err != nil {
		return fileErr(o.final, "write", err)
	}
	return nil
}

// finish flushes the buffer, ends the compressed stream, syncs and closes
// the file.
func (o *outFile) finish() error {
	if !o.open {
		return nil
	}
	o.open = false
	var err error
	if o.aw != nil {
		err = o.aw.Flush()
		o.aw.stop()
	} else {
		err = o.bw.Flush()
	}
	if err == nil && o.z != nil {
		err = o.z.Close()
	}
	if err != nil {
		o.f.Close()
		return fileErr(o.final, "write", err)
	}
	if err := o.f.Chmod(0o644); err != nil {
		o.f.Close()
		return fileErr(o.final, "chmod", err)
	}
	if !o.noSync {
		if err := o.f.Sync(); err != nil {
			o.f.Close()
			return fileErr(o.final, "sync", err)
		}
	}
	if err := o.f.Close(); err != nil {
		return fileErr(o.final, "close", err)
	}
	return nil
}

// ResultSpace offers a producer that encodes result bodies room to
// encode the next one in place, in the data volume's buffer: an empty
// slice, with room for about size bytes at least, or nil when there is
// none (no volume yet, a failed writer). A result whose body was appended
// to it, and did not outgrow it, is then written by Write without a copy;
// any other body is copied as always. The room is only good until the
// next call to the Writer: the producer asks again for every result.
func (w *Writer) ResultSpace(size int) []byte {
	if w.err != nil || w.closed || w.vol == nil || w.vol.aw == nil {
		return nil
	}
	b := w.vol.aw.space(DataHeaderSize(w.version), 4)
	if cap(b) < size {
		return nil
	}
	return b
}

// Write adds one record to the archive. Metadata goes to .meta, results
// and marks to the current volume, in the order given. After an error the
// Writer is unusable: call Abort (Close also cleans up).
func (w *Writer) Write(rec stream.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("%s: write after Close", w.base)
	}
	if err := w.write(rec); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *Writer) write(rec stream.Record) error {
	if isNil(rec) {
		return fmt.Errorf("%s: nil record", w.base)
	}
	if !w.started {
		l, ok := rec.(*stream.Label)
		if !ok {
			return fmt.Errorf("%s: the first record must be a label, not a %s record", w.base, kindOf(rec))
		}
		return w.start(l)
	}
	if len(w.pending) > 0 {
		switch rec.(type) {
		case *stream.Result, *stream.Mark:
			if err := w.flushPending(); err != nil {
				return err
			}
		default:
			if rec.Time().After(w.pendT) {
				if err := w.flushPending(); err != nil {
					return err
				}
			}
		}
	}
	switch r := rec.(type) {
	case *stream.Result:
		return w.writeData(r.T, r)
	case *stream.Mark:
		return w.writeData(r.T, nil)
	case *stream.InDom:
		return w.writeInDom(r)
	case *stream.Desc, *stream.Text:
		return w.queueMeta(rec)
	case *stream.LabelSet:
		if err := w.fits(r.T, "label set"); err != nil {
			return err
		}
		return w.queueMeta(rec)
	case *stream.Label:
		// A stream that concatenates archives carries one label per
		// archive; they must describe the same host.
		if r.Hostname != w.host {
			return fmt.Errorf("%s: archives of different hosts cannot be written as one: %q, then %q", w.base, w.host, r.Hostname)
		}
		if r.Vol > 0 && w.opts.KeepVolumes {
			w.rollPending = true
		}
		return nil
	}
	return fmt.Errorf("%s: cannot write a %s record", w.base, kindOf(rec))
}

// isNil catches a nil record, also a typed nil pointer in the interface.
func isNil(rec stream.Record) bool {
	switch r := rec.(type) {
	case nil:
		return true
	case *stream.Label:
		return r == nil
	case *stream.Desc:
		return r == nil
	case *stream.InDom:
		return r == nil
	case *stream.LabelSet:
		return r == nil
	case *stream.Text:
		return r == nil
	case *stream.Result:
		return r == nil
	case *stream.Mark:
		return r == nil
	}
	return false
}

func kindOf(rec stream.Record) string {
	if isNil(rec) {
		return "nil"
	}
	return rec.Kind().String()
}

// start takes the archive label from the first record and writes the
// .meta label.
func (w *Writer) start(l *stream.Label) error {
	w.version = w.opts.Version
	if w.version == 0 {
		w.version = l.Version
	}
	if w.version != 2 && w.version != 3 {
		return fmt.Errorf("%s: the input label has version %d; write version 2 or 3", w.base, l.Version)
	}
	w.label = *l
	w.label.Version = w.version
	w.host = l.Hostname
	w.labelT0 = l.Start
	if err := w.checkLabel(); err != nil {
		return err
	}
	if w.version == 2 && l.Zoneinfo != "" {
		w.warn(fmt.Errorf("%s: the zoneinfo %q is dropped: a v2 archive has no place for it", w.base, l.Zoneinfo))
		w.label.Zoneinfo = ""
	}
	w.volLimit = w.opts.VolumeBytes
	switch {
	case w.version == 2 && (w.volLimit == 0 || w.volLimit > maxVolumeV2):
		w.volLimit = maxVolumeV2
	case w.volLimit == 0:
		w.volLimit = math.MaxInt64
	}
	w.started = true
	w.scratch = AppendLabel(w.scratch[:0], &w.label, w.version, -1)
	if err := w.meta.write(w.scratch); err != nil {
		return err
	}
	w.metaMark = w.meta.off
	return nil
}

// checkLabel refuses a label that the output version cannot hold.
func (w *Writer) checkLabel() error {
	l := &w.label
	if w.version == 2 {
		switch {
		case l.Features != 0:
			return fmt.Errorf("%s: the label has feature bits 0x%08x; a v2 archive has none: write v3", w.base, l.Features)
		case len(l.Hostname) > hostLenV2-1:
			return fmt.Errorf("%s: hostname %q is %d bytes; a v2 archive holds at most %d: write v3", w.base, l.Hostname, len(l.Hostname), hostLenV2-1)
		case len(l.Timezone) > tzLenV2-1:
			return fmt.Errorf("%s: timezone %q is %d bytes; a v2 archive holds at most %d: write v3", w.base, l.Timezone, len(l.Timezone), tzLenV2-1)
		}
		return w.fits(l.Start, "label start")
	}
	for _, f := range []struct{ what, s string }{{"hostname", l.Hostname}, {"timezone", l.Timezone}, {"zoneinfo", l.Zoneinfo}} {
		if len(f.s) > strLenV3-1 {
			return fmt.Errorf("%s: %s is %d bytes; an archive label holds at most %d", w.base, f.what, len(f.s), strLenV3-1)
		}
	}
	return nil
}

// fits checks that t can be written in the output version (always true
// for v3); v2 keeps 32-bit seconds and microseconds.
func (w *Writer) fits(t stream.Timestamp, what string) error {
	if w.version != 2 {
		return nil
	}
	if !secFitsV2(t) {
		return fmt.Errorf("%s: %s at %s: the seconds do not fit the 32 bits of a v2 archive: write v3", w.base, what, t)
	}
	if t.Nsec%1000 != 0 && !w.warnedNs {
		w.warnedNs = true
		w.warn(fmt.Errorf("%s: timestamps are truncated to microseconds in a v2 archive (first at %s)", w.base, t))
	}
	return nil
}

func (w *Writer) warn(err error) {
	if w.opts.Warn != nil {
		w.opts.Warn(err)
	}
}

// outT is t as the output stores it: v2 drops the nanoseconds.
func (w *Writer) outT(t stream.Timestamp) stream.Timestamp {
	if w.version == 2 {
		t.Nsec -= t.Nsec % 1000
	}
	return t
}

func (w *Writer) writeMeta(rec stream.Record) error {
	var err error
	w.scratch, err = AppendMeta(w.scratch[:0], rec, w.version)
	if err != nil {
		return fmt.Errorf("%s: %w", w.meta.final, err)
	}
	if w.version == 2 && w.meta.off+int64(len(w.scratch)) > maxVolumeV2 {
		return fmt.Errorf("%s: the metadata would exceed %d bytes, the limit of a v2 archive: write v3", w.meta.final, int64(maxVolumeV2))
	}
	if h := w.opts.RecordHook; h != nil {
		h(true, w.nmeta, 0, w.meta.off)
	}
	w.nmeta++
	return w.meta.write(w.scratch)
}

// writeInDom writes an instance domain record in the output version's
// encoding:
//   - v3 records (full or delta) into a v3 archive: as given;
//   - v2 records into a v3 archive: as a delta against the previous set
//     when pmlogextract would (see deltaInDom) and libpcp can read it back
//     (see pendMeta), else as a full record; a record that repeats the
//     previous one of its domain at the same time is dropped;
//   - any record into a v2 archive: as a full v2 record, deltas resolved.
func (w *Writer) writeInDom(d *stream.InDom) error {
	if err := w.fits(d.T, "instance domain "+d.InDom.String()); err != nil {
		return err
	}
	prev := w.indoms.Current(d.InDom)
	prevT, seen := w.indomT[d.InDom]
	if w.version == 3 && d.Encoding == stream.InDomV2 && prev != nil && prevT == d.T &&
		slices.Equal(prev.Insts, d.Insts) && slices.Equal(prev.Names, d.Names) {
		// Old pmloggers wrote a v2 domain once per metric using it. A v3
		// archive from PCP never repeats a record at the same time, and
		// libpcp drops the repeat on load anyway (after relinking its
		// list, see pendMeta): leave it out.
		return nil
	}
	var delta *stream.InDom
	if w.version == 3 && (d.Encoding == stream.InDomV2 || w.opts.DeltaInDoms && d.Encoding == stream.InDomFull) && prev != nil && prevT.Before(d.T) {
		delta = deltaInDom(prev, d)
	}
	set, err := w.indoms.Apply(d)
	if err != nil {
		return fmt.Errorf("%s: instance domain %s at %s: a delta record with no full record before it", w.meta.final, d.InDom, d.T)
	}
	if dt, ok := w.deltaAt[d.InDom]; ok && seen && prevT == d.T && dt == d.T {
		w.warn(fmt.Errorf("%s: instance domain %s has a delta record and another record at %s: libpcp may misread it", w.meta.final, d.InDom, d.T))
	}
	w.indomT[d.InDom] = d.T
	w.indomSince = true
	rec := d
	if w.version == 2 && d.Encoding == stream.InDomDelta {
		rec = &stream.InDom{T: d.T, InDom: d.InDom, Encoding: stream.InDomV2, Insts: set.Insts, Names: set.Names}
	}
	if delta != nil || len(w.pending) > 0 {
		c := stream.CloneRecord(rec).(*stream.InDom)
		w.pending = append(w.pending, pendMeta{rec: c, delta: delta})
		if delta != nil && delta.T.After(w.pendT) {
			w.pendT = delta.T
		}
		return nil
	}
	return w.writeMeta(rec)
}

// pendMeta is a metadata record held back while a delta decision waits.
//
// libpcp 6.0.3 keeps the records of an instance domain in a list that it
// links both ways, newest first; when it inserts a record at the head of a
// time slot that already holds one (or moves a duplicate there), it leaves
// the backward links wrong, and resolving a delta walks those links: it
// then applies the wrong records, and can crash (pmlogcheck does, on a v3
// copy of the QA archive bigace_v2 made with deltas regardless). So a
// delta must be the only record of its instance domain at its timestamp.
// A record that may become a delta is held back, with every metadata record
// after it (to keep their order), until a data record or a later timestamp
// shows whether another record of the same domain shares its time.
type pendMeta struct {
	rec   stream.Record // a copy, written as it is unless delta is used
	delta *stream.InDom // the delta encoding of rec, if PCP would use one
}

// queueMeta writes rec, or queues it behind a pending delta decision.
func (w *Writer) queueMeta(rec stream.Record) error {
	if len(w.pending) > 0 {
		w.pending = append(w.pending, pendMeta{rec: stream.CloneRecord(rec)})
		return nil
	}
	return w.writeMeta(rec)
}

// flushPending writes the held-back metadata, each candidate as a delta
// unless a later record of its domain has the same timestamp.
func (w *Writer) flushPending() error {
	for i, p := range w.pending {
		rec := p.rec
		if p.delta != nil {
			alone := true
			for _, q := range w.pending[i+1:] {
				if d, ok := q.rec.(*stream.InDom); ok && d.InDom == p.delta.InDom && d.T == p.delta.T {
					alone = false
					break
				}
			}
			if alone {
				rec = p.delta
				w.deltaAt[p.delta.InDom] = p.delta.T
			}
		}
		if err := w.writeMeta(rec); err != nil {
			return err
		}
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	w.pendT = stream.Timestamp{}
	return nil
}

// deltaInDom decides, as PCP 6.0.3's pmaDeltaInDom (reached through
// pmaTryDeltaInDom from pmlogextract and pmlogrewrite; pmlogger in v3 mode
// calls it directly) does, whether next is better written as a delta
// against prev: only when instances were added or deleted, no instance
// kept its number under a new name, and adds plus deletes are no more than
// next's size. It returns the delta record, or nil for a full record.
//
// PCP compares the two lists with a merge walk that assumes both are sorted
// by instance, and lists the delta's entries in the order of that walk.
// libpcp sorts every record it loads, so what a delta means is decided on
// sorted lists; a v2 record need not be sorted, and PCP's walk over
// unsorted lists can find changes that are not there (an instance deleted
// and added again) or miss a match. Both walks are made here: a delta is
// written only when both call for one; in PCP's order when they find the
// same changes (so that the output matches pmlogextract's), else with the
// sorted walk's entries, which are right. Lists with a repeated instance
// number always give a full record.
func deltaInDom(prev *stream.InstanceSet, next *stream.InDom) *stream.InDom {
	if hasRepeats(prev.Insts) || hasRepeats(next.Insts) {
		return nil
	}
	sorted := func(ids []int32, names []string) ([]int32, []string) {
		idx := make([]int, len(ids))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmpInt32(ids[a], ids[b]) })
		si, sn := make([]int32, len(ids)), make([]string, len(ids))
		for k, i := range idx {
			si[k], sn[k] = ids[i], names[i]
		}
		return si, sn
	}
	oi, on := sorted(prev.Insts, prev.Names)
	ni, nn := sorted(next.Insts, next.Names)
	right := pcpDeltaWalk(oi, on, ni, nn)
	if right == nil {
		return nil
	}
	pcp := pcpDeltaWalk(prev.Insts, prev.Names, next.Insts, next.Names)
	if pcp == nil {
		return nil // PCP writes a full record: so do we
	}
	if sameChanges(pcp, right) {
		right = pcp
	}
	d := &stream.InDom{T: next.T, InDom: next.InDom, Encoding: stream.InDomDelta}
	for _, e := range right {
		d.Insts = append(d.Insts, e.inst)
		d.Names = append(d.Names, e.name)
		d.Deleted = append(d.Deleted, e.del)
	}
	return d
}

type deltaEntry struct {
	inst int32
	name string
	del  bool
}

func cmpInt32(a, b int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func hasRepeats(ids []int32) bool {
	seen := make(map[int32]struct{}, len(ids))
	for _, v := range ids {
		if _, ok := seen[v]; ok {
			return true
		}
		seen[v] = struct{}{}
	}
	return false
}

// pcpDeltaWalk is pmaDeltaInDom's algorithm: a first merge walk counts the
// instances deleted from old and added in new (a common instance whose
// name changed means a full record), and a second walk lists them,
// smaller instance first where both lists have one pending. It returns nil
// when PCP would write a full record.
func pcpDeltaWalk(oi []int32, on []string, ni []int32, nn []string) []deltaEntry {
	delOld := make([]bool, len(oi))
	addNew := make([]bool, len(ni))
	n := 0
	for i, j := 0, 0; i < len(oi) || j < len(ni); {
		switch {
		case i < len(oi) && (j == len(ni) || oi[i] < ni[j]):
			delOld[i] = true
			n++
			i++
		case j < len(ni) && (i == len(oi) || oi[i] > ni[j]):
			addNew[j] = true
			n++
			j++
		default:
			if on[i] != nn[j] {
				return nil
			}
			i++
			j++
		}
	}
	if n == 0 || n > len(ni) {
		return nil
	}
	out := make([]deltaEntry, 0, n)
	for i, j := 0, 0; i < len(oi) || j < len(ni); {
		switch {
		case i < len(oi) && j < len(ni):
			switch {
			case !delOld[i]:
				i++
			case !addNew[j]:
				j++
			case oi[i] < ni[j]:
				out = append(out, deltaEntry{inst: oi[i], del: true})
				i++
			default:
				out = append(out, deltaEntry{inst: ni[j], name: nn[j]})
				j++
			}
		case i < len(oi):
			if delOld[i] {
				out = append(out, deltaEntry{inst: oi[i], del: true})
			}
			i++
		default:
			if addNew[j] {
				out = append(out, deltaEntry{inst: ni[j], name: nn[j]})
			}
			j++
		}
	}
	return out
}

// sameChanges reports whether two deltas hold the same entries in any
// order.
func sameChanges(a, b []deltaEntry) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(e deltaEntry) string { return fmt.Sprintf("%d\x00%t\x00%s", e.inst, e.del, e.name) }
	ka := make([]string, len(a))
	kb := make([]string, len(b))
	for i := range a {
		ka[i], kb[i] = key(a[i]), key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// writeData writes a result (r != nil) or a mark, switching volumes and
// making index entries as needed.
func (w *Writer) writeData(t stream.Timestamp, r *stream.Result) error {
	what := "mark"
	size := int64(DataHeaderSize(w.version) + 8)
	if r != nil {
		what = "result"
		if len(r.Body) < 4 {
			return fmt.Errorf("%s: result at %s has a %d-byte body", w.base, t, len(r.Body))
		}
		size = int64(DataHeaderSize(w.version) + len(r.Body) + 4)
		if size > MaxRecord {
			return fmt.Errorf("%s: result at %s is %d bytes, more than an archive record may hold", w.base, t, size)
		}
	}
	if err := w.fits(t, what); err != nil {
		return err
	}
	if w.vol == nil {
		if w.opts.StartAtFirstRecord {
			w.label.Start = t
		}
		if err := w.openVolume(0); err != nil {
			return err
		}
	} else if (w.rollPending && w.volRecs > 0) ||
		(w.opts.VolumeRecords > 0 && w.volRecs >= w.opts.VolumeRecords) ||
		(w.volRecs > 0 && w.vol.off+size > w.volLimit) {
		if err := w.vol.finish(); err != nil {
			return err
		}
		if err := w.openVolume(w.nvol + 1); err != nil {
			return err
		}
	}
	w.rollPending = false
	before := w.vol.off
	if err := w.encodeData(t, r); err != nil {
		return err
	}
	if h := w.opts.RecordHook; h != nil {
		h(false, w.ndata, w.nvol, before)
	}
	w.volRecs++
	w.ndata++

	// The temporal index, as pmlogextract's writerlist decides it.
	ot := w.outT(t)
	need := !w.opts.ManualIndex && (w.indomSince || before == int64(LabelSize(w.version)) || w.vol.off > w.flushAt)
	if need && w.haveIdx && !w.opts.IndexRepeats && w.lastIdxT.Compare(ot) >= 0 {
		need = false
	}
	if need {
		w.index = append(w.index, IndexEntry{T: ot, Vol: w.nvol, MetaOff: w.metaMark, DataOff: before})
		w.lastIdxT, w.haveIdx = ot, true
		w.flushAt = w.vol.off + indexEvery
	}
	w.lastIdxed = need
	w.lastT, w.lastOff = ot, before
	w.indomSince = false
	w.metaMark = w.meta.off
	return nil
}

// encodeData writes one data record. A result already in the output
// version's encoding is copied: header, body, trailer.
func (w *Writer) encodeData(t stream.Timestamp, r *stream.Result) error {
	if r == nil {
		w.scratch = AppendMark(w.scratch[:0], t, w.version)
		return w.vol.write(w.scratch)
	}
	have := 2
	if r.Version >= 3 {
		have = 3
	}
	if have != w.version {
		var err error
		w.scratch, err = AppendResult(w.scratch[:0], r, w.version)
		if err != nil {
			return fmt.Errorf("%s: result at %s: %w", w.vol.final, t, err)
		}
		return w.vol.write(w.scratch)
	}
	n := uint32(DataHeaderSize(w.version) + len(r.Body) + 4)
	if w.rawFits(t, r, n) {
		return w.vol.copyFrom(w.raw.File, w.raw.Off, int64(n))
	}
	h := appendU32(w.hdr[:0], n)
	h = AppendTimestamp(h, t, w.version)
	if w.vol.aw != nil {
		// Encoded in place (ResultSpace)?
		tail := appendU32(w.hdr[len(h):len(h)], n)
		ok, err := w.vol.aw.commit(h, r.Body, tail)
		if err != nil {
			return fileErr(w.vol.final, "write", err)
		}
		if ok {
			w.vol.off += int64(n)
			return nil
		}
	}
	if err := w.vol.write(h); err != nil {
		return err
	}
	if err := w.vol.write(r.Body); err != nil {
		return err
	}
	return w.vol.write(appendU32(w.hdr[:0], n))
}

func (w *Writer) volumeName(n int32) string {
	name := w.base + "." + strconv.Itoa(int(n))
	return name + w.volumeSuffix()
}

// volumeSuffix is the compression suffix of the data volumes.
func (w *Writer) volumeSuffix() string {
	switch {
	case w.opts.Zstd:
		return ".zst"
	case w.opts.Xz:
		return ".xz"
	}
	return ""
}

func (w *Writer) openVolume(n int32) error {
	o, err := w.newFile(w.volumeName(n), w.volumeSuffix(), true)
	if err != nil {
		return err
	}
	w.vol, w.nvol, w.volRecs = o, n, 0
	w.flushAt = indexEvery
	w.scratch = AppendLabel(w.scratch[:0], &w.label, w.version, n)
	return o.write(w.scratch)
}

// Close finishes the archive: the final index entry, the .meta label's
// start when StartAtFirstRecord moved it, the .index; then it syncs every
// file, renames them into place and syncs the directory. If a Write failed
// or Close fails, everything written is removed and the error returned.
func (w *Writer) Close() error {
	if w.closed {
		if w.err != nil {
			return w.err
		}
		return nil
	}
	w.closed = true
	if w.err == nil && !w.started {
		w.err = fmt.Errorf("%s: nothing was written: an archive starts with a label", w.base)
	}
	if w.err == nil {
		w.err = w.finish()
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	return nil
}

func (w *Writer) finish() error {
	if err := w.flushPending(); err != nil {
		return err
	}
	if w.vol == nil {
		// No data: PCP still expects volume 0, holding its label.
		if err := w.openVolume(0); err != nil {
			return err
		}
	}
	if w.ndata > 0 && !w.opts.ManualIndex {
		e := IndexEntry{T: w.lastT, Vol: w.nvol, MetaOff: w.meta.off, DataOff: w.lastOff}
		if w.lastIdxed {
			e.DataOff = w.vol.off
		}
		w.index = append(w.index, e)
	}
	if err := w.vol.finish(); err != nil {
		return err
	}
	if err := w.meta.bw.Flush(); err != nil {
		return fileErr(w.meta.final, "write", err)
	}
	if w.label.Start != w.labelT0 {
		lab := AppendLabel(w.scratch[:0], &w.label, w.version, -1)
		if _, err := w.meta.f.WriteAt(lab, 0); err != nil {
			return fileErr(w.meta.final, "rewrite label", err)
		}
	}
	if err := w.meta.finish(); err != nil {
		return err
	}
	idx, err := w.newFile(w.base+".index", "", false)
	if err != nil {
		return err
	}
	w.scratch = AppendLabel(w.scratch[:0], &w.label, w.version, -2)
	for _, e := range w.index {
		w.scratch = AppendIndexEntry(w.scratch, e, w.version)
	}
	if err := idx.write(w.scratch); err != nil {
		return err
	}
	if err := idx.finish(); err != nil {
		return err
	}

	// Into place: volumes first, the .meta last, so that a reader that
	// finds the .meta finds the rest.
	if !w.opts.Overwrite {
		if err := w.checkFree(); err != nil {
			return err
		}
	}
	// The renames run under scratch.Hold: a signal that ends the tool
	// meanwhile waits for them, and the archive is whole or not there.
	var renamed []string
	defer func() {
		for _, t := range renamed {
			scratch.Forget(t)
		}
	}()
	if err := scratch.Hold(func() error {
		// An archive being replaced (Overwrite) is first moved aside, every
		// file of it, so that a failure below can put it back as it was.
		var aside [][2]string // {original, aside}
		putBack := func() {
			for _, m := range aside {
				os.Rename(m[1], m[0])
			}
		}
		if w.opts.Overwrite {
			old, err := archiveFiles(w.dir, w.name)
			if err != nil {
				return fmt.Errorf("%s: %w", w.base, err)
			}
			for i, f := range old {
				m := [2]string{f, fmt.Sprintf("%s.replaced-%d", w.meta.tmp, i)}
				if err := os.Rename(m[0], m[1]); err != nil {
					putBack()
					return fileErr(f, "move aside (the archive replaced is unchanged)", err)
				}
				aside = append(aside, m)
			}
		}
		order := make([]*outFile, 0, len(w.files))
		for _, o := range w.files {
			if o != w.meta {
				order = append(order, o)
			}
		}
		order = append(order, w.meta)
		for i, o := range order {
			if err := os.Rename(o.tmp, o.final); err != nil {
				// Take back what was already renamed: half an archive in
				// place is worse than none, and the one replaced comes back.
				for _, p := range order[:i] {
					os.Remove(p.final)
				}
				putBack()
				return fileErr(o.final, "rename into place", err)
			}
			renamed = append(renamed, o.tmp)
			o.tmp = ""
		}
		w.done = true
		for _, m := range aside {
			if err := os.Remove(m[1]); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: removing a file of the archive replaced: %w", m[0], err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return syncDir(w.dir)
}

// syncDir makes the renames durable. File systems that cannot sync a
// directory say EINVAL; there is nothing more to do on those.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fileErr(dir, "sync directory", err)
	}
	return nil
}

// Abort removes every temporary file. It may be called at any time, more
// than once, and after Close (when it does nothing: the archive is in
// place). After Abort the Writer refuses further writes.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	if w.err == nil {
		w.err = fmt.Errorf("%s: writer aborted", w.base)
	}
	w.closed = true
	for _, o := range w.files {
		if o.open {
			o.open = false
			if o.aw != nil {
				o.aw.stop()
			}
			if o.z != nil {
				o.z.Close()
			}
			o.f.Close()
		}
		if o.tmp != "" {
			scratch.RemoveAll(o.tmp)
			o.tmp = ""
		}
	}
}

// Offsets returns where the next records would go, after writing any
// metadata held back: the data volume (0 before the first data record),
// the size of the .meta file and the size of the volume (uncompressed; the
// size of its label before the first data record). With ManualIndex, the
// caller makes its index entries from these.
func (w *Writer) Offsets() (vol int32, meta, data int64, err error) {
	if w.err != nil {
		return 0, 0, 0, w.err
	}
	if len(w.pending) > 0 {
		if err := w.flushPending(); err != nil {
			w.err = err
			return 0, 0, 0, err
		}
	}
	if w.vol == nil {
		return 0, w.meta.off, int64(LabelSize(w.version)), nil
	}
	return w.nvol, w.meta.off, w.vol.off, nil
}

// AddIndex appends an entry to the temporal index (its time cut to the
// output version's resolution). For writers with ManualIndex.
func (w *Writer) AddIndex(e IndexEntry) {
	e.T = w.outT(e.T)
	w.index = append(w.index, e)
}

// Version returns the version of the archive being written (0 before the
// first label).
func (w *Writer) Version() int { return w.version }
