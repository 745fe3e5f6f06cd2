package format

import (
	"io"
	"os"
	"sync"
)

// asyncWriter buffers a data volume's bytes in chunks and writes full
// chunks from a goroutine of its own, so that the write system calls (the
// copy into the page cache, and the start of write-back) and, for a zstd
// volume, the compression run on the other core while the caller reads,
// checks and encodes the next records. Bytes are copied into the chunk at
// Write: the caller's slice may change as soon as Write returns.
//
// A write error is sticky and comes back from a later Write or from
// Flush; after one, nothing more is written.
//
// A direct asyncWriter (newDirectWriter) has no goroutine: it writes each
// full chunk from the caller's, at once. A plain volume is written by one
// that tries the goroutine on the way (newPlainWriter: see writerTrial).
type asyncWriter struct {
	w        io.Writer
	direct   bool          // no goroutine: send writes
	buf      []byte        // being filled, nil when every chunk is away
	full     chan piece    // chunks and ranges to write
	free     chan []byte   // written chunks, back (nil for a range)
	done     chan struct{} // closed when the goroutine has ended
	made     int           // chunks allocated
	inflight int           // chunks sent and not yet back
	err      error         // sticky, caller's side
	inPlace  int           // commits taken (for tests)
	size     int           // bytes a chunk holds when sent
	out      int64         // bytes handed on: written, or sent to the goroutine
	trial    *writerTrial  // a plain volume's trial of the goroutine, until decided

	// Ranges of other files copied in by the kernel (copyFrom): rc does
	// it (nil: copyFrom is not offered); rng is the range not yet sent,
	// of rdup, the writer's own duplicate of the source file rsrc.
	rc   rangeCopier
	rng  rawRange
	rsrc *os.File
	rdup *os.File
	// chunks back from the goroutine while ranges were sent
	spare [][]byte

	mu    sync.Mutex
	bgErr error // the goroutine's first write error
}

const (
	// asyncChunk is a plain volume's chunk when written directly (and
	// in tests, newAsyncWriter's): small enough that the chunks stay in
	// the core's caches between the copy into them and the write system
	// call's copy out of them. With 1 MiB chunks that copy into the page
	// cache missed the cache and cost a third of a copy's CPU time on an
	// AMD EPYC host; at 128 KiB the system time of a 1 GiB copy fell by
	// about 40% (docs/benchmarks.md). The writer's goroutine, when a
	// trial keeps it, takes chunks of half the L2 (goroutineChunk).
	asyncChunk = 128 << 10
	// asyncChunkZ is a compressed volume's chunk: the compressor takes
	// whole frames from the caller's buffer without a copy when a
	// chunk holds one.
	asyncChunkZ = 1 << 20
	asyncChunks = 3
)

func newAsyncWriter(w io.Writer) *asyncWriter { return newAsyncWriterSize(w, asyncChunk) }

// newDirectWriter is an asyncWriter of asyncChunk chunks with no goroutine.
// On a host where waking a thread on the other core is dear (AMD EPYC
// family 26 under a paravirtualised kernel), a 1 GiB copy took 0.77 s of
// CPU (0.9 s wall, median of five) through the goroutine against 0.47 s
// (0.5 s) written directly: futex wake-ups, the scheduler, and the copy
// into the page cache from a chunk another core had filled. Elsewhere the
// goroutine won (writerTrial).
func newDirectWriter(w io.Writer) *asyncWriter {
	return &asyncWriter{w: w, direct: true, size: asyncChunk}
}

// newAsyncWriterSize is newAsyncWriter sending chunks of size bytes. A
// chunk's capacity is twice that: the room beyond lets a record encoded
// in place (space, commit) end there.
func newAsyncWriterSize(w io.Writer, size int) *asyncWriter {
	a := &asyncWriter{
		w:    w,
		size: size,
		full: make(chan piece, asyncChunks),
		free: make(chan []byte, freeRoom),
		done: make(chan struct{}),
	}
	go a.run()
	return a
}

// piece is what the goroutine is handed: a chunk to write, or (b nil) a
// range to copy.
type piece struct {
	b []byte
	r rawRange
}

// rawRange is n bytes at off of src to copy; last: src is closed after.
type rawRange struct {
	src    *os.File
	off, n int64
	last   bool
}

// rangeCopier appends n bytes of src at off to the output (writeback).
type rangeCopier interface {
	copyFrom(src *os.File, off, n int64) error
}

