package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestSeekableZstdCLI checks that the zstd tool decodes our seekable output
// to the original bytes, for several frame sizes and input lengths.
func TestSeekableZstdCLI(t *testing.T) {
	needTool(t, "zstd")
	for _, tc := range []struct {
		n     int
		frame int
	}{
		{0, DefaultFrameSize},
		{1, DefaultFrameSize},
		{5000, MinFrameSize},
		{1 << 20, 1 << 20},       // exactly one frame
		{1<<20 + 1, 1 << 20},     // one byte into a second frame
		{3<<20 + 777, 256 << 10}, // many frames and a partial one
		{5 << 20, DefaultFrameSize},
	} {
		plain := testData(tc.n, uint64(tc.n))
		var b bytes.Buffer
		w := NewSeekableWriter(&b, WithFrameSize(tc.frame))
		// Uneven writes exercise both the buffered and the direct path.
		for rest := plain; len(rest) > 0; {
			k := min(len(rest), 1+len(rest)/3)
			if _, err := w.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := runTool(t, b.Bytes(), "zstd", "-d", "-c", "-q")
		if !bytes.Equal(got, plain) {
			t.Fatalf("n=%d frame=%d: zstd -d gave %d bytes, want %d", tc.n, tc.frame, len(got), len(plain))
		}
		runTool(t, b.Bytes(), "zstd", "-t", "-q")
		// And the frame count in the seek table is what we expect.
		out := b.Bytes()
		frames := int(binary.LittleEndian.Uint32(out[len(out)-9:]))
		if want := (tc.n + tc.frame - 1) / tc.frame; frames != want {
			t.Errorf("n=%d frame=%d: %d frames, want %d", tc.n, tc.frame, frames, want)
		}
		f, err := openBytes(t, Options{}, "s.zst", out)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(*file).src.(*segSource); !ok && tc.n > 0 {
			t.Errorf("seekable file served by %T, want frame by frame", f.(*file).src)
		}
		checkFile(t, f, plain)
		f.Close()
	}
}

// TestSeekableTableFromCLI reads a table appended by hand to frames made
// by the zstd tool, as a third-party seekable writer would produce.
func TestSeekableTableFromCLI(t *testing.T) {
	parts := [][]byte{testData(70000, 1), testData(30000, 2), testData(50000, 3)}
	var out, table []byte
	for _, p := range parts {
		fr := runTool(t, p, "zstd", "-c", "-q", "--no-check")
		out = append(out, fr...)
		table = binary.LittleEndian.AppendUint32(table, uint32(len(fr)))
		table = binary.LittleEndian.AppendUint32(table, uint32(len(p)))
	}
	out = binary.LittleEndian.AppendUint32(out, skippableMagic)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(table)+9))
	out = append(out, table...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(parts)))
	out = append(out, 0)
	out = binary.LittleEndian.AppendUint32(out, seekableMagic)
	f, err := openBytes(t, Options{}, "cli.zst", out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(*file).src.(*segSource); !ok {
		t.Fatalf("served by %T, want frame by frame", f.(*file).src)
	}
	checkFile(t, f, bytes.Join(parts, nil))
}

// TestSeekableTableDamage: a seek table that contradicts the file is an
// error, not a silent fallback.
func TestSeekableTableDamage(t *testing.T) {
	plain := testData(300000, 12)
	var b bytes.Buffer
	w := NewSeekableWriter(&b, WithFrameSize(64<<10))
	w.Write(plain)
	w.Close()
	good := b.Bytes()
	n := len(good)
	for _, tc := range []struct {
		name string
		pos  int
		val  byte
	}{
		{"reserved bit", n - 5, 0x80 | 0x10},
		{"frame count", n - 9, 0x7f},
		{"frame size", n - 9 - 5*12 - 4, 0x33},
		{"compressed size", n - 9 - 5*12, 0x01},
		{"decompressed size", n - 9 - 5*12 + 4, 0x01},
		{"checksum", n - 9 - 5*12 + 8, 0x01},
	} {
		bad := bytes.Clone(good)
		bad[tc.pos] ^= tc.val
		_, err := decodeAll(t, Options{}, "d.zst", bad)
		if err == nil {
			t.Errorf("%s damaged: no error", tc.name)
			continue
		}
		mustFormatError(t, err, "d.zst")
		t.Logf("%s: %v", tc.name, err)
	}
}

func TestSeekableWriterErrors(t *testing.T) {
	w := NewSeekableWriter(&bytes.Buffer{}, WithFrameSize(10))
	if _, err := w.Write([]byte("x")); err == nil || !strings.Contains(err.Error(), "frame size") {
		t.Fatalf("bad frame size: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a bad option succeeded")
	}
	w = NewSeekableWriter(&bytes.Buffer{}, WithLevel(zstd.EncoderLevel(99)))
	if err := w.Close(); err == nil {
		t.Fatal("bad level accepted")
	}
	// A failing writer: the error sticks.
	fw := &failWriter{after: 1}
	w = NewSeekableWriter(fw, WithFrameSize(MinFrameSize))
	if _, err := w.Write(make([]byte, 3*MinFrameSize)); err == nil {
		t.Fatal("write error lost")
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("write after error succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after error succeeded")
	}
	w = NewSeekableWriter(&bytes.Buffer{})
	w.Close()
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after == 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

// TestSeekableFrameIndependence: every frame decodes on its own, as a
// plain zstd stream, to its slice of the input.
func TestSeekableFrameIndependence(t *testing.T) {
	plain := testData(200000, 13)
	var b bytes.Buffer
	w := NewSeekableWriter(&b, WithFrameSize(30000))
	w.Write(plain)
	w.Close()
	out := b.Bytes()
	d := &opener{name: "x.zst", ft: formatZstd, r: bytes.NewReader(out), size: int64(len(out))}
	frames, ok, err := d.zstdSeekTable()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var uoff int64
	for i, fr := range frames {
		if !fr.hasSum {
			t.Fatal("no checksums in the table")
		}
		cmd := exec.Command(needTool(t, "zstd"), "-d", "-c", "-q")
		cmd.Stdin = bytes.NewReader(out[fr.coff : fr.coff+fr.clen])
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("frame %d alone: %v", i, err)
		}
		if !bytes.Equal(got, plain[uoff:uoff+fr.usize]) {
			t.Fatalf("frame %d differs", i)
		}
		uoff += fr.usize
	}
}
