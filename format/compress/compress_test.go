package compress

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestSplitSuffix(t *testing.T) {
	for _, tc := range []struct{ in, base, suffix string }{
		{"a/20240101.0.xz", "a/20240101.0", ".xz"},
		{"x.meta.lzma", "x.meta", ".lzma"},
		{"x.index.bz2", "x.index", ".bz2"},
		{"x.0.bz", "x.0", ".bz"},
		{"x.0.gz", "x.0", ".gz"},
		{"x.0.Z", "x.0", ".Z"},
		{"x.0.z", "x.0", ".z"},
		{"x.0.zst", "x.0", ".zst"},
		{"x.0", "x.0", ""},
		{"x.0.xz.bak", "x.0.xz.bak", ""},
		{".xz", ".xz", ""},
		{"x.0.XZ", "x.0.XZ", ""},
		{"x.txz", "x.txz", ""},
	} {
		base, suffix := SplitSuffix(tc.in)
		if base != tc.base || suffix != tc.suffix {
			t.Errorf("SplitSuffix(%q) = %q, %q; want %q, %q", tc.in, base, suffix, tc.base, tc.suffix)
		}
	}
}

func TestLookup(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a.0")
	if _, err := Lookup(base); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lookup of nothing: %v", err)
	}
	writeFile(t, dir, "a.0.gz", nil)
	writeFile(t, dir, "a.0.bz2", nil)
	if p, err := Lookup(base); err != nil || p != base+".bz2" {
		t.Fatalf("Lookup = %q, %v; want the .bz2 (earlier in Suffixes)", p, err)
	}
	writeFile(t, dir, "a.0", nil)
	if p, err := Lookup(base); err != nil || p != base {
		t.Fatalf("Lookup = %q, %v; want the plain file", p, err)
	}
}

// roundTrip is one way of making a compressed file from plain bytes.
type roundTrip struct {
	name   string
	suffix string
	make   func(t testing.TB, plain []byte) []byte
}

func tool(name string, args ...string) func(t testing.TB, plain []byte) []byte {
	return func(t testing.TB, plain []byte) []byte { return runTool(t, plain, name, args...) }
}

// twice concatenates two compressions of the two halves of the input.
func twice(f func(t testing.TB, plain []byte) []byte, sep []byte) func(t testing.TB, plain []byte) []byte {
	return func(t testing.TB, plain []byte) []byte {
		h := len(plain) / 2
		out := append([]byte{}, f(t, plain[:h])...)
		out = append(out, sep...)
		return append(out, f(t, plain[h:])...)
	}
}

