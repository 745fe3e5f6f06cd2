package pipe

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Reader reads a pipe stream. It is a stream.Iterator:
//
//	r := pipe.NewReader(os.Stdin)
//	for r.Next() {
//		rec := r.At()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// The record returned by At, and every slice inside it, is valid only until
// the next call to Next: the Reader reuses its Label, Result and Mark
// records, and a Result's Body points into the Reader's buffer. Results
// are *stream.Result with Version 3, or 2 for a RESULT frame with the V2
// flag (stream version 2 on). A stream that ends without an END
// frame is an error wrapping io.ErrUnexpectedEOF; an ERROR frame from the
// producer is an *UpstreamError; damage is a *format.FormatError with the
// byte offset in the stream.
type Reader struct {
	br      *bufio.Reader
	name    string
	off     int64  // stream offset of the next unread byte
	started bool   // the stream header has been read
	version uint16 // the stream's
	label   bool   // a LABEL frame has been read
	done    bool
	err     error
	cur     stream.Record
	curOff  int64  // stream offset of cur's frame
	buf     []byte // payloads larger than br's buffer
	lab     stream.Label
	res     stream.Result
	mark    stream.Mark

	deferred bool  // DeferChecks: results go out unchecked
	resOff   int64 // where the payload of the result in res starts

	pending  bool            // a METADATA frame awaits its LABEL
	metaRecs []stream.Record // that frame's records
	meta     []stream.Record // the METADATA of the first LABEL
	hasMeta  bool
	// The frame's records by key (keyOf) and its descriptors by PMID,
	// made at the first metadata record after the LABEL: every metadata
	// record of the stream must be one of them (checkFramed).
	framed      map[metaKey]bool
	framedDescs map[stream.PMID]*stream.Desc
	labels      int // LABEL frames read
}

// Metadata returns the records of the METADATA frame that came before the
// stream's first LABEL, once Next has returned that LABEL, and whether
// there was one: the whole metadata of the first archive, in its order,
// each record the reader's own (not reused). See Writer.WriteMetadata.
func (r *Reader) Metadata() ([]stream.Record, bool) { return r.meta, r.hasMeta }

// NewReader returns a Reader of the stream r. r is buffered (BufferSize)
// unless it already is a large enough *bufio.Reader.
func NewReader(r io.Reader) *Reader { return newReaderSize(r, BufferSize) }

// newReaderSize lets tests use a small buffer: cheaper to make thousands
// of, and it sends more frames down the path for frames larger than it.
func newReaderSize(r io.Reader, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size), name: "pipe stream"}
}

// SetName sets the name errors give the stream ("pipe stream" by default),
// such as "standard input".
func (r *Reader) SetName(name string) { r.name = name }

// At implements stream.Iterator.
func (r *Reader) At() stream.Record { return r.cur }

// Where implements stream.Locator: the stream's name and the offset of the
// frame the current record came in.
func (r *Reader) Where() (string, int64, bool) { return r.name, r.curOff, r.cur != nil }

// Err implements stream.Iterator.
func (r *Reader) Err() error { return r.err }

func (r *Reader) fail(off int64, cause error, msg string, args ...any) bool {
	r.err = &format.FormatError{File: r.name, Offset: off, Msg: fmt.Sprintf(msg, args...), Err: cause}
	r.done, r.cur = true, nil
	return false
}

// short reports a read that ended before n bytes of what.
func (r *Reader) short(off int64, got, n int, what string, err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail(off, io.ErrUnexpectedEOF, "stream cut short: %s has %d of its %d bytes", what, got, n)
	}
	return r.fail(off, err, "reading %s", what)
}

func (r *Reader) readHeader() bool {
	h, err := r.br.Peek(HeaderSize)
	at := r.off // 0, or where a stream after another starts (Streams)
	switch {
	case len(h) < HeaderSize && !errors.Is(err, io.EOF):
		return r.fail(at, err, "reading the stream header")
	case len(h) == 0:
		return r.fail(at, io.ErrUnexpectedEOF, "empty input, expected a pipe stream")
	case len(h) < len(Magic) && Magic[:len(h)] == string(h), len(h) < HeaderSize && IsPipeStream(h):
		return r.short(at, len(h), HeaderSize, "the stream header", err)
	case !IsPipeStream(h):
		return r.fail(at, nil, "not a pipe stream: bad magic %q", h[:min(len(h), len(Magic))])
	}
	v := binary.BigEndian.Uint16(h[8:])
	if v < 1 || v > Version {
		return r.fail(at+8, nil, "pipe stream version %d; this program reads versions 1 to %d only (use the same release of the tools on both sides of the pipe)", v, Version)
	}
	r.version = v
	r.br.Discard(HeaderSize)
	r.off = at + HeaderSize
	return true
}

