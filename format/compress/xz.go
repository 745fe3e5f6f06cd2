package compress

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"sync/atomic"

	"github.com/ulikunitz/xz"
)

// xz container layout (xz-file-format 1.0.4), as used here:
//
//	stream  = header(12) block* index footer(12), then 0 or more 4-byte
//	          groups of zero padding before the next stream
//	header  = fd '7zXZ' 00, flags(2), crc32(flags)
//	footer  = crc32(backward, flags), backward(4) = index size/4 - 1,
//	          flags(2), 'YZ'
//	index   = 00, count, count*(unpadded size, uncompressed size),
//	          zero padding to 4, crc32
//	block   = header((first byte+1)*4 bytes, ends in crc32), data,
//	          padding to 4, check (0, 4, 8, 16, 32 or 64 bytes by flags)
//
// Sizes in the index and the block header are "multibyte integers": 7 bits
// per byte, low bits first, high bit set on all but the last byte.
const (
	xzHeaderLen = 12
	xzFooterLen = 12
	xzMaxVarint = 9
)

// xzBlock is one block found through the index.
type xzBlock struct {
	num      int     // position in the file, from 0
	flags    [2]byte // the stream's flags (check type)
	coff     int64   // start of the block header in the file
	unpadded int64   // header + data + check, without padding
	usize    int64   // decompressed size
}

func pad4(n int64) int64 { return (n + 3) &^ 3 }

func (d *opener) xzErr(off int64, format string, args ...any) *FormatError {
	return formatErr(d.name, formatXZ, off, fmt.Sprintf(format, args...), nil)
}

func (d *opener) truncErr(off int64, what string) *FormatError {
	return formatErr(d.name, d.ft, off, "truncated: "+what, io.ErrUnexpectedEOF)
}

// readFull reads exactly len(p) bytes at off of the compressed input.
func (d *opener) readFull(p []byte, off int64, what string) error {
	if off < 0 || off > d.size || int64(len(p)) > d.size-off {
		return d.truncErr(off, what+" extends past the end of the file")
	}
	n, err := d.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		return d.truncErr(off, what+" extends past the end of the file")
	}
	return fmt.Errorf("%s: reading %s at offset %d: %w", d.name, what, off, err)
}

// xzIndex walks the file backwards from its end, stream by stream, and
// returns every block in file order.
func (d *opener) xzIndex() ([]xzBlock, error) {
	if d.size%4 != 0 {
		return nil, d.xzErr(d.size, "file size %d is not a multiple of four (truncated or trailing garbage)", d.size)
	}
	var streams [][]xzBlock
	pos := d.size
	var buf [256]byte
	for pos > 0 {
		// Stream padding: zero bytes in groups of four.
		for pos > 0 {
			n := min(pos, int64(len(buf)))
			if err := d.readFull(buf[:n], pos-n, "stream padding"); err != nil {
				return nil, err
			}
			z := 0
			for z < int(n) && buf[int(n)-1-z] == 0 {
				z++
			}
			pos -= int64(z &^ 3)
			if z < int(n) {
				break
			}
		}
		if pos == 0 {
			return nil, d.xzErr(0, "no stream before the padding")
		}
		blocks, start, err := d.xzStream(pos)
		if err != nil {
			return nil, err
		}
		streams = append(streams, blocks)
		pos = start
	}
	var all []xzBlock
	for i := len(streams) - 1; i >= 0; i-- {
		all = append(all, streams[i]...)
	}
	for i := range all {
		all[i].num = i
	}
	return all, nil
}

