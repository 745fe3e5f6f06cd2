package summary

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Summarising on several cores: the records are read once, on one
// goroutine, and handed in batches to every worker; each worker
// accumulates only the metrics it owns. A metric's statistics depend on
// nothing but its own values and the marks, so the split changes no
// number: each metric sees exactly the arithmetic of one accumulator.
//
// Ownership is decided without talking: every worker sees the same
// records in the same order and runs the same greedy rule when a metric
// first shows up with values (to the worker with the fewest values so
// far), so all agree on the owner of each metric.
//
// Warnings (-v) and traces (-D) are printed in record order by
// pmlogsummary, and reduced archives carry state across metrics; those
// runs take one worker.

// maxWorkers bounds the workers: each one walks every value set's header,
// so more of them than this buys little.
const maxWorkers = 4

// Batches: a batch holds copies of consecutive records' bodies (the
// reader reuses its buffer), and goes to every worker; the last worker
// done with it gives it back to the pool.
const (
	batchBytes = 1 << 20
	batchRecs  = 4096
	batchPool  = 8
)

// workers is how many workers this run uses.
func (s *summarizer) workers() int {
	if s.o.Verbose || s.o.Debug.Appl0 || s.o.Debug.Appl1 || s.o.Debug.Appl2 || s.red != nil {
		return 1
	}
	n := s.o.Workers
	if n == 0 {
		// PCPTOOLS_SUMMARY_WORKERS: for measuring (docs/benchmarks.md).
		if v, err := strconv.Atoi(os.Getenv("PCPTOOLS_SUMMARY_WORKERS")); err == nil && v > 0 {
			n = v
		} else {
			n = min(runtime.GOMAXPROCS(0), maxWorkers)
		}
	}
	return max(n, 1)
}

// split is one worker's view of who owns which metric.
type split struct {
	part  int
	owner map[stream.PMID]int
	load  []int64 // values of the metrics each worker owns, at first sight
	stubs map[stream.PMID]*metricStats
}

func newSplit(part, parts int) *split {
	return &split{part: part, owner: map[stream.PMID]int{}, load: make([]int64, parts),
		stubs: map[stream.PMID]*metricStats{}}
}

// mine reports whether this worker owns metric p, deciding the owner the
// first time p is asked about (with numval values in its first set).
func (sp *split) mine(p stream.PMID, numval int32) bool {
	o, ok := sp.owner[p]
	if !ok {
		for i := range sp.load {
			if sp.load[i] < sp.load[o] {
				o = i
			}
		}
		sp.owner[p] = o
		sp.load[o] += int64(max(numval, 1))
	}
	return o == sp.part
}

// stub is the placeholder for a metric another worker owns.
func (sp *split) stub(p stream.PMID) *metricStats {
	m := sp.stubs[p]
	if m == nil {
		m = &metricStats{pmid: p, foreign: true}
		sp.stubs[p] = m
	}
	return m
}

type batchRec struct {
	ts      timeval
	t       stream.Timestamp
	version uint8
	mark    bool
	off, n  int
	// where the reader read it ("" when it cannot say): for the message
	// of a value that cannot be read (CorruptError)
	file string
	at   int64
}

// Where implements stream.Locator: the accumulator's loc while it adds
// the record.
func (x *batchRec) Where() (string, int64, bool) { return x.file, x.at, x.file != "" }

type batch struct {
	recs []batchRec
	buf  []byte
	refs atomic.Int32
}

// run hands the batch's records to one worker's accumulator.
func (b *batch) run(a *accumulator, f func(*stream.Result, timeval) error) error {
	var r stream.Result
	defer func() { a.loc = nil }()
	for i := range b.recs {
		x := &b.recs[i]
		if x.mark {
			a.mark(x.ts)
			continue
		}
		r = stream.Result{T: x.t, Version: x.version, Body: b.buf[x.off : x.off+x.n]}
		a.loc = x
		if err := f(&r, x.ts); err != nil {
			return err
		}
	}
	return nil
}

