package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// RecordsOption configures Records.
type RecordsOption func(*recordsOptions)

type recordsOptions struct {
	from     stream.Timestamp
	hasFrom  bool
	dataOnly bool
	metaOnly bool
	bufSize  int
	mapped   bool
	noAhead  bool
	park     bool   // leave compressed volumes open for the next reader (reader_spare.go)
	buf      []byte // the data buffer to start with (ReadBuffer)
}

// Streamed makes Records read plain data volumes through a buffer, as it
// reads compressed ones: the default (see Mapped).
func Streamed() RecordsOption {
	return func(o *recordsOptions) { o.mapped = false }
}

// Mapped makes Records map plain data volumes instead of reading them
// through a buffer (PCPTOOLS_IO=mmap makes it the default: see ioMode).
//
// Mapping saves a copy, but each page costs a fault and giving pages back
// (madvise, munmap) costs a TLB shoot-down on every core the process's
// threads ran on. On the hosts measured (docs/benchmarks.md) that cost
// anywhere from a little to three times a buffered read's (a 1 GiB copy:
// 1.5-1.8 s mapped against 0.5 s read, on a paravirtualised AMD EPYC), so
// reading is the default.
func Mapped() RecordsOption {
	return func(o *recordsOptions) { o.mapped = true }
}

// NoCheckAhead makes Records check each record itself, when it is read,
// rather than on a goroutine running ahead (see aheadChecker). A caller
// that does next to nothing with each record (a plain copy, whose writer
// has a goroutine of its own) is faster without one more thread.
func NoCheckAhead() RecordsOption {
	return func(o *recordsOptions) { o.noAhead = true }
}

// ReadBuffer has Records read data volumes through buf, while it is
// as large as BufferSize asks, rather than through a buffer of its own: a
// tool that opens and closes many archives in turn (findEnd, a merge of
// many inputs) reuses a few buffers instead of making one each time. The
// caller must not touch buf until the iterator is closed.
func ReadBuffer(buf []byte) RecordsOption {
	return func(o *recordsOptions) { o.buf = buf }
}

// BufferSize sets the size of the buffer data volumes are read through
// (default 1 MiB; at least 4 KiB, and a record larger than the buffer
// still reads). A tool reading many archives at once uses smaller ones.
// With MetaOnly, it bounds the .meta file's buffer (64 KiB) instead.
func BufferSize(n int) RecordsOption {
	return func(o *recordsOptions) { o.bufSize = max(n, minBufSize) }
}

// DataOnly makes Records leave out the metadata: the label, then results
// and marks only. Tools that loaded the metadata already (Meta,
// MetaRecords) read the volumes without reading the .meta file again.
func DataOnly() RecordsOption {
	return func(o *recordsOptions) { o.dataOnly = true }
}

// MetaOnly makes Records leave out the data: the label, then the .meta
// records in file order, with the times Records gives them.
func MetaOnly() RecordsOption {
	return func(o *recordsOptions) { o.metaOnly = true }
}

// From makes Records skip the data records (results and marks) before t.
// It seeks with the temporal index when the index is sound, and scans
// otherwise. Metadata is not skipped: every .meta record is still emitted,
// those before t ahead of the first data record.
func From(t stream.Timestamp) RecordsOption {
	return func(o *recordsOptions) { o.from, o.hasFrom = t, true }
}

// How many warnings of one kind (time going backwards, records before the
// label) a Records iterator reports before it falls silent.
const maxTimeWarnings = 5

