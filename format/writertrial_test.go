package format

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// trialWriter makes writers whose trial is short and timed by a clock that
// charges direct and goroutine nanoseconds a byte handed on, the process
// busy throughout. The choice the trial makes is not kept for the
// process.
func trialWriter(t *testing.T, direct, goroutine float64) func(io.Writer) *asyncWriter {
	return func(w io.Writer) *asyncWriter {
		keep := writerChoice.Load()
		t.Cleanup(func() { writerChoice.Store(keep) })
		writerChoice.Store(0)
		a := newDirectWriter(w)
		var wall time.Duration
		var last int64
		a.trial = &writerTrial{next: 256 << 10, span: 512 << 10, warm2: 128 << 10, chunk: 2 * asyncChunk,
			clock: func() (time.Time, time.Duration, bool) {
				cost := goroutine
				if a.direct {
					cost = direct
				}
				wall += time.Duration(cost * float64(a.out-last))
				last = a.out
				return time.Unix(0, 0).Add(wall), wall, true
			}}
		return a
	}
}

// TestWriterTrialChooses: the trial keeps the goroutine when it was
// faster, writes directly again when it was not, and does not time a
// process that waits; the bytes come out in order whichever it chose.
func TestWriterTrialChooses(t *testing.T) {
	for _, c := range []struct {
		name              string
		direct, goroutine float64
		idle              bool
		wantDirect        bool
		want              int32
	}{
		{"goroutine faster", 2, 1, false, false, choiceGoroutine},
		{"goroutine as fast", 1, 1, false, true, choiceDirect},
		{"goroutine slower", 1, 2, false, true, choiceDirect},
		{"waiting producer", 2, 1, true, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got bytes.Buffer
			a := trialWriter(t, c.direct, c.goroutine)(&got)
			if c.idle {
				clock := a.trial.clock
				a.trial.clock = func() (time.Time, time.Duration, bool) {
					now, cpu, ok := clock()
					return now, cpu / 10, ok
				}
			}
			src := make([]byte, 4<<20)
			rand.NewChaCha8([32]byte{5}).Read(src)
			for p := src; len(p) > 0; {
				n := min(len(p), 1000+len(p)%70000)
				if _, err := a.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
			}
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			a.stop()
			if a.trial != nil {
				t.Errorf("the trial did not end (phase %d)", a.trial.phase)
			}
			if a.direct != c.wantDirect {
				t.Errorf("direct at the end: %v, want %v", a.direct, c.wantDirect)
			}
			if ch := writerChoice.Load(); ch != c.want {
				t.Errorf("the process's choice: %d, want %d", ch, c.want)
			}
			if !bytes.Equal(got.Bytes(), src) {
				t.Errorf("%d bytes written, want %d (or they differ)", got.Len(), len(src))
			}
		})
	}
}

// TestChunkForL2: half the level 2 cache, a power of two from 128 KiB to
// 1 MiB.
func TestChunkForL2(t *testing.T) {
	for l2, want := range map[int]int{
		0: 1 << 20, 512 << 10: 256 << 10, 2 << 20: 1 << 20, 1280 << 10: 512 << 10,
		64 << 10: asyncChunk, 32 << 20: 1 << 20,
	} {
		if got := chunkForL2(l2); got != want {
			t.Errorf("chunkForL2(%d) = %d, want %d", l2, got, want)
		}
	}
	if l2 := readL2(t.TempDir()); l2 != 0 {
		t.Errorf("readL2 of an empty directory: %d", l2)
	}
}
