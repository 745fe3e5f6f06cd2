package pipe

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// BufferSize is the size of the buffers of Writer and Reader: large
// enough that a pipe moves data in few system calls.
const BufferSize = 1 << 20

// Writer writes a record stream in the pipe format.
//
// Write encodes each record and buffers it; Close writes the END frame and
// flushes; Fail writes an ERROR frame instead, for a producer that cannot
// finish. Neither closes the underlying io.Writer. A Writer is not safe for
// concurrent use.
type Writer struct {
	bw      frameBuf
	scratch []byte        // encoding buffer for records that do not fit bw's free space
	label   bool          // a LABEL frame has been written
	meta    bool          // a METADATA frame awaits its LABEL
	done    bool          // END or ERROR written
	err     error         // sticky I/O error
	v3      stream.Result // a v2 result's body framed as v3 (writeResult)
}

// ErrFinished is returned by Write after Close or Fail.
var ErrFinished = errors.New("pipe: write after the stream was closed")

// NewWriter returns a Writer on w and buffers the stream header.
func NewWriter(w io.Writer) *Writer { return newWriterSize(w, BufferSize) }

// newWriterSize lets tests use a small buffer.
func newWriterSize(w io.Writer, size int) *Writer {
	wr := &Writer{bw: newFrameBuf(w, size)}
	var h [HeaderSize]byte
	copy(h[:], Magic)
	binary.BigEndian.PutUint16(h[8:], Version)
	wr.bw.Write(h[:]) // an error is kept by bufio and returned by a later write
	return wr
}

// frameBuf is the Writer's buffer: a bufio.Writer, or on Linux, into a
// pipe, a spliceBuf. Frames are built in AvailableBuffer's room and
// written with Write.
type frameBuf interface {
	Available() int
	AvailableBuffer() []byte
	Write([]byte) (int, error)
	Flush() error
}

// release gives back the buffer's memory when it is a spliceBuf, once
// the stream has ended.
func (w *Writer) release() {
	if r, ok := w.bw.(interface{ release() }); ok {
		r.release()
	}
}

func newBufio(w io.Writer, size int) frameBuf { return bufio.NewWriterSize(w, size) }

func appendFrameHeader(dst []byte, kind FrameKind, flags uint8, n int, t stream.Timestamp) []byte {
	dst = append(dst, byte(kind), flags, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.Sec))
	return binary.BigEndian.AppendUint32(dst, uint32(t.Nsec))
}

// Write appends rec to the stream. An error in encoding rec (a damaged
// result body, a record before the first label) leaves the stream as it
// was; an I/O error is final.
func (w *Writer) Write(rec stream.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return ErrFinished
	}
	t := rec.Time()
	if t.Nsec < 0 || t.Nsec >= 1e9 {
		return fmt.Errorf("pipe: %s record at %d s: nanoseconds %d out of range", rec.Kind(), t.Sec, t.Nsec)
	}
	_, isLabel := rec.(*stream.Label)
	if !isLabel && !w.label {
		return fmt.Errorf("pipe: %s record at %s before any label record", rec.Kind(), t)
	}
	if !isLabel && w.meta {
		return fmt.Errorf("pipe: %s record at %s after a METADATA frame: a label must follow it", rec.Kind(), t)
	}

	if r, ok := rec.(*stream.Result); ok {
		return w.writeResult(r)
	}

	b, kind, err := appendFrame(w.scratch[:0], rec)
	w.scratch = b[:0]
	if err != nil {
		return err
	}
	if err := w.write(b); err != nil {
		return err
	}
	w.label = w.label || kind == FrameLabel
	w.meta = false
	return nil
}

// appendFrame appends rec's frame, header and payload, to b. Results take
// Write's hot path instead (writeResult), but are encoded here too for a
// METADATA frame's sake (which never holds one).
func appendFrame(b []byte, rec stream.Record) ([]byte, FrameKind, error) {
	t := rec.Time()
	if t.Nsec < 0 || t.Nsec >= 1e9 {
		return b, 0, fmt.Errorf("pipe: %s record at %d s: nanoseconds %d out of range", rec.Kind(), t.Sec, t.Nsec)
	}
	start := len(b)
	var err error
	var kind FrameKind
	var flags uint8
	b = appendFrameHeader(b, 0, 0, 0, t)
	switch r := rec.(type) {
	case *stream.Label:
		kind = FrameLabel
		if r.Version == 2 {
			flags = FlagV2
		}
		b = format.AppendLabel(b, r, 3, r.Vol)
	case *stream.Desc:
		kind = FrameDesc
		b, err = format.AppendMeta(b, r, 3)
	case *stream.InDom:
		kind = FrameInDom
		if r.Encoding == stream.InDomV2 {
			flags = FlagV2
		}
		b, err = format.AppendMeta(b, r, 3)
	case *stream.LabelSet:
		kind = FrameLabelSet
		if r.V2 {
			flags = FlagV2
		}
		b, err = format.AppendMeta(b, r, 3)
	case *stream.Text:
		kind = FrameText
		b, err = format.AppendMeta(b, r, 3)
	case *stream.Mark:
		kind = FrameMark
		b = format.AppendMark(b, r.T, 3)
	default:
		err = fmt.Errorf("pipe: cannot write a record of type %T", rec)
	}
	if err != nil {
		return b[:start], 0, err
	}
	n := len(b) - start - FrameHeaderSize
	if n > MaxPayload {
		return b[:start], 0, fmt.Errorf("pipe: %s record at %s: %d bytes encoded, more than the limit of %d", rec.Kind(), t, n, MaxPayload)
	}
	b[start], b[start+1] = byte(kind), flags
	binary.BigEndian.PutUint32(b[start+4:], uint32(n))
	return b, kind, nil
}