// Records returns the archive as one stream: the *stream.Label of the .meta
// file, then the metadata and data records interleaved by time.
//
//   - A timestamped metadata record (instance domain, label set) at time T
//     comes before every data record at T or later.
//   - An untimed one (descriptor, help text) comes as soon as the .meta
//     file reaches it, with the latest time emitted before it, so
//     that the stream never goes back in time.
//   - Data records (*stream.Result, or *stream.Mark for a <mark>) come in
//     volume order; metadata left over after the last one comes at the end.
//
// Metadata records keep their .meta order and data records their volume
// order, so writing the stream back reproduces the files.
//
// Records are reused: At is valid until the next Next, and a Result's Body
// aliases the reader's buffer. Problems that end the read are returned by
// Err as *FormatError naming the file and offset; a truncated last record
// of the last volume (a logger that crashed or is still writing) instead
// ends the stream normally, with a warning.
func (a *Archive) Records(opts ...RecordsOption) stream.CloserIterator {
	it := &archiveIter{a: a, version: a.label.Version, vi: -1}
	it.opt.mapped = ioMode.mmap
	for _, f := range opts {
		f(&it.opt)
	}
	return it
}

type archiveIter struct {
	a       *Archive
	opt     recordsOptions
	version int
	started bool
	done    bool
	err     error
	cur     stream.Record
	label   stream.Label
	last    stream.Timestamp // latest time emitted

	// The .meta cursor: mpend is read and not yet emitted.
	mf       rdFile
	mr       recReader
	metaDone bool
	mpend    stream.Record
	mpendOff int64 // where mpend was read in the .meta
	metaOff  int64 // where the current record, a metadata one, was read

	// The data cursor: dpend (&res or &mark) is read and not yet emitted.
	df        rdFile
	dpath     string // df's path
	spared    bool   // df was a spare file (reader_spare.go)
	dr        recReader
	ahead     *aheadChecker // checks the mapped volume ahead of dr; nil if none
	aheadWait bool          // start ahead once the reader is past volStart
	volStart  int64         // offset of the open volume's first record read
	vi        int           // index into a.vols of the open volume
	dataDone  bool
	dpend     stream.Record
	res       stream.Result
	mark      stream.Mark
	// At each volume after the first, the volume's label is emitted
	// before its first record (dnext), so that a writer can keep the
	// volume boundaries of a copy.
	volLabel stream.Label
	dnext    stream.Record
	opened   int // volumes opened so far

	// Seeking with the index: start in volume seekVi at seekOff; if that
	// offset does not frame, fall back to a scan from the start.
	seekVi  int
	seekOff int64
	seeking bool

	prevData     stream.Timestamp
	haveData     bool
	nBack, nPrev int
	nBad         int
	framed       int // data records read, for tests of seeking

	// DeferChecks: results go out unchecked; resFile and resOff say where
	// the one in res was read, for CheckResult's error.
	deferred bool
	resFile  string
	resOff   int64

	// The plain file of the open volume (nil when it is compressed), and
	// where res lies in it when its bytes there are the ones a writer of
	// the same version would write for it (rawOK): see RawRecord.
	rawFile *os.File
	rawOff  int64
	rawLen  int
	rawT    stream.Timestamp
	rawOK   bool
	tsBuf   [12]byte
}

func (it *archiveIter) At() stream.Record { return it.cur }

// RawRecord implements RawSource: rec is the result last read, checked,
// and its bytes in the volume are those a writer of the archive's version
// encodes for it.
func (it *archiveIter) RawRecord(rec stream.Record) (RawRecord, bool) {
	if r, ok := rec.(*stream.Result); !ok || r != &it.res || !it.rawOK {
		return RawRecord{}, false
	}
	return RawRecord{File: it.rawFile, Off: it.rawOff, Len: it.rawLen, Version: it.version, T: it.rawT}, true
}

// sameStamp reports whether the timestamp of the data record rec, just
// decoded into res, encodes back to its own bytes (a v2 microseconds field
// past a second, read with a warning, does not).
func (it *archiveIter) sameStamp(rec []byte) bool {
	ts := AppendTimestamp(it.tsBuf[:0], it.res.T, it.version)
	return len(rec) >= 4+len(ts) && string(ts) == string(rec[4:4+len(ts)])
}

