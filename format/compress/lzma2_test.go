package compress

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz/lzma"
)

// lzma2Inputs are data that drive an LZMA2 encoder through its cases:
// text (literals and short matches), a long run (overlapping matches),
// noise (uncompressed chunks), and PCP-like records.
func lzma2Inputs() map[string][]byte {
	run := bytes.Repeat([]byte{'a'}, 300<<10)
	mixed := append(append(append([]byte{}, testData(200<<10, 21)...), randBytes(70<<10)...), run[:5000]...)
	return map[string][]byte{
		"text":  lcgData(5000, 0),
		"run":   run,
		"noise": randBytes(150 << 10),
		"mixed": mixed,
		"pcp":   testData(600<<10, 22),
	}
}

// TestLZMA2MatchesUlikunitz: the package's LZMA2 decoder and ulikunitz/xz
// give the same bytes for every xz(1) setting that changes what LZMA2
// holds: presets, extreme mode, literal context and position bits, small
// dictionaries, checks, blocks made in one thread and in two.
func TestLZMA2MatchesUlikunitz(t *testing.T) {
	settings := [][]string{
		{"-0"}, {"-1"}, {"-6"}, {"-9e"},
		{"--lzma2=preset=1,lc=0,lp=0,pb=0"},
		{"--lzma2=preset=1,lc=4,lp=0,pb=4"},
		{"--lzma2=preset=2,lc=1,lp=3,pb=1"},
		{"--lzma2=preset=0,lc=0,lp=4,pb=2"},
		{"--lzma2=preset=6,dict=4KiB"},
		{"--lzma2=preset=6,dict=12KiB,mf=hc4,nice=273"},
		{"-0", "--block-size=50000"},
		{"-1", "-T2", "--block-size=64KiB"},
		{"-0", "-C", "sha256", "--block-size=100KiB"},
		{"-0", "-C", "none"},
		{"-0", "-C", "crc32"},
	}
	for name, plain := range lzma2Inputs() {
		for _, s := range settings {
			comp := runTool(t, plain, "xz", append([]string{"-c"}, s...)...)
			fast, err := decodeAll(t, Options{}, "f.xz", comp)
			if err != nil {
				t.Errorf("%s, xz %v: %v", name, s, err)
				continue
			}
			slow, err := decodeAll(t, Options{genericXZ: true}, "f.xz", comp)
			if err != nil {
				t.Errorf("%s, xz %v: ulikunitz: %v", name, s, err)
				continue
			}
			if !bytes.Equal(fast, plain) || !bytes.Equal(slow, plain) {
				t.Errorf("%s, xz %v: decoders differ from the input", name, s)
			}
		}
	}
}

// TestXZDamagedBlockNamesOffset: a flipped byte inside one block of a
// multi-block file made by `xz -T2` gives a FormatError naming the file and
// an offset inside that block, from Read and from ReadAt, promptly.
func TestXZDamagedBlockNamesOffset(t *testing.T) {
	plain := testData(1<<20, 23)
	comp := runTool(t, plain, "xz", "-c", "-0", "-T2", "--block-size=128KiB")
	d := &opener{name: "d.xz", r: bytes.NewReader(comp), size: int64(len(comp)), opt: Options{}.withDefaults()}
	blocks, err := d.xzIndex()
	if err != nil || len(blocks) != 8 {
		t.Fatalf("%d blocks, %v", len(blocks), err)
	}
	for _, k := range []int{0, 3, 7} {
		b := blocks[k]
		for _, at := range []int64{b.coff + 20, b.coff + pad4(b.unpadded)/2, b.coff + b.unpadded - 3} {
			bad := bytes.Clone(comp)
			bad[at] ^= 0x10
			done := make(chan error, 1)
			go func() {
				_, err := decodeAll(t, Options{}, "d.xz", bad)
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("block %d, byte %d flipped: no answer in a minute", k, at)
			}
			if err == nil {
				t.Errorf("block %d, byte %d flipped: no error", k, at)
				continue
			}
			mustFormatError(t, err, "d.xz")
			var fe *FormatError
			errors.As(err, &fe)
			if fe.Decoded || fe.Offset < b.coff || fe.Offset >= b.coff+pad4(b.unpadded) {
				t.Errorf("block %d [%d, %d), byte %d flipped: error at offset %d: %v", k, b.coff, b.coff+pad4(b.unpadded), at, fe.Offset, err)
			}
			if !strings.Contains(err.Error(), "d.xz") {
				t.Errorf("error does not name the file: %v", err)
			}
		}
	}
}

