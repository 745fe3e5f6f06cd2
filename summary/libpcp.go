package summary

import (
	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// LibpcpReader is libpcp's reading of one archive, emulated
// (*dump.LogTrace): the end its pmGetArchiveEnd finds, and the records
// its fetches return after pmSetMode positions it.
type LibpcpReader interface {
	EndTime() (stream.Timestamp, bool)
	SetTime(origin stream.Timestamp, back bool)
	Records() stream.CloserIterator
}

// LibpcpReads is a with libpcp's end (lr's), and, when fetch is set, the
// records libpcp's fetches return from the window's start, positioned
// as pmSetMode positions them (by the temporal index). pmlogsummary's
// drop-in reads through it where the two readers may part: a window
// libpcp finds with a damaged index, a damaged last volume, an end
// libpcp cannot locate (it then prints "ending UNKNOWN").
func LibpcpReads(a *format.Archive, lr LibpcpReader, fetch bool) Archive {
	return &libpcpArchive{Archive: a, lr: lr, fetch: fetch}
}

type libpcpArchive struct {
	*format.Archive
	lr    LibpcpReader
	fetch bool
	from  stream.Timestamp
}

func (a *libpcpArchive) End() (stream.Timestamp, bool, error) {
	t, ok := a.lr.EndTime()
	return t, ok, nil
}

// skipBefore is told the window's start (summarizer.window).
func (a *libpcpArchive) skipBefore(t stream.Timestamp) { a.from = t }

// Records is a pass over the window: pmlogsummary sets the mode to the
// window's start before each (its second one with -B).
func (a *libpcpArchive) Records(opts ...format.RecordsOption) stream.CloserIterator {
	if !a.fetch {
		return a.Archive.Records(opts...)
	}
	a.lr.SetTime(a.from, false)
	return a.lr.Records()
}

// NoData reports whether a is an archive with no data record (found as
// its end is), and then why libpcp will not open it (dump.NoDataError:
// "Empty archive log file" for volumes that hold their labels alone,
// "Missing PCP archive log file" for no volume at all), or nil where
// bytes after a label that are not a record are damage libpcp opens.
func NoData(a Archive) (none bool, libpcpRefuses error) {
	fa, ok := a.(*format.Archive)
	if !ok {
		return false, nil
	}
	if _, has, err := fa.End(); err != nil || has {
		return false, nil
	}
	if !fa.LabelsOnly() {
		return true, nil
	}
	return true, dump.NoDataError(fa)
}
