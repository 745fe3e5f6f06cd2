package dump

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// libpcp's -Dpdu trace of the data records a PCP tool reads from an
// archive (__pmLogRead): for each record decoded, __pmPrintResult's dump
// of the result, a "__pmLogRead timestamp=" line and the record's bytes
// from its timestamp to its end (the length words left out) as 32-bit
// words in the host's order (little-endian here), eight to a line. PCP's
// QA test 482 reads values out of it. The two addresses libpcp prints
// are its own buffer's, which no one can reproduce: here the buffer
// starts at 0, so they are 0xc and 0xc plus the record's length.
//
// Which records are traced follows libpcp's reading, in the cases a
// dump takes: the archive's last record when the archive is opened
// (pmGetArchiveEnd reads it backwards), then every record read on the
// way through the window, <mark>s and records out of time order
// included. libpcp's positioning at a -S time reads a few records more
// (backwards, from the temporal index's entry), and -r reads one more as
// it turns round; those are not traced.

// tracePDU writes the trace of one record read, rec a *stream.Result or a
// *stream.Mark. origin is the context's position when libpcp decodes it
// (the previous record's time, or the window's start): instance names
// are looked up in the domain as it was then, as pmNameInDom does.
func (d *dumper) tracePDU(rec stream.Record, origin stream.Timestamp) {
	d.tracePDUDecoded(rec, origin)
	d.tracePDUWords(rec)
}

// pduResult is a record as tracePDU dumps it: a <mark> is a result with
// no value sets.
func (d *dumper) pduResult(rec stream.Record) *stream.Result {
	res, ok := rec.(*stream.Result)
	if !ok {
		res = &stream.Result{T: rec.Time(), Version: uint8(d.vers), Body: []byte{0, 0, 0, 0}}
	}
	return res
}

// tracePDUDecoded is the first half of tracePDU, as libpcp prints it
// while it decodes the record (before -Dlog's time of it).
func (d *dumper) tracePDUDecoded(rec stream.Record, origin stream.Timestamp) {
	res := d.pduResult(rec)
	ver := func(id stream.InDomID) *indomVersion {
		if l := d.meta.indomsBy[id]; l != nil {
			return l.at(origin)
		}
		return nil
	}
	d.warn.Write(appendResultDump(nil, res, &ArchiveMeta{d.meta}, ver, d.loc, -1, 0))
}

// tracePDUWords is the second half: the __pmLogRead line and the
// record's words.
func (d *dumper) tracePDUWords(rec stream.Record) {
	res := d.pduResult(rec)
	var b []byte
	raw := appendRecordBytes(nil, res)
	swabBlocks(raw, res.Version)
	b = append(b, "__pmLogRead timestamp="...)
	b = appendTraceTime(b, res.T, d.loc)
	b = fmt.Appendf(b, " 0x%x ... 0x%x\n", 12, 12+len(raw)+8)
	b = appendWords(b, raw)
	d.warn.Write(b)
}

// traceEnd traces the archive's last record, as libpcp reads it when it
// locates the archive's end: the last in the file, whatever its time (a
// full read of the archive here, for a debugging trace).
func (d *dumper) traceEnd() {
	it := d.a.records(nil)
	defer it.Close()
	var last stream.Record
	var res stream.Result
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Result:
			res.T, res.Version, res.Body = r.T, r.Version, append(res.Body[:0], r.Body...)
			last = &res
		case *stream.Mark:
			last = &stream.Mark{T: r.T}
		}
	}
	if last != nil {
		d.tracePDU(last, d.start)
	}
}

// appendRecordBytes appends a result's record as libpcp's buffer holds it,
// without its length words: the timestamp (v2: seconds and microseconds,
// 32 bits each; v3: 64-bit seconds, its two words swapped, and 32-bit
// nanoseconds), then the body.
func appendRecordBytes(dst []byte, res *stream.Result) []byte {
	if res.Version >= 3 {
		// (libpcp's buffer has the two words of the seconds swapped,
		// each still in the file's order)
		dst = binary.BigEndian.AppendUint32(dst, uint32(res.T.Sec))
		dst = binary.BigEndian.AppendUint32(dst, uint32(uint64(res.T.Sec)>>32))
		dst = binary.BigEndian.AppendUint32(dst, uint32(res.T.Nsec))
	} else {
		dst = binary.BigEndian.AppendUint32(dst, uint32(res.T.Sec))
		dst = binary.BigEndian.AppendUint32(dst, uint32(res.T.Nsec/1000))
	}
	return append(dst, res.Body...)
}