// freeRoom is the room of the channel that hands chunks back: the
// chunks, and a nil for each range in flight (emitRange takes those back
// before it sends another; at most asyncChunks+1 are in flight), so that
// the goroutine never waits to hand one back.
const freeRoom = 2*asyncChunks + 2

// rawRangeMax bounds a range sent at once, so that the goroutine starts
// copying while the reader reads on.
const rawRangeMax = 4 << 20

func (a *asyncWriter) run() {
	defer close(a.done)
	var err error
	for p := range a.full {
		if p.b == nil {
			if err == nil {
				err = a.doRange(p.r)
			} else {
				a.endRange(p.r)
			}
			if err != nil {
				a.mu.Lock()
				a.bgErr = err
				a.mu.Unlock()
			}
			a.free <- nil
			continue
		}
		if err == nil {
			if _, err = a.w.Write(p.b); err != nil {
				a.mu.Lock()
				a.bgErr = err
				a.mu.Unlock()
			}
		}
		a.free <- p.b[:0]
	}
}

// chunk returns an empty chunk: a written one if any is back, a new one
// while fewer than asyncChunks exist, else the next to come back.
func (a *asyncWriter) chunk() []byte {
	if a.direct {
		a.made = 1
		return make([]byte, 0, 2*a.size)
	}
	if k := len(a.spare); k > 0 {
		b := a.spare[k-1]
		a.spare = a.spare[:k-1]
		return b
	}
	for {
		select {
		case b := <-a.free:
			a.inflight--
			if b != nil {
				return b
			}
			continue // a range's
		default:
		}
		break
	}
	if a.made < asyncChunks {
		a.made++
		return make([]byte, 0, 2*a.size)
	}
	for {
		b := <-a.free
		a.inflight--
		if b != nil {
			return b
		}
	}
}

// copyFrom appends n bytes of src at off, to be copied by the kernel
// (rc) in order with the bytes written; consecutive ranges of one file
// are copied together. src stays the caller's: the writer copies from a
// duplicate of it, which it closes when done.
func (a *asyncWriter) copyFrom(src *os.File, off, n int64) error {
	if err := a.check(); err != nil {
		return err
	}
	if src != a.rsrc {
		a.emitRange(true)
		dup, err := dupFile(src)
		if err != nil {
			return err
		}
		a.rsrc, a.rdup = src, dup
	}
	if len(a.buf) > 0 {
		a.send()
	}
	if a.rng.n > 0 && a.rng.off+a.rng.n == off {
		a.rng.n += n
	} else {
		a.emitRange(false)
		a.rng = rawRange{src: a.rdup, off: off, n: n}
	}
	if a.rng.n >= rawRangeMax {
		a.emitRange(false)
	}
	a.step()
	return a.check()
}

// continues reports whether off of src is where the range being gathered
// ends: a copy from there would only lengthen it.
func (a *asyncWriter) continues(src *os.File, off int64) bool {
	return a.rng.n > 0 && src == a.rsrc && a.rng.off+a.rng.n == off
}

// emitRange sends the pending range, if any, to be copied; with last,
// the duplicate source file goes with it, to be closed once copied.
func (a *asyncWriter) emitRange(last bool) {
	r := a.rng
	a.rng = rawRange{}
	if last {
		if a.rdup == nil {
			return
		}
		r.src, r.last = a.rdup, true
		a.rsrc, a.rdup = nil, nil
	} else if r.n == 0 {
		return
	}
	a.out += r.n
	if a.direct {
		if a.err == nil {
			a.err = a.doRange(r)
		} else {
			a.endRange(r)
		}
		return
	}
	// The goroutine hands back a nil for each range: take those back
	// before sending, so that free (room for freeRoom) never fills.
	for drained := false; !drained; {
		select {
		case b := <-a.free:
			a.inflight--
			if b != nil {
				a.spare = append(a.spare, b)
			}
		default:
			drained = true
		}
	}
	a.full <- piece{r: r}
	a.inflight++
}

// doRange copies r, and closes its source if it was the last.
func (a *asyncWriter) doRange(r rawRange) error {
	var err error
	if r.n > 0 {
		err = a.rc.copyFrom(r.src, r.off, r.n)
	}
	a.endRange(r)
	return err
}

func (a *asyncWriter) endRange(r rawRange) {
	if r.last {
		r.src.Close()
	}
}

