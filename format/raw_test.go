package format

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	qafix "github.com/pcptools/pcptools/internal/qa"
)

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// openSource writes data to a file in dir and opens it for reading.
func openSource(t *testing.T, dir, name string, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// rangeWriter is a writer of newWriter into the file out in dir, whose
// ranges its writeback copies in.
func rangeWriter(t *testing.T, dir string, newWriter func(io.Writer) *asyncWriter) (*asyncWriter, *os.File) {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	wb := &writeback{f: out, off: true}
	a := newWriter(wb)
	a.rc = wb
	return a, out
}

// TestAsyncWriterRanges: bytes written and ranges of other files copied
// in come out in order, consecutive ranges joined or not, with each way
// of writing (the goroutine, direct, and the trial's switches either way),
// through the kernel's copy and through the copy in user space that
// stands in for it; the writer's duplicates of the source files are all
// closed at the end.
func TestAsyncWriterRanges(t *testing.T) {
	for _, kernel := range []bool{true, false} {
		name := "kernel copy"
		if !kernel {
			name = "user-space copy"
		}
		t.Run(name, func(t *testing.T) {
			if !kernel {
				keep := kernelCopy
				kernelCopy = func(_, _ *os.File, _, _ int64) (int64, bool, error) { return 0, false, nil }
				t.Cleanup(func() { kernelCopy = keep })
			}
			bothWriters(t, checkAsyncWriterRanges)
		})
	}
}

func checkAsyncWriterRanges(t *testing.T, newWriter func(io.Writer) *asyncWriter) {
	dir := t.TempDir()
	var srcs [2]*os.File
	var data [2][]byte
	for i := range srcs {
		data[i] = make([]byte, 3<<20)
		rand.NewChaCha8([32]byte{byte(i + 7)}).Read(data[i])
		srcs[i] = openSource(t, dir, "src"+string(rune('a'+i)), data[i])
	}
	fds := openFDs(t)
	a, out := rangeWriter(t, dir, newWriter)
	fds++ // (out)
	var want []byte
	rng := rand.New(rand.NewPCG(3, 4))
	own := make([]byte, 200<<10)
	rand.NewChaCha8([32]byte{9}).Read(own)
	var next [2]int64 // where a run of consecutive ranges goes on
	for i := 0; i < 400; i++ {
		switch k := rng.IntN(10); {
		case k < 3:
			n := rng.IntN(len(own))
			want = append(want, own[:n]...)
			if _, err := a.Write(own[:n]); err != nil {
				t.Fatal(err)
			}
		default:
			s := rng.IntN(2)
			n := int64(1 + rng.IntN(300<<10))
			off := next[s]
			if k < 5 || off+n > int64(len(data[s])) {
				off = rng.Int64N(int64(len(data[s])) - n)
			}
			next[s] = off + n
			want = append(want, data[s][off:off+n]...)
			if err := a.copyFrom(srcs[s], off, n); err != nil {
				t.Fatal(err)
			}
		}
		if i%97 == 0 {
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.stop()
	got, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes written, want %d (or they differ)", len(got), len(want))
	}
	if n := openFDs(t); n != fds {
		t.Errorf("%d files open at the end, %d at the start: a source's duplicate left open", n, fds)
	}
}

// TestAsyncWriterRangeError: a source that has shrunk under the copy is an
// error naming it, and the duplicate is closed all the same.
func TestAsyncWriterRangeError(t *testing.T) {
	bothWriters(t, func(t *testing.T, newWriter func(io.Writer) *asyncWriter) {
		dir := t.TempDir()
		src := openSource(t, dir, "src", make([]byte, 1000))
		p := src.Name()
		fds := openFDs(t) + 1 // (out)
		a, _ := rangeWriter(t, dir, newWriter)
		var err error
		err = a.copyFrom(src, 500, 1000) // 500 bytes past the end
		if err == nil {
			err = a.Flush()
		}
		a.stop()
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(p)) {
			t.Fatalf("copying past the end of %s: %v", p, err)
		}
		if n := openFDs(t); n != fds {
			t.Errorf("%d files open at the end, %d at the start", n, fds)
		}
	})
}

// copyArchiveRaw is copyArchive through WriteRaw wherever the reader
// vouches for a record's bytes; it returns how many went that way.
func copyArchiveRaw(base, out string, opts WriterOptions) (raw int, err error) {
	_, err = copyArchiveWith(base, out, opts, &raw)
	return raw, err
}

// TestWriteRawSameBytes: every QA archive copied with the kernel copying
// the results it can gives the same files as the copy through user
// space: volumes kept (every archive), or cut anew, or in version 3 (every
// eighth).
func TestWriteRawSameBytes(t *testing.T) {
	bases := qaBases(t)
	if len(bases) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("no QA archives under " + QADir + " (scripts/install-deps.sh installs pcp-testsuite)")
		}
		t.Skip("no QA archives (pcp-testsuite)")
	}
	// A copy long enough for a writer trial decides for the process;
	// the tests after this one expect none decided.
	keep := writerChoice.Load()
	defer writerChoice.Store(keep)
	dir := t.TempDir()
	copies, raws := 0, 0
	var dPlain, dRaw time.Duration
	for i, base := range bases {
		ways := []WriterOptions{{KeepVolumes: true}} // as pcpcat -o copies
		if i%8 == 0 {
			ways = append(ways, WriterOptions{VolumeRecords: 7}, WriterOptions{Version: 3})
		}
		for _, opts := range ways {
			opts.NoSync = true
			name := filepath.Base(base)
			plain, viaRaw := filepath.Join(dir, name+".plain"), filepath.Join(dir, name+".raw")
			t0 := time.Now()
			_, errPlain := copyArchive(base, plain, opts)
			t1 := time.Now()
			n, errRaw := copyArchiveRaw(base, viaRaw, opts)
			dPlain += t1.Sub(t0)
			dRaw += time.Since(t1)
			if (errPlain == nil) != (errRaw == nil) {
				t.Fatalf("%s %+v: through user space %v, raw %v", name, opts, errPlain, errRaw)
			}
			if errPlain == nil {
				qafix.SameFiles(t, plain, viaRaw)
				copies++
				raws += n
			}
			for _, p := range []string{plain, viaRaw} {
				fs, _ := filepath.Glob(p + ".*")
				for _, f := range fs {
					os.Remove(f)
				}
			}
		}
	}
	if raws == 0 {
		t.Fatal("no record went through the kernel's copy")
	}
	t.Logf("%d copies, %d results copied by the kernel; %v through user space, %v raw", copies, raws, dPlain, dRaw)
}

// TestWriteRawStampKept: a v2 result whose microseconds field is past a
// second (read with a warning) is carried as it is either way: the copy
// as it lies gives the same bytes as the copy through user space.
func TestWriteRawStampKept(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	recs := withMeta(3, testLabel(2), testResult(t, 1700000010, 1, 2, 3), testResult(t, 1700000030, 4, 5, 6))
	if err := writeAll(t, src, WriterOptions{NoSync: true}, recs...); err != nil {
		t.Fatal(err)
	}
	vol, err := os.ReadFile(src + ".0")
	if err != nil {
		t.Fatal(err)
	}
	at := LabelSize(2) + 8 // the first result's microseconds
	binary.BigEndian.PutUint32(vol[at:], 1_000_005)
	if err := os.WriteFile(src+".0", vol, 0o644); err != nil {
		t.Fatal(err)
	}
	plain, viaRaw := filepath.Join(dir, "plain"), filepath.Join(dir, "raw")
	if _, err := copyArchive(src, plain, WriterOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	n, err := copyArchiveRaw(src, viaRaw, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d results copied as they lie, want 2 (the field is carried as it is)", n)
	}
	qafix.SameFiles(t, plain, viaRaw)
}
