package toolio

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/pcptools/pcptools/stream"
	"github.com/pcptools/pcptools/stream/pipe"
)

// Progress shows how far a long run has got (bytes and records done, the
// rate, the time left) on standard error when that is a terminal, and
// nothing otherwise: never on the data stream, never in a log. It is drawn
// by github.com/vbauerster/mpb (kept up, one dependency-light package,
// redraws in place at a fixed rate from its own goroutine, so the copy
// pays an atomic add per record). A nil *Progress does nothing.
type Progress struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	records atomic.Int64
	start   time.Time
}

// OptQuiet turns the progress display off.
var OptQuiet = Opt{Name: "q", Aliases: []string{"quiet"}, Native: true,
	Usage: "no progress display (shown on standard error when it is a terminal)"}

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
	pr := &Progress{start: time.Now()}
	pr.p = mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond))
	pr.bar = pr.p.New(total, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")),
		mpb.AppendDecorators(
			decor.Any(func(decor.Statistics) string { return fmt.Sprintf(" %d records ", pr.records.Load()) }),
			decor.AverageSpeed(decor.SizeB1024(0), "% .1f"),
			decor.Name(" "),
			decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO), "done"),
		),
	)
	return pr
}

// Record counts one record read.
func (pr *Progress) Record(rec stream.Record) {
	if pr == nil {
		return
	}
	pr.records.Add(1)
	if r, ok := rec.(*stream.Result); ok {
		pr.bar.IncrBy(len(r.Body) + 12) // the record's header, timestamp and trailer
	}
}

// Done ends the display: complete when ok, abandoned otherwise.
func (pr *Progress) Done(ok bool) {
	if pr == nil {
		return
	}
	if ok {
		pr.bar.SetTotal(-1, true)
	} else {
		pr.bar.Abort(false)
	}
	pr.p.Wait()
}
