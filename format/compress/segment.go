package compress

import (
	"container/list"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// segment is one independently decodable piece of a compressed file: an xz
// block or a zstd frame.
type segment struct {
	coff, clen int64 // compressed extent in the file
	uoff, ulen int64 // decompressed extent
	idx        int   // the format's own number for it (block, frame)
}

// segDecodeFunc decodes seg into dst (len(dst) == seg.ulen), reading the
// compressed bytes from r.
type segDecodeFunc func(r io.ReaderAt, seg *segment, dst []byte) error

// segSource serves a file made of segments, decoding each on demand and
// keeping the most recently used ones.
type segSource struct {
	segs     []segment // contiguous in decompressed space, none empty
	r        io.ReaderAt
	decode   segDecodeFunc
	maxBytes int64 // cache budget
	ahead    int   // segments to decode ahead of sequential access
	onClose  func()
	closer   io.Closer
	// head, when set, decodes the first want bytes (or more) of a segment
	// cheaply; see readHead.
	head func(r io.ReaderAt, seg *segment, want int64) ([]byte, bool)

	cancel atomic.Bool // set by close: in-flight decodes stop reading
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	entries map[int]*cacheEntry
	lru     list.List // of *cacheEntry, most recent at the front
	bytes   int64
	last    int      // segment of the previous access, for read-ahead
	free    [][]byte // buffers of evicted entries, for reuse
	// The head of one segment, kept while nothing else of it is decoded.
	headIdx int
	headBuf []byte
}

// headLimit bounds the reads readHead serves: the label and first records
// of a volume, which tools read on their own (to learn an archive's
// volumes and times) before they read the volume through.
const headLimit = 256 << 10

// headSpan is how far a head decode can run past what was asked: an xz
// head ends at an LZMA2 chunk boundary.
const headSpan = lzma2MaxChunk

// cacheEntry is one decoded segment. done is closed when data/err are set.
// refs counts readers copying out of data and the decoder filling it; the
// buffer goes back to the free list only when it is evicted and unused.
type cacheEntry struct {
	idx     int
	elem    *list.Element
	done    chan struct{}
	data    []byte
	err     error
	refs    int
	evicted bool
}

func newSegSource(r io.ReaderAt, segs []segment, decode segDecodeFunc, opt Options) *segSource {
	var maxSeg int64
	for i := range segs {
		maxSeg = max(maxSeg, segs[i].ulen)
	}
	s := &segSource{
		segs:     segs,
		r:        r,
		decode:   decode,
		maxBytes: max(opt.CacheBytes, int64(opt.ReadAhead+2)*maxSeg),
		ahead:    opt.ReadAhead,
		entries:  make(map[int]*cacheEntry),
		last:     -1,
	}
	return s
}

// find returns the segment holding decompressed offset off.
func (s *segSource) find(off int64) int {
	lo, hi := 0, len(s.segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.segs[m].uoff+s.segs[m].ulen > off {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

func (s *segSource) readAt(p []byte, off int64, short bool) (int, error) {
	n := 0
	for n < len(p) {
		i := s.find(off)
		if i == len(s.segs) {
			return n, io.EOF
		}
		if k, ok := s.readHead(i, p[n:], off, short); ok {
			n += k
			off += int64(k)
			if short {
				break
			}
			continue
		}
		e, err := s.get(i)
		if err != nil {
			return n, err
		}
		if e.err != nil {
			err := e.err
			s.release(e)
			return n, err
		}
		seg := &s.segs[i]
		k := copy(p[n:], e.data[off-seg.uoff:])
		s.release(e)
		n += k
		off += int64(k)
		if short {
			break
		}
	}
	return n, nil
}

// readHead serves a read that lies within the first headLimit bytes of
// segment i, when the segment is not decoded or decoding, from a decode of
// just its head. A File opened to read a label, then closed, then costs a
// fraction of the block; a File read through decodes the whole block at
// the first read past the head, and no more heads of it. A Read (short)
// that starts in the head gets only what the head holds: a reader that
// wants one record asks for a buffer's worth.
func (s *segSource) readHead(i int, p []byte, off int64, short bool) (int, bool) {
	if s.head == nil {
		return 0, false
	}
	seg := &s.segs[i]
	rel := off - seg.uoff
	end := min(rel+int64(len(p)), seg.ulen)
	if short && rel < headLimit {
		end = min(end, headLimit)
	}
	// A head is never the whole segment: the segment's check (which only
	// a whole decode can verify) then always runs before all of it has
	// been read, and a segment small enough to decode whole is decoded
	// whole.
	if end > headLimit || seg.ulen <= headLimit+headSpan {
		return 0, false
	}
	s.mu.Lock()
	if _, ok := s.entries[i]; ok || s.closed {
		s.mu.Unlock()
		return 0, false
	}
	var h []byte
	if s.headIdx == i {
		h = s.headBuf
	}
	s.mu.Unlock()
	if int64(len(h)) < end {
		var ok bool
		h, ok = s.head(cancelReaderAt{s.r, &s.cancel}, seg, max(end, 2*int64(len(h)), 64<<10))
		if !ok || int64(len(h)) < end {
			return 0, false
		}
		s.mu.Lock()
		s.headIdx, s.headBuf = i, h
		s.mu.Unlock()
	}
	return copy(p, h[rel:end]), true
}

// get returns segment i decoded, holding a reference the caller must
// release.
func (s *segSource) get(i int) (*cacheEntry, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, os.ErrClosed
	}
	// The first access says nothing about the next: a File opened for its
	// label, or for the records at one index entry, should not pay for a
	// block it will not read.
	sequential := s.last >= 0 && (i == s.last+1 || i == s.last)
	s.last = i
	if s.headIdx == i {
		s.headBuf = nil
	}
	e, ok := s.entries[i]
	if ok {
		s.lru.MoveToFront(e.elem)
		e.refs++
	} else {
		e = s.insert(i)
		e.refs++ // ours; the decoder below holds no separate one
	}
	if sequential {
		for j := i + 1; j <= i+s.ahead && j < len(s.segs); j++ {
			s.prefetch(j)
		}
	}
	s.mu.Unlock()
	if !ok {
		s.fill(e)
	}
	<-e.done
	return e, nil
}

// insert adds an empty entry for segment i, evicting old ones to stay in
// budget. s.mu must be held.
func (s *segSource) insert(i int) *cacheEntry {
	e := &cacheEntry{idx: i, done: make(chan struct{})}
	e.elem = s.lru.PushFront(e)
	s.entries[i] = e
	s.bytes += s.segs[i].ulen
	for s.bytes > s.maxBytes {
		back := s.lru.Back()
		if back == nil || back == e.elem {
			break
		}
		s.evict(back.Value.(*cacheEntry))
	}
	return e
}

// evict drops e from the cache. s.mu must be held.
func (s *segSource) evict(e *cacheEntry) {
	s.lru.Remove(e.elem)
	delete(s.entries, e.idx)
	s.bytes -= s.segs[e.idx].ulen
	e.evicted = true
	if e.refs == 0 {
		s.recycle(e)
	}
}

// recycle keeps an unused buffer for the next decode. s.mu must be held.
func (s *segSource) recycle(e *cacheEntry) {
	if e.data != nil && len(s.free) < 2 {
		s.free = append(s.free, e.data[:0])
	}
	e.data = nil
}

// prefetch starts decoding segment j in the background unless it is
// cached or under way. s.mu must be held.
func (s *segSource) prefetch(j int) {
	if _, ok := s.entries[j]; ok {
		return
	}
	e := s.insert(j)
	e.refs++
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.fill(e)
		s.release(e)
	}()
}

// fill decodes e's segment. The caller holds a reference to e.
func (s *segSource) fill(e *cacheEntry) {
	seg := &s.segs[e.idx]
	s.mu.Lock()
	var buf []byte
	for k, b := range s.free {
		if int64(cap(b)) >= seg.ulen {
			buf = b[:seg.ulen]
			s.free = append(s.free[:k], s.free[k+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if buf == nil {
		buf = make([]byte, seg.ulen)
	}
	err := s.decode(cancelReaderAt{s.r, &s.cancel}, seg, buf)
	if err != nil {
		buf = nil
	}
	e.data, e.err = buf, err
	close(e.done)
}

// release drops a reference taken by get or prefetch.
func (s *segSource) release(e *cacheEntry) {
	s.mu.Lock()
	e.refs--
	if e.refs == 0 && e.evicted {
		s.recycle(e)
	}
	s.mu.Unlock()
}

func (s *segSource) close() error {
	s.mu.Lock()
	s.closed = true
	s.entries = nil
	s.headBuf = nil
	s.lru.Init()
	s.free = nil
	s.mu.Unlock()
	s.cancel.Store(true)
	s.wg.Wait()
	if s.onClose != nil {
		s.onClose()
	}
	return closeBoth(nil, s.closer)
}

// cancelReaderAt stops background decodes promptly once the file is closed.
type cancelReaderAt struct {
	r      io.ReaderAt
	cancel *atomic.Bool
}

func (c cancelReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.cancel.Load() {
		return 0, os.ErrClosed
	}
	return c.r.ReadAt(p, off)
}
