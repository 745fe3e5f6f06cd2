package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inCI reports whether missing tools and fixtures must fail tests.
func inCI() bool { return os.Getenv("CI") == "true" }

// needTool returns the path of a command-line tool, skipping the test when
// it is missing (failing in CI).
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if inCI() {
			t.Fatalf("%s not installed (Debian package: %s)", name, toolPackage[name])
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

var toolPackage = map[string]string{
	"xz": "xz-utils", "bzip2": "bzip2", "gzip": "gzip", "zstd": "zstd", "compress": "ncompress",
}

// testData makes n bytes that compress like a PCP archive: repetitive
// records with varying numbers and a little noise.
func testData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	words := []string{"kernel", "percpu", "cpu", "user", "sys", "disk", "dev", "read_bytes", "network",
		"interface", "in", "out", "mem", "util", "free", "swap", "proc", "psinfo"}
	var b bytes.Buffer
	for b.Len() < n {
		switch r.IntN(10) {
		case 0:
			var raw [24]byte
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			b.Write(raw[:])
		default:
			fmt.Fprintf(&b, "%s.%s.%s %d %d\n", words[r.IntN(len(words))], words[r.IntN(len(words))],
				words[r.IntN(len(words))], r.IntN(1000), r.Uint64()%1e9)
		}
	}
	return b.Bytes()[:n]
}

// runTool feeds in to a command and returns its standard output.
func runTool(t testing.TB, in []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(needTool(t, name), args...)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out.Bytes()
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkFile verifies that f holds exactly want, through Size, Read, Seek and
// random ReadAt calls.
func checkFile(t testing.TB, f File, want []byte) {
	t.Helper()
	if got := f.Size(); got != int64(len(want)) {
		t.Fatalf("%s: Size() = %d, want %d", f.Name(), got, len(want))
	}
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("%s: ReadAll: %v", f.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: content differs (got %d bytes, want %d; first difference at %d)",
			f.Name(), len(got), len(want), firstDiff(got, want))
	}
	if n, err := f.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("%s: Read at end = %d, %v; want 0, EOF", f.Name(), n, err)
	}
	checkReadAt(t, f, want, 200)
	if len(want) > 10 {
		pos, err := f.Seek(-10, io.SeekEnd)
		if err != nil || pos != int64(len(want)-10) {
			t.Fatalf("Seek(-10, End) = %d, %v", pos, err)
		}
		tail, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(tail, want[len(want)-10:]) {
			t.Fatalf("read after Seek: %q, %v", tail, err)
		}
		if _, err := f.Seek(3, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(2, io.SeekCurrent); err != nil {
			t.Fatal(err)
		}
		var five [5]byte
		if _, err := io.ReadFull(f, five[:]); err != nil || !bytes.Equal(five[:], want[5:10]) {
			t.Fatalf("read after Seek(5): %q, %v", five, err)
		}
	}
	if _, err := f.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("Seek to -1 succeeded")
	}
	if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("ReadAt(-1) succeeded")
	}
}

// checkReadAt compares n random ReadAt calls with want.
func checkReadAt(t testing.TB, f io.ReaderAt, want []byte, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(len(want)), 7))
	size := int64(len(want))
	for i := 0; i < n; i++ {
		var off int64
		if size > 0 {
			off = r.Int64N(size + 10)
		}
		ln := r.IntN(100000)
		if i%4 == 0 {
			ln = r.IntN(100)
		}
		buf := make([]byte, ln)
		k, err := f.ReadAt(buf, off)
		wantN := 0
		if off < size {
			wantN = int(min(int64(ln), size-off))
		}
		if k != wantN {
			t.Fatalf("ReadAt(len %d, off %d) = %d, %v; want %d bytes", ln, off, k, err, wantN)
		}
		if k < ln && err != io.EOF {
			t.Fatalf("ReadAt(len %d, off %d) short read with err %v, want EOF", ln, off, err)
		}
		if k == ln && err != nil && err != io.EOF {
			t.Fatalf("ReadAt(len %d, off %d): %v", ln, off, err)
		}
		if k > 0 && !bytes.Equal(buf[:k], want[off:off+int64(k)]) {
			t.Fatalf("ReadAt(len %d, off %d): content differs", ln, off)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// openBytes opens compressed bytes as if they were a file with this name.
func openBytes(t testing.TB, o Options, name string, data []byte) (File, error) {
	t.Helper()
	return o.NewFile(name, bytes.NewReader(data), int64(len(data)))
}

// mustFormatError checks that err is a *FormatError naming the file.
func mustFormatError(t testing.TB, err error, name string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
	if !strings.Contains(err.Error(), name) {
		t.Fatalf("error %q does not name %s", err, name)
	}
}
