package reduce

import (
	"os"
	"runtime"
	"sync/atomic"

	"github.com/pcptools/pcptools/stream"
)

// The output of a native reduction is encoded and written on a goroutine
// of its own while the caller reads and accumulates the next interval:
// on the 1 GiB bench archive at -t 60, encoding the intervals' results
// and writing them (1.4 GB) was over half of a run's time.
//
// At an interval's end the caller copies each metric-instance's interval
// (accum, a few words) into a snapshot and hands the snapshot over; the
// writer builds and writes the result from it. Every other record the
// caller writes (metadata, <mark>s) goes through the same queue, cloned,
// so the output's order is the caller's. A write error stops the writer;
// the caller sees it at its next hand-over, or when it stops the writer.

// snap is one metric-instance's interval, as the writer gets it.
type snap struct {
	m     *nMetric
	inst  int32
	lastS string
	acc   accum
}

// job is an interval's snapshots, or a record to write.
type job struct {
	snaps []snap
	end   int64
	rec   stream.Record
}

// snapBuffers is how many intervals can be in hand at once: one being
// filled, one queued, one being written.
const snapBuffers = 3

// pipelined: a writer goroutine, when there is a core for it.
// PCPTOOLS_REDUCE_WRITER=direct writes on the caller's goroutine (to
// measure; docs/benchmarks.md).
func pipelined() bool {
	return runtime.GOMAXPROCS(0) > 1 && os.Getenv("PCPTOOLS_REDUCE_WRITER") != "direct"
}

// startWriter starts the writer goroutine.
func (n *native) startWriter() {
	n.wq = make(chan job, snapBuffers-1)
	n.wfree = make(chan []snap, snapBuffers)
	for range snapBuffers {
		n.wfree <- nil
	}
	n.wdone = make(chan struct{})
	go func() {
		defer close(n.wdone)
		for j := range n.wq {
			if n.werr == nil {
				if j.rec != nil {
					n.werr = n.w.Write(j.rec)
				} else {
					n.werr = n.writeInterval(j.snaps, j.end)
				}
				if n.werr != nil {
					n.failed.Store(true)
				}
			}
			if j.rec == nil {
				n.wfree <- j.snaps[:0]
			}
		}
	}()
}

// stopWriter lets the writer finish what is queued, and returns its
// error. After it, writes are the caller's again.
func (n *native) stopWriter() error {
	if n.wq != nil {
		close(n.wq)
		<-n.wdone
		n.wq = nil
	}
	return n.werr
}

// emit writes a record, after the intervals and records before it.
func (n *native) emit(r stream.Record) error {
	if n.wq == nil {
		return n.w.Write(r)
	}
	if n.failed.Load() {
		return n.stopWriter()
	}
	n.wq <- job{rec: stream.CloneRecord(r)}
	return nil
}

// snapshot takes the current interval's metric-instances out of it.
func (n *native) snapshot() []snap {
	var snaps []snap
	if n.wq != nil {
		snaps = <-n.wfree
	} else {
		snaps = n.snaps[:0]
	}
	for _, st := range n.touched {
		snaps = append(snaps, snap{m: st.m, inst: st.inst, lastS: st.lastS, acc: st.acc})
		st.touched = false
	}
	n.touched = n.touched[:0]
	return snaps
}

// writeSnaps writes the interval ending at end from its snapshots.
func (n *native) writeSnaps(snaps []snap, end int64) error {
	if n.wq == nil {
		n.snaps = snaps
		return n.writeInterval(snaps, end)
	}
	if n.failed.Load() {
		n.wfree <- snaps
		return n.stopWriter()
	}
	n.wq <- job{snaps: snaps, end: end}
	return nil
}

// writer state, in native
type writerState struct {
	snaps  []snap // the caller's, when there is no writer
	wq     chan job
	wfree  chan []snap
	wdone  chan struct{}
	werr   error // the writer's; read after wdone
	failed atomic.Bool
}
