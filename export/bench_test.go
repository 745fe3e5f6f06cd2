package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
)

// BenchmarkParquet exports the archive named by PCPTOOLS_EXPORT_BENCH_ARCHIVE
// (default: the example archive).
func BenchmarkParquet(b *testing.B) {
	base := os.Getenv("PCPTOOLS_EXPORT_BENCH_ARCHIVE")
	if base == "" {
		base = demo
	}
	out := filepath.Join(b.TempDir(), "out.parquet")
	for b.Loop() {
		a, err := format.Open(base)
		if err != nil {
			b.Fatal(err)
		}
		n, err := Parquet(out, archiveSource(b, a), dump.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "rows")
	}
}
