package mmv

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
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

// BenchmarkRecord1000x100 is one sample of a file of 1,000 metrics x 100
// instances into an archive (after the first).
func BenchmarkRecord1000x100(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, build(spec{version: 2, nm: 1000, ni: 100, gen: 1}), 0o644); err != nil {
		b.Fatal(err)
	}
	s := &Sampler{Path: p}
	w, err := format.Create(filepath.Join(dir, "a"), format.WriterOptions{Version: 3, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	t := time.Now()
	if err := w.Write(&stream.Label{Version: 3, Start: stream.FromTime(t), Hostname: "h", Timezone: "UTC"}); err != nil {
		b.Fatal(err)
	}
	if err := s.Sample(t, w.Write); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t = t.Add(time.Second)
		if err := s.Sample(t, w.Write); err != nil {
			b.Fatal(err)
		}
	}
}
