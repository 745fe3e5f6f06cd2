package format

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Which core writes a plain volume is decided by measuring, not by the
// host's name. Handing full chunks to a goroutine of their own, so that
// the write system call's copy into the page cache runs on the other core
// while the caller reads, checks and encodes, halves the wall time of a
// copy or a rewrite on some hosts and costs more than it gains on others
// (docs/benchmarks.md, 1 GiB copy and rewrite, medians of alternating
// runs):
//
//   - Intel Xeon, family 6 model 207: copy 0.37-0.41 s with the
//     goroutine and 1 MiB chunks, 0.52-0.61 s direct; rewrite 0.45-0.48 s
//     against 0.66-0.75 s (2026-11-28);
//   - AMD EPYC family 25: copy 0.60 s against 0.84 s, rewrite 0.37 s
//     against 0.72 s (2026-11-24 and 11-27);
//   - AMD EPYC family 26 under a paravirtualised kernel (PVM), where
//     waking a thread on the other core takes an interrupt through the
//     hypervisor: copy 0.91 s with the goroutine, 0.50 s direct
//     (2026-11-24).
//
// So a plain volume starts direct and, once it is long enough for the
// way it is written to matter, tries the goroutine: trialSpan bytes
// written directly against as many through the goroutine, each after a
// warm-up, the fastest of each's trialParts parts compared. The goroutine
// stays if it was faster (on the hosts above the two ways differ by a
// third or more; timed in parts of 8 MiB on the Intel host, the ratio
// wandered from 0.55 to 1.05 where the whole copy gained 30%), and the
// process's later volumes are written the way this trial chose
// (writerChoice). A trial counts only while the process is busy (its CPU
// time at least trialBusy of the wall time): a producer that waits
// between records (pcpmmv record's samples) is not timed, and writes
// directly. Outputs shorter than trialWarm+trialSpan (merges of small
// archives) never start the goroutine, and keep its chunks out of their
// peak memory.

const (
	trialWarm  = 16 << 20 // written before the direct timing starts
	trialSpan  = 32 << 20 // timed each way
	trialWarm2 = 8 << 20  // sent to the goroutine before its timing starts
	trialBusy  = 0.7      // CPU time / wall time below this: not timed
	trialParts = 4        // parts of trialSpan timed apart
)

// writerChoice is how this process writes plain volumes once a trial has
// decided: 0 not yet, choiceDirect, choiceGoroutine.
var writerChoice atomic.Int32

const (
	choiceDirect    = 1
	choiceGoroutine = 2
)

// writerTrial is a plain volume's trial of the goroutine (asyncWriter.step).
type writerTrial struct {
	phase    int       // 0 warming up direct, 1 timing direct, 2 warming up the goroutine, 3 timing it
	next     int64     // asyncWriter.out at which the warm-up or the part ends
	parts    int       // parts of the phase timed
	from     int64     // out when the part began
	at       time.Time // when it began
	phaseAt  time.Time // when the phase's timing began
	phaseCPU time.Duration
	best     float64 // the phase's fastest part, wall nanoseconds per byte
	direct   float64 // direct's fastest part

	span, warm2 int64 // trialSpan, trialWarm2 (smaller in tests)
	chunk       int   // the goroutine's chunk size
	// clock gives the wall time and the process's CPU time (ok false:
	// no trial)
	clock func() (time.Time, time.Duration, bool)
}

func newWriterTrial() *writerTrial {
	return &writerTrial{next: trialWarm, span: trialSpan, warm2: trialWarm2, chunk: goroutineChunk(), clock: processClock}
}

func processClock() (time.Time, time.Duration, bool) {
	cpu, ok := processCPU()
	return time.Now(), cpu, ok
}

// newPlainWriter writes a plain volume: as PCPTOOLS_IO says, or as an
// earlier trial in this process chose, or directly with a trial of the
// goroutine on the way.
func newPlainWriter(w io.Writer) *asyncWriter {
	switch {
	case ioMode.direct:
		return newDirectWriter(w)
	case ioMode.async:
		return newAsyncWriterSize(w, goroutineChunk())
	}
	switch writerChoice.Load() {
	case choiceDirect:
		return newDirectWriter(w)
	case choiceGoroutine:
		return newAsyncWriterSize(w, goroutineChunk())
	}
	a := newDirectWriter(w)
	a.trial = newWriterTrial()
	return a
}