// appendWords appends libpcp's dumpbuf of b: "NNN: " and eight words a
// line, each "%8x ".
func appendWords(dst, b []byte) []byte {
	n := len(b) / 4
	dst = append(dst, "000: "...)
	for j := 0; j < n; j++ {
		if j > 0 && j%8 == 0 {
			dst = fmt.Appendf(dst, "\n%03d: ", j)
		}
		dst = fmt.Appendf(dst, "%8x ", binary.LittleEndian.Uint32(b[4*j:]))
	}
	return append(dst, '\n')
}

// appendTraceTime appends a time as __pmPrintTimestamp prints it:
// HH:MM:SS and nine digits of the second.
func appendTraceTime(dst []byte, t stream.Timestamp, loc *time.Location) []byte {
	return time.Unix(t.Sec, int64(t.Nsec)).In(loc).AppendFormat(dst, "15:04:05.000000000")
}

// swabBlocks turns raw's value blocks to the host's order as
// __pmDecodeResult leaves them in libpcp's buffer (__ntohpmValueBlock):
// the type and length word; a 64-bit integer, double or float value; an
// event array's counts, timestamps and numeric parameters. The other
// words stay as they are in the file (the decoder copies them out). A
// block is turned each time a value points at it, as libpcp does. raw has
// been checked as a result (its blocks lie inside it); anything that
// does not fit is left alone.
func swabBlocks(raw []byte, version uint8) {
	base := 12 // the PDU buffer's three header words, before the timestamp
	body := 8  // where the body starts in raw
	if version >= 3 {
		body = 12
	}
	word := func(off int) (uint32, bool) {
		if off < 0 || off+4 > len(raw) {
			return 0, false
		}
		return binary.BigEndian.Uint32(raw[off:]), true
	}
	numpmid, ok := word(body)
	if !ok {
		return
	}
	off := body + 4
	for range numpmid {
		numval, ok := word(off + 4)
		if !ok {
			return
		}
		off += 8
		if int32(numval) <= 0 {
			continue
		}
		valfmt, ok := word(off)
		if !ok || uint64(numval)*8 > uint64(len(raw)) {
			return
		}
		off += 4
		for j := 0; j < int(numval); j++ {
			if valfmt != stream.ValInsitu {
				if vindex, ok := word(off + 4); ok && vindex <= uint32(len(raw)) {
					swabBlock(raw, int(vindex)*4-base)
				}
			}
			off += 8
		}
	}
}

// swabBlock is __ntohpmValueBlock of the block at raw[off:].
func swabBlock(raw []byte, off int) {
	if off < 0 || off+4 > len(raw) {
		return
	}
	hdr := binary.BigEndian.Uint32(raw[off:])
	binary.LittleEndian.PutUint32(raw[off:], hdr)
	vtype, vbuf := stream.Type(hdr>>24), off+4
	switch vtype {
	case stream.TypeU64, stream.Type64, stream.TypeDouble:
		reverse(raw, vbuf, 8)
	case stream.TypeFloat:
		reverse(raw, vbuf, 4)
	case stream.TypeEvent, stream.TypeHighresEvent:
		swabEvents(raw, vbuf, vtype == stream.TypeHighresEvent)
	}
}

// swabEvents is libpcp's ntohEventArray from the array's record count at
// raw[off:].
func swabEvents(raw []byte, off int, highres bool) {
	u32 := func(off int) (uint32, bool) {
		if off < 0 || off+4 > len(raw) {
			return 0, false
		}
		v := binary.BigEndian.Uint32(raw[off:])
		binary.LittleEndian.PutUint32(raw[off:], v)
		return v, true
	}
	nrecords, ok := u32(off)
	if !ok {
		return
	}
	off += 4
	for range nrecords {
		if highres {
			reverse(raw, off, 8)
			reverse(raw, off+8, 8)
			off += 16
		} else {
			u32(off)
			u32(off + 4)
			off += 8
		}
		flags, ok1 := u32(off)
		nparams, ok2 := u32(off + 4)
		if !ok1 || !ok2 {
			return
		}
		off += 8
		if flags&eventFlagMissed != 0 {
			nparams = 0
		}
		for range nparams {
			u32(off) // the parameter's PMID
			tl, ok := u32(off + 4)
			if !ok {
				return
			}
			switch v := off + 8; stream.Type(tl >> 24) {
			case stream.Type32, stream.TypeU32:
				u32(v)
			case stream.Type64, stream.TypeU64, stream.TypeDouble:
				reverse(raw, v, 8)
			case stream.TypeFloat:
				reverse(raw, v, 4)
			}
			off += 4 + (int(tl&0xffffff)+3)&^3
		}
	}
}

// reverse reverses the n bytes at raw[off:], when they are there.
func reverse(raw []byte, off, n int) {
	if off < 0 || off+n > len(raw) {
		return
	}
	b := raw[off : off+n]
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}
