package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func TestAsyncWriterKeepsOrder(t *testing.T) { bothWriters(t, checkAsyncWriterKeepsOrder) }

func checkAsyncWriterKeepsOrder(t *testing.T, newAsyncWriter func(io.Writer) *asyncWriter) {
	var got bytes.Buffer
	a := newAsyncWriter(&got)
	var want []byte
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 3*asyncChunk)
	rand.NewChaCha8([32]byte{1}).Read(src)
	buf := make([]byte, len(src))
	for i := 0; i < 60; i++ {
		n := rng.IntN(len(buf))
		if i%3 == 0 {
			n = rng.IntN(100)
		}
		from := rng.IntN(len(src) - n + 1)
		copy(buf, src[from:from+n])
		want = append(want, buf[:n]...)
		if k, err := a.Write(buf[:n]); err != nil || k != n {
			t.Fatalf("write %d: %d, %v", i, k, err)
		}
		// The caller's slice is free to change at once.
		clear(buf[:n])
		if i%20 == 0 {
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("after flush %d: %d bytes written, want %d", i, got.Len(), len(want))
			}
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.stop()
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%d bytes written, want %d (or they differ)", got.Len(), len(want))
	}
}

type failAfter struct {
	n    int
	seen int
}

var errFull = errors.New("no space left")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.seen+len(p) > f.n {
		k := f.n - f.seen
		f.seen = f.n
		return k, errFull
	}
	f.seen += len(p)
	return len(p), nil
}

func TestAsyncWriterError(t *testing.T) { bothWriters(t, checkAsyncWriterError) }

func checkAsyncWriterError(t *testing.T, newAsyncWriter func(io.Writer) *asyncWriter) {
	f := &failAfter{n: 2*asyncChunk + 10}
	a := newAsyncWriter(f)
	chunk := make([]byte, 1000)
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		_, err = a.Write(chunk)
	}
	if !errors.Is(err, errFull) {
		t.Fatalf("Write: %v, want the sink's error", err)
	}
	if _, err := a.Write(chunk); !errors.Is(err, errFull) {
		t.Errorf("Write after the error: %v", err)
	}
	if err := a.Flush(); !errors.Is(err, errFull) {
		t.Errorf("Flush: %v", err)
	}
	a.stop()
	a.stop() // twice is fine
	if f.seen != f.n {
		t.Errorf("sink saw %d bytes, want %d", f.seen, f.n)
	}
}

// sizes records the size of each write.
type sizes struct {
	bytes.Buffer
	n []int
}

func (s *sizes) Write(p []byte) (int, error) {
	s.n = append(s.n, len(p))
	return s.Buffer.Write(p)
}

// TestAsyncWriterInPlace: bytes built in the room space offers and
// committed, mixed with copied ones and with bodies built elsewhere (which
// commit refuses), come out in order, in whole chunks but for the last.
func TestAsyncWriterInPlace(t *testing.T) { bothWriters(t, checkAsyncWriterInPlace) }

func checkAsyncWriterInPlace(t *testing.T, newAsyncWriter func(io.Writer) *asyncWriter) {
	var got sizes
	a := newAsyncWriter(&got)
	var want []byte
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]byte, 3*asyncChunk)
	rand.NewChaCha8([32]byte{3}).Read(src)
	inPlace := 0
	for i := 0; i < 500; i++ {
		n := rng.IntN(300 << 10)
		if i%50 == 0 {
			n = asyncChunk + rng.IntN(asyncChunk/2) // larger than a chunk
		}
		from := rng.IntN(len(src) - n + 1)
		p := src[from : from+n]
		head, tail := []byte{byte(i), 1, 2}, []byte{9, byte(i)}
		want = append(append(append(want, head...), p...), tail...)
		if rng.IntN(3) == 0 {
			for _, b := range [][]byte{head, p, tail} {
				if _, err := a.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		body := a.space(len(head), len(tail))
		if rng.IntN(5) == 0 {
			body = nil // built elsewhere
		}
		body = append(body, p...) // may outgrow the room
		ok, err := a.commit(head, body, tail)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			inPlace++
			continue
		}
		for _, b := range [][]byte{head, body, tail} {
			if _, err := a.Write(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.stop()
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%d bytes written, want %d (or they differ)", got.Len(), len(want))
	}
	for i, n := range got.n[:len(got.n)-1] {
		// (a direct writer writes whole chunks of a large slice at once)
		// (a trial's goroutine sends chunks of another size)
		if n%asyncChunk != 0 || n != asyncChunk && !a.direct && a.size == asyncChunk {
			t.Fatalf("write %d of %d is %d bytes", i, len(got.n), n)
		}
	}
	if inPlace == 0 {
		t.Error("nothing was committed in place")
	}
}

// bothWriters runs check on a writer with a goroutine and on a direct one.
func bothWriters(t *testing.T, check func(*testing.T, func(io.Writer) *asyncWriter)) {
	t.Run("async", func(t *testing.T) { check(t, newAsyncWriter) })
	t.Run("direct", func(t *testing.T) { check(t, newDirectWriter) })
	// a direct writer whose trial starts the goroutine, and one whose
	// trial stops it again (writertrial_test.go)
	t.Run("promoted", func(t *testing.T) { check(t, trialWriter(t, 2, 1)) })
	t.Run("demoted", func(t *testing.T) { check(t, trialWriter(t, 1, 1)) })
}

func TestParseIOMode(t *testing.T) {
	for s, want := range map[string]ioModes{
		"":             {},
		"mmap":         {mmap: true},
		"async, mmap":  {mmap: true, async: true},
		"async,other,": {async: true},
		"direct":       {direct: true},
	} {
		if got := parseIOMode(s); got != want {
			t.Errorf("parseIOMode(%q) = %+v, want %+v", s, got, want)
		}
	}
}
