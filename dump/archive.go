package dump

import (
	"io"
	"runtime"
	"sync"
	"weak"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Dump writes the views selected by opts as pmdumplog would.
func Dump(w io.Writer, a *format.Archive, opts Options) error {
	return dumpArchive(w, newArchiveSource(a), opts)
}

// archiveSource adapts *format.Archive to what the views need.
type archiveSource struct {
	a *format.Archive
	fileSizer
}

// endCache remembers the end time of the archives dumped, for as long as
// the *format.Archive lives (the Archive caches its metadata and index
// the same way).
var endCache sync.Map // weak.Pointer[format.Archive] -> archiveEndTime

type archiveEndTime struct {
	t  stream.Timestamp
	ok bool
}

func (s *archiveSource) cachedEnd() (stream.Timestamp, bool, bool) {
	v, hit := endCache.Load(weak.Make(s.a))
	if !hit {
		return stream.Timestamp{}, false, false
	}
	e := v.(archiveEndTime)
	return e.t, e.ok, true
}

func (s *archiveSource) cacheEnd(t stream.Timestamp, ok bool) {
	key := weak.Make(s.a)
	if _, loaded := endCache.LoadOrStore(key, archiveEndTime{t, ok}); !loaded {
		runtime.AddCleanup(s.a, func(k weak.Pointer[format.Archive]) { endCache.Delete(k) }, key)
	}
}

func newArchiveSource(a *format.Archive) archive {
	return &archiveSource{a: a, fileSizer: fileSizer{base: a.Base()}}
}

func (s *archiveSource) label() stream.Label                 { return s.a.Label() }
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