func seekable(opts ...SeekableOption) func(t testing.TB, plain []byte) []byte {
	return func(t testing.TB, plain []byte) []byte {
		var b bytes.Buffer
		w := NewSeekableWriter(&b, opts...)
		if _, err := w.Write(plain); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

var roundTrips = []roundTrip{
	{"xz", ".xz", tool("xz", "-c", "-1")},
	{"xz-blocks", ".xz", tool("xz", "-c", "-0", "--block-size=64KiB")},
	{"xz-blocks-crc32", ".xz", tool("xz", "-c", "-0", "-C", "crc32", "--block-size=100000")},
	{"xz-blocks-none", ".xz", tool("xz", "-c", "-0", "-C", "none", "--block-size=64KiB")},
	{"xz-blocks-sha256", ".xz", tool("xz", "-c", "-3", "-C", "sha256", "--block-size=200KiB")},
	{"xz-multistream", ".xz", twice(tool("xz", "-c", "-0", "--block-size=64KiB"), make([]byte, 8))},
	{"xz-threads", ".xz", tool("xz", "-c", "-T2", "-1")},
	{"xz-as-lzma", ".lzma", tool("xz", "-c", "-0")},
	{"lzma", ".lzma", tool("xz", "-c", "--format=lzma", "-1")},
	{"bzip2", ".bz2", tool("bzip2", "-c")},
	{"bzip2-bz", ".bz", tool("bzip2", "-c", "-1")},
	{"bzip2-multistream", ".bz2", twice(tool("bzip2", "-c"), nil)},
	{"gzip", ".gz", tool("gzip", "-c")},
	{"gzip-z", ".z", tool("gzip", "-c", "-1")},
	{"gzip-multimember", ".gz", twice(tool("gzip", "-c"), nil)},
	{"gzip-as-Z", ".Z", tool("gzip", "-c")},
	{"compress", ".Z", tool("compress", "-f", "-c")},
	// No -b9: ncompress 4.2.4 cannot decompress its own -b9 output, nor can gzip.
	{"compress-b11", ".Z", tool("compress", "-f", "-c", "-b11")},
	{"compress-b10", ".Z", tool("compress", "-f", "-c", "-b10")},
	{"compress-b12", ".Z", tool("compress", "-f", "-c", "-b12")},
	{"compress-b15", ".Z", tool("compress", "-f", "-c", "-b15")},
	{"compress-as-z", ".z", tool("compress", "-f", "-c")},
	{"zstd", ".zst", tool("zstd", "-c", "-q")},
	{"zstd-multiframe", ".zst", twice(tool("zstd", "-c", "-q"), nil)},
	{"zstd-seekable", ".zst", seekable()},
	{"zstd-seekable-small", ".zst", seekable(WithFrameSize(50000), WithLevel(1))},
	{"zstd-seekable-nosum", ".zst", seekable(WithFrameSize(1<<10), WithChecksums(false))},
}

func TestRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty": {},
		"tiny":  []byte("x"),
		"big":   testData(400<<10+12345, 1),
	}
	for _, rt := range roundTrips {
		t.Run(rt.name, func(t *testing.T) {
			dir := t.TempDir()
			for iname, plain := range inputs {
				comp := rt.make(t, plain)
				p := writeFile(t, dir, iname+rt.suffix, comp)
				f, err := Open(p)
				if err != nil {
					t.Fatalf("%s: Open: %v", iname, err)
				}
				if f.Name() != p {
					t.Errorf("Name() = %q, want %q", f.Name(), p)
				}
				checkFile(t, f, plain)
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := f.Read(make([]byte, 1)); err == nil {
					t.Fatal("Read after Close succeeded")
				}
				if _, err := f.ReadAt(make([]byte, 1), 0); err == nil && len(plain) > 0 {
					t.Fatal("ReadAt after Close succeeded")
				}
			}
		})
	}
}

func TestPlainFile(t *testing.T) {
	dir := t.TempDir()
	plain := testData(100000, 3)
	p := writeFile(t, dir, "a.0", plain)
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkFile(t, f, plain)
	// A live archive grows: Size follows.
	fa, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fa.Write([]byte("more"))
	fa.Close()
	if f.Size() != int64(len(plain))+4 {
		t.Fatalf("Size after append = %d", f.Size())
	}
}

// TestWholeDecodeSpills checks the temporary-file path of whole-file
// decodes, and xz falling back to it when blocks are too big to cache.
func TestWholeDecodeSpills(t *testing.T) {
	plain := testData(1<<20, 4)
	for _, rt := range []roundTrip{
		{"gzip", ".gz", tool("gzip", "-c", "-1")},
		{"xz-single-block", ".xz", tool("xz", "-c", "-0")},
		{"xz-256KiB-blocks", ".xz", tool("xz", "-c", "-0", "--block-size=256KiB")},
		{"zstd-seekable-big-frames", ".zst", seekable(WithFrameSize(256 << 10))},
	} {
		t.Run(rt.name, func(t *testing.T) {
			dir := t.TempDir()
			small := Options{MemLimit: 100 << 10, TempDir: dir, MaxSegment: 128 << 10}
			p := writeFile(t, dir, "in"+rt.suffix, rt.make(t, plain))
			f, err := small.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, ok := f.(*file).src.(*tempSource); !ok {
				t.Fatalf("source is %T, want a temporary file", f.(*file).src)
			}
			checkFile(t, f, plain)
			// The temporary file is unlinked at once.
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != filepath.Base(p) {
					t.Errorf("left behind in TempDir: %s", e.Name())
				}
			}
		})
	}
}

