package format

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteback(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &writeback{f: f}
	chunk := bytes.Repeat([]byte{7}, 3<<20)
	for i := 0; i < 4; i++ {
		if n, err := w.Write(chunk); err != nil || n != len(chunk) {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	if w.written != 12<<20 || w.started != 9<<20 {
		t.Errorf("written %d, write-back started up to %d; want %d and %d", w.written, w.started, 12<<20, 9<<20)
	}
	if st, _ := f.Stat(); st.Size() != 12<<20 {
		t.Errorf("file is %d bytes", st.Size())
	}
}
