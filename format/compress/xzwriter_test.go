package compress

import (
	"bytes"
	"io"
	"os/exec"
	"testing"
)

func xzWrite(t testing.TB, plain []byte, opts ...XZOption) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewXZWriter(&b, opts...)
	// Odd-sized writes, so that blocks fill across calls.
	for p := plain; len(p) > 0; {
		k := min(len(p), 40000)
		if _, err := w.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestXZWriterRoundTrip: what XZWriter writes, this package and xz(1)
// read back, block by block, with the sizes in the index.
func TestXZWriterRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plain []byte
		opts  []XZOption
	}{
		{"empty", nil, nil},
		{"one byte", []byte("x"), nil},
		{"less than a block", testData(100<<10, 1), nil},
		{"exact blocks", testData(4*(64<<10), 2), []XZOption{WithXZBlockSize(64 << 10)}},
		{"many blocks", testData(1<<20+12345, 3), []XZOption{WithXZBlockSize(64 << 10), WithXZWorkers(3)}},
		{"one worker", testData(300<<10, 4), []XZOption{WithXZBlockSize(64 << 10), WithXZWorkers(1)}},
		{"incompressible", randBytes(200 << 10), []XZOption{WithXZBlockSize(64 << 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comp := xzWrite(t, tc.plain, tc.opts...)
			for _, o := range []Options{{}, {genericXZ: true}} {
				f, err := o.NewFile("w.xz", bytes.NewReader(comp), int64(len(comp)))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, tc.plain) {
					t.Fatalf("read back %d bytes, wrote %d, or they differ", len(got), len(tc.plain))
				}
			}
			d := &opener{name: "w.xz", r: bytes.NewReader(comp), size: int64(len(comp)), opt: Options{}.withDefaults()}
			blocks, err := d.xzIndex()
			if err != nil {
				t.Fatal(err)
			}
			bs := 4 << 20
			if len(tc.opts) > 0 {
				bs = 64 << 10
			}
			if want := (len(tc.plain) + bs - 1) / bs; len(blocks) != want {
				t.Errorf("%d blocks, want %d", len(blocks), want)
			}
			if _, err := exec.LookPath("xz"); err == nil {
				out := runTool(t, comp, "xz", "-dc")
				if !bytes.Equal(out, tc.plain) {
					t.Fatalf("xz -dc gives %d bytes, wrote %d, or they differ", len(out), len(tc.plain))
				}
			}
		})
	}
}

func TestXZWriterOptions(t *testing.T) {
	var b bytes.Buffer
	w := NewXZWriter(&b, WithXZBlockSize(1))
	if _, err := w.Write([]byte("a")); err == nil {
		t.Error("block size 1 accepted")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a bad option succeeded")
	}
	w = NewXZWriter(&b)
	w.Close()
	if _, err := w.Write([]byte("a")); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// randBytes is data no compressor shrinks.
func randBytes(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 32)
	}
	return b
}