// TestWholeXZInMemory: an xz file whose blocks are too large to cache but
// fit in memory is decoded block by block by the fast LZMA2 decoder into
// buffers the in-memory spill keeps (whole chunks, or copied after a block
// that left a short chunk), the same bytes as the generic decoder gives;
// a block whose check does not match is an error naming the block.
func TestWholeXZInMemory(t *testing.T) {
	plain := testData(1<<20+12345, 6)
	for _, rt := range []roundTrip{
		{"single-block", ".xz", tool("xz", "-c", "-0")},
		{"uneven-blocks", ".xz", tool("xz", "-c", "-0", "--block-size=300001")},
	} {
		t.Run(rt.name, func(t *testing.T) {
			comp := rt.make(t, plain)
			for _, generic := range []bool{false, true} {
				o := Options{MaxSegment: 64 << 10, genericXZ: generic}
				before := xzWholeInMemory.Load()
				f, err := openBytes(t, o, "in.xz", comp)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := f.(*file).src.(*memSource); !ok {
					t.Fatalf("source is %T, want memory", f.(*file).src)
				}
				if n := xzWholeInMemory.Load() - before; n == 0 {
					t.Errorf("generic %v: no block decoded whole into memory", generic)
				}
				checkFile(t, f, plain)
				f.Close()
			}
			// The last 8 bytes before the index hold the first block's
			// CRC64 in the single-block file: flip one.
			if rt.name == "single-block" {
				bad := bytes.Clone(comp)
				idx := bytes.LastIndex(bad, []byte{0x00, 0x01}) // index indicator, one record
				bad[idx-1] ^= 0x40
				_, err := openBytes(t, Options{MaxSegment: 64 << 10}, "bad.xz", bad)
				mustFormatError(t, err, "bad.xz")
				if !strings.Contains(err.Error(), "block 0") && !strings.Contains(err.Error(), "block 1") {
					t.Errorf("error does not name the block: %v", err)
				}
				t.Log(err)
			}
		})
	}
}

func TestMaxSize(t *testing.T) {
	bomb := runTool(t, make([]byte, 10<<20), "gzip", "-c")
	_, err := openBytes(t, Options{MaxSize: 1 << 20}, "bomb.gz", bomb)
	mustFormatError(t, err, "bomb.gz")
	t.Log(err)
}

// TestRandomAccessDecodesLittle counts compressed bytes read: a small
// ReadAt in a multi-block file must touch about one block, not the file.
func TestRandomAccessDecodesLittle(t *testing.T) {
	plain := testData(2<<20, 5)
	for _, rt := range []roundTrip{
		{"xz", ".xz", tool("xz", "-c", "-0", "--block-size=64KiB")},
		{"zstd", ".zst", seekable(WithFrameSize(64 << 10))},
	} {
		t.Run(rt.name, func(t *testing.T) {
			comp := rt.make(t, plain)
			cr := &countingReaderAt{r: bytes.NewReader(comp)}
			f, err := Options{ReadAhead: -1}.NewFile("x"+rt.suffix, cr, int64(len(comp)))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			opened := cr.n
			var buf [100]byte
			off := int64(len(plain) * 3 / 4)
			if _, err := f.ReadAt(buf[:], off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:], plain[off:off+100]) {
				t.Fatal("content differs")
			}
			read := cr.n - opened
			t.Logf("open read %d bytes of %d; one ReadAt read %d more", opened, len(comp), read)
			if read > int64(len(comp))/10 {
				t.Fatalf("ReadAt of 100 bytes read %d of %d compressed bytes", read, len(comp))
			}
			if opened > int64(len(comp))/10 {
				t.Fatalf("Open read %d of %d compressed bytes", opened, len(comp))
			}
		})
	}
}

type countingReaderAt struct {
	r  io.ReaderAt
	mu sync.Mutex
	n  int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

// TestConcurrentReadAt hammers one File from several goroutines (run with
// -race), with a cache too small to hold everything.
func TestConcurrentReadAt(t *testing.T) {
	plain := testData(512<<10, 6)
	for _, rt := range []roundTrip{
		{"xz", ".xz", tool("xz", "-c", "-0", "--block-size=32KiB")},
		{"zstd", ".zst", seekable(WithFrameSize(32 << 10))},
	} {
		t.Run(rt.name, func(t *testing.T) {
			f, err := openBytes(t, Options{CacheBytes: 100 << 10, ReadAhead: 2}, "c"+rt.suffix, rt.make(t, plain))
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					checkReadAt(t, f, plain, 30)
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := io.ReadAll(f)
				if err != nil || !bytes.Equal(got, plain) {
					t.Errorf("sequential read during random reads: %v", err)
				}
			}()
			wg.Wait()
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCloseDuringReadAhead closes a file while background decodes run.
func TestCloseDuringReadAhead(t *testing.T) {
	plain := testData(512<<10, 8)
	comp := runTool(t, plain, "xz", "-c", "-0", "--block-size=64KiB")
	for i := 0; i < 5; i++ {
		f, err := openBytes(t, Options{ReadAhead: 4}, "r.xz", comp)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 70000)
		f.Read(buf)
		f.Read(buf)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
