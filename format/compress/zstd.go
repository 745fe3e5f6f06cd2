package compress

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

const (
	skippableMagic    = 0x184D2A5E // the skippable-frame magic the seek table uses
	seekableMagic     = 0x8F92EAB1 // last four bytes of a seekable file
	seekFooterLen     = 9
	seekChecksumFlag  = 0x80
	seekReservedBits  = 0x7c
	seekMaxFrames     = 0x8000000 // as in zstd's reference implementation
	zstdFrameHdrFlags = 4         // offset of the frame header descriptor
	zstdChecksumFlag  = 0x04      // Content_Checksum_flag in that descriptor
)

// zstdFrame is one entry of a seek table.
type zstdFrame struct {
	num        int
	coff, clen int64
	usize      int64
	sum        uint32
	hasSum     bool
}

// openZstd serves a seekable zstd file frame by frame, and decodes any
// other zstd file whole.
func (d *opener) openZstd() (File, error) {
	frames, ok, err := d.zstdSeekTable()
	if err != nil {
		return nil, err
	}
	if !ok {
		return d.materialize(nil)
	}
	var size int64
	segs := make([]segment, 0, len(frames))
	for i := range frames {
		f := &frames[i]
		if f.usize > d.opt.MaxSegment {
			return d.materialize(nil)
		}
		if f.usize > 0 {
			segs = append(segs, segment{coff: f.coff, clen: f.clen, uoff: size, ulen: f.usize, idx: i})
		}
		size += f.usize
	}
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(d.opt.ReadAhead+1),
		zstd.WithDecoderMaxWindow(maxZstdWindow),
		zstd.WithDecoderMaxMemory(uint64(d.opt.MaxSegment)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	decode := func(r io.ReaderAt, seg *segment, dst []byte) error {
		return d.zstdDecodeFrame(dec, r, &frames[seg.idx], dst)
	}
	src := newSegSource(d.r, segs, decode, d.opt)
	src.onClose = dec.Close
	src.closer = d.closer
	return newFile(d.name, size, src), nil
}

func (d *opener) zstdErr(off int64, format string, args ...any) *FormatError {
	return formatErr(d.name, formatZstd, off, fmt.Sprintf(format, args...), nil)
}

// zstdSeekTable reads the seek table at the end of the file. ok is false
// when the file has none; a table that is present but inconsistent is an
// error.
func (d *opener) zstdSeekTable() (frames []zstdFrame, ok bool, err error) {
	if d.size < 8+seekFooterLen {
		return nil, false, nil
	}
	var foot [seekFooterLen]byte
	if err := d.readFull(foot[:], d.size-seekFooterLen, "seek table footer"); err != nil {
		return nil, false, err
	}
	if binary.LittleEndian.Uint32(foot[5:9]) != seekableMagic {
		return nil, false, nil
	}
	footOff := d.size - seekFooterLen
	n := int64(binary.LittleEndian.Uint32(foot[0:4]))
	desc := foot[4]
	if desc&seekReservedBits != 0 {
		return nil, false, d.zstdErr(footOff+4, "seek table descriptor %#02x has reserved bits set", desc)
	}
	if n > seekMaxFrames {
		return nil, false, d.zstdErr(footOff, "seek table claims %d frames", n)
	}
	esize := int64(8)
	if desc&seekChecksumFlag != 0 {
		esize = 12
	}
	tableLen := n*esize + seekFooterLen
	tableOff := d.size - tableLen - 8 // where the skippable frame starts
	if tableOff < 0 {
		return nil, false, d.zstdErr(footOff, "seek table of %d frames is larger than the file", n)
	}
	var head [8]byte
	if err := d.readFull(head[:], tableOff, "seek table header"); err != nil {
		return nil, false, err
	}
	if binary.LittleEndian.Uint32(head[0:4]) != skippableMagic {
		return nil, false, d.zstdErr(tableOff, "seek table does not start with the skippable frame magic")
	}
	if int64(binary.LittleEndian.Uint32(head[4:8])) != tableLen {
		return nil, false, d.zstdErr(tableOff+4, "seek table frame size %d, entries and footer need %d",
			binary.LittleEndian.Uint32(head[4:8]), tableLen)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(d.r, tableOff+8, n*esize), 64<<10)
	var e [12]byte
	var coff int64
	for i := int64(0); i < n; i++ {
		if _, err := io.ReadFull(br, e[:esize]); err != nil {
			return nil, false, d.truncErr(tableOff+8+i*esize, "seek table entry")
		}
		f := zstdFrame{
			num:   int(i),
			coff:  coff,
			clen:  int64(binary.LittleEndian.Uint32(e[0:4])),
			usize: int64(binary.LittleEndian.Uint32(e[4:8])),
		}
		if esize == 12 {
			f.sum, f.hasSum = binary.LittleEndian.Uint32(e[8:12]), true
		}
		coff += f.clen
		if coff > tableOff {
			return nil, false, d.zstdErr(tableOff+8+i*esize, "seek table frame %d ends at %d, past the table at %d", i, coff, tableOff)
		}
		frames = append(frames, f)
	}
	if coff != tableOff {
		return nil, false, d.zstdErr(tableOff, "seek table frames cover %d bytes, the table starts at %d", coff, tableOff)
	}
	return frames, true, nil
}

// zstdDecodeFrame decodes one frame listed in the seek table into dst.
func (d *opener) zstdDecodeFrame(dec *zstd.Decoder, r io.ReaderAt, f *zstdFrame, dst []byte) error {
	// A zstd frame is never much larger than its content (raw blocks
	// cost 3 bytes per 128 KiB), so anything bigger is corrupt; refusing
	// it bounds the read buffer.
	if limit := f.usize + f.usize/64 + 1024; f.clen > limit {
		return d.zstdErr(f.coff, "frame %d: %d compressed bytes for %d decompressed bytes", f.num, f.clen, f.usize)
	}
	src := make([]byte, f.clen)
	if err := readAtFull(r, src, f.coff); err != nil {
		if err == io.ErrUnexpectedEOF {
			return d.truncErr(f.coff, fmt.Sprintf("frame %d", f.num))
		}
		return fmt.Errorf("%s: reading zstd frame at offset %d: %w", d.name, f.coff, err)
	}
	out, err := dec.DecodeAll(src, dst[:0])
	if err != nil {
		return formatErr(d.name, formatZstd, f.coff, fmt.Sprintf("frame %d corrupt", f.num), err)
	}
	if int64(len(out)) != f.usize {
		return d.zstdErr(f.coff, "frame %d decodes to %d bytes, seek table says %d", f.num, len(out), f.usize)
	}
	if &out[0] != &dst[0] {
		copy(dst, out)
	}
	// The seek table checksum and the frame's own content checksum are the
	// same number; when both exist they must agree.
	if f.hasSum && len(src) >= 9 && binary.LittleEndian.Uint32(src) == 0xFD2FB528 &&
		src[zstdFrameHdrFlags]&zstdChecksumFlag != 0 {
		if got := binary.LittleEndian.Uint32(src[len(src)-4:]); got != f.sum {
			return d.zstdErr(f.coff, "frame %d checksum %08x, seek table says %08x", f.num, got, f.sum)
		}
	}
	return nil
}
