package compress

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// Seeds are made in-process where Go can write the format, so the fuzz
// targets need no tools; bzip2 and .Z seeds are fixed byte strings made
// once with bzip2(1) and compress(1).

var fuzzPlain = [][]byte{nil, []byte("a"), []byte("hello hello hello hello\n"), lcgData(200, 300)}

// fuzzOptions keep fuzzing fast and bounded: small caches and sizes.
var fuzzOptions = Options{MaxSize: 1 << 20, MaxSegment: 1 << 20, CacheBytes: 1 << 20, MemLimit: 1 << 20}

// fuzzOpen is the body of every target: whatever the bytes, no panic, and
// a File that opens reads back consistently.
func fuzzOpen(t *testing.T, suffix string, data []byte) {
	f, err := fuzzOptions.NewFile("fuzz"+suffix, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil {
		return
	}
	if int64(len(got)) != f.Size() {
		t.Fatalf("read %d bytes, Size() = %d", len(got), f.Size())
	}
	var buf [37]byte
	for _, off := range []int64{0, f.Size() / 2, f.Size() - 5} {
		n, err := f.ReadAt(buf[:], off)
		if err != nil && err != io.EOF {
			return
		}
		if off >= 0 && !bytes.Equal(buf[:n], got[off:off+int64(n)]) {
			t.Fatalf("ReadAt(%d) differs from Read", off)
		}
	}
}

func FuzzXZ(f *testing.F) {
	for i, p := range fuzzPlain {
		var b bytes.Buffer
		w, err := xz.WriterConfig{BlockSize: 64 + int64(i)*100, CheckSum: []byte{xz.None, xz.CRC32, xz.CRC64, xz.SHA256}[i%4]}.NewWriter(&b)
		if err != nil {
			f.Fatal(err)
		}
		w.Write(p)
		w.Close()
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOpen(t, ".xz", data) })
}

func FuzzLZMA(f *testing.F) {
	for _, p := range fuzzPlain {
		var b bytes.Buffer
		w, err := lzma.NewWriter(&b)
		if err != nil {
			f.Fatal(err)
		}
		w.Write(p)
		w.Close()
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOpen(t, ".lzma", data) })
}

func FuzzGzip(f *testing.F) {
	for _, p := range fuzzPlain {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(p)
		w.Close()
		f.Add(b.Bytes())
		f.Add(append(bytes.Clone(b.Bytes()), b.Bytes()...)) // two members
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOpen(t, ".gz", data) })
}

// bzip2Seeds were made with `printf ... | bzip2 -c`.
var bzip2Seeds = [][]byte{
	// empty input
	{0x42, 0x5a, 0x68, 0x39, 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0x00, 0x00, 0x00, 0x00},
	// "hello hello hello hello\n"
	{0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x6f, 0x4f, 0x10, 0xf3, 0x00, 0x00,
		0x05, 0xd1, 0x00, 0x00, 0x10, 0x40, 0x00, 0x02, 0x44, 0xa0, 0x00, 0x30, 0xc0, 0x02, 0xa8, 0x34,
		0x71, 0x0d, 0xad, 0x87, 0x0f, 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0x6f, 0x4f, 0x10, 0xf3},
}

func FuzzBzip2(f *testing.F) {
	for _, s := range bzip2Seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOpen(t, ".bz2", data) })
}

func FuzzLZW(f *testing.F) {
	f.Add([]byte{0x1f, 0x9d, 0x90})
	f.Add([]byte{0x1f, 0x9d, 0x90, 0x41, 0x84, 0x04, 0x1c, 0x08}) // "ABABABA"
	for _, v := range lzwVectors[:2] {
		data, err := os.ReadFile(filepath.Join("testdata", v.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 2000)])
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOpen(t, ".Z", data) })
}

func FuzzZstd(f *testing.F) {
	enc, _ := zstd.NewWriter(nil)
	for _, p := range fuzzPlain {
		f.Add(enc.EncodeAll(p, nil))
		var b bytes.Buffer
		w := NewSeekableWriter(&b, WithFrameSize(MinFrameSize))
		w.Write(p)
		w.Close()
		f.Add(b.Bytes())
	}
	enc.Close()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOpen(t, ".zst", data) })
}

// TestFuzzSeedsValid makes sure the fixed seeds decode, so the fuzz
// targets start from valid inputs.
func TestFuzzSeedsValid(t *testing.T) {
	for i, s := range bzip2Seeds {
		got, err := decodeAll(t, Options{}, "s.bz2", s)
		if err != nil || (i == 1 && string(got) != "hello hello hello hello\n") {
			t.Errorf("bzip2 seed %d: %q, %v", i, got, err)
		}
	}
	got, err := decodeAll(t, Options{}, "s.Z", []byte{0x1f, 0x9d, 0x90, 0x41, 0x84, 0x04, 0x1c, 0x08})
	if err != nil || string(got) != "ABABABA" {
		t.Errorf(".Z seed: %q, %v", got, err)
	}
}
