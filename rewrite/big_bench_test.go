package rewrite

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/rules"
	"github.com/pcptools/pcptools/stream"
)

// BenchmarkBigArchive rewrites the first results of make bench's large
// archive (bench/data/big-v2, made by scripts/gen-bench-archive.py) with
// bench.sh's ten rules (scripts/bench/ten.conf), in memory: the rewriting
// engine alone, without reading or writing files (PCPTOOLS_BENCH_RECORDS
// results, 200 by default, over and over). Skipped when the archive is not
// there.
func BenchmarkBigArchive(b *testing.B) {
	base := os.Getenv("PCPTOOLS_BENCH_ARCHIVE")
	if base == "" {
		base = filepath.Join("..", "bench", "data", "big-v2")
	}
	if _, err := os.Stat(base + ".meta"); err != nil {
		b.Skip("no bench archive (make bench makes it):", err)
	}
	a, err := format.Open(base)
	if err != nil {
		b.Fatal(err)
	}
	meta, err := a.Meta()
	if err != nil {
		b.Fatal(err)
	}
	ten := filepath.Join("..", "scripts", "bench", "ten.conf") // bench.sh's
	src, err := os.ReadFile(ten)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := rules.ParsePmlogrewrite(ten, string(src))
	if err != nil {
		b.Fatal(err)
	}
	plan, err := rules.Compile(cfg, meta, rules.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var recs []stream.Record
	var bytes int64
	it := a.Records()
	for it.Next() && len(recs) < benchRecs {
		if res, ok := it.At().(*stream.Result); ok {
			recs = append(recs, res.Clone())
			bytes += int64(len(res.Body))
		}
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	it.Close()
	rw := New(&cycle{recs: recs}, plan, Options{Meta: meta})
	rw.started = true
	b.ReportAllocs()
	b.SetBytes(bytes / int64(len(recs)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !rw.Next() {
			b.Fatal(rw.Err())
		}
	}
}

// cycle yields recs over and over.
type cycle struct {
	recs []stream.Record
	i    int
}

func (c *cycle) Next() bool        { c.i++; return true }
func (c *cycle) At() stream.Record { return c.recs[c.i%len(c.recs)] }
func (c *cycle) Err() error        { return nil }

var benchRecs = func() int {
	if n, err := strconv.Atoi(os.Getenv("PCPTOOLS_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 200
}()
