package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"runtime"

	"github.com/ulikunitz/xz/lzma"
)

// DefaultXZBlockSize is the decompressed size of each block an XZWriter
// writes unless told otherwise: small enough that a reader seeking into a
// volume decodes little, and that two cores have blocks to share.
const DefaultXZBlockSize = 4 << 20

// XZ block size bounds for WithXZBlockSize. The upper one keeps a block
// within the reader's default Options.MaxSegment, so that it is decoded
// block by block.
const (
	MinXZBlockSize = 64 << 10
	MaxXZBlockSize = 32 << 20
)

// xzWriterDict is the LZMA2 dictionary: xz -0's, the preset
// pmlogger_daily uses, and the fastest of ulikunitz/xz's encoder.
const xzWriterDict = 256 << 10

// XZWriter compresses into an xz file the way `xz -T2` does: independent
// blocks of a fixed amount of input, each header carrying the block's
// compressed and decompressed sizes, then the stream's index, so that any
// reader with an index (this package, liblzma, PCP's libpcp) can seek.
// Blocks are compressed on up to GOMAXPROCS goroutines at once and
// written in order.
//
// The check is CRC64, as xz(1) writes by default. Write buffers one block;
// Close compresses what is left, writes the index and footer, and must be
// called. Errors are sticky. An XZWriter is not safe for concurrent use.
type XZWriter struct {
	w         io.Writer
	blockSize int
	workers   int

	buf     []byte        // pending input, at most blockSize
	pending []*xzBlockJob // compressing, in file order
	free    [][]byte      // input buffers to reuse
	index   []xzRecord    // one per block written
	started bool          // stream header written
	err     error
	done    bool
	sem     chan struct{} // bounds the goroutines compressing
}

type xzBlockJob struct {
	in   []byte
	out  []byte
	err  error
	done chan struct{}
}

// XZOption configures an XZWriter.
type XZOption func(*XZWriter) error

// WithXZBlockSize sets how many input bytes go into each block, between
// MinXZBlockSize and MaxXZBlockSize. Default DefaultXZBlockSize.
func WithXZBlockSize(n int) XZOption {
	return func(x *XZWriter) error {
		if n < MinXZBlockSize || n > MaxXZBlockSize {
			return fmt.Errorf("block size %d outside [%d, %d]", n, MinXZBlockSize, MaxXZBlockSize)
		}
		x.blockSize = n
		return nil
	}
}

// WithXZWorkers sets how many blocks are compressed at once; default
// GOMAXPROCS.
func WithXZWorkers(n int) XZOption {
	return func(x *XZWriter) error {
		if n < 1 {
			return fmt.Errorf("%d workers", n)
		}
		x.workers = n
		return nil
	}
}

// NewXZWriter returns a writer that compresses to w. An invalid option is
// reported by the first Write or Close.
func NewXZWriter(w io.Writer, opts ...XZOption) *XZWriter {
	x := &XZWriter{w: w, blockSize: DefaultXZBlockSize, workers: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		if err := o(x); err != nil {
			x.err = fmt.Errorf("xz writer: %w", err)
			return x
		}
	}
	x.sem = make(chan struct{}, x.workers)
	return x
}

var errXZWriterClosed = errors.New("xz writer: write after Close")

// Write compresses p, handing every block that fills up to a goroutine.
func (x *XZWriter) Write(p []byte) (int, error) {
	if x.err != nil {
		return 0, x.err
	}
	if x.done {
		return 0, errXZWriterClosed
	}
	total := len(p)
	for len(p) > 0 {
		if x.buf == nil {
			x.buf = x.newBuf()
		}
		k := min(len(p), x.blockSize-len(x.buf))
		x.buf = append(x.buf, p[:k]...)
		p = p[k:]
		if len(x.buf) == x.blockSize {
			if err := x.block(); err != nil {
				return total - len(p), err
			}
		}
	}
	return total, nil
}

func (x *XZWriter) newBuf() []byte {
	if n := len(x.free); n > 0 {
		b := x.free[n-1]
		x.free = x.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, x.blockSize)
}

// block starts compressing x.buf and writes the blocks already done, so
// that at most workers+1 blocks are held at once.
func (x *XZWriter) block() error {
	j := &xzBlockJob{in: x.buf, done: make(chan struct{})}
	x.buf = nil
	x.pending = append(x.pending, j)
	x.sem <- struct{}{}
	go func() {
		defer func() { <-x.sem }()
		j.out, j.err = encodeXZBlock(j.in)
		close(j.done)
	}()
	for len(x.pending) > x.workers {
		if err := x.writeNext(); err != nil {
			return err
		}
	}
	return nil
}

