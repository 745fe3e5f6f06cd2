package dump

import (
	"io"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Dump writes the views selected by opts as pmdumplog would.
func Dump(w io.Writer, a *format.Archive, opts Options) error {
	src := &archiveSource{a: a, fileSizer: fileSizer{base: a.Base()}, libpcp: opts.LibpcpLabel}
	return dumpArchive(w, src, opts)
}

// Zone is the zone Dump of a with opts reports times in (nil when the
// options name no zone it can load: Dump then fails with the reason).
func Zone(a *format.Archive, opts Options) *time.Location {
	src := &archiveSource{a: a, libpcp: opts.LibpcpLabel}
	loc, _, err := chooseZone(opts, src.label())
	if err != nil {
		return nil
	}
	return loc
}

// archiveSource adapts *format.Archive to what the views need.
type archiveSource struct {
	a      *format.Archive
	libpcp bool // the label as libpcp reports it (Options.LibpcpLabel)
	fileSizer
}

func (s *archiveSource) end() (stream.Timestamp, bool, error) { return s.a.End() }

func newArchiveSource(a *format.Archive) archive {
	return &archiveSource{a: a, fileSizer: fileSizer{base: a.Base()}}
}

func (s *archiveSource) label() stream.Label {
	if s.libpcp {
		return s.a.LibpcpLabel()
	}
	return s.a.Label()
}

func (s *archiveSource) meta() (*format.Metadata, error)     { return s.a.Meta() }
func (s *archiveSource) index() ([]format.IndexEntry, error) { return s.a.Index() }
func (s *archiveSource) records(from *stream.Timestamp) stream.CloserIterator {
	if from == nil {
		return s.a.Records()
	}
	return s.a.Records(format.From(*from))
}

// JSON writes the archive as JSON lines, one object per record (see
// docs/dump-formats.md). opts chooses the timezone of the "time" fields,
// the window (Start, Finish) and the metrics (Metrics, Marks); the view
// flags are ignored.
func JSON(w io.Writer, a *format.Archive, opts Options) error {
	return jsonArchive(w, newArchiveSource(a), opts)
}

// CSV writes a header row and one row per value: time, metric, instance,
// value (see docs/dump-formats.md). opts applies as for JSON.
func CSV(w io.Writer, a *format.Archive, opts Options) error {
	return csvArchive(w, newArchiveSource(a), opts)
}