// DeferChecks implements stream.CheckDeferrer. A Records iterator defers
// only before its first record and without From (whose seek falls back to
// a scan on a record that does not check).
func (it *archiveIter) DeferChecks() bool {
	if it.started || it.opt.hasFrom {
		return false
	}
	it.deferred = true
	return true
}

// CheckResult implements stream.CheckDeferrer.
func (it *archiveIter) CheckResult() error {
	if !it.deferred || it.cur != &it.res {
		return it.err
	}
	if err := it.res.Validate(); err != nil {
		it.fail(AtFile(err, it.resFile, it.resOff))
		return it.err
	}
	return nil
}

func (it *archiveIter) Err() error { return it.err }

// Where implements stream.Locator: the file and offset of the current
// record (a volume's label: that volume's start; the archive's label: the
// .meta's start).
func (it *archiveIter) Where() (string, int64, bool) {
	switch r := it.cur.(type) {
	case nil:
		return "", 0, false
	case *stream.Result, *stream.Mark:
		return it.resFile, it.resOff, it.resFile != ""
	case *stream.Label:
		if r == &it.volLabel && it.vi < len(it.a.vols) {
			return it.a.vols[it.vi].path, 0, true
		}
		return it.a.metaPath, 0, true
	default:
		return it.a.metaPath, it.metaOff, true
	}
}

// Close releases the open files. It is safe to call more than once, and
// after Next has returned false.
func (it *archiveIter) Close() error {
	it.done = true
	it.cur = nil
	return it.closeFiles()
}

func (it *archiveIter) closeFiles() error {
	var err error
	if it.mf != nil {
		err = it.mf.Close()
		it.mf = nil
	}
	if e := it.closeData(); err == nil {
		err = e
	}
	return err
}

// closeData closes the open data volume, if any, after stopping its
// checker or prefetcher (which read the volume's mapping).
func (it *archiveIter) closeData() error {
	if it.dr.pf != nil {
		it.dr.pf.halt()
		it.dr.pf = nil
	}
	if it.ahead != nil {
		it.ahead.halt()
		it.ahead = nil
	}
	if it.df == nil {
		return nil
	}
	if (it.opt.park || it.spared && !it.dr.eof) && it.a.park(it.dpath, it.df) {
		it.df = nil
		return nil
	}
	err := it.df.Close()
	it.df = nil
	return err
}

func (it *archiveIter) fail(err error) bool {
	it.err = err
	it.done = true
	it.cur = nil
	it.closeFiles()
	return false
}

func (it *archiveIter) Next() bool {
	if it.done {
		return false
	}
	if !it.started {
		it.started = true
		if err := it.start(); err != nil {
			return it.fail(err)
		}
		it.label = it.a.label
		it.cur = &it.label
		it.last = it.label.Start
		return true
	}
	if it.mpend == nil && !it.metaDone {
		if err := it.nextMeta(); err != nil {
			return it.fail(err)
		}
	}
	if it.mpend != nil {
		switch m := it.mpend.(type) {
		case *stream.Desc:
			m.T = it.last
			return it.emitMeta()
		case *stream.Text:
			m.T = it.last
			return it.emitMeta()
		}
	}
	if it.dpend == nil && it.dnext != nil {
		it.dpend, it.dnext = it.dnext, nil
	}
	if it.dpend == nil && !it.dataDone {
		if err := it.nextData(); err != nil {
			return it.fail(err)
		}
	}
	if it.mpend != nil && (it.dpend == nil || !it.mpend.Time().After(it.dpend.Time())) {
		return it.emitMeta()
	}
	if it.dpend != nil {
		it.cur = it.dpend
		it.dpend = nil
		it.advance()
		return true
	}
	it.done = true
	it.cur = nil
	if err := it.closeFiles(); err != nil {
		it.err = err
	}
	return false
}

func (it *archiveIter) emitMeta() bool {
	it.cur = it.mpend
	it.metaOff = it.mpendOff
	it.mpend = nil
	it.advance()
	return true
}

