package format

import (
	"encoding/binary"
	"runtime/debug"

	"github.com/pcptools/pcptools/stream"
)

// Checking ahead. The structural check of every result (stream.Result's
// Validate) is most of what reading a data volume costs once the volume is
// mapped: it touches every value set, so it takes the page faults and the
// cache misses. For a mapped volume a goroutine runs that check ahead of
// the reader, on the other core, while the reader's caller does its own
// work (writing, merging, rewriting); the reader then skips the check for
// records already found good.
//
// The checker only ever says "everything before offset X is good". It
// stops at the first record it cannot frame or that fails the check, and
// the reader, reaching that record, frames and checks it itself, so every
// error and warning is the reader's own, in order, exactly as without the
// checker.

// aheadQueue is how many reports may wait: the checker runs at most about
// aheadQueue reports of ground (plus a record) ahead of what the reader
// has taken, and a report is a quarter of the reader's resident window
// (recReader.window), so the pages the checker has touched and the reader
// not yet released stay within about twice that window.
const aheadQueue = 2

type aheadChecker struct {
	stop     chan struct{}
	done     chan struct{}
	progress chan int64
	to       int64 // everything before this offset is good (reader's view)
	ended    bool  // progress is closed
}

// startChecker checks the data records of the mapped volume b from offset
// off on, reporting progress every window/4 bytes or so.
func startChecker(b []byte, off int64, version, window int) *aheadChecker {
	c := &aheadChecker{
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		progress: make(chan int64, aheadQueue),
		to:       off,
	}
	go c.run(b, off, version, int64(max(window/4, 16<<10)))
	return c
}

func (c *aheadChecker) run(b []byte, off int64, version int, batch int64) {
	defer close(c.done)
	defer close(c.progress)
	// The volume cut short under the mapping faults: stop, and leave the
	// reader to meet the fault itself (tools report it; see
	// toolio.GuardFaults).
	debug.SetPanicOnFault(true)
	defer endOnFault()
	var res stream.Result
	minLen := int64(DataHeaderSize(version) + 8)
	size := int64(len(b))
	told := off
	for size-off >= 4 {
		n := int64(binary.BigEndian.Uint32(b[off:]))
		if n < minLen || n > MaxRecord || n > size-off {
			break
		}
		rec := b[off : off+n]
		if int64(binary.BigEndian.Uint32(rec[n-4:])) != n {
			break
		}
		mark, err := DecodeData(rec, version, &res)
		if err != nil || (!mark && res.Validate() != nil) {
			break
		}
		off += n
		if off-told >= batch {
			select {
			case c.progress <- off:
				told = off
			case <-c.stop:
				return
			}
		}
	}
	if off > told {
		select {
		case c.progress <- off:
		case <-c.stop:
		}
	}
}

// covers reports whether the records before end are known good, waiting
// for the checker when it has not got that far yet.
func (c *aheadChecker) covers(end int64) bool {
	for c.to < end {
		if c.ended {
			return false
		}
		v, ok := <-c.progress
		if !ok {
			c.ended = true
			return false
		}
		c.to = v
	}
	return true
}

// endOnFault, deferred by a goroutine that reads a mapping with faults
// made panics (debug.SetPanicOnFault), ends it quietly on a memory fault;
// any other panic goes on.
func endOnFault() {
	if r := recover(); r != nil {
		if _, ok := r.(interface{ Addr() uintptr }); !ok {
			panic(r)
		}
	}
}

// halt stops the checker and waits for it to let go of the mapping.
func (c *aheadChecker) halt() {
	close(c.stop)
	<-c.done
}