// TestXZHeadRead: reading a label's worth at the start of a fresh File
// decodes only the start of the first block; reading on decodes it all
// and agrees.
func TestXZHeadRead(t *testing.T) {
	plain := testData(8<<20, 24)
	comp := runTool(t, plain, "xz", "-c", "-0", "--block-size=4MiB")
	f, err := Options{}.NewFile("h.xz", bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src := f.(*file).src.(*segSource)
	label := make([]byte, 132)
	if _, err := io.ReadFull(f, label); err != nil || !bytes.Equal(label, plain[:132]) {
		t.Fatalf("label read: %v", err)
	}
	src.mu.Lock()
	n, head := len(src.entries), len(src.headBuf)
	src.mu.Unlock()
	if n != 0 || head == 0 || head >= 3<<20 {
		t.Errorf("after a label read: %d blocks cached, head of %d bytes", n, head)
	}
	// A second small read at the end of the head reuses it.
	buf := make([]byte, 1000)
	if _, err := f.ReadAt(buf, 1<<10); err != nil || !bytes.Equal(buf, plain[1<<10:1<<10+1000]) {
		t.Fatalf("ReadAt in the head: %v", err)
	}
	rest, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(rest, plain[132:]) {
		t.Fatalf("reading on: %v", err)
	}
	// A Read of a buffer's worth on a fresh File stops at the head.
	g, err := Options{}.NewFile("h.xz", bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	k, err := g.Read(make([]byte, 1<<20))
	if err != nil || k != headLimit {
		t.Errorf("first Read of 1 MiB: %d bytes, %v; want the head's %d", k, err, headLimit)
	}
	gs := g.(*file).src.(*segSource)
	gs.mu.Lock()
	n = len(gs.entries)
	gs.mu.Unlock()
	if n != 0 {
		t.Errorf("first Read of 1 MiB decoded %d blocks whole", n)
	}
	// Heads of a damaged block are not trusted: the whole-block decode
	// reports the damage.
	bad := bytes.Clone(comp)
	bad[len(comp)/6] ^= 0x40
	if _, err := decodeAll(t, Options{}, "h.xz", bad); err == nil {
		t.Error("damaged first block: no error")
	}
}

// TestLZMA2Errors: hand-made LZMA2 streams that break the format's rules.
func TestLZMA2Errors(t *testing.T) {
	for _, tc := range []struct {
		name string
		dst  int
		src  []byte
	}{
		{"empty", 0, nil},
		{"no end marker", 3, []byte{1, 0, 2, 'a', 'b', 'c'}},
		{"no dictionary reset", 3, []byte{2, 0, 2, 'a', 'b', 'c', 0}},
		{"bad control", 1, []byte{3, 0}},
		{"short uncompressed", 10, []byte{1, 0, 9, 'a'}},
		{"more than the block", 2, []byte{1, 0, 2, 'a', 'b', 'c', 0}},
		{"end too early", 4, []byte{1, 0, 2, 'a', 'b', 'c', 0}},
		{"lzma chunk without properties", 4, []byte{1, 0, 0, 'a', 0x80, 0, 2, 0, 4, 0, 0, 0, 0, 0}},
		{"bad properties", 4, []byte{0xe0, 0, 3, 0, 4, 225, 0, 0, 0, 0, 0}},
		{"lc+lp over 4", 4, []byte{0xe0, 0, 3, 0, 4, 4 + 9*1, 0, 0, 0, 0, 0}},
		{"range coder first byte", 4, []byte{0xe0, 0, 3, 0, 4, 93, 1, 0, 0, 0, 0}},
	} {
		if _, err := decodeLZMA2(make([]byte, tc.dst), tc.src, 1<<20); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if n, err := decodeLZMA2(make([]byte, 3), []byte{1, 0, 2, 'a', 'b', 'c', 0}, 1<<20); err != nil || n != 7 {
		t.Errorf("valid uncompressed chunk: %d, %v", n, err)
	}
}

// FuzzLZMA2 compares decodeLZMA2 with ulikunitz/xz's LZMA2 reader on raw
// LZMA2 data: neither may panic, and where both decode, they agree.
func FuzzLZMA2(f *testing.F) {
	for _, p := range fuzzPlain {
		var b bytes.Buffer
		w, err := lzma.Writer2Config{DictCap: 4096}.NewWriter2(&b)
		if err != nil {
			f.Fatal(err)
		}
		w.Write(p)
		w.Close()
		f.Add(b.Bytes(), uint16(len(p)))
	}
	f.Add([]byte{1, 0, 2, 'a', 'b', 'c', 0}, uint16(3))
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		dst := make([]byte, size)
		n, err := decodeLZMA2(dst, src, 1<<20)
		if err != nil {
			return
		}
		if n > len(src) {
			t.Fatalf("consumed %d of %d bytes", n, len(src))
		}
		r, err := lzma.Reader2Config{DictCap: 1 << 20}.NewReader2(bytes.NewReader(src[:n]))
		if err != nil {
			return
		}
		want, err := io.ReadAll(r)
		if err != nil {
			return
		}
		if !bytes.Equal(want, dst) {
			t.Fatalf("decoders differ: ours %d bytes, ulikunitz %d", len(dst), len(want))
		}
	})
}
