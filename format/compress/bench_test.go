package compress

import (
	"bytes"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

var (
	benchOnce  sync.Once
	benchPlain []byte
)

// benchData is 16 MiB of a real PCP volume when the test suite's archives
// are installed (PCP data compresses 20-60x, which is what decoders spend
// their time on), else synthetic data that compresses far worse.
func benchData() []byte {
	benchOnce.Do(func() {
		out, err := exec.Command("xz", "-dc", fixtureDir+"/bozo-20170904.0.xz").Output()
		if err == nil && len(out) >= 16<<20 {
			benchPlain = out[:16<<20]
			return
		}
		benchPlain = testData(16<<20, 99)
	})
	return benchPlain
}

func BenchmarkSeekableWriter(b *testing.B) {
	plain := benchData()
	for _, frame := range []int{1 << 20, DefaultFrameSize} {
		b.Run(byteSize(frame), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(plain)))
			var out countWriter
			for b.Loop() {
				w := NewSeekableWriter(&out, WithFrameSize(frame))
				// Write in 64 KiB pieces, as an archive writer would.
				for p := plain; len(p) > 0; {
					k := min(len(p), 64<<10)
					if _, err := w.Write(p[:k]); err != nil {
						b.Fatal(err)
					}
					p = p[k:]
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.n)/float64(b.N)/float64(len(plain)), "ratio")
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// BenchmarkSequentialRead reads a whole multi-block file through Read, as
// the archive reader does with a volume.
func BenchmarkSequentialRead(b *testing.B) {
	plain := benchData()
	xzBlocks := runTool(b, plain, "xz", "-c", "-0", "--block-size=1MiB")
	var zb bytes.Buffer
	w := NewSeekableWriter(&zb, WithFrameSize(1<<20))
	w.Write(plain)
	w.Close()
	for _, tc := range []struct {
		name string
		file string
		data []byte
		opt  Options
	}{
		{"xz-1MiB-blocks", "b.xz", xzBlocks, Options{}},
		{"xz-1MiB-blocks-noreadahead", "b.xz", xzBlocks, Options{ReadAhead: -1}},
		{"zstd-seekable-1MiB", "b.zst", zb.Bytes(), Options{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(plain)))
			buf := make([]byte, 32<<10)
			for b.Loop() {
				f, err := tc.opt.NewFile(tc.file, bytes.NewReader(tc.data), int64(len(tc.data)))
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
				if err != nil || n != int64(len(plain)) {
					b.Fatal(n, err)
				}
				f.Close()
			}
		})
	}
}

// BenchmarkRandomReadAt reads 4 KiB at scattered offsets of a multi-block
// xz file with the default cache (which holds the whole 16 MiB here after
// warm-up, so this measures the cache path) and with a one-block cache.
func BenchmarkRandomReadAt(b *testing.B) {
	plain := benchData()
	comp := runTool(b, plain, "xz", "-c", "-0", "--block-size=1MiB")
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"cached", Options{}},
		{"tiny-cache", Options{CacheBytes: 1, ReadAhead: -1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f, err := tc.opt.NewFile("r.xz", bytes.NewReader(comp), int64(len(comp)))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ReportAllocs()
			buf := make([]byte, 4096)
			off := int64(0)
			for b.Loop() {
				off = (off + 5<<20 + 12345) % (int64(len(plain)) - 4096)
				if _, err := f.ReadAt(buf, off); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkXZBlock decodes one 10 MiB block of a PCP volume, as
// pmlogger_daily's `xz -0 --block-size=10MiB` writes them, with this
// package's LZMA2 decoder and with ulikunitz/xz.
func BenchmarkXZBlock(b *testing.B) {
	plain := benchData()[:10<<20]
	for _, level := range []string{"-0", "-6"} {
		comp := runTool(b, plain, "xz", "-c", level)
		for _, tc := range []struct {
			name string
			opt  Options
		}{{"lzma2", Options{}}, {"ulikunitz", Options{genericXZ: true}}} {
			b.Run("xz"+level+"/"+tc.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(plain)))
				for b.Loop() {
					f, err := tc.opt.NewFile("b.xz", bytes.NewReader(comp), int64(len(comp)))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.ReadAt(make([]byte, 1), int64(len(plain))-1); err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			})
		}
	}
}

// BenchmarkXZWriter compresses 16 MiB of a PCP volume into 4 MiB blocks on
// every core, as the archive writer does with WriterOptions.Xz.
func BenchmarkXZWriter(b *testing.B) {
	plain := benchData()
	b.ReportAllocs()
	b.SetBytes(int64(len(plain)))
	var out countWriter
	for b.Loop() {
		w := NewXZWriter(&out)
		for p := plain; len(p) > 0; {
			k := min(len(p), 64<<10)
			if _, err := w.Write(p[:k]); err != nil {
				b.Fatal(err)
			}
			p = p[k:]
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.n)/float64(b.N)/float64(len(plain)), "ratio")
}
