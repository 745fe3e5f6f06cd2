package rewrite

// A rewrite of a stream compiles its rules against the whole metadata, as
// pmlogrewrite does against the whole .meta file: a rule about a metric
// that is never seen, or two rules in conflict, is judged the same way.
// A producer that has the metadata up front (an archive reader) sends it
// in a METADATA frame before the first label (docs/stream.md), and the
// rewrite reads the stream as it arrives, with nothing spilled. The
// records that follow are checked against it: one that the frame did not
// announce (a producer that lied, or a second stream joined to the first
// with metadata of its own) stops the rewrite with an error, rather than
// be rewritten by a plan compiled without it (pipe.Announced).

import (
	"os"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/scratch"
	"github.com/pcptools/pcptools/internal/toolio"
)

// openStream reads the stream on stdin. With a METADATA frame before its
// label (pcpcat of an archive sends one) the records are rewritten as they
// arrive; without one (an older producer, or a stage that does not have
// the metadata up front) the stream is spilled to a temporary archive
// first, as before.
func (j *Job) openStream(stdin *os.File) (*source, error) {
	const name = "standard input"
	in, err := toolio.OpenInputs(nil, stdin, j.warn)
	if err != nil {
		return nil, err
	}
	src := &source{name: name, closers: []func(){func() { in.Close() }}}
	meta, it, ok, err := toolio.WholeStream(in)
	if err != nil {
		return src, err
	}
	if ok {
		src.meta, src.version, src.it, src.stream = meta, meta.Label.Version, it, true
		return src, nil
	}
	dir, err := scratch.MkdirTemp("", "pcprewrite-")
	if err != nil {
		return src, err
	}
	src.closers = append(src.closers, func() { scratch.RemoveAll(dir) })
	a, err := toolio.SpillIter(it, dir, "stdin", format.WriterOptions{KeepVolumes: true}, j.warn)
	if err != nil {
		return src, err
	}
	as, err := j.openArchive(a.Base())
	if err != nil {
		return src, err
	}
	as.closers = append(src.closers, as.closers...)
	// No progress display for a stream, as in pcpcat: its reading is
	// over, and the spill's size was not known when it began.
	as.name, as.size = name, 0
	return as, nil
}
