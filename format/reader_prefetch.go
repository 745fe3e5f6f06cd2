package format

import (
	"runtime/debug"
)

// Prefetching. When the reader leaves its checks to its consumer
// (DeferChecks: pcprewrite), no checker runs ahead of it, and the
// reader's own goroutine would meet every page of a mapped volume first:
// the page faults, the reads from memory, and the release of the pages
// behind it. A prefetcher takes those to the other core: it reads a word
// of every cache line a little ahead of the reader (pages faulted in, and
// lines in the cache the two cores share) and releases the pages the
// reader has left behind. It never judges a byte: what the reader reads
// is the same with or without it.

// prefetchAhead is how far ahead of the reader the prefetcher reads:
// enough to stay ahead over a large record, little enough to stay in the
// shared cache.
const prefetchAhead = 2 << 20

type prefetcher struct {
	pos  chan int // the reader's offset, latest only
	stop chan struct{}
	done chan struct{}
}

// startPrefetch reads the mapping b ahead of offset off, and releases the
// pages more than window bytes behind the offsets tell gives it.
func startPrefetch(b []byte, off, window int) *prefetcher {
	p := &prefetcher{pos: make(chan int, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.run(b, off, window)
	return p
}

// prefetchSink keeps the prefetcher's reads from being optimized away.
var prefetchSink byte

func (p *prefetcher) run(b []byte, off, window int) {
	defer close(p.done)
	// A volume cut short under the mapping faults: stop, and leave the
	// reader to meet the fault itself (see toolio.GuardFaults).
	debug.SetPanicOnFault(true)
	defer endOnFault()
	read := off // read up to here
	kept := 0   // pages before this are released
	var x byte
	for r := off; ; {
		for to := min(len(b), r+prefetchAhead); read < to; read += 64 {
			x += b[read]
		}
		prefetchSink = x
		kept = releaseBefore(b, kept, r-window)
		select {
		case r = <-p.pos:
		case <-p.stop:
			return
		}
	}
}

// tell gives the prefetcher the reader's offset; it never waits.
func (p *prefetcher) tell(off int) {
	for {
		select {
		case p.pos <- off:
			return
		default:
		}
		select {
		case <-p.pos: // a stale offset, not yet taken
		default:
		}
	}
}

// halt stops the prefetcher and waits for it to let go of the mapping.
func (p *prefetcher) halt() {
	close(p.stop)
	<-p.done
}
