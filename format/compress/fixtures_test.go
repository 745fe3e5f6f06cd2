package compress

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const fixtureDir = "/var/lib/pcp/testsuite/archives"

// fixtures lists PCP's compressed test archives, failing in CI if they are
// missing and skipping elsewhere.
func fixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.xz", "*.bz2", "*.gz"} {
		m, _ := filepath.Glob(filepath.Join(fixtureDir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		if inCI() {
			t.Fatalf("no compressed fixtures in %s", fixtureDir)
		}
		t.Skipf("no compressed fixtures in %s", fixtureDir)
	}
	return files
}

// xzInfo asks `xz --robot --list` for a file's decompressed size and block
// count.
func xzInfo(t *testing.T, path string) (size int64, blocks int) {
	out, err := exec.Command(needTool(t, "xz"), "--robot", "--list", path).Output()
	if err != nil {
		t.Fatalf("xz --list %s: %v", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) > 4 && f[0] == "totals" {
			blocks, _ = strconv.Atoi(f[2])
			size, _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
	return size, blocks
}

// TestFixtures decompresses every compressed archive in PCP's test suite
// and compares with the reference tools' output. Files beyond 32 MiB
// decompressed are compared at sampled offsets when they are multi-block
// (which also checks random access); single-block ones must be decoded
// whole, which takes seconds each, so only with PCPTOOLS_LONG_TESTS=1.
func TestFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			var toolName string
			switch filepath.Ext(path) {
			case ".xz":
				toolName = "xz"
				size, blocks := xzInfo(t, path)
				if size > 32<<20 {
					if blocks > 1 {
						compareSampled(t, path, size)
						return
					}
					if os.Getenv("PCPTOOLS_LONG_TESTS") == "" || size > 200<<20 {
						t.Skipf("%d MiB in one block: decoded only with PCPTOOLS_LONG_TESTS=1 (and never above 200 MiB)", size>>20)
					}
				}
			case ".bz2":
				toolName = "bzip2"
			case ".gz":
				toolName = "gzip"
			}
			want, err := exec.Command(needTool(t, toolName), "-dc", path).Output()
			if err != nil {
				t.Fatalf("%s -dc: %v", toolName, err)
			}
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Size() != int64(len(want)) {
				t.Fatalf("Size() = %d, %s -dc gives %d bytes", f.Size(), toolName, len(want))
			}
			got, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("content differs from %s -dc at byte %d", toolName, firstDiff(got, want))
			}
			checkReadAt(t, f, want, 30)
		})
	}
}

// compareSampled checks a large multi-block xz file at random offsets
// against a streamed `xz -dc`, without holding either copy in memory.
func compareSampled(t *testing.T, path string, size int64) {
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != size {
		t.Fatalf("Size() = %d, xz --list says %d", f.Size(), size)
	}
	r := rand.New(rand.NewPCG(uint64(size), 1))
	type sample struct {
		off int64
		got []byte
	}
	samples := make([]sample, 6)
	for i := range samples {
		off := r.Int64N(size)
		if i == 0 {
			off = size - 1000
		}
		buf := make([]byte, min(4096, size-off))
		if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
			t.Fatalf("ReadAt(%d): %v", off, err)
		}
		samples[i] = sample{off, buf}
	}
	cmd := exec.Command(needTool(t, "xz"), "-dc", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	ref := bufio.NewReaderSize(out, 1<<20)
	var pos int64
	// Visit samples in file order.
	for len(samples) > 0 {
		k := 0
		for i := range samples {
			if samples[i].off < samples[k].off {
				k = i
			}
		}
		s := samples[k]
		samples = append(samples[:k], samples[k+1:]...)
		if s.off < pos {
			// Overlaps the previous sample: skip rather than rewind.
			continue
		}
		if _, err := io.CopyN(io.Discard, ref, s.off-pos); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(s.got))
		if _, err := io.ReadFull(ref, want); err != nil {
			t.Fatal(err)
		}
		pos = s.off + int64(len(want))
		if !bytes.Equal(s.got, want) {
			t.Fatalf("offset %d: differs from xz -dc", s.off)
		}
	}
	io.Copy(io.Discard, ref)
}

// TestFixtureNotCompressedNames checks Lookup and SplitSuffix on the real
// fixture names (an archive named without its suffix is found).
func TestFixtureLookup(t *testing.T) {
	files := fixtures(t)
	for _, p := range files {
		base, suffix := SplitSuffix(p)
		if suffix == "" {
			t.Fatalf("%s: no suffix found", p)
		}
		if _, err := os.Stat(base); err == nil {
			continue // an uncompressed copy exists too
		}
		got, err := Lookup(base)
		if err != nil || got != p {
			t.Errorf("Lookup(%q) = %q, %v; want %q", base, got, err, p)
		}
	}
}
