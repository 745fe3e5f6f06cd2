package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"
)

// decodeAll opens data as name and reads everything, returning the first
// error from Open, Read or ReadAt.
func decodeAll(t testing.TB, o Options, name string, data []byte) ([]byte, error) {
	t.Helper()
	f, err := openBytes(t, o, name, data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil {
		return got, err
	}
	if int64(len(got)) != f.Size() {
		t.Fatalf("%s: read %d bytes, Size() = %d, no error", name, len(got), f.Size())
	}
	// Random reads must agree with the sequential one.
	var buf [64]byte
	for _, off := range []int64{0, f.Size() / 3, f.Size() - 1} {
		if off < 0 {
			continue
		}
		n, err := f.ReadAt(buf[:], off)
		if err != nil && err != io.EOF {
			return got, err
		}
		if !bytes.Equal(buf[:n], got[off:off+int64(n)]) {
			t.Fatalf("%s: ReadAt(%d) differs from Read", name, off)
		}
	}
	return got, nil
}

// TestCorruptInput damages valid files: truncation and flipped bytes must
// give a *FormatError naming the file (for formats with checksums) and
// never a panic.
func TestCorruptInput(t *testing.T) {
	plain := testData(100<<10, 9)
	for _, tc := range []struct {
		roundTrip
		checked   bool // flipped bytes are always detected
		truncates bool // truncation is always detected
	}{
		{roundTrip{"xz", ".xz", tool("xz", "-c", "-0")}, true, true},
		{roundTrip{"xz-blocks", ".xz", tool("xz", "-c", "-0", "--block-size=32KiB")}, true, true},
		{roundTrip{"lzma", ".lzma", tool("xz", "-c", "--format=lzma", "-0")}, false, true},
		{roundTrip{"bzip2", ".bz2", tool("bzip2", "-c", "-1")}, true, true},
		{roundTrip{"gzip", ".gz", tool("gzip", "-c")}, true, true},
		{roundTrip{"compress", ".Z", tool("compress", "-f", "-c")}, false, false},
		{roundTrip{"zstd", ".zst", tool("zstd", "-c", "-q")}, true, true},
		{roundTrip{"zstd-seekable", ".zst", seekable(WithFrameSize(32 << 10))}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comp := tc.make(t, plain)
			name := "bad" + tc.suffix
			if got, err := decodeAll(t, Options{}, name, comp); err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("undamaged input: %v", err)
			}
			cuts := []int{0, 1, 2, 3, 5, 12, 40, len(comp) / 3, len(comp) / 2, len(comp) - 20, len(comp) - 4, len(comp) - 1}
			for _, cut := range cuts {
				if cut < 0 || cut >= len(comp) {
					continue
				}
				got, err := decodeAll(t, Options{}, name, comp[:cut])
				if err == nil {
					if tc.truncates || !bytes.HasPrefix(plain, got) {
						t.Errorf("truncated to %d bytes: no error (%d bytes decoded)", cut, len(got))
					}
					continue
				}
				mustFormatError(t, err, name)
			}
			for i := 0; i < 20; i++ {
				pos := 20 + (len(comp)-40)*i/20
				if i == 19 {
					pos = len(comp) - 30 // the trailer: index, seek table
				}
				bad := bytes.Clone(comp)
				bad[pos] ^= 0x5a
				got, err := decodeAll(t, Options{}, name, bad)
				if err == nil {
					if tc.checked && !bytes.Equal(got, plain) {
						t.Errorf("byte %d flipped: wrong output and no error", pos)
					}
					continue
				}
				mustFormatError(t, err, name)
			}
		})
	}
}

// TestXZTrailerDamage flips every byte of the last 64 (footer, index,
// last block's check): xz protects all of them, so each must be an error.
func TestXZTrailerDamage(t *testing.T) {
	plain := testData(200<<10, 10)
	comp := runTool(t, plain, "xz", "-c", "-0", "--block-size=16KiB")
	for pos := len(comp) - 64; pos < len(comp); pos++ {
		bad := bytes.Clone(comp)
		bad[pos] ^= 0x01
		if _, err := decodeAll(t, Options{}, "t.xz", bad); err == nil {
			t.Errorf("byte %d of %d flipped: no error", pos, len(comp))
		} else {
			mustFormatError(t, err, "t.xz")
		}
	}
	// Garbage appended, then padding that is not a multiple of four.
	for _, extra := range [][]byte{{0, 0, 0, 0, 1, 2, 3, 4}, {0, 0}, {'Y', 'Z', 0, 0}} {
		if _, err := decodeAll(t, Options{}, "t.xz", append(bytes.Clone(comp), extra...)); err == nil {
			t.Errorf("trailing % x accepted", extra)
		}
	}
	// Valid padding is fine.
	if got, err := decodeAll(t, Options{}, "t.xz", append(bytes.Clone(comp), 0, 0, 0, 0, 0, 0, 0, 0)); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("stream padding: %v", err)
	}
}

// TestXZHugeDictionary rewrites a block header to claim a 4 GiB LZMA2
// dictionary: decoding must still work (the dictionary is capped to the
// block size) rather than allocate 4 GiB.
func TestXZHugeDictionary(t *testing.T) {
	plain := testData(100<<10, 11)
	comp := runTool(t, plain, "xz", "-c", "-0", "-C", "crc32", "--block-size=40000")
	// First block header starts right after the 12-byte stream header.
	hdr := comp[12 : 12+(int(comp[12])+1)*4]
	// Flags byte; skip optional sizes; then filter id 0x21, props size 1, dict.
	p := 2
	for _, bit := range []byte{0x40, 0x80} {
		if hdr[1]&bit != 0 {
			for hdr[p]&0x80 != 0 {
				p++
			}
			p++
		}
	}
	if hdr[p] != 0x21 || hdr[p+1] != 1 {
		t.Fatalf("unexpected block header % x", hdr)
	}
	hdr[p+2] = 40
	binary.LittleEndian.PutUint32(hdr[len(hdr)-4:], crc32.ChecksumIEEE(hdr[:len(hdr)-4]))
	got, err := decodeAll(t, Options{}, "dict.xz", comp)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("decode with a 4 GiB dictionary claim: %v", err)
	}
}

func TestGarbage(t *testing.T) {
	garbage := [][]byte{
		nil,
		{0},
		[]byte("hello, world, this is not compressed at all"),
		bytes.Repeat([]byte{0}, 64),
		bytes.Repeat([]byte{0xff}, 64),
		append([]byte{0xfd, '7', 'z', 'X', 'Z', 0}, bytes.Repeat([]byte{0}, 30)...),
		{0x1f, 0x9d},
		{0x1f, 0x9d, 0x90, 0xff, 0xff, 0xff},
		{0x1f, 0x9d, 0x1f},
		{0x1f, 0x8b, 8, 0, 0, 0},
		[]byte("BZh9garbage"),
		{0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x5e, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4},
		{0x5d, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x41},
		{0x5d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00},
	}
	for _, suffix := range Suffixes {
		for i, g := range garbage {
			_, err := decodeAll(t, Options{MaxSize: 1 << 20}, "g"+suffix, g)
			if err == nil {
				continue // e.g. an empty .Z body is valid
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%s garbage %d: %v (%T) is not a *FormatError", suffix, i, err, err)
			}
		}
	}
}
