package format

import (
	"os"

	"github.com/pcptools/pcptools/stream"
)

// A copy that changes nothing need not bring a record's bytes through
// user space twice. The reader reads and checks every record as always;
// where a result goes to the output exactly as it lies in its input
// volume (same version, same header and trailer, an uncompressed volume
// and output), the writer has the kernel copy those bytes from the input
// file to the output (copy_file_range(2) on Linux, as cp does), runs of
// consecutive records in one system call, instead of copying them from
// the reader's buffer into its own and writing them from there. On the
// writer's goroutine (writerTrial), the kernel's copy runs on the other
// core while the reader goes on.
//
// The bytes copied are the input file's as they are when the copy runs,
// shortly after the reader checked them. An archive being appended to
// (pmlogger's) does not change bytes already written; one rewritten in
// place while it is copied could give an output that differs from what
// was checked, as any reader of a file changing under it could.

// RawRecord is where a result lies in a plain file: Len bytes at Off,
// which are, byte for byte, the result as a writer of Version encodes it
// with its timestamp T and its body as read.
type RawRecord struct {
	File    *os.File
	Off     int64
	Len     int
	Version int
	T       stream.Timestamp
}

// RawSource is an iterator that can say where the record it last gave
// lies, unchanged, in a plain file. RawRecord's answer holds until the
// iterator moves on; ok is false for a record it cannot vouch for.
type RawSource interface {
	RawRecord(rec stream.Record) (raw RawRecord, ok bool)
}

// WriteRaw is Write, for a record whose encoding lies at raw: where the
// writer would write those very bytes (a result, the same version, an
// uncompressed volume), the kernel copies them from raw.File.
func (w *Writer) WriteRaw(rec stream.Record, raw RawRecord) error {
	w.raw, w.rawSet = raw, true
	err := w.Write(rec)
	w.raw, w.rawSet = RawRecord{}, false
	return err
}

// rawFits reports whether the result r at t, n bytes encoded, may be
// copied from w.raw.
func (w *Writer) rawFits(t stream.Timestamp, r *stream.Result, n uint32) bool {
	return w.rawSet && w.raw.File != nil && w.raw.Version == w.version && w.raw.Len == int(n) &&
		t == w.raw.T && w.vol.aw != nil && w.vol.aw.rc != nil && w.vol.z == nil &&
		(n >= rawCopyMin || w.vol.aw.continues(w.raw.File, w.raw.Off))
}

// rawCopyMin is the smallest result that starts a range for the kernel to
// copy; a smaller one goes that way only to go on with the range of the
// record before it. Small records of inputs taking turns (a merge of
// copies: a range, and a duplicate of a file, for each record) cost more
// in system calls than the copy saves: 100 copies of a QA archive merged
// took 0.17-0.19 s that way against 0.15 s through user space (AMD EPYC
// family 26).
const rawCopyMin = 64 << 10

// copyFrom appends n bytes of src at off to the volume.
func (o *outFile) copyFrom(src *os.File, off, n int64) error {
	if err := o.aw.copyFrom(src, off, n); err != nil {
		return fileErr(o.final, "write", err)
	}
	o.off += n
	return nil
}
