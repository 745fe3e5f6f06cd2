package toolio

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// Progress shows how far a long run has got (bytes and records done, the
// rate, the time left) on standard error when that is a terminal, and
// nothing otherwise: never on the data stream, never in a log. It is drawn
// by github.com/vbauerster/mpb (kept up, one dependency-light package,
// redraws in place at a fixed rate from its own goroutine, so the copy
// pays an atomic add and a channel send (mpb's Bar.IncrBy) per result,
// and only when the display is on). It appears with the first record: a
// run that fails before it reads says only why. A nil *Progress does
// nothing.
//
// A tool starts it once its inputs are open and ends it with Done before
// it prints anything after the reading (a summary, a warning, an error):
// the usual form is
//
//	pr := toolio.StartProgress(stderr, toolio.DataSize(archives), quiet)
//	defer pr.Done(false) // a run that fails: abandoned
//	... it = toolio.Showing(it, pr) ...
//	pr.Done(true)        // before the last words
//
// since only the first Done counts.
type Progress struct {
	p       *mpb.Progress
	total   int64
	records atomic.Int64
	// read: the bytes are counted as they are read (Reader), not by the
	// size of each record in a data volume.
	read bool
	// bar is made by the first record or byte counted (show).
	bar   atomic.Pointer[mpb.Bar]
	shown sync.Once
	ended atomic.Bool
}

// OptQuiet turns the progress display off.
var OptQuiet = Opt{Name: "q", Aliases: []string{"quiet"}, Native: true, Usage: quietUsage}

// OptQuietLong is OptQuiet for a tool whose -q means something else
// (pcprewrite: pmlogrewrite's -q, quick). Read either as c.Bool("quiet").
var OptQuietLong = Opt{Name: "quiet", Native: true, Usage: quietUsage}

const quietUsage = "no progress display (shown on standard error when it is a terminal)"

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && pipe.IsTerminal(f)
}

// StartProgress starts a display on stderr of a run that reads about total
// bytes, or returns nil when stderr is not a terminal, or quiet.
func StartProgress(stderr io.Writer, total int64, quiet bool) *Progress {
	if quiet || !IsTerminal(stderr) || total <= 0 {
		return nil
	}
	pr := &Progress{total: total}
	pr.p = mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond))
	return pr
}

// show makes the bar at the first record or byte, and returns it (nil
// once Done): a run that fails before it reads (an output that exists,
// say) says only why. Rejected: mpb's WithRenderDelay, whose release
// races with a bar that completes before its first frame (a small input
// then showed nothing at all).
func (pr *Progress) show() *mpb.Bar {
	pr.shown.Do(func() {
		pr.bar.Store(pr.p.New(pr.total, mpb.BarStyle(),
			mpb.PrependDecorators(decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")),
			mpb.AppendDecorators(
				decor.Any(func(decor.Statistics) string { return fmt.Sprintf(" %d records ", pr.records.Load()) }),
				decor.AverageSpeed(decor.SizeB1024(0), "% .1f"),
				decor.Name(" "),
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO), "done"),
			),
		))
	})
	return pr.bar.Load()
}

// StartFileProgress starts a display of a run that reads the files
// named, counting their bytes as they are read through Reader and the
// records (rows, lines) as Record or Count is told of them; nil when
// stderr is not a terminal, or quiet, or the total is unknown (no names:
// standard input; "-"; anything but a regular file), as for a stream.
func StartFileProgress(stderr io.Writer, names []string, quiet bool) *Progress {
	if quiet || len(names) == 0 {
		return nil
	}
	var total int64
	for _, n := range names {
		st, err := os.Stat(n)
		if n == "-" || err != nil || !st.Mode().IsRegular() {
			return nil
		}
		total += st.Size()
	}
	pr := StartProgress(stderr, total, false)
	if pr != nil {
		pr.read = true
	}
	return pr
}

// DataSize is the total size of the data volumes of archives: a
// display's total for a run that reads them through.
func DataSize(archives []*format.Archive) int64 {
	var n int64
	for _, a := range archives {
		n += a.DataSize()
	}
	return n
}

// Record counts one record read (and its bytes in a data volume, unless
// the bytes are counted by Reader).
func (pr *Progress) Record(rec stream.Record) {
	if pr == nil {
		return
	}
	pr.records.Add(1)
	b := pr.show()
	if r, ok := rec.(*stream.Result); ok && !pr.read && b != nil {
		b.IncrBy(len(r.Body) + 12) // the record's header, timestamp and trailer
	}
}

// Count counts one record (a row, a line) whose bytes Reader counts.
func (pr *Progress) Count() {
	if pr != nil {
		pr.records.Add(1)
		pr.show()
	}
}

// Reader returns r, counting the bytes read from it in pr.
func (pr *Progress) Reader(r io.Reader) io.Reader {
	if pr == nil {
		return r
	}
	return readFunc(func(p []byte) (int, error) {
		n, err := r.Read(p)
		if n > 0 {
			if b := pr.show(); b != nil {
				b.IncrBy(n)
			}
		}
		return n, err
	})
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// Showing returns it, counting in pr each record it yields; it itself
// when pr is nil. The wrapper hides what it may offer beyond
// stream.Iterator (its metadata, Close): wrap it where only the records
// are wanted.
func Showing(it stream.Iterator, pr *Progress) stream.Iterator {
	if pr == nil {
		return it
	}
	return &showing{Iterator: it, pr: pr}
}

type showing struct {
	stream.Iterator
	pr *Progress
}

func (s *showing) Next() bool {
	if !s.Iterator.Next() {
		return false
	}
	s.pr.Record(s.Iterator.At())
	return true
}

// Ending returns w, ending the display (complete) before the first write
// to it: for output that comes once the reading is over (a text gathered
// in memory), which must not be drawn over. The caller still ends it when
// nothing is written.
func (pr *Progress) Ending(w io.Writer) io.Writer {
	if pr == nil {
		return w
	}
	return writeFunc(func(p []byte) (int, error) {
		pr.Done(true)
		return w.Write(p)
	})
}

type writeFunc func([]byte) (int, error)

func (f writeFunc) Write(p []byte) (int, error) { return f(p) }

// Done ends the display: complete when ok, abandoned otherwise. Only the
// first call counts, so that a deferred Done(false) may follow the
// Done(true) of a run that succeeded.
func (pr *Progress) Done(ok bool) {
	if pr == nil || !pr.ended.CompareAndSwap(false, true) {
		return
	}
	pr.shown.Do(func() {}) // no bar after this one, if none yet
	switch b := pr.bar.Load(); {
	case b == nil:
	case ok:
		b.SetTotal(-1, true)
	default:
		b.Abort(false)
	}
	pr.p.Wait()
}
