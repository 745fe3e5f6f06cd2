package compress

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz/lzma"
)

// chunkSize is the unit of in-memory storage for whole-file decodes:
// fixed-size chunks avoid the copy (and the transient double footprint) of
// growing one big slice.
const chunkSize = 1 << 20

// errTooBig stops a decode that exceeds Options.MaxSize.
var errTooBig = errors.New("decompressed data exceeds the size limit")

// spill collects decompressed bytes in memory up to a limit, then in an
// unlinked temporary file.
type spill struct {
	memLimit int64
	maxSize  int64
	dir      string

	n      int64
	chunks [][]byte
	f      *os.File
	w      *bufio.Writer
}

func (s *spill) Write(p []byte) (int, error) {
	if int64(len(p)) > s.maxSize-s.n {
		return 0, errTooBig
	}
	if s.f == nil && s.n+int64(len(p)) > s.memLimit {
		if err := s.toFile(); err != nil {
			return 0, err
		}
	}
	if s.f != nil {
		n, err := s.w.Write(p)
		s.n += int64(n)
		return n, err
	}
	total := len(p)
	for len(p) > 0 {
		if k := len(s.chunks); k == 0 || len(s.chunks[k-1]) == chunkSize {
			// The first chunk starts small and grows, so that small files
			// cost little; later chunks are allocated whole.
			c := 0
			if k > 0 {
				c = chunkSize
			}
			s.chunks = append(s.chunks, make([]byte, 0, c))
		}
		last := &s.chunks[len(s.chunks)-1]
		m := min(len(p), chunkSize-len(*last))
		*last = append(*last, p[:m]...)
		p = p[m:]
		s.n += int64(m)
	}
	return total, nil
}

// roomFor reports whether n more bytes fit in memory.
func (s *spill) roomFor(n int64) bool {
	return s.f == nil && n >= 0 && n <= s.memLimit-s.n && n <= s.maxSize-s.n
}

// adopt appends buf, which the spill then owns, without copying it: it is
// cut into chunkSize pieces where the chunks so far end on a chunk
// boundary, and copied by Write otherwise. roomFor(len(buf)) must hold.
func (s *spill) adopt(buf []byte) {
	if k := len(s.chunks); k > 0 && len(s.chunks[k-1]) < chunkSize {
		s.Write(buf) // cannot fail: roomFor
		return
	}
	for len(buf) > 0 {
		m := min(len(buf), chunkSize)
		// A full slice expression: a later Write appending to a short
		// last chunk reallocates it instead of writing past it.
		s.chunks = append(s.chunks, buf[:m:m])
		buf = buf[m:]
		s.n += int64(m)
	}
}

func (s *spill) toFile() error {
	f, err := os.CreateTemp(s.dir, "pcptools-decompress-*")
	if err != nil {
		return err
	}
	// Unlink at once: the data lives as long as the descriptor, and nothing
	// is left behind if the process dies.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return err
	}
	s.f = f
	s.w = bufio.NewWriterSize(f, 1<<20)
	for _, c := range s.chunks {
		if _, err := s.w.Write(c); err != nil {
			return err
		}
	}
	s.chunks = nil
	return nil
}

// finish returns the storage as a source.
func (s *spill) finish() (source, error) {
	if s.f != nil {
		if err := s.w.Flush(); err != nil {
			return nil, err
		}
		return &tempSource{f: s.f}, nil
	}
	return &memSource{chunks: s.chunks}, nil
}

// abort releases the storage after a failure.
func (s *spill) abort() {
	if s.f != nil {
		s.f.Close()
	}
	s.chunks = nil
}

// memSource serves a whole-file decode held in memory.
type memSource struct {
	chunks [][]byte // all but the last are chunkSize long
	closer io.Closer
}

func (m *memSource) readAt(p []byte, off int64, _ bool) (int, error) {
	if m.chunks == nil {
		return 0, os.ErrClosed
	}
	n := 0
	for n < len(p) {
		i := off / chunkSize
		if i >= int64(len(m.chunks)) {
			return n, io.EOF
		}
		c := m.chunks[i][off%chunkSize:]
		if len(c) == 0 {
			return n, io.EOF
		}
		k := copy(p[n:], c)
		n += k
		off += int64(k)
	}
	return n, nil
}

func (m *memSource) close() error {
	m.chunks = nil
	return closeBoth(nil, m.closer)
}