func (a *asyncWriter) send() {
	if a.direct {
		a.writeDirect(a.buf)
		a.buf = a.buf[:0]
		return
	}
	a.out += int64(len(a.buf))
	a.full <- piece{b: a.buf}
	a.inflight++
	a.buf = nil
}

func (a *asyncWriter) check() error {
	if a.err == nil {
		a.mu.Lock()
		a.err = a.bgErr
		a.mu.Unlock()
	}
	return a.err
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	if err := a.check(); err != nil {
		return 0, err
	}
	n := len(p)
	if a.rng.n > 0 {
		a.emitRange(false)
	}
	if a.direct && len(p) >= a.size {
		// A slice of a chunk or more (a large result) fills the chunk
		// being filled, and whole chunks of the rest are written from
		// the slice itself: copied into chunks, a 2 MB result of
		// pcpmmv record cost 0.75 ms a sample to write, 0.6 ms without.
		if a.buf == nil {
			a.buf = a.chunk()
		}
		k := min(a.size-len(a.buf), len(p))
		a.buf = append(a.buf, p[:k]...)
		p = p[k:]
		a.send()
		rest := len(p) &^ (a.size - 1)
		a.writeDirect(p[:rest])
		p = p[rest:]
		if err := a.check(); err != nil {
			return n - len(p), err
		}
	}
	for len(p) > 0 {
		if a.buf == nil {
			a.buf = a.chunk()
		}
		k := min(a.size-len(a.buf), len(p))
		a.buf = append(a.buf, p[:k]...)
		p = p[k:]
		if len(a.buf) >= a.size {
			a.send()
			if err := a.check(); err != nil {
				return n - len(p), err
			}
		}
	}
	a.step()
	return n, nil
}

// space returns the room in the chunk being filled after the next head
// bytes, less tail bytes: where the caller may build bytes that commit
// then writes without a copy. Any other call spoils it.
func (a *asyncWriter) space(head, tail int) []byte {
	if a.err != nil {
		return nil
	}
	if a.rng.n > 0 {
		a.emitRange(false)
	}
	if a.buf == nil {
		a.buf = a.chunk()
	}
	at := len(a.buf) + head
	return a.buf[at : at : cap(a.buf)-tail]
}

// commit writes head, body and tail, when body was built where space
// said (for this head and tail); false, writing nothing, when it was not.
func (a *asyncWriter) commit(head, body, tail []byte) (bool, error) {
	if err := a.check(); err != nil {
		return false, err
	}
	at := len(a.buf) + len(head)
	if a.buf == nil || len(body) == 0 || at+len(body)+len(tail) > cap(a.buf) ||
		&body[0] != &a.buf[at : at+1][0] {
		return false, nil
	}
	a.buf = append(a.buf, head...)
	a.buf = a.buf[:at+len(body)]
	a.buf = append(a.buf, tail...)
	a.inPlace++
	for len(a.buf) >= a.size {
		// Whole chunks only, as Write sends them: the file is written
		// in aligned pieces, which the page cache takes best. What
		// lies beyond starts the next chunk.
		full := a.buf
		if a.direct {
			a.writeDirect(full[:a.size])
			a.buf = full[:copy(full, full[a.size:])]
			continue
		}
		a.buf = append(a.chunk(), full[a.size:]...)
		a.out += int64(a.size)
		a.full <- piece{b: full[:a.size]}
		a.inflight++
	}
	a.step()
	return true, a.check()
}

// writeDirect writes b at once (direct writers); an error is sticky.
func (a *asyncWriter) writeDirect(b []byte) {
	if a.err != nil || len(b) == 0 {
		return
	}
	a.out += int64(len(b))
	if _, err := a.w.Write(b); err != nil {
		a.err = err
	}
}

// Flush writes what is buffered and waits until every chunk is written.
func (a *asyncWriter) Flush() error {
	a.emitRange(true)
	if len(a.buf) > 0 {
		a.send()
	}
	for a.inflight > 0 {
		b := <-a.free
		a.inflight--
		if a.buf == nil {
			a.buf = b
		}
	}
	return a.check()
}

// stop ends the goroutine, after it has written (or, after an error,
// dropped) the chunks already sent. What is still in buf is dropped: Flush
// first to keep it.
func (a *asyncWriter) stop() {
	if !a.direct && a.full != nil {
		close(a.full)
		<-a.done
		a.full = nil
	}
	if a.rdup != nil { // (not flushed: an error)
		a.rdup.Close()
		a.rsrc, a.rdup, a.rng = nil, nil, rawRange{}
	}
}