// advance moves the stream's clock to the current record's time. It never
// goes back: in a damaged archive records can, but untimed metadata then
// keeps the latest time seen.
func (it *archiveIter) advance() {
	if t := it.cur.Time(); t.After(it.last) {
		it.last = t
	}
}

// start opens the .meta file and, with From, picks where to start reading
// data from the index.
func (it *archiveIter) start() error {
	a := it.a
	if it.opt.metaOnly {
		it.dataDone = true
	}
	if it.opt.dataOnly {
		it.metaDone = true
	} else if err := it.openMeta(); err != nil {
		return err
	}
	if it.opt.hasFrom && !it.opt.metaOnly {
		if e, ok := a.seekEntry(it.opt.from); ok {
			for i, v := range a.vols {
				if v.num == int(e.Vol) {
					it.seekVi, it.seekOff, it.seeking = i, e.DataOff, true
					it.vi = i - 1
				}
			}
		}
	}
	if len(a.vols) == 0 {
		it.dataDone = true
	}
	return nil
}

func (it *archiveIter) openMeta() error {
	a := it.a
	f, err := openFile(a.metaPath)
	if err != nil {
		return err
	}
	it.mf = f
	if _, err := readLabel(f, a.metaPath, -1); err != nil {
		return err
	}
	size := metaBufSize
	if it.opt.metaOnly && it.opt.bufSize > 0 {
		// A tool reading many .meta files at once (a merge of
		// thousands of archives) asks for small buffers.
		size = min(size, it.opt.bufSize)
	}
	it.mr.reset(f, a.metaPath, int64(LabelSize(it.version)), size, f.Size(), false)
	return nil
}

func (it *archiveIter) nextMeta() error {
	r, off, err := it.a.readMetaRecord(&it.mr)
	if err == io.EOF {
		it.metaDone = true
		if e := it.mf.Close(); e != nil {
			return e
		}
		it.mf = nil
		return nil
	}
	if err != nil {
		return err
	}
	it.mpend, it.mpendOff = r, off
	return nil
}

// readMetaRecord frames and decodes the next .meta record.
func (a *Archive) readMetaRecord(rr *recReader) (stream.Record, int64, error) {
	rec, off, err := rr.frame(12)
	if err != nil {
		var d *frameDamage
		if errors.As(err, &d) {
			return nil, off, &FormatError{File: rr.name, Offset: d.off, Msg: "metadata record: " + d.msg}
		}
		return nil, off, err
	}
	typ := binary.BigEndian.Uint32(rec[4:])
	if !MetaVersionOK(typ, a.label.Version) {
		msg := fmt.Sprintf("unknown metadata record type %d", typ)
		if typ >= TypeDesc && typ <= TypeLabel {
			msg = fmt.Sprintf("metadata record type %d does not belong in a v%d archive", typ, a.label.Version)
		}
		return nil, off, &FormatError{File: rr.name, Offset: off + 4, Msg: msg}
	}
	r, err := DecodeMeta(rec)
	if err != nil {
		return nil, off, AtFile(err, rr.name, off)
	}
	if d, ok := r.(*stream.InDom); ok {
		// libpcp refuses negative instance numbers (PM_IN_NULL belongs to
		// singular metrics, never to a domain).
		for i, inst := range d.Insts {
			if inst < 0 {
				at := off + 8 + int64(TimestampSize(3)) + 8 + 4*int64(i)
				if d.Encoding == stream.InDomV2 {
					at = off + 8 + int64(TimestampSize(2)) + 8 + 4*int64(i)
				}
				return nil, off, &FormatError{File: rr.name, Offset: at, Msg: fmt.Sprintf("instance domain %s: negative instance number %d", d.InDom, inst)}
			}
		}
	}
	return r, off, nil
}