// xzStream reads the stream that ends at end and returns its blocks and the
// offset where it starts.
func (d *opener) xzStream(end int64) ([]xzBlock, int64, error) {
	if end < xzHeaderLen+xzFooterLen {
		return nil, 0, d.truncErr(0, "xz stream shorter than its header and footer")
	}
	footOff := end - xzFooterLen
	var foot [xzFooterLen]byte
	if err := d.readFull(foot[:], footOff, "stream footer"); err != nil {
		return nil, 0, err
	}
	if foot[10] != 'Y' || foot[11] != 'Z' {
		return nil, 0, d.xzErr(footOff, "no stream footer magic (truncated file?)")
	}
	if crc32.ChecksumIEEE(foot[4:10]) != binary.LittleEndian.Uint32(foot[0:4]) {
		return nil, 0, d.xzErr(footOff, "stream footer CRC32 mismatch")
	}
	var flags [2]byte
	copy(flags[:], foot[8:10])
	if flags[0] != 0 || flags[1]&0xf0 != 0 {
		return nil, 0, d.xzErr(footOff+8, "unsupported stream flags %02x %02x", flags[0], flags[1])
	}
	indexLen := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	indexOff := footOff - indexLen
	if indexOff < xzHeaderLen {
		return nil, 0, d.xzErr(footOff, "index size %d exceeds the stream", indexLen)
	}
	recs, err := d.xzReadIndex(indexOff, indexLen)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, r := range recs {
		total += pad4(r.unpadded)
		if total > indexOff {
			return nil, 0, d.xzErr(indexOff, "index lists more block bytes than precede it")
		}
	}
	start := indexOff - total - xzHeaderLen
	if start < 0 {
		return nil, 0, d.xzErr(indexOff, "index lists more block bytes than precede it")
	}
	var head [xzHeaderLen]byte
	if err := d.readFull(head[:], start, "stream header"); err != nil {
		return nil, 0, err
	}
	if !bytes.Equal(head[:6], magicXZ) {
		return nil, 0, d.xzErr(start, "no stream header where the index says the stream starts")
	}
	if crc32.ChecksumIEEE(head[6:8]) != binary.LittleEndian.Uint32(head[8:12]) {
		return nil, 0, d.xzErr(start, "stream header CRC32 mismatch")
	}
	if head[6] != flags[0] || head[7] != flags[1] {
		return nil, 0, d.xzErr(start, "stream header and footer flags differ")
	}
	blocks := make([]xzBlock, len(recs))
	off := start + xzHeaderLen
	for i, r := range recs {
		blocks[i] = xzBlock{flags: flags, coff: off, unpadded: r.unpadded, usize: r.usize}
		off += pad4(r.unpadded)
	}
	return blocks, start, nil
}

type xzRecord struct{ unpadded, usize int64 }

// xzReadIndex parses the index at [off, off+n) without trusting its record
// count: records are appended as they are read, and each takes at least two
// bytes of the index.
func (d *opener) xzReadIndex(off, n int64) ([]xzRecord, error) {
	ir := &crcByteReader{br: bufio.NewReaderSize(io.NewSectionReader(d.r, off, n), 4096)}
	pos := func() int64 { return off + ir.n }
	varint := func(what string) (int64, error) {
		v, _, err := readXZVarint(ir)
		if err != nil {
			fe := d.xzErr(pos(), "index: %s: %v", what, err)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				fe.Err = io.ErrUnexpectedEOF
			}
			return 0, fe
		}
		return v, nil
	}
	if ind, err := ir.ReadByte(); err != nil || ind != 0 {
		return nil, d.xzErr(off, "no index indicator where the footer says the index is")
	}
	count, err := varint("record count")
	if err != nil {
		return nil, err
	}
	var recs []xzRecord
	for i := int64(0); i < count; i++ {
		u, err := varint("unpadded size")
		if err != nil {
			return nil, err
		}
		s, err := varint("uncompressed size")
		if err != nil {
			return nil, err
		}
		if u < 5 || u > 1<<62 {
			return nil, d.xzErr(pos(), "index record %d: unpadded size %d out of range", i, u)
		}
		recs = append(recs, xzRecord{unpadded: u, usize: s})
	}
	// Padding to a multiple of four, then the CRC32 of everything before.
	for ir.n%4 != 0 {
		b, err := ir.ReadByte()
		if err != nil {
			return nil, d.truncErr(pos(), "index padding")
		}
		if b != 0 {
			return nil, d.xzErr(pos()-1, "index padding is not zero")
		}
	}
	want := ir.crc
	var stored [4]byte
	if _, err := io.ReadFull(ir.br, stored[:]); err != nil {
		return nil, d.truncErr(pos(), "index CRC32")
	}
	if binary.LittleEndian.Uint32(stored[:]) != want {
		return nil, d.xzErr(pos(), "index CRC32 mismatch")
	}
	if ir.n+4 != n {
		return nil, d.xzErr(pos(), "index is %d bytes, footer says %d", ir.n+4, n)
	}
	return recs, nil
}

