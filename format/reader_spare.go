package format

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pcptools/pcptools/format/compress"
)

// Finding an archive's end (End) reads the tail of its last volume, which
// for a compressed volume means decoding a whole block: 10 MiB for
// pmlogger_daily's xz. A merge finds every input's end before it reads any
// input through, and then decoded that block a second time: a quarter of
// the CPU time of merging xz archives (perf, 8 hourly archives). So the
// scan of End leaves a compressed volume open, its decoded blocks cached,
// and the next reader of that volume takes it over; a reader that took it
// and stops before the volume's end (a merge opens every input, reads its
// first record and closes it again until its turn comes) passes it on.
//
// The files kept are bounded across the process by spareBudget bytes of
// decoded data (a file counts as its size, at most a file's block cache),
// and each archive keeps one file per volume; what no reader takes is
// closed when the Archive is garbage.

// spareBudget bounds the decoded bytes that spare files hold in all.
const spareBudget = 256 << 20

// spareCacheBytes is what a spare file is counted as at most: compress's
// default cache of decoded blocks per file.
const spareCacheBytes = 32 << 20

var spareBytes atomic.Int64

type spareFiles struct {
	mu    sync.Mutex
	files map[string]rdFile
}

func spareCost(f rdFile) int64 { return min(f.Size(), spareCacheBytes) }

// park keeps f, a volume's file at path, for the next reader of that
// volume, and reports whether it did; the caller closes it otherwise.
func (a *Archive) park(path string, f rdFile) bool {
	if _, suffix := compress.SplitSuffix(path); suffix == "" {
		return false // a plain volume is mapped: nothing to save
	}
	cost := spareCost(f)
	if spareBytes.Add(cost) > spareBudget {
		spareBytes.Add(-cost)
		return false
	}
	a.spareMu.Lock()
	if a.spares == nil {
		a.spares = &spareFiles{files: map[string]rdFile{}}
		runtime.AddCleanup(a, (*spareFiles).closeAll, a.spares)
	}
	s := a.spares
	a.spareMu.Unlock()
	s.mu.Lock()
	old := s.files[path]
	s.files[path] = f
	s.mu.Unlock()
	if old != nil {
		spareBytes.Add(-spareCost(old))
		old.Close()
	}
	return true
}

// takeSpare returns the parked file of the volume at path, at its start,
// or nil.
func (a *Archive) takeSpare(path string) rdFile {
	a.spareMu.Lock()
	s := a.spares
	a.spareMu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	f := s.files[path]
	delete(s.files, path)
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	spareBytes.Add(-spareCost(f))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil
	}
	return f
}

func (s *spareFiles) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for path, f := range s.files {
		spareBytes.Add(-spareCost(f))
		f.Close()
		delete(s.files, path)
	}
}

// Warm starts decoding, in the background, the start of the archive's
// first volume when that volume is compressed, and keeps its file for the
// next reader of it. A merge of archives that follow one another in time
// calls it for the input whose turn comes next, so that decoding it
// overlaps the reading of the one before. It does nothing for a plain
// archive, or when the spare files' budget is spent.
func (a *Archive) Warm() {
	if len(a.vols) == 0 {
		return
	}
	path := a.vols[0].path
	if _, suffix := compress.SplitSuffix(path); suffix == "" {
		return
	}
	off := int64(LabelSize(a.label.Version))
	a.spareMu.Lock()
	s := a.spares
	a.spareMu.Unlock()
	if s != nil {
		s.mu.Lock()
		f := s.files[path]
		if w, ok := f.(compress.Warmer); ok {
			w.Warm(off)
		}
		s.mu.Unlock()
		if f != nil {
			return
		}
	}
	f, err := openFile(path)
	if err != nil {
		return // the reader will say
	}
	if w, ok := f.(compress.Warmer); ok {
		w.Warm(off)
	}
	if !a.park(path, f) {
		f.Close()
	}
}

// DataSize is the decompressed size of the archive's data volumes, as
// they were at Open: what a copy of it reads, for a progress display.
func (a *Archive) DataSize() int64 {
	var n int64
	for _, v := range a.vols {
		n += v.size
	}
	return n
}
