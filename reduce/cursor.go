package reduce

import (
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// drec is a data record held by the cursor: a result (body copied) or a
// <mark>, numbered in file order.
type drec struct {
	seq  int64
	t    stream.Timestamp
	rel  float64 // seconds since the archive's start, as libpcp computes it
	mark bool
	res  stream.Result
	vol  int32 // where the record is: volume, byte offset
	off  int64
}

// Look-ahead bounds: beyond them the cursor reads ahead with a second
// reader instead of buffering (see the package doc).
const (
	maxBufRecords = 1 << 14
	maxBufBytes   = 16 << 20
)

// cursor reads an archive's data records once, in file order, keeping the
// records read ahead of the consumer in a bounded buffer.
type cursor struct {
	a     *format.Archive
	it    stream.CloserIterator
	buf   []*drec // unconsumed records, oldest first, from head
	head  int
	bytes int
	free  []*drec
	seq   int64 // number of records pulled so far
	eof   bool
	err   error
	rel   func(t stream.Timestamp) float64
	// Of the records pulled, the last one's time and how many at its end
	// share it: where a second reader resumes (see scanAhead).
	lastT    stream.Timestamp
	lastSame int
	// onPull sees every record as it enters the buffer.
	onPull func(*drec) error
	// Where the next record read lies.
	vol int32
	off int64
}

func newCursor(a *format.Archive, rel func(stream.Timestamp) float64) *cursor {
	c := &cursor{a: a, it: a.Records(format.DataOnly()), rel: rel}
	if vs := a.Volumes(); len(vs) > 0 {
		c.vol = int32(vs[0])
	}
	c.off = int64(format.LabelSize(a.Version()))
	return c
}

func (c *cursor) close() {
	if c.it != nil {
		c.it.Close()
	}
}

// pull reads the next data record into the buffer; false at the end or on
// an error (c.err).
func (c *cursor) pull() bool {
	if c.eof || c.err != nil {
		return false
	}
	for c.it.Next() {
		var d *drec
		if n := len(c.free); n > 0 {
			d, c.free = c.free[n-1], c.free[:n-1]
		} else {
			d = &drec{}
		}
		hdr := int64(format.DataHeaderSize(c.a.Version()))
		switch r := c.it.At().(type) {
		case *stream.Result:
			d.mark = false
			d.t = r.T
			d.res.T, d.res.Version = r.T, r.Version
			d.res.Body = append(d.res.Body[:0], r.Body...)
			d.vol, d.off = c.vol, c.off
			c.off += hdr + int64(len(r.Body)) + 4
		case *stream.Mark:
			d.mark = true
			d.t = r.T
			d.res.Body = d.res.Body[:0]
			d.vol, d.off = c.vol, c.off
			c.off += hdr + 8
		case *stream.Label:
			if r.Vol >= 0 {
				c.vol, c.off = r.Vol, int64(format.LabelSize(c.a.Version()))
			}
			c.free = append(c.free, d)
			continue
		default:
			c.free = append(c.free, d)
			continue
		}
		d.seq = c.seq
		d.rel = c.rel(d.t)
		c.seq++
		if d.t == c.lastT && c.seq > 1 {
			c.lastSame++
		} else {
			c.lastT, c.lastSame = d.t, 1
		}
		c.buf = append(c.buf, d)
		c.bytes += len(d.res.Body)
		if c.onPull != nil {
			if err := c.onPull(d); err != nil {
				c.err = err
				return false
			}
		}
		return true
	}
	if err := c.it.Err(); err != nil {
		c.err = err
		return false
	}
	c.eof = true
	return false
}

// peek returns the i-th unconsumed record, reading as needed; nil at the
// end (or on an error: see c.err).
func (c *cursor) peek(i int) *drec {
	for c.head+i >= len(c.buf) {
		if !c.pull() {
			return nil
		}
	}
	return c.buf[c.head+i]
}

// pending is the number of records read and not consumed.
func (c *cursor) pending() int { return len(c.buf) - c.head }

// full reports whether the look-ahead buffer has reached its bounds.
func (c *cursor) full() bool {
	return c.pending() >= maxBufRecords || c.bytes >= maxBufBytes
}

// pop consumes the oldest unconsumed record.
func (c *cursor) pop() {
	d := c.buf[c.head]
	c.bytes -= len(d.res.Body)
	c.buf[c.head] = nil
	c.head++
	c.free = append(c.free, d)
	if c.head == len(c.buf) {
		c.buf, c.head = c.buf[:0], 0
	} else if c.head > 1024 && c.head*2 > len(c.buf) {
		n := copy(c.buf, c.buf[c.head:])
		clear(c.buf[n:])
		c.buf, c.head = c.buf[:n], 0
	}
}

// scanAhead reads the records after everything pulled so far with a
// second reader, without keeping them, calling fn on each (numbered as
// the cursor will number them) until fn returns false or the archive
// ends; it reports whether the end was reached.
func (c *cursor) scanAhead(fn func(*drec) bool) (bool, error) {
	var opts []format.RecordsOption
	opts = append(opts, format.DataOnly())
	skip := 0
	if c.seq > 0 {
		opts = append(opts, format.From(c.lastT))
		skip = c.lastSame
	}
	it := c.a.Records(opts...)
	defer it.Close()
	d := &drec{}
	seq := c.seq
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Result:
			d.mark, d.t = false, r.T
			d.res.T, d.res.Version, d.res.Body = r.T, r.Version, r.Body
		case *stream.Mark:
			d.mark, d.t = true, r.T
			d.res.Body = nil
		default:
			continue
		}
		if c.seq > 0 {
			if d.t.Before(c.lastT) {
				continue
			}
			if d.t == c.lastT && skip > 0 {
				skip--
				continue
			}
		}
		d.seq = seq
		seq++
		d.rel = c.rel(d.t)
		if !fn(d) {
			return false, nil
		}
	}
	return true, it.Err()
}
