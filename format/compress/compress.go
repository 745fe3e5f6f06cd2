package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Suffixes are the compression suffixes an archive file name may carry, in
// the order [Lookup] probes them. The first seven are PCP 6.0.3's list, in
// its order; .zst is recognised by PCP from 6.3.2 on.
var Suffixes = []string{".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z", ".zst"}

// SplitSuffix splits a compression suffix from path. It returns (path, "")
// when path does not end in one of [Suffixes] (a bare suffix such as ".xz"
// is a name, not a suffix).
func SplitSuffix(path string) (base, suffix string) {
	for _, s := range Suffixes {
		if len(path) > len(s) && strings.HasSuffix(path, s) {
			return path[:len(path)-len(s)], s
		}
	}
	return path, ""
}

// Lookup finds the file holding base, as PCP does: base itself if it
// exists, else base with the first suffix of [Suffixes] that exists. When
// nothing exists the error satisfies errors.Is(err, fs.ErrNotExist).
func Lookup(base string) (string, error) {
	_, err := os.Stat(base)
	if err == nil {
		return base, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	for _, s := range Suffixes {
		p := base + s
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", &fs.PathError{Op: "lookup", Path: base, Err: fs.ErrNotExist}
}

// File is the decompressed content of one file.
//
// ReadAt may be called concurrently, also with Read and Seek; Read and Seek
// share one offset and serialise on it. Close releases the file descriptor,
// cached blocks and any temporary file; it waits for background decoding to
// stop.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
	// Size is the decompressed size. For a plain file it is the current
	// size on disk (a live archive grows), or the size at Open if stat
	// fails.
	Size() int64
	// Name is the path given to Open.
	Name() string
}

// Options tune [Options.Open]. The zero value means the defaults.
type Options struct {
	// MemLimit is the most decompressed bytes a whole-file decode keeps in
	// memory; beyond it the bytes go to an unlinked temporary file.
	// Default 256 MiB.
	MemLimit int64
	// TempDir is where such temporary files go; default os.TempDir().
	TempDir string
	// MaxSize caps the decompressed size of a whole-file decode, to stop
	// decompression bombs filling the disk. Default 1 TiB.
	MaxSize int64
	// MaxSegment is the largest block (xz block, zstd frame) decoded on its
	// own for random access; a file with a larger block is decoded whole.
	// Default 32 MiB.
	MaxSegment int64
	// CacheBytes bounds the decoded blocks kept per file. It is raised to
	// hold at least ReadAhead+2 of the file's largest blocks. Default 32 MiB.
	CacheBytes int64
	// ReadAhead is how many blocks are decoded in the background when
	// access looks sequential. 0 means the default, 1; negative disables.
	ReadAhead int

	// genericXZ makes every xz block go through ulikunitz/xz instead of
	// decodeLZMA2: for tests that compare the two.
	genericXZ bool
}

const (
	defaultMemLimit   = 256 << 20
	defaultMaxSize    = 1 << 40
	defaultMaxSegment = 32 << 20
	defaultCacheBytes = 32 << 20
	defaultReadAhead  = 1
)

func (o Options) withDefaults() Options {
	if o.MemLimit <= 0 {
		o.MemLimit = defaultMemLimit
	}
	if o.MaxSize <= 0 {
		o.MaxSize = defaultMaxSize
	}
	if o.MaxSegment <= 0 {
		o.MaxSegment = defaultMaxSegment
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = defaultCacheBytes
	}
	switch {
	case o.ReadAhead == 0:
		o.ReadAhead = defaultReadAhead
	case o.ReadAhead < 0:
		o.ReadAhead = 0
	}
	return o
}

// Open opens path with the default [Options].
func Open(path string) (File, error) {
	return Options{}.Open(path)
}

// Open opens path and decodes it according to its suffix (see
// [SplitSuffix]); a name without one of [Suffixes] is read as is. Formats
// without an index are decoded completely before Open returns, so their
// errors come from Open.
func (o Options) Open(path string) (File, error) {
	_, suffix := SplitSuffix(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if suffix == "" {
		return &plainFile{File: f, name: path, size: fi.Size()}, nil
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: compressed input must be a regular file", path)
	}
	cf, err := o.open(path, suffix, f, fi.Size(), f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return cf, nil
}

// NewFile decodes the compressed bytes r[0:size) as if they were a file
// called name: the format comes from name's suffix, and name appears in
// errors. Closing the File does not close r. A name without a compression
// suffix gives r's bytes as they are.
func (o Options) NewFile(name string, r io.ReaderAt, size int64) (File, error) {
	_, suffix := SplitSuffix(name)
	if suffix == "" {
		return newFile(name, size, readerAtSource{r}), nil
	}
	return o.open(name, suffix, r, size, nil)
}

// format identifies a decoder.
type format int

const (
	formatUnknown format = iota
	formatXZ
	formatLZMA
	formatBzip2
	formatGzip
	formatLZW
	formatZstd
)

var formatNames = [...]string{"unknown", "xz", "lzma", "bzip2", "gzip", "compress", "zstd"}

func (f format) String() string { return formatNames[f] }

func suffixFormat(suffix string) format {
	switch suffix {
	case ".xz":
		return formatXZ
	case ".lzma":
		return formatLZMA
	case ".bz2", ".bz":
		return formatBzip2
	case ".gz", ".z":
		return formatGzip
	case ".Z":
		return formatLZW
	case ".zst":
		return formatZstd
	}
	return formatUnknown
}

var (
	magicXZ    = []byte{0xfd, '7', 'z', 'X', 'Z', 0}
	magicGzip  = []byte{0x1f, 0x8b}
	magicLZW   = []byte{0x1f, 0x9d}
	magicBzip2 = []byte("BZh")
	magicZstd  = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// sniff recognises a format from the first bytes of a file. The legacy
// .lzma format has no magic number and is never recognised here.
func sniff(b []byte) format {
	switch {
	case bytes.HasPrefix(b, magicXZ):
		return formatXZ
	case bytes.HasPrefix(b, magicGzip):
		return formatGzip
	case bytes.HasPrefix(b, magicLZW):
		return formatLZW
	case bytes.HasPrefix(b, magicBzip2):
		return formatBzip2
	case bytes.HasPrefix(b, magicZstd):
		return formatZstd
	case len(b) >= 4 && b[0]&0xf0 == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18:
		// A zstd skippable frame may come first.
		return formatZstd
	}
	return formatUnknown
}

func (o Options) open(name, suffix string, r io.ReaderAt, size int64, closer io.Closer) (File, error) {
	o = o.withDefaults()
	var head [8]byte
	n, err := r.ReadAt(head[:], 0)
	if n < len(head) && err != io.EOF && err != nil {
		return nil, err
	}
	if int64(n) > size {
		n = int(size)
	}
	fmtSuffix := suffixFormat(suffix)
	ft := sniff(head[:n])
	if ft == formatUnknown {
		if fmtSuffix != formatLZMA {
			if n == 0 {
				return nil, formatErr(name, fmtSuffix, 0, "empty file", io.ErrUnexpectedEOF)
			}
			return nil, formatErr(name, fmtSuffix, 0, fmt.Sprintf("not %s data (starts with % x)", fmtSuffix, head[:n]), nil)
		}
		ft = formatLZMA
	}
	d := &opener{name: name, ft: ft, r: r, size: size, closer: closer, opt: o}
	switch ft {
	case formatXZ:
		return d.openXZ()
	case formatZstd:
		return d.openZstd()
	}
	return d.materialize(nil)
}

// opener carries what every decoder needs while a file is being opened.
type opener struct {
	name   string
	ft     format
	r      io.ReaderAt
	size   int64 // compressed size
	closer io.Closer
	opt    Options
}

// FormatError reports damaged or unsupported compressed data.
type FormatError struct {
	Name   string // file name
	Format string // "xz", "gzip", ...
	// Offset is a byte offset in the compressed file, or, when Decoded is
	// true, the number of decompressed bytes produced before the error
	// (stream decoders cannot say where in their input they failed).
	Offset  int64
	Decoded bool
	Msg     string
	Err     error // underlying error, if any
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.Name)
	b.WriteString(": ")
	b.WriteString(e.Format)
	if e.Decoded {
		fmt.Fprintf(&b, ": after %d decompressed bytes: ", e.Offset)
	} else {
		fmt.Fprintf(&b, ": offset %d: ", e.Offset)
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(name string, ft format, off int64, msg string, err error) *FormatError {
	return &FormatError{Name: name, Format: ft.String(), Offset: off, Msg: msg, Err: err}
}

// streamErr classifies an error from a stream decoder.
func streamErr(name string, ft format, decoded int64, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	msg := "corrupt stream"
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "truncated stream"
	}
	return &FormatError{Name: name, Format: ft.String(), Offset: decoded, Decoded: true, Msg: msg, Err: err}
}