// DeferChecks implements stream.CheckDeferrer: from the next record on,
// results go out with their frames checked but not their value sets and
// pointers, which the consumer checks as it walks them or has CheckResult
// check. A stage in the middle of a pipe (pcprewrite) then walks each
// result it rewrites once, not twice.
func (r *Reader) DeferChecks() bool {
	r.deferred = true
	return true
}

// CheckResult implements stream.CheckDeferrer: the check Next skipped, with
// the error Next would have stopped with.
func (r *Reader) CheckResult() error {
	if !r.deferred || r.cur != &r.res {
		return r.err
	}
	if err := r.res.Validate(); err != nil {
		r.failRecord(err, r.resOff)
		return r.err
	}
	return nil
}

// Next implements stream.Iterator.
func (r *Reader) Next() bool {
	if r.done {
		return false
	}
	if !r.started {
		r.started = true
		if !r.readHeader() {
			return false
		}
	}
	for {
		start := r.off
		r.curOff = start
		h, err := r.br.Peek(FrameHeaderSize)
		if len(h) < FrameHeaderSize {
			if len(h) == 0 && errors.Is(err, io.EOF) {
				return r.fail(start, io.ErrUnexpectedEOF, "stream ends without an END frame: the producer stopped before it finished")
			}
			return r.short(start, len(h), FrameHeaderSize, "a frame header", err)
		}
		kind := FrameKind(h[0])
		flags := h[1]
		size := binary.BigEndian.Uint32(h[4:])
		t := stream.Timestamp{Sec: int64(binary.BigEndian.Uint64(h[8:])), Nsec: int32(binary.BigEndian.Uint32(h[16:]))}
		r.br.Discard(FrameHeaderSize)
		r.off += FrameHeaderSize
		if size > MaxPayload {
			return r.fail(start, nil, "%s frame claims %d payload bytes, more than the limit of %d", kind, size, MaxPayload)
		}
		n := int(size)
		switch {
		case kind == FrameEnd:
			if n != 0 {
				return r.fail(start, nil, "END frame with %d payload bytes, expected none", n)
			}
			r.done, r.cur = true, nil
			return false
		case kind == FrameError:
			if n > MaxErrorMessage {
				return r.fail(start, nil, "ERROR frame claims %d payload bytes, more than the limit of %d", n, MaxErrorMessage)
			}
			p, ok := r.payload(start, kind, n)
			if !ok {
				return false
			}
			msg := cleanMessage(p)
			if msg == "" {
				// (a producer that died, or a flipped bit that made an
				// END frame, 0x7f, one: the place says which frame)
				msg = fmt.Sprintf("%s: offset %d: the producer failed without saying why (an ERROR frame with no message)", r.name, start)
			}
			r.err = &UpstreamError{Msg: msg}
			r.done, r.cur = true, nil
			return false
		case kind == FrameMetadata:
			if r.pending {
				return r.fail(start, nil, "two METADATA frames in a row")
			}
			p, ok := r.payload(start, kind, n)
			if !ok || !r.readMetadata(start+FrameHeaderSize, p) {
				return false
			}
			continue
		case kind.flipped():
			return r.fail(start, nil, "frame kind 0x%02x is %s with its top bit set, which no stream holds: a damaged frame header", uint8(kind), kind&^FrameOptional)
		case kind >= FrameOptional:
			// An extension this reader does not know; the format says it
			// may be skipped.
			m, err := r.br.Discard(n)
			r.off += int64(m)
			if m < n {
				return r.short(start, m, n, kind.String()+" frame payload", err)
			}
			continue
		case kind >= FrameLabel && kind <= FrameMark:
			if t.Nsec < 0 || t.Nsec >= 1e9 {
				return r.fail(start+16, nil, "%s frame timestamp has %d nanoseconds", kind, t.Nsec)
			}
			if kind != FrameLabel && !r.label {
				return r.fail(start, nil, "%s frame before any LABEL frame", kind)
			}
			if kind != FrameLabel && r.pending {
				return r.fail(start, nil, "%s frame after a METADATA frame: a LABEL frame must follow it", kind)
			}
			p, ok := r.payload(start, kind, n)
			if !ok || !r.decode(start, kind, flags, t, p) {
				return false
			}
			if kind == FrameLabel {
				r.labels++
			}
			return !r.hasMeta || r.labels > 1 || r.checkFramed(start)
		default:
			return r.fail(start, nil, "unknown frame %s: the stream needs a newer reader", kind)
		}
	}
}