// crcByteReader reads bytes one at a time, keeping their CRC32 and count.
type crcByteReader struct {
	br  *bufio.Reader
	crc uint32
	n   int64
}

func (c *crcByteReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err != nil {
		return 0, err
	}
	c.crc = crc32.Update(c.crc, crc32.IEEETable, []byte{b})
	c.n++
	return b, nil
}

// readXZVarint reads a multibyte integer and returns it and its length.
func readXZVarint(br io.ByteReader) (int64, int, error) {
	var v uint64
	for i := 0; i < xzMaxVarint; i++ {
		b, err := br.ReadByte()
		if err != nil {
			return 0, i, io.ErrUnexpectedEOF
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if b == 0 && i > 0 {
				return 0, i + 1, errors.New("non-minimal integer encoding")
			}
			if v > 1<<63-1 {
				return 0, i + 1, errors.New("integer overflow")
			}
			return int64(v), i + 1, nil
		}
	}
	return 0, xzMaxVarint, errors.New("integer longer than 9 bytes")
}

func appendXZVarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// openXZ indexes an xz file and serves its blocks on demand, or decodes it
// whole when a block is too large to cache.
func (d *opener) openXZ() (File, error) {
	blocks, err := d.xzIndex()
	if err != nil {
		return nil, err
	}
	var size int64
	whole := false
	segs := make([]segment, 0, len(blocks))
	for i := range blocks {
		b := &blocks[i]
		if b.usize > d.opt.MaxSegment {
			whole = true
		}
		if b.usize > 1<<62-size {
			return nil, d.xzErr(b.coff, "decompressed sizes overflow")
		}
		if b.usize > 0 {
			segs = append(segs, segment{coff: b.coff, clen: pad4(b.unpadded), uoff: size, ulen: b.usize, idx: i})
		}
		size += b.usize
	}
	if whole {
		return d.materialize(func(w io.Writer) error {
			for i := range blocks {
				if err := d.xzBlockTo(w, &blocks[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	dec := func(r io.ReaderAt, seg *segment, dst []byte) error {
		return d.xzDecodeBlock(r, &blocks[seg.idx], dst)
	}
	src := newSegSource(d.r, segs, dec, d.opt)
	src.closer = d.closer
	src.head = func(r io.ReaderAt, seg *segment, want int64) ([]byte, bool) {
		return d.xzDecodeHead(r, &blocks[seg.idx], want)
	}
	return newFile(d.name, size, src), nil
}

// xzDecodeBlock decodes one block into dst.
func (d *opener) xzDecodeBlock(r io.ReaderAt, b *xzBlock, dst []byte) error {
	clen := pad4(b.unpadded)
	// LZMA2 never grows data by more than a few bytes per 64 KiB chunk, so
	// a block much larger than its output is corrupt; refusing it bounds
	// the read buffer by the (already bounded) decompressed size.
	if limit := b.usize + b.usize/16 + 4096; clen > limit {
		return d.xzErr(b.coff, "block %d: %d compressed bytes for %d decompressed bytes", b.num, clen, b.usize)
	}
	raw := make([]byte, clen, clen+lzmaSlack) // see decodeLZMA2
	if err := readAtFull(r, raw, b.coff); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return d.truncErr(b.coff, fmt.Sprintf("block %d", b.num))
		}
		return fmt.Errorf("%s: reading xz block at offset %d: %w", d.name, b.coff, err)
	}
	if d.opt.genericXZ {
	} else if ok, err := d.xzDecodeLZMA2Block(raw, b, dst); ok {
		return err
	}
	zr, err := d.xzBlockReader(bytes.NewReader(raw), b)
	if err != nil {
		return err
	}
	n, err := io.ReadFull(zr, dst)
	if err == nil {
		// Reading on to the end makes the decoder verify the block's check
		// and our synthetic index, which catches a block longer than the
		// index says.
		var one [1]byte
		var k int
		k, err = zr.Read(one[:])
		if k > 0 {
			err = errors.New("block decodes to more bytes than the index says")
		} else if err == io.EOF {
			err = nil
		}
	}
	if err != nil {
		return d.blockErr(b, int64(n), err)
	}
	return nil
}

func (d *opener) blockErr(b *xzBlock, decoded int64, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	msg := fmt.Sprintf("block %d corrupt after %d of its %d decompressed bytes", b.num, decoded, b.usize)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = fmt.Sprintf("block %d ends after %d of its %d decompressed bytes", b.num, decoded, b.usize)
	}
	return formatErr(d.name, formatXZ, b.coff, msg, err)
}

// xzWholeInMemory counts the blocks xzBlockTo decoded into memory whole,
// for the tests.
var xzWholeInMemory atomic.Int64

// xzBlockTo decodes one block from the file straight into w. A block that
// fits in w's memory (a spill still in memory) is decoded whole by
// xzDecodeBlock, through the fast LZMA2 decoder where it can, into a buffer
// the spill keeps without a copy: a file of one large block (what a plain
// `xz FILE` writes) otherwise went through ulikunitz/xz at half the speed.
func (d *opener) xzBlockTo(w io.Writer, b *xzBlock) error {
	if s, ok := w.(*spill); ok && s.roomFor(b.usize) {
		dst := make([]byte, b.usize)
		if err := d.xzDecodeBlock(d.r, b, dst); err != nil {
			return err
		}
		s.adopt(dst)
		xzWholeInMemory.Add(1)
		return nil
	}
	body := bufio.NewReaderSize(io.NewSectionReader(d.r, b.coff, pad4(b.unpadded)), 256<<10)
	zr, err := d.xzBlockReader(body, b)
	if err != nil {
		return err
	}
	n, err := io.Copy(w, io.LimitReader(zr, b.usize))
	if err != nil {
		if errors.Is(err, errTooBig) {
			return err
		}
		return d.blockErr(b, n, err)
	}
	if n < b.usize {
		return d.blockErr(b, n, io.ErrUnexpectedEOF)
	}
	var one [1]byte
	k, err := zr.Read(one[:])
	if k > 0 {
		err = errors.New("block decodes to more bytes than the index says")
	} else if err == io.EOF {
		err = nil
	}
	if err != nil {
		return d.blockErr(b, n, err)
	}
	return nil
}

// xzBlockReader wraps the block that body starts with (header first; body
// may run past the block) into a one-block stream and returns its decoder.
func (d *opener) xzBlockReader(body io.Reader, b *xzBlock) (io.Reader, error) {
	var hsize [1]byte
	if _, err := io.ReadFull(body, hsize[:]); err != nil {
		return nil, d.truncErr(b.coff, fmt.Sprintf("block %d header", b.num))
	}
	if hsize[0] == 0 {
		return nil, d.xzErr(b.coff, "block %d: index indicator where the index says a block starts", b.num)
	}
	hlen := (int(hsize[0]) + 1) * 4
	if int64(hlen) > b.unpadded {
		return nil, d.xzErr(b.coff, "block %d: header of %d bytes in a block of %d", b.num, hlen, b.unpadded)
	}
	hdr := make([]byte, hlen)
	hdr[0] = hsize[0]
	if _, err := io.ReadFull(body, hdr[1:]); err != nil {
		return nil, d.truncErr(b.coff, fmt.Sprintf("block %d header", b.num))
	}
	if crc32.ChecksumIEEE(hdr[:hlen-4]) != binary.LittleEndian.Uint32(hdr[hlen-4:]) {
		return nil, d.xzErr(b.coff, "block %d: header CRC32 mismatch", b.num)
	}
	capLZMA2Dict(hdr, min(b.usize, d.opt.MaxSize, maxXZDict))

	// Synthetic stream: header, this block, a one-record index, footer.
	head := make([]byte, 0, xzHeaderLen+hlen)
	head = append(head, magicXZ...)
	head = append(head, b.flags[0], b.flags[1])
	head = binary.LittleEndian.AppendUint32(head, crc32.ChecksumIEEE(b.flags[:]))
	head = append(head, hdr...)

	tail := make([]byte, 0, 64)
	tail = append(tail, 0)
	tail = appendXZVarint(tail, 1)
	tail = appendXZVarint(tail, uint64(b.unpadded))
	tail = appendXZVarint(tail, uint64(b.usize))
	for len(tail)%4 != 0 {
		tail = append(tail, 0)
	}
	tail = binary.LittleEndian.AppendUint32(tail, crc32.ChecksumIEEE(tail))
	indexLen := len(tail)
	foot := make([]byte, 10, 12)
	binary.LittleEndian.PutUint32(foot[4:8], uint32(indexLen/4-1))
	foot[8], foot[9] = b.flags[0], b.flags[1]
	binary.LittleEndian.PutUint32(foot[0:4], crc32.ChecksumIEEE(foot[4:10]))
	foot = append(foot, 'Y', 'Z')
	tail = append(tail, foot...)

	rest := io.LimitReader(body, pad4(b.unpadded)-int64(hlen))
	zr, err := xz.ReaderConfig{SingleStream: true}.NewReader(
		io.MultiReader(bytes.NewReader(head), rest, bytes.NewReader(tail)))
	if err != nil {
		return nil, d.blockErr(b, 0, err)
	}
	return zr, nil
}

// maxXZDict is the largest LZMA2 dictionary allocated, xz's own maximum.
const maxXZDict = 1536 << 20

// capLZMA2Dict lowers the dictionary size of a block's LZMA2 filter to
// limit (the block's decompressed size, which is all it can need, bounded
// further by the options), and fixes the header CRC. A block decoder
// allocates the whole dictionary up front, and the header is otherwise free
// to claim 4 GiB. Headers it does not understand are left for the decoder
// to reject.
func capLZMA2Dict(hdr []byte, limit int64) {
	p := bytes.NewReader(hdr[2 : len(hdr)-4])
	flags := hdr[1]
	if flags&0x40 != 0 {
		if _, _, err := readXZVarint(p); err != nil {
			return
		}
	}
	if flags&0x80 != 0 {
		if _, _, err := readXZVarint(p); err != nil {
			return
		}
	}
	nfilters := int(flags&3) + 1
	for i := 0; i < nfilters; i++ {
		id, _, err := readXZVarint(p)
		if err != nil {
			return
		}
		psize, _, err := readXZVarint(p)
		if err != nil || psize > int64(p.Len()) {
			return
		}
		at := len(hdr) - 4 - p.Len() // offset of the properties in hdr
		if id == 0x21 && psize == 1 && i == nfilters-1 {
			prop := hdr[at]
			if prop > 40 {
				return
			}
			need := max(limit, 4096)
			if lzma2DictSize(prop) <= need {
				return
			}
			var c byte
			for c < 40 && lzma2DictSize(c) < need {
				c++
			}
			hdr[at] = c
			binary.LittleEndian.PutUint32(hdr[len(hdr)-4:], crc32.ChecksumIEEE(hdr[:len(hdr)-4]))
			return
		}
		p.Seek(psize, io.SeekCurrent)
	}
}

// lzma2DictSize decodes the LZMA2 dictionary-size property byte.
func lzma2DictSize(c byte) int64 {
	if c >= 40 {
		return 1<<32 - 1
	}
	return int64(2|c&1) << (c/2 + 11)
}

// readAtFull is io.ReadFull for an io.ReaderAt, reporting a short file as
// io.ErrUnexpectedEOF.
func readAtFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// xzCheckLen is the size of a block's check for each check type.
func xzCheckLen(t byte) int {
	switch {
	case t == 0:
		return 0
	case t <= 3:
		return 4
	case t <= 6:
		return 8
	case t <= 9:
		return 16
	case t <= 12:
		return 32
	}
	return 64
}

// xzLZMA2Block is what xzParseLZMA2Block finds in a block's header.
type xzLZMA2Block struct {
	hlen  int   // header size
	csize int64 // LZMA2 data size
	dict  int64 // dictionary size, as liblzma allocates it
}

// xzParseLZMA2Block checks the header of a block whose only filter is
// LZMA2 and whose check is none, CRC32, CRC64 or SHA-256 (everything xz(1)
// writes by default, and all pmlogger_daily leaves); raw is the block's
// bytes. It reports false, leaving the block to the generic path through
// ulikunitz/xz, for anything else: filter chains (BCJ, delta), check types
// xz itself cannot verify, headers the generic path words errors for.
func (d *opener) xzParseLZMA2Block(raw []byte, b *xzBlock) (xzLZMA2Block, bool, error) {
	var z xzLZMA2Block
	check := b.flags[1] & 0x0f
	if check != 0 && check != 1 && check != 4 && check != 10 {
		return z, false, nil
	}
	if len(raw) < 8 {
		return z, false, nil
	}
	hlen := (int(raw[0]) + 1) * 4
	if raw[0] == 0 || hlen > len(raw) || int64(hlen) > b.unpadded {
		return z, false, nil
	}
	hdr := raw[:hlen]
	if crc32.ChecksumIEEE(hdr[:hlen-4]) != binary.LittleEndian.Uint32(hdr[hlen-4:]) {
		return z, true, d.xzErr(b.coff, "block %d: header CRC32 mismatch", b.num)
	}
	flags := hdr[1]
	if flags&0x03 != 0 || flags&0x3c != 0 {
		return z, false, nil // several filters, or reserved bits
	}
	csize := b.unpadded - int64(hlen) - int64(xzCheckLen(check))
	if csize <= 0 {
		return z, true, d.xzErr(b.coff, "block %d: index says %d bytes, too few for its header and check", b.num, b.unpadded)
	}
	p := bytes.NewReader(hdr[2 : hlen-4])
	if flags&0x40 != 0 {
		v, _, err := readXZVarint(p)
		if err != nil || v != csize {
			return z, true, d.xzErr(b.coff, "block %d: compressed size in the header disagrees with the index", b.num)
		}
	}
	if flags&0x80 != 0 {
		v, _, err := readXZVarint(p)
		if err != nil || v != b.usize {
			return z, true, d.xzErr(b.coff, "block %d: decompressed size in the header disagrees with the index", b.num)
		}
	}
	id, _, err1 := readXZVarint(p)
	psize, _, err2 := readXZVarint(p)
	if err1 != nil || err2 != nil || id != 0x21 || psize != 1 {
		return z, false, nil
	}
	prop, _ := p.ReadByte()
	if prop > 40 {
		return z, true, d.xzErr(b.coff, "block %d: LZMA2 dictionary size byte %d out of range", b.num, prop)
	}
	for p.Len() > 0 {
		if c, _ := p.ReadByte(); c != 0 {
			return z, true, d.xzErr(b.coff, "block %d: header padding is not zero", b.num)
		}
	}
	dict := max(lzma2DictSize(prop), 4096)
	return xzLZMA2Block{hlen: hlen, csize: csize, dict: (dict + 15) &^ 15}, true, nil
}

// xzDecodeLZMA2Block decodes a block with decodeLZMA2, straight from raw
// (the block's bytes, padding and check included) into dst, and verifies
// its check. It reports false, and leaves the block to the generic path,
// where xzParseLZMA2Block does.
func (d *opener) xzDecodeLZMA2Block(raw []byte, b *xzBlock, dst []byte) (bool, error) {
	z, ok, err := d.xzParseLZMA2Block(raw, b)
	if !ok || err != nil {
		return ok, err
	}
	hlen, csize := z.hlen, z.csize
	data := raw[hlen : int64(hlen)+csize]
	_, n, err := decodeLZMA2Prefix(dst, data, z.dict, len(dst))
	if err != nil {
		return true, d.lzma2Err(b, hlen, err)
	}
	if int64(n) != csize {
		return true, d.xzErr(b.coff+int64(hlen)+int64(n), "block %d: LZMA2 data ends %d bytes before the block's check", b.num, csize-int64(n))
	}
	rest := raw[int64(hlen)+csize:]
	pad := int(pad4(b.unpadded) - b.unpadded)
	for _, c := range rest[:pad] {
		if c != 0 {
			return true, d.xzErr(b.coff+int64(hlen)+csize, "block %d: block padding is not zero", b.num)
		}
	}
	stored := rest[pad:]
	check := b.flags[1] & 0x0f
	switch check {
	case 0:
		ok = true
	case 1:
		ok = binary.LittleEndian.Uint32(stored) == crc32.ChecksumIEEE(dst)
	case 4:
		ok = binary.LittleEndian.Uint64(stored) == crc64.Checksum(dst, crc64Table)
	case 10:
		sum := sha256.Sum256(dst)
		ok = bytes.Equal(stored, sum[:])
	}
	if !ok {
		return true, d.xzErr(b.coff+pad4(b.unpadded)-int64(len(stored)), "block %d: check (%s) does not match the decompressed data", b.num, xzCheckName(check))
	}
	return true, nil
}

func (d *opener) lzma2Err(b *xzBlock, hlen int, err error) error {
	var le *lzma2Error
	if errors.As(err, &le) {
		return formatErr(d.name, formatXZ, b.coff+int64(hlen)+le.in,
			fmt.Sprintf("block %d corrupt after %d of its %d decompressed bytes: %s", b.num, le.out, b.usize, le.msg), nil)
	}
	return d.blockErr(b, 0, err)
}

// xzDecodeHead decodes the start of a block, at least want bytes of it
// (fewer only if the block is shorter), without verifying the block's
// check, which needs all of it: for reads of a label or the first records
// of a volume, which would otherwise cost the whole block (10 MiB as
// pmlogger_daily writes them). It reports false when the block is not one
// decodeLZMA2 handles, or is damaged: the caller then decodes it whole,
// which finds and words any error.
func (d *opener) xzDecodeHead(r io.ReaderAt, b *xzBlock, want int64) ([]byte, bool) {
	if d.opt.genericXZ {
		return nil, false
	}
	want = min(want, b.usize)
	// Read the compressed bytes in growing pieces: the head of a block
	// needs few of them.
	clen := pad4(b.unpadded)
	if limit := b.usize + b.usize/16 + 4096; clen > limit {
		return nil, false
	}
	n := min(clen, 64<<10+want/2)
	for {
		raw := make([]byte, n, n+lzmaSlack)
		if readAtFull(r, raw, b.coff) != nil {
			return nil, false
		}
		z, ok, err := d.xzParseLZMA2Block(raw, b)
		if !ok || err != nil {
			return nil, false
		}
		data := raw[z.hlen:min(int64(z.hlen)+z.csize, n)]
		dst := make([]byte, min(b.usize, want-1+lzma2MaxChunk))
		got, _, err := decodeLZMA2Prefix(dst, data, z.dict, int(want))
		if err == nil {
			return dst[:got], true
		}
		if n == clen {
			return nil, false
		}
		n = min(clen, n*4)
	}
}

var crc64Table = crc64.MakeTable(crc64.ECMA)

func xzCheckName(t byte) string {
	switch t {
	case 1:
		return "CRC32"
	case 4:
		return "CRC64"
	case 10:
		return "SHA-256"
	}
	return "none"
}