// writeNext waits for the oldest pending block and writes it.
func (x *XZWriter) writeNext() error {
	j := x.pending[0]
	<-j.done
	x.pending = x.pending[1:]
	if x.err != nil {
		return x.err
	}
	if j.err != nil {
		x.err = fmt.Errorf("xz writer: %w", j.err)
		return x.err
	}
	if !x.started {
		x.started = true
		if _, err := x.w.Write(xzStreamHeader()); err != nil {
			x.err = err
			return err
		}
	}
	if _, err := x.w.Write(j.out); err != nil {
		x.err = err
		return err
	}
	// The encoded block is padded; its unpadded size is the header, the
	// data and the check, which encodeXZBlock leaves in the job.
	x.index = append(x.index, xzRecord{unpadded: xzUnpadded(j.out), usize: int64(len(j.in))})
	if len(x.free) < 2 {
		x.free = append(x.free, j.in)
	}
	return nil
}

// Close compresses the last partial block, waits for every block, and
// writes the index and the stream footer. It does not close the
// underlying writer.
func (x *XZWriter) Close() error {
	if x.done {
		return x.err
	}
	x.done = true
	if x.err == nil && len(x.buf) > 0 {
		x.block()
	}
	for len(x.pending) > 0 {
		// After an error, still wait, so that no goroutine outlives Close.
		x.writeNext()
	}
	if x.err != nil {
		return x.err
	}
	if !x.started {
		x.started = true
		if _, err := x.w.Write(xzStreamHeader()); err != nil {
			x.err = err
			return err
		}
	}
	_, x.err = x.w.Write(appendXZIndexFooter(nil, x.index))
	return x.err
}

// xzCheckCRC64 is the stream flag for a CRC64 check.
const xzCheckCRC64 = 4

func xzStreamHeader() []byte {
	h := append([]byte{}, magicXZ...)
	h = append(h, 0, xzCheckCRC64)
	return binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h[6:8]))
}

// appendXZIndexFooter appends the index of the given blocks and the stream
// footer.
func appendXZIndexFooter(dst []byte, recs []xzRecord) []byte {
	start := len(dst)
	dst = append(dst, 0)
	dst = appendXZVarint(dst, uint64(len(recs)))
	for _, r := range recs {
		dst = appendXZVarint(dst, uint64(r.unpadded))
		dst = appendXZVarint(dst, uint64(r.usize))
	}
	for (len(dst)-start)%4 != 0 {
		dst = append(dst, 0)
	}
	dst = binary.LittleEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
	indexLen := len(dst) - start
	var foot [12]byte
	binary.LittleEndian.PutUint32(foot[4:8], uint32(indexLen/4-1))
	foot[8], foot[9] = 0, xzCheckCRC64
	binary.LittleEndian.PutUint32(foot[0:4], crc32.ChecksumIEEE(foot[4:10]))
	foot[10], foot[11] = 'Y', 'Z'
	return append(dst, foot[:]...)
}

// xzBlockPrefix is what encodeXZBlock reserves before the LZMA2 data for
// the block header, whose size fields are known only afterwards. The
// header is at most 2 (size, flags) + 2*9 (sizes) + 3 (filter) + 4 (CRC)
// bytes, rounded up to 4: 28.
const xzBlockPrefix = 28

// encodeXZBlock compresses in as one xz block: header with both sizes,
// LZMA2 data, padding and CRC64.
func encodeXZBlock(in []byte) ([]byte, error) {
	var body bytes.Buffer
	body.Grow(len(in)/8 + 4096)
	body.Write(make([]byte, xzBlockPrefix))
	zw, err := lzma.Writer2Config{DictCap: xzWriterDict, Matcher: lzma.HashTable4}.NewWriter2(&body)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(in); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := body.Bytes()
	csize := len(out) - xzBlockPrefix

	var dictByte byte
	for lzma2DictSize(dictByte) < xzWriterDict {
		dictByte++
	}
	hdr := make([]byte, 2, xzBlockPrefix)
	hdr[1] = 0x40 | 0x80 // one filter; compressed and decompressed sizes present
	hdr = appendXZVarint(hdr, uint64(csize))
	hdr = appendXZVarint(hdr, uint64(len(in)))
	hdr = append(hdr, 0x21, 1, dictByte) // LZMA2, one property byte
	for (len(hdr)+4)%4 != 0 {
		hdr = append(hdr, 0)
	}
	hdr[0] = byte((len(hdr)+4)/4 - 1)
	hdr = binary.LittleEndian.AppendUint32(hdr, crc32.ChecksumIEEE(hdr))

	// Move the header next to the data.
	at := xzBlockPrefix - len(hdr)
	copy(out[at:], hdr)
	out = out[at:]
	unpadded := len(out) + 8
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	out = binary.LittleEndian.AppendUint64(out, crc64.Checksum(in, crc64Table))
	if pad4(int64(unpadded)) != int64(len(out)) {
		return nil, errors.New("internal error: block size")
	}
	return out, nil
}

// xzUnpadded recovers a block's unpadded size from the block encodeXZBlock
// made: its header and check are known, its data ends where the padding
// (zero bytes, fewer than four) before the check begins, which the header's
// compressed size tells.
func xzUnpadded(block []byte) int64 {
	hlen := (int(block[0]) + 1) * 4
	csize, _, _ := readXZVarint(bytes.NewReader(block[2:hlen]))
	return int64(hlen) + csize + 8
}