// payload reads the n bytes of a frame's payload. A payload that fits the
// bufio buffer is returned in place; a larger one is read in steps of at
// most BufferSize, so that a length field that lies costs no more memory
// than the bytes that actually arrive.
func (r *Reader) payload(start int64, kind FrameKind, n int) ([]byte, bool) {
	if n <= r.br.Size() {
		p, err := r.br.Peek(n)
		if len(p) < n {
			return nil, r.short(start, len(p), n, kind.String()+" frame payload", err)
		}
		r.br.Discard(n)
		r.off += int64(n)
		return p, true
	}
	b := r.buf[:0]
	for len(b) < n {
		// Steps double from 64 KiB, so that memory grows with the bytes
		// that arrive, not with the length claimed.
		step := min(n-len(b), max(len(b), 64<<10), BufferSize)
		b = slices.Grow(b, step)
		m, err := io.ReadFull(r.br, b[len(b):len(b)+step])
		b = b[:len(b)+m]
		if err != nil {
			r.buf = b[:0]
			return nil, r.short(start, len(b), n, kind.String()+" frame payload", err)
		}
	}
	r.buf = b
	r.off += int64(n)
	return b, true
}

// metaType is the metadata record type each metadata frame must hold.
var metaType = map[FrameKind][]uint32{
	FrameDesc:     {format.TypeDesc},
	FrameInDom:    {format.TypeInDom, format.TypeInDomDelta},
	FrameLabelSet: {format.TypeLabel},
	FrameText:     {format.TypeText},
}

func (r *Reader) decode(start int64, kind FrameKind, flags uint8, t stream.Timestamp, p []byte) bool {
	poff := start + FrameHeaderSize
	if len(p) < 12 {
		return r.fail(poff, nil, "%s frame payload of %d bytes is too short for a record", kind, len(p))
	}
	if l := binary.BigEndian.Uint32(p); int(l) != len(p) {
		return r.fail(poff, nil, "%s record length %d does not match the frame's payload length %d", kind, l, len(p))
	}
	if l := binary.BigEndian.Uint32(p[len(p)-4:]); int(l) != len(p) {
		return r.fail(poff+int64(len(p))-4, nil, "%s record trailer length %d does not match the frame's payload length %d", kind, l, len(p))
	}
	mismatch := func(rt stream.Timestamp) bool {
		return r.fail(start+8, nil, "%s frame timestamp %s differs from its record's %s", kind, t, rt)
	}
	switch kind {
	case FrameLabel:
		l, err := format.DecodeLabel(p)
		if err != nil {
			return r.failRecord(err, poff)
		}
		if l.Version != 3 {
			return r.fail(poff+4, nil, "LABEL frame holds a version %d label, not version 3", l.Version)
		}
		if l.Start != t {
			return mismatch(l.Start)
		}
		if flags&FlagV2 != 0 {
			l.Version = 2
		}
		r.lab = l
		r.cur = &r.lab
		if !r.label && r.pending {
			r.meta, r.hasMeta = r.metaRecs, true
		}
		r.pending, r.metaRecs = false, nil
		r.label = true
		return true

	case FrameResult, FrameMark:
		mark, err := format.DecodeData(p, 3, &r.res)
		if err != nil {
			return r.failRecord(err, poff)
		}
		if mark != (kind == FrameMark) {
			if mark {
				return r.fail(poff, nil, "RESULT frame holds a <mark> record")
			}
			return r.fail(poff, nil, "MARK frame holds a result of %d value sets", r.res.NumPMID())
		}
		if r.res.T != t {
			return mismatch(r.res.T)
		}
		if !mark && flags&FlagV2 != 0 && r.version >= 2 {
			r.res.Version = 2 // pointers as in the v2 record it came from
		}
		// A stream is input like any other: a result whose value sets or
		// pointers run outside it stops here, as it would in an archive,
		// rather than travel on into an archive or a dump; or, when its
		// consumer checks what it walks (DeferChecks), there.
		r.resOff = poff
		if !mark && !r.deferred {
			if err := r.res.Validate(); err != nil {
				return r.failRecord(err, poff)
			}
		}
		if mark {
			r.mark.T = t
			r.cur = &r.mark
		} else {
			r.cur = &r.res
		}
		return true
	}

	typ := binary.BigEndian.Uint32(p[4:])
	if !slices.Contains(metaType[kind], typ) {
		return r.fail(poff+4, nil, "%s frame holds a metadata record of type %d", kind, typ)
	}
	rec, err := format.DecodeMeta(p)
	if err != nil {
		return r.failRecord(err, poff)
	}
	switch v := rec.(type) {
	case *stream.Desc:
		v.T = t // on disk a descriptor has no timestamp: the frame's is its only one
	case *stream.Text:
		v.T = t
	case *stream.InDom:
		if v.T != t {
			return mismatch(v.T)
		}
		if flags&FlagV2 != 0 {
			if v.Encoding != stream.InDomFull {
				return r.fail(start+1, nil, "INDOM frame flagged version 2 holds a delta record")
			}
			v.Encoding = stream.InDomV2
		}
	case *stream.LabelSet:
		if v.T != t {
			return mismatch(v.T)
		}
		v.V2 = flags&FlagV2 != 0
	}
	r.cur = rec
	return true
}

