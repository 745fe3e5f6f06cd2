package format

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPrefetchSurvivesCutShort: the prefetcher reading a mapping whose
// file was cut short under it stops quietly (the reader meets the fault
// itself, see TestMappedVolumeCutShort) and halts.
func TestPrefetchSurvivesCutShort(t *testing.T) {
	name := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(name, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, 8<<20, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	if err := os.Truncate(name, 4096); err != nil {
		t.Fatal(err)
	}
	p := startPrefetch(b, 0, 256<<10)
	for off := 64 << 10; off < 8<<20; off += 64 << 10 {
		p.tell(off)
	}
	p.halt()
}
