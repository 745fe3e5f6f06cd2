package extract

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// The heap gives ties to the input named first, whatever the order the
// inputs went in, and an input's end <mark> ties like a record.
func TestHeapTies(t *testing.T) {
	var h inputHeap
	ins := make([]*input, 12)
	for i := range ins {
		ins[i] = &input{idx: i, state: stResult}
		ins[i].res.T = at(float64(i % 3)) // 0 3 6 9 at 0 s, 1 4 7 10 at 1 s...
	}
	// An end pending at 1 s (its last record 1 ms before): it sorts with
	// the records at 1 s, by its index.
	ins[4].state = stEOF
	ins[4].last = at(1).Add(-1e6)
	for _, i := range []int{7, 3, 11, 0, 9, 4, 1, 10, 6, 2, 8, 5} {
		h.push(ins[i])
	}
	var got []int
	for len(h) > 0 {
		got = append(got, h.pop().idx)
	}
	want := []int{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

// manyArchive writes a small archive for TestManyInputs: input i samples
// at a few of 40 seconds (so that many inputs tie), some between a
// prologue and an epilogue whose pmcd pid says whether the next input
// continues it, and a few with records before their label's start.
func manyArchive(t testing.TB, dir string, i int) string {
	// A directory each: opening an archive lists its directory.
	sub := filepath.Join(dir, fmt.Sprintf("d%04d", i))
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(sub, fmt.Sprintf("in%04d", i))
	w, err := format.Create(base, format.WriterOptions{Version: 2, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	first := float64((i * 7) % 40)
	times := []float64{first, first + 1, first + 1, first + 1 + float64(i%5)}
	start := at(first)
	load := float64(i)
	switch i % 97 {
	case 5:
		start = at(first + 2) // records before the label's start
	case 6:
		times[3] = first - 3 // time going back
		load = -1            // out of the order check
	}
	must(w.Write(&stream.Label{Version: 2, PID: 1, Start: start, Hostname: "h1", Timezone: "UTC"}))
	pid, seq := stream.NewPMID(2, 0, 23), stream.NewPMID(2, 0, 24)
	must(w.Write(&stream.Desc{T: start, PMID: pmidLoad, Type: stream.TypeDouble, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"kernel.all.load"}}))
	must(w.Write(&stream.Desc{T: start, PMID: pmidDisk, Type: stream.TypeU64, InDom: indomDsk, Sem: stream.SemCounter, Names: []string{"disk.dev.read"}}))
	must(w.Write(&stream.Desc{T: start, PMID: pid, Type: stream.TypeU64, InDom: stream.InDomNull, Sem: stream.SemDiscrete, Names: []string{"pmcd.pid"}}))
	must(w.Write(&stream.Desc{T: start, PMID: seq, Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemDiscrete, Names: []string{"pmcd.seqnum"}}))
	for k := uint32(0); k < 3; k++ {
		must(w.Write(&stream.Desc{T: start, PMID: stream.NewPMID(2, 3, k), Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemDiscrete, Names: []string{"pmcd.pmlogger.x" + string(rune('0'+k))}}))
	}
	insts := []int32{0, int32(1 + i%3)}
	must(w.Write(&stream.InDom{T: at(times[0]), InDom: indomDsk, Encoding: stream.InDomV2, Insts: insts, Names: []string{"disk0", fmt.Sprintf("disk%d", 1+i%3)}}))
	var b stream.ResultBuilder
	var r stream.Result
	// pmcd's pid changes every third input: the inputs between share it,
	// and an end followed by one of them needs no <mark>.
	prologue := func(ts stream.Timestamp) {
		b.Reset()
		b.Add(pid, stream.TypeU64, stream.Val{Inst: -1, U: uint64(100 + i/3)})
		b.Add(seq, stream.TypeU32, stream.Val{Inst: -1, U: 1})
		for k := uint32(0); k < 3; k++ {
			b.Add(stream.NewPMID(2, 3, k), stream.TypeU32, stream.Val{Inst: -1, U: 1})
		}
		must(b.Build(ts, &r))
		must(w.Write(&r))
	}
	withPro := i%4 != 3
	if withPro {
		prologue(at(times[0]))
	}
	for k, s := range times {
		b.Reset()
		b.Add(pmidLoad, stream.TypeDouble, stream.Val{Inst: -1, F: load})
		if k%2 == 0 {
			b.Add(pmidDisk, stream.TypeU64, stream.Val{Inst: 0, U: uint64(k)}, stream.Val{Inst: insts[1], U: uint64(i)})
		}
		must(b.Build(at(s), &r))
		must(w.Write(&r))
	}
	if withPro {
		prologue(at(times[len(times)-1]))
	}
	must(w.Close())
	return base
}

// extractMany runs the merge of bases, with lazy opening or not.
func extractMany(t testing.TB, as []*format.Archive, opts Options, lazy bool) ([]stream.Record, []string) {
	var ins []Input
	for _, a := range as {
		ins = append(ins, Input{Name: filepath.Base(a.Base()), Archive: a})
	}
	_, end, ok, err := Bounds(as)
	if err != nil {
		t.Fatal(err)
	}
	opts.LogEnd, opts.HasLogEnd = end, ok
	var warns []string
	opts.Warn = func(err error) { warns = append(warns, err.Error()) }
	x, err := New(ins, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.lazy = x.lazy && lazy
	var out []stream.Record
	for x.Next() {
		out = append(out, stream.CloneRecord(x.At()))
	}
	if err := x.Err(); err != nil {
		t.Fatal(err)
	}
	if !opts.HasEnd && opts.Samples == 0 && x.open != 0 {
		t.Errorf("%d inputs still open at the end", x.open)
	}
	return out, warns
}

// Two thousand inputs that tie, overlap and follow each other: parking
// them (lazy) gives what keeping them all open gives, record for record,
// and the merge keeps to its rules.
func TestManyInputs(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	dir := t.TempDir()
	var as []*format.Archive
	for i := 0; i < n; i++ {
		a, err := format.Open(manyArchive(t, dir, i))
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"all", Options{}},
		{"always marks", Options{AlwaysMark: true}},
		{"window", Options{Start: at(10), HasStart: true, End: at(30.5), HasEnd: true}},
		{"window with carry", Options{Start: at(10), HasStart: true, CarryDiscrete: true}},
		{"samples", Options{Samples: 1500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lazy, lw := extractMany(t, as, tc.opts, true)
			eager, ew := extractMany(t, as, tc.opts, false)
			if len(lazy) != len(eager) {
				t.Fatalf("lazy: %d records, eager: %d", len(lazy), len(eager))
			}
			for i := range lazy {
				if !reflect.DeepEqual(lazy[i], eager[i]) {
					t.Fatalf("record %d: lazy %+v, eager %+v", i, lazy[i], eager[i])
				}
			}
			if !reflect.DeepEqual(lw, ew) {
				t.Errorf("warnings: lazy %q, eager %q", lw, ew)
			}
			// Data in time order; of equal times, the input named first
			// (kernel.all.load holds the input's number) first.
			var last stream.Timestamp
			lastIn := -1
			marks := 0
			for _, r := range lazy {
				switch r := r.(type) {
				case *stream.Mark:
					marks++
					lastIn = -1
					last = r.T
				case *stream.Result:
					in := loadOf(t, r)
					if in < 0 {
						continue // a prologue or epilogue, or out of order
					}
					if r.T.Before(last) {
						t.Fatalf("result at %s after %s", r.T, last)
					}
					if r.T == last && in < lastIn {
						t.Fatalf("at %s: input %d after input %d", r.T, in, lastIn)
					}
					last, lastIn = r.T, in
				}
			}
			if tc.name == "all" && (marks == 0 || marks >= n) {
				t.Errorf("%d marks for %d inputs: the pid rule is not at work", marks, n)
			}
		})
	}
}

// loadOf returns the kernel.all.load value of r (the input's number), or
// -1 when r has none.
func loadOf(t testing.TB, r *stream.Result) int {
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.PMID != pmidLoad {
			continue
		}
		v, err := vs.Value(0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := v.Float64(stream.TypeDouble)
		if err != nil {
			t.Fatal(err)
		}
		return int(f)
	}
	return -1
}

// BenchmarkManyInputs merges 800 small archives (those of TestManyInputs:
// some tie, some overlap, some follow each other), from opening them to
// the last record; the output is not written.
func BenchmarkManyInputs(b *testing.B) {
	dir := b.TempDir()
	var bases []string
	for i := 0; i < 800; i++ {
		bases = append(bases, manyArchive(b, dir, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var as []*format.Archive
		for _, base := range bases {
			a, err := format.Open(base)
			if err != nil {
				b.Fatal(err)
			}
			as = append(as, a)
		}
		recs, _ := extractMany(b, as, Options{}, true)
		if len(recs) == 0 {
			b.Fatal("no records")
		}
	}
}
