package pipe

import (
	"encoding/binary"
	"os"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// rawSpliceMin is the smallest result body WriteRaw hands to the pipe from
// its input file: below it, the frame's two extra system calls cost more
// than the copy they save.
const rawSpliceMin = 64 << 10

// WriteRaw is Write for a result whose encoding lies at raw in a plain
// file (format.RawSource). Into a pipe, the body of a large one goes from
// that file by splice(2), the kernel handing the pipe references to the
// file's cached pages instead of copying the bytes into the Writer's
// buffer; the frame around it, whose header and timestamp differ from
// the file's record, is written as usual. Otherwise it is Write.
func (w *Writer) WriteRaw(r *stream.Result, raw format.RawRecord) error {
	sb, ok := w.bw.(rawSplicer)
	hdr := 4 + format.TimestampSize(raw.Version)
	if !ok || w.err != nil || w.done || !w.label || w.meta || len(r.Body) < rawSpliceMin ||
		raw.File == nil || raw.T != r.T || int(r.Version) != raw.Version || raw.Len != hdr+len(r.Body)+4 ||
		r.T.Nsec < 0 || r.T.Nsec >= 1e9 {
		return w.Write(r)
	}
	n := len(r.Body) + 2*4 + format.TimestampSize(3)
	if n > MaxPayload {
		return w.Write(r) // (which says why not)
	}
	var flags uint8
	if r.Version == 2 {
		flags = FlagV2
	}
	b := appendFrameHeader(w.scratch[:0], FrameResult, flags, n, r.T)
	b = binary.BigEndian.AppendUint32(b, uint32(n)) // the v3 record's length
	b = format.AppendTimestamp(b, r.T, 3)
	w.scratch = b[:0]
	if err := w.write(b); err != nil {
		return err
	}
	if err := sb.spliceFrom(raw.File, raw.Off+int64(hdr), len(r.Body)); err != nil {
		w.err = err
		return err
	}
	return w.write(binary.BigEndian.AppendUint32(w.scratch[:0], uint32(n)))
}

// rawSplicer is a frame buffer into a pipe that can move bytes of a file
// into it (spliceBuf).
type rawSplicer interface {
	spliceFrom(f *os.File, off int64, n int) error
}
