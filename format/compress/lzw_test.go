package compress

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var updateVectors = flag.Bool("update", false, "rewrite testdata/*.Z with the compress tool")

// lcgData is deterministic input for the stored .Z vectors: text lines,
// then bytes from a fixed linear congruential generator (so its output
// never changes with Go's random number code). The noisy tail makes
// compress's compression ratio fall once its table is full, which is when
// it emits a clear code.
func lcgData(textLines, noise int) []byte {
	var b bytes.Buffer
	x := uint32(12345)
	next := func() uint32 { x = x*1103515245 + 12345; return x >> 8 }
	for i := 0; i < textLines; i++ {
		fmt.Fprintf(&b, "disk.dev.read %d %d\n", next()%64, next()%100000)
	}
	for i := 0; i < noise; i++ {
		b.WriteByte(byte(next()))
	}
	return b.Bytes()
}

var lzwVectors = []struct {
	file        string
	bits        int
	text, noise int
	clears      bool
}{
	{"b16.Z", 16, 3000, 0, false},
	{"b10-clear.Z", 10, 1000, 8000, true},
	{"b12-clear.Z", 12, 2000, 16000, true},
}

// TestLZWVectors decodes .Z files made by ncompress and stored in testdata,
// so the decoder is tested where the compress tool is not installed.
// Regenerate them with `go test -run TestLZWVectors -update`.
func TestLZWVectors(t *testing.T) {
	for _, v := range lzwVectors {
		t.Run(v.file, func(t *testing.T) {
			plain := lcgData(v.text, v.noise)
			path := filepath.Join("testdata", v.file)
			if *updateVectors {
				comp := runTool(t, plain, "compress", "-f", "-c", fmt.Sprintf("-b%d", v.bits))
				if err := os.WriteFile(path, comp, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			comp, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			z, err := newLZWReader(bytes.NewReader(comp))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(z)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain) {
				t.Fatalf("decoded %d bytes, want %d; first difference at %d", len(got), len(plain), firstDiff(got, plain))
			}
			if (z.clears > 0) != v.clears {
				t.Errorf("%d clear codes; the vector is meant to have them: %v", z.clears, v.clears)
			}
		})
	}
}

// TestLZWHandVector is a stream worked out by hand: "ABABABA" as the codes
// A B 257(AB) 259(ABA, defined by the code itself), 9 bits, LSB first.
func TestLZWHandVector(t *testing.T) {
	codes := []int{'A', 'B', 257, 259}
	var bits uint64
	for i, c := range codes {
		bits |= uint64(c) << (9 * i)
	}
	data := []byte{0x1f, 0x9d, 0x90}
	for i := 0; i < (9*len(codes)+7)/8; i++ {
		data = append(data, byte(bits>>(8*i)))
	}
	got, err := decodeAll(t, Options{}, "hand.Z", data)
	if err != nil || string(got) != "ABABABA" {
		t.Fatalf("got %q, %v", got, err)
	}
	// A code past the next free one is corrupt.
	bad := append([]byte{}, data...)
	bad[len(bad)-1] |= 0x02 // the last code becomes 259+64, past the table
	if _, err := decodeAll(t, Options{}, "hand.Z", bad); err == nil {
		t.Fatal("undefined code accepted")
	}
}

// TestLZWDifferential damages .Z files and checks that whenever ncompress
// decodes the damaged file without complaint, so do we, to the same bytes.
func TestLZWDifferential(t *testing.T) {
	tool := needTool(t, "compress")
	plain := lcgData(4000, 20000)
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	agreed, refRejected := 0, 0
	for _, bitsArg := range []string{"-b10", "-b12", "-b16"} {
		comp := runTool(t, plain, "compress", "-f", "-c", bitsArg)
		for i := 0; i < 40; i++ {
			bad := bytes.Clone(comp)
			for k := 0; k < 1+r.IntN(3); k++ {
				bad[3+r.IntN(len(bad)-3)] ^= byte(1 << r.IntN(8))
			}
			if i%5 == 0 {
				bad = bad[:3+r.IntN(len(bad)-3)]
			}
			p := writeFile(t, dir, "d.Z", bad)
			ref, refErr := exec.Command(tool, "-d", "-c", p).Output()
			got, err := decodeAll(t, Options{}, "d.Z", bad)
			switch {
			case refErr == nil && err == nil:
				if !bytes.Equal(got, ref) {
					t.Fatalf("%s case %d: ncompress and we both succeed but differ at %d", bitsArg, i, firstDiff(got, ref))
				}
				agreed++
			case refErr == nil:
				t.Fatalf("%s case %d: ncompress decodes, we fail: %v", bitsArg, i, err)
			default:
				// ncompress rejects it. We may too, or be more lenient
				// (a clear code as the very first code, say): .Z has no
				// checksum, so damage is often undetectable anyway.
				refRejected++
			}
		}
	}
	t.Logf("%d damaged files decoded identically, %d rejected by ncompress", agreed, refRejected)
}
