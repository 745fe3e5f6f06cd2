package mmv

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// BenchmarkSample1000x100 is one sample of a file of 1,000 metrics x 100
// instances (after the first, which emits the metadata).
func BenchmarkSample1000x100(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(p, build(spec{version: 2, nm: 1000, ni: 100, gen: 1}), 0o644); err != nil {
		b.Fatal(err)
	}
	s := &Sampler{Path: p}
	discard := func(stream.Record) error { return nil }
	t := time.Now()
	if err := s.Sample(t, discard); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Sample(t, discard); err != nil {
			b.Fatal(err)
		}
	}
}