// checkFramed checks the metadata record just read, of the frame at
// start, against the stream's METADATA frame: the frame is the producer's
// promise of every metadata record to come, so a record it did not hold,
// or a descriptor that differs from the frame's of its metric, is damage
// in the one or the other. Every reader of the stream so refuses it, as
// the readers that plan on the frame (Announced) do, rather than some
// copy the damage on in silence. Each stream of a concatenation has a
// Reader, and a frame, of its own. The check ends at the stream's second
// LABEL: the frame is the first archive's metadata, and a producer may
// join another archive, or a volume, after it (Announced goes on: the
// tools that plan on the frame refuse what it did not announce).
func (r *Reader) checkFramed(start int64) bool {
	k := keyOf(r.cur)
	if !k.valid {
		return true
	}
	if r.framed == nil {
		r.framed, r.framedDescs = map[metaKey]bool{}, map[stream.PMID]*stream.Desc{}
		for _, m := range r.meta {
			r.framed[keyOf(m)] = true
			if d, ok := m.(*stream.Desc); ok {
				r.framedDescs[d.PMID] = d
			}
		}
	}
	if !r.framed[k] {
		return r.fail(start, nil, "a %s record at %s that the stream's METADATA frame did not hold: the frame or the record is damaged", r.cur.Kind(), r.cur.Time())
	}
	if d, ok := r.cur.(*stream.Desc); ok {
		if what := stream.DescChange(r.framedDescs[d.PMID], d); what != "" {
			return r.fail(start, nil, "descriptor of metric %s: the %s differs from the stream's METADATA frame's, which PCP refuses", d.PMID, what)
		}
	}
	return true
}

func (r *Reader) failRecord(err error, poff int64) bool {
	r.err = format.AtFile(err, r.name, poff)
	r.done, r.cur = true, nil
	return false
}

// readMetadata decodes the frames inside a METADATA frame's payload p,
// which starts at stream offset off, and keeps their records for the
// LABEL that must follow.
func (r *Reader) readMetadata(off int64, p []byte) bool {
	var recs []stream.Record
	for pos := 0; pos < len(p); {
		start := off + int64(pos)
		if len(p)-pos < FrameHeaderSize {
			return r.fail(start, nil, "METADATA frame ends inside a frame header")
		}
		h := p[pos:]
		kind, flags := FrameKind(h[0]), h[1]
		n := int64(binary.BigEndian.Uint32(h[4:]))
		t := stream.Timestamp{Sec: int64(binary.BigEndian.Uint64(h[8:])), Nsec: int32(binary.BigEndian.Uint32(h[16:]))}
		if kind < FrameDesc || kind > FrameText {
			return r.fail(start, nil, "%s frame inside a METADATA frame, which holds DESC, INDOM, LABELSET and TEXT frames only", kind)
		}
		if n > int64(len(p)-pos-FrameHeaderSize) {
			return r.fail(start, nil, "%s frame of %d payload bytes runs past the end of its METADATA frame", kind, n)
		}
		if t.Nsec < 0 || t.Nsec >= 1e9 {
			return r.fail(start+16, nil, "%s frame timestamp has %d nanoseconds", kind, t.Nsec)
		}
		body := p[pos+FrameHeaderSize : pos+FrameHeaderSize+int(n)]
		if !r.decode(start, kind, flags, t, body) {
			return false
		}
		recs = append(recs, stream.CloneRecord(r.cur))
		r.cur = nil
		pos += FrameHeaderSize + int(n)
	}
	r.pending, r.metaRecs = true, recs
	return true
}