// tempSource serves a whole-file decode kept in an unlinked temporary file.
type tempSource struct {
	f      *os.File
	closer io.Closer
}

func (t *tempSource) readAt(p []byte, off int64, _ bool) (int, error) { return t.f.ReadAt(p, off) }
func (t *tempSource) close() error                                    { return closeBoth(t.f.Close(), t.closer) }

// materialize decodes the whole file into a spill. With fill nil the format
// must be a stream format.
func (d *opener) materialize(fill func(w io.Writer) error) (File, error) {
	s := &spill{memLimit: d.opt.MemLimit, maxSize: d.opt.MaxSize, dir: d.opt.TempDir}
	if fill == nil {
		fill = d.decodeStream
	}
	if err := fill(s); err != nil {
		s.abort()
		if errors.Is(err, errTooBig) {
			return nil, &FormatError{Name: d.name, Format: d.ft.String(), Offset: s.n, Decoded: true,
				Msg: fmt.Sprintf("decompressed size exceeds the limit of %d bytes", d.opt.MaxSize)}
		}
		return nil, err
	}
	src, err := s.finish()
	if err != nil {
		s.abort()
		return nil, fmt.Errorf("%s: writing decompressed data: %w", d.name, err)
	}
	switch src := src.(type) {
	case *memSource:
		src.closer = d.closer
	case *tempSource:
		src.closer = d.closer
	}
	return newFile(d.name, s.n, src), nil
}

// maxLZMADict bounds the dictionary a .lzma header may ask for when the
// decompressed size is unknown (when it is known, the decoder never
// allocates more than that). xz -9 uses 64 MiB.
const maxLZMADict = 256 << 20

// lzmaReader decodes the legacy .lzma format. Its 13-byte header (one
// properties byte, the dictionary size, the decompressed size or all ones)
// has no magic number and no checksum, so garbage parses as a header
// asking for a dictionary of up to 4 GiB, which the decoder allocates at
// once. The dictionary never needs to exceed the output, so the header is
// rewritten to ask for at most min(maxLZMADict, MaxSize); a real file that
// needs more fails with a distance error instead of being refused outright.
func (d *opener) lzmaReader(in *bufio.Reader) (io.Reader, error) {
	h, err := in.Peek(13)
	if err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	limit := uint32(max(min(maxLZMADict, d.opt.MaxSize), lzma.MinDictCap))
	if dict := binary.LittleEndian.Uint32(h[1:5]); dict > limit {
		hdr := bytes.Clone(h)
		binary.LittleEndian.PutUint32(hdr[1:5], limit)
		in.Discard(13)
		return lzma.ReaderConfig{DictCap: int(limit)}.NewReader(io.MultiReader(bytes.NewReader(hdr), in))
	}
	return lzma.ReaderConfig{DictCap: int(limit)}.NewReader(in)
}

// maxZstdWindow is the largest zstd window accepted, as in the zstd tool's
// default decompression memory limit.
const maxZstdWindow = 128 << 20

// decodeStream runs a sequential decoder over the whole compressed input.
func (d *opener) decodeStream(w io.Writer) error {
	in := bufio.NewReaderSize(io.NewSectionReader(d.r, 0, d.size), int(min(max(d.size, 4096), 256<<10)))
	var dec io.Reader
	var err error
	switch d.ft {
	case formatGzip:
		var zr *gzip.Reader
		zr, err = gzip.NewReader(in)
		dec = zr
	case formatBzip2:
		dec = bzip2.NewReader(in)
	case formatLZW:
		dec, err = newLZWReader(in)
	case formatLZMA:
		dec, err = d.lzmaReader(in)
	case formatZstd:
		var zr *zstd.Decoder
		zr, err = zstd.NewReader(in, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(uint64(d.opt.MaxSize)))
		if err == nil {
			defer zr.Close()
		}
		dec = zr
	default:
		return formatErr(d.name, d.ft, 0, "no stream decoder", nil)
	}
	if err != nil {
		return streamErr(d.name, d.ft, 0, err)
	}
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, rerr := dec.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				if errors.Is(werr, errTooBig) {
					return werr
				}
				return fmt.Errorf("%s: writing decompressed data: %w", d.name, werr)
			}
			n += int64(k)
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return streamErr(d.name, d.ft, n, rerr)
		}
	}
}
