package mmv

import (
	"context"

	"github.com/pcptools/pcptools/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

type collector struct{ recs []stream.Record }

func (c *collector) emit(r stream.Record) error {
	if res, ok := r.(*stream.Result); ok {
		r = res.Clone()
	}
	c.recs = append(c.recs, r)
	return nil
}

func (c *collector) count(k stream.Kind) int {
	n := 0
	for _, r := range c.recs {
		if r.Kind() == k {
			n++
		}
	}
	return n
}

// TestSamplerLifecycle: files that appear, vanish and restart with a new
// generation give new metadata, no values, and a mark.
func TestSamplerLifecycle(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s spec) {
		if err := os.WriteFile(filepath.Join(dir, name), build(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var warned []error
	s := &Sampler{Path: dir, Warn: func(err error) { warned = append(warned, err) }, Tries: 2, Wait: time.Millisecond}
	c := &collector{}
	t0 := time.Unix(1700000000, 0)
	write("a", spec{version: 2, nm: 2, ni: 2, gen: 1, cluster: 3})
	if err := s.Sample(t0, c.emit); err != nil {
		t.Fatal(err)
	}
	// 3 control + 3 metrics of a
	if n := c.count(stream.KindDesc); n != 6 {
		t.Fatalf("%d descs after one file, want 6", n)
	}
	if c.count(stream.KindInDom) != 1 || c.count(stream.KindResult) != 1 || c.count(stream.KindMark) != 0 {
		t.Fatalf("records %v", c.recs)
	}
	// b appears (cluster 0: assigned 1), a restarts with a new generation
	write("b", spec{version: 1, nm: 1, ni: 1, gen: 7})
	write("a", spec{version: 2, nm: 2, ni: 3, gen: 2, cluster: 3})
	c.recs = nil
	if err := s.Sample(t0.Add(time.Second), c.emit); err != nil {
		t.Fatal(err)
	}
	if c.count(stream.KindMark) != 1 || c.recs[0].Kind() != stream.KindMark {
		t.Errorf("no mark first for a restarted file: %v", c.recs)
	}
	if n := c.count(stream.KindDesc); n != 2 {
		t.Errorf("%d new descs for b, want 2", n)
	}
	var ids []stream.PMID
	for _, r := range c.recs {
		if d, ok := r.(*stream.Desc); ok {
			ids = append(ids, d.PMID)
			if d.PMID.Cluster() != 1 || d.Names[0][:6] != "mmv.b." {
				t.Errorf("b's metric %s %v: want cluster 1, name mmv.b.*", d.PMID, d.Names)
			}
		}
	}
	// a's indom changed (3 instances now): a new InDom record; b's is new
	if n := c.count(stream.KindInDom); n != 2 {
		t.Errorf("%d indom records, want 2", n)
	}
	// a vanishes, b is being written (generations differ): no crash, b
	// is skipped with a warning, only the controls are sampled
	os.Remove(filepath.Join(dir, "a"))
	bad := build(spec{version: 1, nm: 1, ni: 1, gen: 7})
	bad[16]++
	os.WriteFile(filepath.Join(dir, "b"), bad, 0o644)
	c.recs, warned = nil, nil
	if err := s.Sample(t0.Add(2*time.Second), c.emit); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || c.count(stream.KindResult) != 1 {
		t.Errorf("warnings %v, records %v", warned, c.recs)
	}
}

// TestSamplerRedescribed: a file rewritten with one of its metrics
// changed (here its type) cannot re-describe the PMID already recorded:
// the metric is left out from then on, with a warning, and the rest of
// the file is sampled (pmlogger keeps the first descriptor and records the
// new values under it, which pmlogcheck then cannot read: docs/pcpmmv.md).
func TestSamplerRedescribed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	var warned []error
	s := &Sampler{Path: p, Warn: func(err error) { warned = append(warned, err) }, Tries: 2, Wait: time.Millisecond}
	c := &collector{}
	t0 := time.Unix(1700000000, 0)
	if err := os.WriteFile(p, build(spec{version: 2, nm: 2, ni: 2, gen: 1, cluster: 3}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Sample(t0, c.emit); err != nil {
		t.Fatal(err)
	}
	var m0 stream.PMID
	for _, r := range c.recs {
		if d, ok := r.(*stream.Desc); ok && d.Names[0] == "mmv.a.metric0.value" {
			m0 = d.PMID
			if d.Type != stream.Type32 {
				t.Fatalf("metric0 is %v, want 32", d.Type)
			}
		}
	}
	holds := func(recs []stream.Record) bool {
		for _, r := range recs {
			if res, ok := r.(*stream.Result); ok {
				it := res.VSets()
				for it.Next() {
					if it.VSet().PMID == m0 {
						return true
					}
				}
			}
		}
		return false
	}
	if m0 == 0 || !holds(c.recs) {
		t.Fatalf("metric0 (%s) not described and sampled: %v", m0, c.recs)
	}
	if err := os.WriteFile(p, build(spec{version: 2, nm: 2, ni: 2, gen: 2, cluster: 3, type0: TypeDouble}), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		c.recs = nil
		if err := s.Sample(t0.Add(time.Duration(i)*time.Second), c.emit); err != nil {
			t.Fatal(err)
		}
		if holds(c.recs) || c.count(stream.KindDesc) != 0 || c.count(stream.KindResult) != 1 {
			t.Errorf("sample %d after the change: %v", i, c.recs)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0].Error(), "recorded with other metadata") {
		t.Errorf("warnings %v, want one about metric0", warned)
	}
	// Back as it was recorded: sampled again; changed again: warned again.
	for i, ty := range []uint32{TypeI32, TypeU64} {
		if err := os.WriteFile(p, build(spec{version: 2, nm: 2, ni: 2, gen: uint64(3 + i), cluster: 3, type0: ty}), 0o644); err != nil {
			t.Fatal(err)
		}
		c.recs = nil
		if err := s.Sample(t0.Add(time.Duration(3+i)*time.Second), c.emit); err != nil {
			t.Fatal(err)
		}
		if holds(c.recs) != (ty == TypeI32) {
			t.Errorf("type %d: metric0 sampled %v", ty, holds(c.recs))
		}
	}
	if len(warned) != 2 {
		t.Errorf("warnings %v, want a second one for the second change", warned)
	}
}

// TestSentinel: with FlagSentinel an integer with every bit set and an
// empty string are "no value", as pmdammv fetches them.
func TestSentinel(t *testing.T) {
	f := &File{Flags: FlagSentinel}
	m := &Metric{Type: TypeU64}
	if _, ok := value(f, m, Value{Bits: ^uint64(0)}, time.Now()); ok {
		t.Error("all-ones u64 is a value under FlagSentinel")
	}
	if _, ok := value(f, m, Value{Bits: 5}, time.Now()); !ok {
		t.Error("5 is no value")
	}
	if _, ok := value(f, &Metric{Type: TypeString}, Value{}, time.Now()); ok {
		t.Error("empty string is a value under FlagSentinel")
	}
	if _, ok := value(&File{}, m, Value{Bits: ^uint64(0)}, time.Now()); !ok {
		t.Error("all-ones without FlagSentinel is no value")
	}
	// an elapsed timer in progress adds the time since it started
	now := time.Unix(100, 0)
	v, _ := value(&File{}, &Metric{Type: TypeElapsed}, Value{Bits: 10, Extra: -99_000_000}, now)
	if v.I != 10+1_000_000 {
		t.Errorf("elapsed in progress = %d, want %d", v.I, 10+1_000_000)
	}
}

// TestRecordInterrupted: a recording ended by its context (SIGINT or
// SIGTERM in pcpmmv) is a finished archive, files renamed into place.
func TestRecordInterrupted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), build(spec{version: 3, nm: 3, ni: 2, gen: 1, labels: true}), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "arch")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err := Record(ctx, &Sampler{Path: filepath.Join(dir, "f")}, out, RecordOptions{Interval: time.Hour})
	if err != nil || n != 1 {
		t.Fatalf("Record: %d samples, %v", n, err)
	}
	if _, err := format.Open(out); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*"))
	if len(left) != 3 {
		t.Errorf("files %v, want arch.0 arch.index arch.meta", left)
	}
}

// TestSamplerPathWarnings: a named file that goes away is said once, not
// at every sample, and again only if it fails otherwise after coming
// back; a directory holding no MMV files but a directory mmv (the
// $PCP_TMP_DIR named for $PCP_TMP_DIR/mmv) gets one hint.
func TestSamplerPathWarnings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app")
	if err := os.WriteFile(p, build(spec{version: 1, nm: 1, ni: 1, gen: 7}), 0o644); err != nil {
		t.Fatal(err)
	}
	var warned []string
	warn := func(err error) { warned = append(warned, err.Error()) }
	s := &Sampler{Path: p, Warn: warn, Tries: 1, Wait: time.Millisecond}
	c := &collector{}
	t0 := time.Unix(1700000000, 0)
	sample := func(i int) {
		t.Helper()
		if err := s.Sample(t0.Add(time.Duration(i)*time.Second), c.emit); err != nil {
			t.Fatal(err)
		}
	}
	sample(0)
	os.Remove(p)
	for i := 1; i <= 5; i++ {
		sample(i)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "no such file") || !strings.Contains(warned[0], "said once") {
		t.Errorf("a vanished file, five samples: warnings %q, want one", warned)
	}
	if err := os.WriteFile(p, build(spec{version: 1, nm: 1, ni: 1, gen: 8}), 0o644); err != nil {
		t.Fatal(err)
	}
	sample(6)
	os.Remove(p)
	sample(7)
	sample(8)
	if len(warned) != 2 {
		t.Errorf("gone, back, gone again: warnings %q, want two", warned)
	}

	warned = nil
	if err := os.Mkdir(filepath.Join(dir, "mmv"), 0o755); err != nil {
		t.Fatal(err)
	}
	s = &Sampler{Path: dir, Warn: warn}
	for i := range 3 {
		sample(i)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "name "+filepath.Join(dir, "mmv")) {
		t.Errorf("a directory holding only mmv/: warnings %q, want one hint", warned)
	}
}
