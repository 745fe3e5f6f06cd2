package compress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// DefaultFrameSize is the decompressed size of each frame a SeekableWriter
// writes unless told otherwise: big enough for a good ratio, small enough
// that a random read decodes little.
const DefaultFrameSize = 4 << 20

// Frame size bounds for WithFrameSize. The upper one is the reference
// implementation's limit on a frame's decompressed size.
const (
	MinFrameSize = 1 << 10
	MaxFrameSize = 1 << 30
)

// SeekableWriter compresses into zstd's seekable format: independent zstd
// frames of a fixed amount of input each, then a seek table in a skippable
// frame (see the package documentation). The output is ordinary zstd to
// any decoder; [Open] uses the table for random access.
//
// Write buffers one frame's worth of input; Close writes the last frame and
// the seek table and must be called. Errors are sticky: after one, Write
// and Close return it. A SeekableWriter is not safe for concurrent use.
type SeekableWriter struct {
	w   io.Writer
	cfg seekableConfig
	enc *zstd.Encoder

	buf   []byte // pending input, at most cfg.frameSize
	out   []byte // scratch for one encoded frame
	table []byte // seek table entries so far
	n     int    // frames written
	err   error
	done  bool
}

type seekableConfig struct {
	frameSize int
	level     zstd.EncoderLevel
	checksums bool
}

// SeekableOption configures a SeekableWriter.
type SeekableOption func(*seekableConfig) error

// WithFrameSize sets how many input bytes go into each frame, between
// MinFrameSize and MaxFrameSize. Default DefaultFrameSize.
func WithFrameSize(n int) SeekableOption {
	return func(c *seekableConfig) error {
		if n < MinFrameSize || n > MaxFrameSize {
			return fmt.Errorf("frame size %d outside [%d, %d]", n, MinFrameSize, MaxFrameSize)
		}
		c.frameSize = n
		return nil
	}
}

// WithLevel sets the zstd encoder level. Default zstd.SpeedDefault.
func WithLevel(l zstd.EncoderLevel) SeekableOption {
	return func(c *seekableConfig) error {
		if l < zstd.SpeedFastest || l > zstd.SpeedBestCompression {
			return fmt.Errorf("unknown zstd level %d", l)
		}
		c.level = l
		return nil
	}
}

// WithChecksums turns frame content checksums, and with them the seek
// table's checksums, on or off. Default on.
func WithChecksums(on bool) SeekableOption {
	return func(c *seekableConfig) error {
		c.checksums = on
		return nil
	}
}

// NewSeekableWriter returns a writer that compresses to w. An invalid
// option is reported by the first Write or Close.
func NewSeekableWriter(w io.Writer, opts ...SeekableOption) *SeekableWriter {
	s := &SeekableWriter{w: w, cfg: seekableConfig{
		frameSize: DefaultFrameSize,
		level:     zstd.SpeedDefault,
		checksums: true,
	}}
	for _, o := range opts {
		if err := o(&s.cfg); err != nil {
			s.err = fmt.Errorf("zstd seekable writer: %w", err)
			return s
		}
	}
	// One encoder serves every frame: EncodeAll resets its state per call,
	// so frames stay independent while tables and buffers are reused.
	s.enc, s.err = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(s.cfg.level),
		zstd.WithEncoderCRC(s.cfg.checksums),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(windowFor(s.cfg.frameSize)))
	return s
}

// windowFor picks the smallest power-of-two window covering a frame, so
// decoders need no more memory than one frame.
func windowFor(frame int) int {
	w := zstd.MinWindowSize
	for w < frame && w < zstd.MaxWindowSize {
		w <<= 1
	}
	return w
}

var errWriterClosed = errors.New("zstd seekable writer: write after Close")

// Write compresses p, writing every frame that fills up.
func (s *SeekableWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.done {
		return 0, errWriterClosed
	}
	total := len(p)
	for len(p) > 0 {
		if len(s.buf) == 0 && len(p) >= s.cfg.frameSize {
			// Whole frames straight from the caller's buffer, no copy.
			if err := s.frame(p[:s.cfg.frameSize]); err != nil {
				return total - len(p), err
			}
			p = p[s.cfg.frameSize:]
			continue
		}
		if s.buf == nil {
			s.buf = make([]byte, 0, s.cfg.frameSize)
		}
		k := min(len(p), s.cfg.frameSize-len(s.buf))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		if len(s.buf) == s.cfg.frameSize {
			if err := s.frame(s.buf); err != nil {
				return total - len(p), err
			}
			s.buf = s.buf[:0]
		}
	}
	return total, nil
}

// frame compresses in as one frame, writes it and records it in the table.
func (s *SeekableWriter) frame(in []byte) error {
	if s.n >= seekMaxFrames {
		s.err = fmt.Errorf("zstd seekable writer: more than %d frames", seekMaxFrames)
		return s.err
	}
	s.out = s.enc.EncodeAll(in, s.out[:0])
	if uint64(len(s.out)) > 1<<32-1 {
		s.err = errors.New("zstd seekable writer: frame larger than 4 GiB")
		return s.err
	}
	if _, err := s.w.Write(s.out); err != nil {
		s.err = err
		return err
	}
	s.table = binary.LittleEndian.AppendUint32(s.table, uint32(len(s.out)))
	s.table = binary.LittleEndian.AppendUint32(s.table, uint32(len(in)))
	if s.cfg.checksums {
		// The frame ends in the low 32 bits of XXH64 of its content, which
		// is what the seek table wants too.
		s.table = append(s.table, s.out[len(s.out)-4:]...)
	}
	s.n++
	return nil
}

// Close writes the last partial frame and the seek table, and releases the
// encoder. It does not close the underlying writer.
func (s *SeekableWriter) Close() error {
	if s.done {
		return s.err
	}
	s.done = true
	if s.enc != nil {
		defer s.enc.Close()
	}
	if s.err != nil {
		return s.err
	}
	if len(s.buf) > 0 {
		if err := s.frame(s.buf); err != nil {
			return err
		}
		s.buf = nil
	}
	s.err = s.writeTable()
	return s.err
}

func (s *SeekableWriter) writeTable() error {
	desc := byte(0)
	if s.cfg.checksums {
		desc |= seekChecksumFlag
	}
	payload := len(s.table) + seekFooterLen
	t := make([]byte, 0, 8+payload)
	t = binary.LittleEndian.AppendUint32(t, skippableMagic)
	t = binary.LittleEndian.AppendUint32(t, uint32(payload))
	t = append(t, s.table...)
	t = binary.LittleEndian.AppendUint32(t, uint32(s.n))
	t = append(t, desc)
	t = binary.LittleEndian.AppendUint32(t, seekableMagic)
	_, err := s.w.Write(t)
	return err
}