// parallel is run's two passes over the window with n workers; the
// metrics end up in s.acc as if one accumulator had read them.
func (s *summarizer) parallel(n int) error {
	accs := make([]*accumulator, n)
	for i := range accs {
		if i == 0 {
			accs[i] = s.acc
		} else {
			accs[i] = newAccumulator(&s.o, s.descs)
			accs[i].say = s.acc.say
		}
		accs[i].split = newSplit(i, n)
	}
	fatal := func() error {
		for _, a := range accs {
			if a.fatal != nil {
				s.acc.fatal = a.fatal
				return a.fatal
			}
		}
		return nil
	}
	fetchErr := s.parallelPass(accs, false)
	if err := fatal(); err != nil {
		return err
	}
	if s.o.Bins > 0 {
		for _, a := range accs {
			a.binning = true
		}
		if err := s.parallelPass(accs, true); err != nil && fetchErr == nil {
			fetchErr = err
		}
	}
	for _, a := range accs[1:] {
		for p, m := range a.metrics {
			s.acc.metrics[p] = m
		}
	}
	return fetchErr
}

// parallelPass is pass with the records shared out to accs' workers.
func (s *summarizer) parallelPass(accs []*accumulator, binning bool) error {
	it := s.a.Records(format.DataOnly(), format.From(s.start.stamp()))
	defer it.Close()
	loc, _ := stream.As[stream.Locator](it)
	seen := s.o.OnRecord
	if binning {
		seen = nil
	}
	// Batches are made as the reader needs them, up to batchPool: a
	// small archive fits one, and zeroing the pool's 9 MiB up front
	// cost more than summarising it.
	free := make(chan *batch, batchPool)
	made := 0
	take := func() *batch {
		select {
		case b := <-free:
			return b
		default:
		}
		if made < batchPool {
			made++
			return &batch{buf: make([]byte, 0, batchBytes), recs: make([]batchRec, 0, batchRecs)}
		}
		return <-free
	}
	var stop atomic.Bool
	errs := make([]error, len(accs))
	ins := make([]chan *batch, len(accs))
	var wg sync.WaitGroup
	for i, a := range accs {
		ins[i] = make(chan *batch, batchPool)
		f := a.add
		if binning {
			f = a.bin
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ins[i] {
				if errs[i] == nil && !stop.Load() {
					if err := b.run(a, f); err != nil {
						errs[i] = err
						stop.Store(true)
					}
				}
				if b.refs.Add(-1) == 0 {
					b.recs, b.buf = b.recs[:0], b.buf[:0]
					free <- b
				}
			}
		}()
	}
	b := take()
	send := func() {
		b.refs.Store(int32(len(accs)))
		for _, c := range ins {
			c <- b
		}
		b = take()
	}
	past := false // the window ended before the records did
	var shapeErr error
	for !stop.Load() && it.Next() {
		rec := it.At()
		if seen != nil {
			seen(rec)
		}
		switch r := rec.(type) {
		case *stream.Mark:
			ts := toTimeval(r.T)
			if past = !ts.notAfter(s.finish); past {
				break
			}
			b.recs = append(b.recs, batchRec{ts: ts, mark: true})
			if s.shape != nil && !binning {
				s.shape.mark()
			}
		case *stream.Result:
			ts := toTimeval(r.T)
			if past = !ts.notAfter(s.finish); past {
				break
			}
			if s.shape != nil && !binning {
				if r.NumPMID() == 0 {
					s.shape.mark()
				} else if err := s.shape.add(r); err != nil {
					shapeErr = err
					stop.Store(true)
					break
				}
			}
			if r.NumPMID() == 0 {
				b.recs = append(b.recs, batchRec{ts: ts, mark: true})
				break
			}
			if len(b.recs) > 0 && len(b.buf)+len(r.Body) > cap(b.buf) {
				send()
			}
			off := len(b.buf)
			b.buf = append(b.buf, r.Body...)
			x := batchRec{ts: ts, t: r.T, version: r.Version, off: off, n: len(r.Body)}
			if loc != nil {
				x.file, x.at, _ = loc.Where()
			}
			b.recs = append(b.recs, x)
		}
		if past {
			break
		}
		if len(b.recs) >= batchRecs {
			send()
		}
	}
	if len(b.recs) > 0 {
		send()
	}
	for _, c := range ins {
		close(c)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if shapeErr != nil {
		return shapeErr
	}
	if past {
		return nil
	}
	return it.Err()
}