// openVolume opens a.vols[i] and positions the data cursor after its label
// (or at the seek offset).
func (it *archiveIter) openVolume(i int) error {
	v := it.a.vols[i]
	f := it.a.takeSpare(v.path)
	it.spared = f != nil
	if f == nil {
		var err error
		if f, err = openFile(v.path); err != nil {
			return err
		}
	}
	it.df, it.dpath = f, v.path
	it.rawFile, it.rawOK = compress.PlainOS(f), false
	vl, err := readLabel(f, v.path, int32(v.num))
	if err == nil && vl.Version != it.a.label.Version {
		err = it.a.agree(&vl, v.path, false) // (another host was warned of in Open)
	}
	if err != nil {
		return err
	}
	it.opened++
	if it.opened > 1 {
		it.volLabel = it.a.label
		it.volLabel.Vol = int32(v.num)
		it.volLabel.Start = vl.Start
		it.dnext = &it.volLabel // placed before the volume's first record
	}
	off := int64(LabelSize(it.version))
	if it.seeking && i == it.seekVi && it.seekOff != off {
		if _, err := f.Seek(it.seekOff, io.SeekStart); err != nil {
			return &FormatError{File: v.path, Offset: it.seekOff, Msg: "seek failed", Err: err}
		}
		off = it.seekOff
	}
	size := dataBufSize
	if it.opt.bufSize > 0 {
		size = it.opt.bufSize
	}
	if it.dr.buf == nil && it.opt.buf != nil {
		it.dr.buf = it.opt.buf
	}
	it.dr.reset(f, v.path, off, size, f.Size(), it.opt.mapped)
	it.volStart = off
	// The checker starts after the volume's first record: a merge opens
	// every input and reads one record of each long before it reads on,
	// and a checker already ahead in each would hold their pages.
	it.aheadWait = it.dr.mapped && !it.opt.noAhead && !it.deferred
	if it.dr.mapped && !it.opt.noAhead && it.deferred {
		it.dr.pf = startPrefetch(it.dr.buf, int(off), it.dr.window)
	}
	return nil
}

// rescan abandons a seek that led nowhere and starts over from the first
// volume.
func (it *archiveIter) rescan(why error) error {
	it.a.warnf(fmt.Errorf("index not used, scanning from the start: %w", why))
	it.seeking = false
	it.closeData()
	it.vi = -1
	// as if none had been opened: the first volume's label went out as
	// the archive's, and must not come again before its records
	it.opened = 0
	it.haveData = false
	return nil
}