// step moves the trial on, when there is one and the bytes handed on have
// reached the end of its phase or of a part of it. It is called where the
// chunk being filled holds less than a chunk (the end of Write and
// commit). Each way is timed in trialParts parts, and its fastest part
// counts: a part the scheduler or the host interrupted (a few
// milliseconds in a part of about 15) does not decide.
func (a *asyncWriter) step() {
	t := a.trial
	if t == nil || a.out < t.next || a.err != nil {
		return
	}
	if t.phase == 1 && t.parts == trialParts-1 && a.out%int64(t.chunk) != 0 && a.rdup == nil {
		// the goroutine's chunks start where one of their size
		// would (the page cache takes aligned writes best); not
		// where the kernel copies ranges (copyFrom), which have no
		// chunks to line up and might never line up
		return
	}
	now, cpu, ok := t.clock()
	if !ok {
		a.trial = nil
		return
	}
	if t.phase == 0 || t.phase == 2 {
		// warmed up: time this way
		t.phase++
		t.phaseAt, t.phaseCPU = now, cpu
		t.at, t.from, t.next, t.parts, t.best = now, a.out, a.out+t.span/trialParts, 0, 0
		return
	}
	if perByte := float64(now.Sub(t.at)) / float64(a.out-t.from); t.parts == 0 || perByte < t.best {
		t.best = perByte
	}
	t.parts++
	if t.parts < trialParts {
		t.at, t.from, t.next = now, a.out, a.out+t.span/trialParts
		return
	}
	busy := float64(cpu-t.phaseCPU) >= trialBusy*float64(now.Sub(t.phaseAt))
	if t.phase == 1 {
		if !busy {
			a.trial = nil // waiting on its input: nothing to gain
			return
		}
		t.direct = t.best
		a.promote(t.chunk)
		t.phase, t.next = 2, a.out+t.warm2
		return
	}
	a.trial = nil
	if busy && t.best < t.direct {
		writerChoice.CompareAndSwap(0, choiceGoroutine)
		return
	}
	a.demote()
	writerChoice.CompareAndSwap(0, choiceDirect)
}

// promote starts the goroutine of a direct writer, with chunks of size
// bytes; what the chunk being filled holds moves to the first of them.
func (a *asyncWriter) promote(size int) {
	a.emitRange(false)
	rest := a.buf
	a.full = make(chan piece, asyncChunks)
	a.free = make(chan []byte, freeRoom)
	a.done = make(chan struct{})
	a.direct, a.size, a.made, a.inflight, a.buf = false, size, 0, 0, nil
	go a.run()
	if len(rest) > 0 {
		a.buf = append(a.chunk(), rest...)
	}
}

// demote stops the goroutine once it has written every chunk sent, and
// writes directly from then on, in asyncChunk chunks: the whole ones of
// the chunk being filled at once, the rest kept.
func (a *asyncWriter) demote() {
	a.emitRange(false)
	rest := a.buf
	a.buf = nil
	for a.inflight > 0 {
		<-a.free
		a.inflight--
	}
	close(a.full)
	<-a.done
	a.full = nil
	a.check() // (the goroutine's error, if any, becomes the writer's)
	a.direct, a.size, a.made = true, asyncChunk, 1
	whole := len(rest) &^ (asyncChunk - 1)
	a.writeDirect(rest[:whole])
	a.buf = append(make([]byte, 0, 2*asyncChunk), rest[whole:]...)
}

// goroutineChunk is the size of the chunks handed to the writer's
// goroutine: half the core's level 2 cache, so that a chunk just filled is
// still in it when the other core copies it out (as a power of two from
// 128 KiB to 1 MiB; 1 MiB when the size is not known). On the Intel Xeon
// of 2026-11-28 (2 MiB of L2) 1 MiB chunks copied the 1 GiB archive in
// 0.37-0.41 s and 512 KiB ones in 0.38-0.50 s, the rewrite 0.45-0.48 s
// against 0.49-0.55 s; 128 KiB chunks took 0.66-0.77 s, the hand-offs
// costing more than the cache saved. On the AMD EPYC family 25 host
// (512 KiB of L2), 1 MiB chunks missed the cache (docs/benchmarks.md,
// 2026-11-24): 256 KiB there.
var goroutineChunk = sync.OnceValue(func() int {
	return chunkForL2(readL2("/sys/devices/system/cpu/cpu0/cache"))
})

func chunkForL2(l2 int) int {
	if l2 <= 0 {
		return 1 << 20
	}
	c := asyncChunk
	for c*2 <= l2/2 && c < 1<<20 {
		c *= 2
	}
	return c
}

// readL2 is the size of the level 2 cache that sysfs describes under dir
// (cpu0's), in bytes, or 0.
func readL2(dir string) int {
	for i := 0; i < 8; i++ {
		d := dir + "/index" + strconv.Itoa(i) + "/"
		lvl, err := os.ReadFile(d + "level")
		if err != nil {
			break
		}
		if strings.TrimSpace(string(lvl)) != "2" {
			continue
		}
		b, err := os.ReadFile(d + "size")
		if err != nil {
			return 0
		}
		v := strings.TrimSpace(string(b))
		mult := 1
		switch {
		case strings.HasSuffix(v, "K"):
			v, mult = v[:len(v)-1], 1<<10
		case strings.HasSuffix(v, "M"):
			v, mult = v[:len(v)-1], 1<<20
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0
		}
		return n * mult
	}
	return 0
}