// WriteMetadata writes a METADATA frame: recs, the whole metadata (DESC,
// INDOM, LABELSET and TEXT records, each kind in its archive's order) of
// the archive whose label the next Write must write. A consumer that
// needs all of it before the first record (Reader.Metadata) then does not
// have to spill the stream; the records themselves must still follow in
// the stream as usual. Readers that do not know the frame skip it.
func (w *Writer) WriteMetadata(recs []stream.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return ErrFinished
	}
	b := appendFrameHeader(w.scratch[:0], FrameMetadata, 0, 0, stream.Timestamp{})
	for _, rec := range recs {
		switch rec.(type) {
		case *stream.Desc, *stream.InDom, *stream.LabelSet, *stream.Text:
		default:
			w.scratch = b[:0]
			return fmt.Errorf("pipe: a %s record in a METADATA frame", rec.Kind())
		}
		var err error
		if b, _, err = appendFrame(b, rec); err != nil {
			w.scratch = b[:0]
			return err
		}
	}
	n := len(b) - FrameHeaderSize
	if n > MaxPayload {
		w.scratch = b[:0]
		return fmt.Errorf("pipe: metadata of %d bytes encoded, more than the limit of %d", n, MaxPayload)
	}
	binary.BigEndian.PutUint32(b[4:], uint32(n))
	w.scratch = b[:0]
	w.meta = true
	return w.write(b)
}

// writeResult is Write's hot path: the frame is encoded straight into the
// free space of the buffered writer when it fits, so that a result is
// copied once.
func (w *Writer) writeResult(r *stream.Result) error {
	// A v3 data record is its body plus two length words and a timestamp.
	n := len(r.Body) + 2*4 + format.TimestampSize(3)
	if n > MaxPayload {
		return fmt.Errorf("pipe: result at %s: %d bytes encoded, more than the limit of %d", r.T, n, MaxPayload)
	}
	var b []byte
	fromScratch := w.bw.Available() < FrameHeaderSize+n
	if fromScratch {
		b = w.scratch[:0]
	} else {
		b = w.bw.AvailableBuffer()
	}
	// A v2 result keeps its pointers (the V2 flag says so): no pass over
	// its value sets here to move them, nor in a consumer writing v2.
	var flags uint8
	res := r
	if r.Version == 2 {
		flags = FlagV2
		w.v3 = stream.Result{T: r.T, Version: 3, Body: r.Body}
		res = &w.v3
	}
	b = appendFrameHeader(b, FrameResult, flags, n, r.T)
	b, err := format.AppendResult(b, res, 3)
	if fromScratch {
		w.scratch = b[:0]
	}
	if err != nil {
		return fmt.Errorf("pipe: result at %s: %w", r.T, err)
	}
	if len(b) != FrameHeaderSize+n {
		return fmt.Errorf("pipe: result at %s: encoded %d bytes, expected %d", r.T, len(b)-FrameHeaderSize, n)
	}
	return w.write(b)
}

func (w *Writer) write(b []byte) error {
	if _, err := w.bw.Write(b); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush writes buffered frames to the underlying writer, for a producer
// that wants a consumer to see records before the buffer fills.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Close ends the stream with an END frame and flushes it. After Fail, or
// a second time, it does nothing and returns the sticky I/O error, if any.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	w.done = true
	defer w.release()
	if w.err != nil {
		return w.err
	}
	b := appendFrameHeader(w.bw.AvailableBuffer(), FrameEnd, 0, 0, stream.Timestamp{})
	if err := w.write(b); err != nil {
		return err
	}
	return w.Flush()
}

// Fail ends the stream with an ERROR frame carrying err's message, so that
// the consumer fails with it (see UpstreamError), and flushes. Messages
// longer than MaxErrorMessage are cut. After Close or Fail it writes
// nothing and returns the sticky I/O error or ErrFinished.
func (w *Writer) Fail(err error) error {
	if w.done {
		if w.err != nil {
			return w.err
		}
		return ErrFinished
	}
	w.done = true
	defer w.release()
	if w.err != nil {
		return w.err
	}
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	msg = truncateMessage(msg, MaxErrorMessage)
	b := appendFrameHeader(w.scratch[:0], FrameError, 0, len(msg), stream.Timestamp{})
	b = append(b, msg...)
	w.scratch = b[:0]
	if err := w.write(b); err != nil {
		return err
	}
	return w.Flush()
}
