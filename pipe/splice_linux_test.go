//go:build linux

package pipe

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pcptools/pcptools/stream"
)

// TestSpliceBufKeepsEveryByte: bytes written through a spliceBuf into a
// pipe, built in its room or copied, across many turns of its two
// buffers, with flushes of part-full ones, reach a slow reader unchanged:
// no page is filled again while the pipe still holds it. Then the pipe
// grows past the buffers, and again.
func TestSpliceBufKeepsEveryByte(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 64<<10); err != nil {
		t.Fatal("cannot size the pipe:", err)
	}
	fb := newFrameBuf(w, 1<<20)
	s, ok := fb.(*spliceBuf)
	if !ok {
		t.Fatalf("a pipe got a %T", fb)
	}
	got := make(chan []byte)
	go func() {
		var all []byte
		buf := make([]byte, 3000)
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			n, err := r.Read(buf[:1+rng.IntN(len(buf)-1)])
			all = append(all, buf[:n]...)
			if err != nil {
				break
			}
			if rng.IntN(50) == 0 {
				time.Sleep(time.Millisecond) // the pipe fills; the writer waits
			}
		}
		got <- all
	}()
	var want []byte
	rng := rand.New(rand.NewPCG(3, 4))
	turns := 0
	for i := 0; i < 4000; i++ {
		if i == 2000 { // the reader's side grows the pipe
			if _, err := unix.FcntlInt(r.Fd(), unix.F_SETPIPE_SZ, 256<<10); err != nil {
				t.Fatal(err)
			}
		}
		n := rng.IntN(40000)
		p := make([]byte, n)
		for k := range p {
			p[k] = byte(i*7 + k)
		}
		want = append(want, p...)
		before := s.cur
		switch rng.IntN(4) {
		case 0: // built in the room, as frames are
			room := s.AvailableBuffer()
			if len(p) <= cap(room) {
				p = append(room, p...)
			}
			fallthrough
		case 1, 2:
			if _, err := s.Write(p); err != nil {
				t.Fatal(err)
			}
		default:
			if _, err := s.Write(p); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if s.cur != before {
			turns++
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	all := <-got
	if !bytes.Equal(all, want) {
		at := 0
		for at < min(len(all), len(want)) && all[at] == want[at] {
			at++
		}
		t.Fatalf("%d bytes read, %d written; first difference at %d", len(all), len(want), at)
	}
	if turns < 100 || len(s.bufs[0]) != 256<<10 {
		t.Fatalf("%d turns of the buffers, buffers of %d bytes at the end", turns, len(s.bufs[0]))
	}
	t.Logf("%d bytes, %d turns of the buffers", len(want), turns)
}

// TestSpliceBufReaderGone: the reader's end closed, a write fails with
// EPIPE (as from write(2); a standard output would take SIGPIPE).
func TestSpliceBufReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := newFrameBuf(w, 1<<20)
	r.Close()
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		_, werr = s.Write(make([]byte, 1<<20))
	}
	if werr == nil || !bytes.Contains([]byte(werr.Error()), []byte("broken pipe")) {
		t.Fatalf("write into a pipe with no reader: %v", werr)
	}
	_ = io.EOF
}

// BenchmarkFrameBufPipe moves 256 MiB through a pipe to a reader, written
// with write(2) (bufio) and with vmsplice (spliceBuf), and reports the
// system time of both sides per GiB.
func BenchmarkFrameBufPipe(b *testing.B) {
	for _, mode := range []string{"write", "vmsplice"} {
		b.Run(mode, func(b *testing.B) {
			noSplice = mode == "write"
			defer func() { noSplice = false }()
			const total = 256 << 20
			var sys time.Duration
			for i := 0; i < b.N; i++ {
				r, w, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 1<<20)
				done := make(chan struct{})
				go func() {
					buf := make([]byte, 1<<20)
					for {
						if _, err := r.Read(buf); err != nil {
							break
						}
					}
					close(done)
				}()
				var before, after unix.Rusage
				unix.Getrusage(unix.RUSAGE_SELF, &before)
				fb := newFrameBuf(w, 1<<20)
				chunk := make([]byte, 300<<10)
				for n := 0; n < total; n += len(chunk) {
					room := fb.AvailableBuffer()
					if cap(room) >= len(chunk) {
						room = room[:len(chunk)]
						for k := 0; k < len(room); k += 64 {
							room[k] = byte(k) // an encoder writes its frames
						}
						fb.Write(room)
						continue
					}
					fb.Write(chunk)
				}
				fb.Flush()
				w.Close()
				<-done
				r.Close()
				unix.Getrusage(unix.RUSAGE_SELF, &after)
				sys += time.Duration(after.Stime.Nano() - before.Stime.Nano())
			}
			b.SetBytes(256 << 20)
			b.ReportMetric(sys.Seconds()/float64(b.N)*4, "sys-s/GiB")
		})
	}
}

// TestWriterIntoAPipe: a Writer on a pipe (a spliceBuf) writes the bytes a
// Writer on a buffer writes, records large and small, and gives its
// buffers back at Close.
func TestWriterIntoAPipe(t *testing.T) {
	base := sampleRecords()
	recs := []stream.Record{base[0]}
	for i := 0; i < 1000; i++ {
		for _, r := range base[1:] {
			if r.Kind() == stream.KindLabel {
				continue
			}
			recs = append(recs, r)
		}
		body := resultBody(3, tset{pmid: 1, valfmt: stream.ValDptr, vals: []tval{{inst: 0, vtype: 0, payload: make([]byte, (i%7)*50000+4)}}})
		recs = append(recs, &stream.Result{T: ts(1700000000+int64(i), 0), Version: 3, Body: body})
	}
	want := encode(t, recs)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	pw := NewWriter(w)
	sb, ok := pw.bw.(*spliceBuf)
	if !ok {
		t.Fatalf("a Writer on a pipe buffers with %T", pw.bw)
	}
	for _, rec := range recs {
		if err := pw.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("%d bytes through the pipe, %d through a buffer, or they differ", len(b), len(want))
	}
	if sb.bufs[0] != nil || sb.bufs[1] != nil {
		t.Fatal("the buffers are still mapped after Close")
	}
	t.Logf("%d bytes", len(want))
}
