package format

import (
	"runtime"
	"sync"

	"github.com/pcptools/pcptools/stream"
)

// End returns the time of the archive's last data record (a result or a
// <mark>), as libpcp's __pmGetArchiveEnd finds it; ok is false when the
// archive has no data. The scan starts at the last temporal index entry
// when that entry leads to data, and at the start otherwise, so a sound
// index makes it cheap; the answer is remembered. A damaged record ends
// the archive here as it does for libpcp: the time of the last good
// record is returned, with no error, when there is one.
func (a *Archive) End() (t stream.Timestamp, ok bool, err error) {
	a.endOnce.Do(func() { a.end, a.endOK, a.endErr = a.findEnd() })
	return a.end, a.endOK, a.endErr
}

func (a *Archive) findEnd() (stream.Timestamp, bool, error) {
	scan := func(opts ...RecordsOption) (stream.Timestamp, bool, error) {
		bp := endBufs.Get().(*[]byte)
		defer endBufs.Put(bp)
		it := a.Records(append(opts, DataOnly(), BufferSize(endBufSize), parkVolumes(), ReadBuffer(*bp))...)
		defer it.Close()
		var last stream.Timestamp
		found := false
		for it.Next() {
			switch r := it.At().(type) {
			case *stream.Result, *stream.Mark:
				last = r.Time()
				found = true
			}
		}
		return last, found, it.Err()
	}
	if idx, _ := a.Index(); len(idx) > 0 {
		if t, ok, err := scan(From(idx[len(idx)-1].T)); err == nil && ok {
			return t, true, nil
		}
	}
	t, ok, err := scan()
	if err != nil && ok {
		return t, true, nil
	}
	return t, ok, err
}

// FindEnds finds the End of every archive in archives (nil entries are
// skipped), several at once: finding an end decodes the tail of the last
// volume, which for a compressed archive is a whole block (10 MiB for
// pmlogger_daily's xz), and a merge needs every input's. The answers are
// remembered, so End then returns at once.
func FindEnds(archives []*Archive) {
	workers := min(runtime.GOMAXPROCS(0), len(archives))
	if workers <= 1 {
		return
	}
	next := make(chan *Archive)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range next {
				a.End()
			}
		}()
	}
	for _, a := range archives {
		if a != nil {
			next <- a
		}
	}
	close(next)
	wg.Wait()
}

// endBufSize is the buffer findEnd reads the tail of a volume through.
const endBufSize = 16 << 10

// endBufs holds findEnd's buffers: FindEnds reads the tail of every input
// of a merge, and a buffer each would be garbage as soon as used.
var endBufs = sync.Pool{New: func() any { b := make([]byte, endBufSize); return &b }}

// parkVolumes makes Records leave each compressed volume it closes open
// for the next reader of it (reader_spare.go).
func parkVolumes() RecordsOption {
	return func(o *recordsOptions) { o.park = true }
}
