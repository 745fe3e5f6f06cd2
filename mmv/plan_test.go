package mmv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// sampleOnce samples s at t and returns the result and the names of the
// metrics and instances described.
func sampleOnce(t *testing.T, s *Sampler, at int64) (*stream.Result, []string) {
	t.Helper()
	c := &collector{}
	if err := s.Sample(time.Unix(at, 0), c.emit); err != nil {
		t.Fatal(err)
	}
	var res *stream.Result
	var names []string
	for _, r := range c.recs {
		switch r := r.(type) {
		case *stream.Result:
			res = r
		case *stream.Desc:
			names = append(names, r.Names...)
		case *stream.InDom:
			names = append(names, r.Names...)
		}
	}
	return res, names
}

// TestPlanFollowsTheFile: a sample through a plan gives what decoding
// gives, and the plan is given up, with nothing lost or wrong, when the
// file is replaced (renamed over), grows, shrinks, or has its metadata
// changed in place within one generation.
func TestPlanFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	sp := spec{version: 2, nm: 5, ni: 3, gen: 4}
	base := build(sp)
	if err := os.WriteFile(p, base, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Decode("f", base)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sampler{Path: p, Tries: 1, Wait: time.Millisecond, Now: func() time.Time { return time.Unix(1700000100, 0) }}
	defer s.Close()
	// want is the result a sampler that decodes every time gives for data
	want := func(data []byte) *stream.Result {
		t.Helper()
		q := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(q, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, _ := sampleOnce(t, &Sampler{Path: q, Now: s.Now}, 0)
		return r
	}
	setValue := func(data []byte, k int, v uint64) {
		ne.PutUint64(data[int(f.valOff)+k*valueSize:], v)
	}
	sampleOnce(t, s, 1)
	data := bytes.Clone(base)
	for i := 0; i < 3; i++ {
		setValue(data, 1, uint64(100+i))
		if err := os.WriteFile(p, data, 0o644); err != nil { // in place: same inode
			t.Fatal(err)
		}
		got, _ := sampleOnce(t, s, int64(2+i))
		if !bytes.Equal(got.Body, want(data).Body) {
			t.Fatalf("sample %d through the plan differs from decoding", i)
		}
	}
	if s.planned != 3 {
		t.Fatalf("%d samples through a plan, want 3", s.planned)
	}

	// renamed over by a file with other values: a new inode
	setValue(data, 2, 777)
	q := filepath.Join(dir, ".new")
	if err := os.WriteFile(q, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	got, _ := sampleOnce(t, s, 10)
	if !bytes.Equal(got.Body, want(data).Body) || s.planned != 3 {
		t.Fatalf("after a rename: planned %d, result right %v", s.planned, bytes.Equal(got.Body, want(data).Body))
	}

	// metadata changed in place, generation unchanged: an instance renamed
	sampleOnce(t, s, 11) // (planned again)
	at := bytes.Index(data, []byte("inst1\x00"))
	data[at] = 'I'
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, names := sampleOnce(t, s, 12)
	if s.planned != 4 || len(names) != 3 || names[1] != "Inst1" {
		t.Fatalf("after a rename in place: planned %d, new names %q", s.planned, names)
	}

	// grown, then shrunk: each sample right, no fault
	sampleOnce(t, s, 13)
	for i, d := range [][]byte{append(bytes.Clone(data), make([]byte, 4096)...), data[:len(data)/2]} {
		if err := os.WriteFile(p, d, 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := sampleOnce(t, s, int64(14+i))
		// cut in half, the file is damaged: the result has pmdammv's
		// three control metrics alone (20 bytes each)
		if i == 1 && len(got.Body) != 4+3*20 {
			t.Fatalf("a file cut in half gave a result of %d bytes", len(got.Body))
		}
	}
}

// TestPlanFaultIsNoPanic: a mapped file cut short after the plan's size
// check faults on its lost pages; the plan reports that it does not hold,
// and nothing panics.
func TestPlanFaultIsNoPanic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	data := build(spec{version: 3, nm: 200, ni: 50, gen: 2, labels: true})
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Sampler{Path: p}
	defer s.Close()
	sampleOnce(t, s, 1)
	if s.plan == nil {
		t.Fatal("no plan after a full sample")
	}
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	pf := &s.plan.files[0]
	if pf.fill(s.plan.res.Body, time.Now()) {
		t.Fatal("the plan holds for a file cut to 100 bytes")
	}
}