func (it *archiveIter) nextData() error {
	a := it.a
	minLen := DataHeaderSize(it.version) + 8
	for {
		if it.df == nil {
			it.vi++
			if it.vi >= len(a.vols) {
				it.dataDone = true
				return nil
			}
			if err := it.openVolume(it.vi); err != nil {
				if it.seeking {
					it.rescan(err)
					continue
				}
				if it.vi > 0 && errors.Is(err, ErrLabel) {
					// libpcp skips a later volume whose label it
					// refuses and reads on from the next one.
					it.closeData()
					a.warnf(fmt.Errorf("volume skipped: %w", err))
					continue
				}
				return err
			}
		}
		if it.aheadWait && it.dr.off > it.volStart {
			it.ahead = startChecker(it.dr.buf, it.dr.off, it.version, it.dr.window)
			it.aheadWait = false
		}
		rec, off, err := it.dr.frame(minLen)
		if err == io.EOF {
			if it.seeking {
				it.seeking = false // an offset at the end of a volume is fine
			}
			if err := it.closeData(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			var d *frameDamage
			if !errors.As(err, &d) {
				return err
			}
			if it.seeking {
				it.rescan(&FormatError{File: it.dr.name, Offset: d.off, Msg: d.msg})
				continue
			}
			if d.tail && it.vi == len(a.vols)-1 {
				a.warnf(&FormatError{File: it.dr.name, Offset: d.off, Msg: "truncated record, read stops at the last good record", Err: truncatedErr(d.msg)})
				it.dataDone = true
				it.closeData()
				return nil
			}
			return &FormatError{File: it.dr.name, Offset: d.off, Msg: "data record: " + d.msg}
		}
		it.framed++
		mark, err := DecodeData(rec, it.version, &it.res)
		if err == nil && !mark && !it.deferred && (it.ahead == nil || !it.ahead.covers(off+int64(len(rec)))) {
			err = it.res.Validate()
		}
		it.resFile, it.resOff = it.dr.name, off
		it.rawOK = err == nil && !mark && !it.deferred && it.rawFile != nil && it.sameStamp(rec)
		it.rawOff, it.rawLen, it.rawT = off, len(rec), it.res.T
		if err != nil {
			if it.seeking {
				it.rescan(AtFile(err, it.dr.name, off))
				continue
			}
			return AtFile(err, it.dr.name, off)
		}
		it.seeking = false
		t := it.res.T
		it.checkTime(t, off)
		if it.opt.hasFrom && t.Before(it.opt.from) {
			continue
		}
		next := stream.Record(&it.res)
		if mark {
			it.mark.T = t
			next = &it.mark
		}
		if it.dnext != nil {
			// A new volume: its label first, never earlier than the
			// stream's clock.
			if it.volLabel.Start.Before(it.last) {
				it.volLabel.Start = it.last
			}
			it.dpend = it.dnext
			it.dnext = next
		} else {
			it.dpend = next
		}
		return nil
	}
}

// checkTime reports data records with an impossible timestamp, or that
// go back in time or precede the label. PCP tolerates all three
// (pmlogcheck reports them), so they are warnings.
func (it *archiveIter) checkTime(t stream.Timestamp, off int64) {
	if t.Nsec < 0 || t.Nsec >= 1e9 {
		it.limitedWarn(&it.nBad, off, fmt.Sprintf("data record has an impossible timestamp (%d s, %d ns)", t.Sec, t.Nsec))
	}
	if it.haveData && t.Before(it.prevData) {
		it.limitedWarn(&it.nBack, off, fmt.Sprintf("data record at %s goes back in time from %s", t, it.prevData))
	}
	if t.Before(it.a.label.Start) {
		it.limitedWarn(&it.nPrev, off, fmt.Sprintf("data record at %s precedes the label's start time %s", t, it.a.label.Start))
	}
	it.prevData = t
	it.haveData = true
}

// limitedWarn reports a warning of a kind counted by *n, falling silent
// after maxTimeWarnings of them.
func (it *archiveIter) limitedWarn(n *int, off int64, msg string) {
	*n++
	if *n > maxTimeWarnings {
		return
	}
	if *n == maxTimeWarnings {
		msg += " (further such records not reported)"
	}
	it.a.warnf(&FormatError{File: it.dr.name, Offset: off, Msg: msg})
}

// TimeOrderWarning reports whether err is the reader's warning about a
// data record out of time order (an impossible timestamp, back in time,
// or before the label's start), which libpcp reads without a word.
// (Marking these warnings with a wrapper type instead slowed pcpsummary
// --json by a quarter on the 1 GiB bench archive, by moving code: see
// docs/benchmarks.md.)
func TimeOrderWarning(err error) bool {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return false
	}
	return strings.HasPrefix(fe.Msg, "data record has an impossible timestamp") ||
		strings.Contains(fe.Msg, " goes back in time from ") || strings.Contains(fe.Msg, " precedes the label's start time ")
}

// ErrTruncated is found (errors.Is) in the warning about a truncated last
// record: the read ended early, at the last good record. Tools that must
// not write a shortened copy (pcprewrite, as pmlogrewrite) fail on it.
var ErrTruncated = errors.New("truncated record")

// truncatedErr says what is wrong with a truncated record, and is
// ErrTruncated.
type truncatedErr string

func (e truncatedErr) Error() string        { return string(e) }
func (e truncatedErr) Is(target error) bool { return target == ErrTruncated }
