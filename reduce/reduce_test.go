package reduce

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

func TestHashOrder(t *testing.T) {
	// Four buckets: 8 and 4 share bucket 0, the later one (4) first.
	got := hashOrder([]int32{8, 1, 4, 7})
	want := []int32{4, 8, 1, 7}
	if !slices.Equal(got, want) {
		t.Errorf("hashOrder = %v, want %v", got, want)
	}
	if hashOrder(nil) != nil {
		t.Error("hashOrder(nil) is not nil")
	}
}

func TestTsub(t *testing.T) {
	ts := newTsub()
	for _, c := range []struct {
		a, an, b, bn int64
		want         float64
	}{
		{10, 0, 4, 0, 6},
		{10, 500000000, 4, 0, 6.5},
		{10, 0, 4, 250000000, 5.75},
		{1, 1000, 1, 0, 1e-6},
	} {
		if got := ts.sub(c.a, c.an, c.b, c.bn); got != c.want {
			t.Errorf("sub(%d.%09d, %d.%09d) = %v, want %v", c.a, c.an, c.b, c.bn, got, c.want)
		}
	}
}

func TestU64(t *testing.T) {
	if got := u64(3.7); got != 3 {
		t.Errorf("u64(3.7) = %d", got)
	}
	if got := u64(1.8446744073709552e19 / 2); got != 1<<63 {
		t.Errorf("u64(2^63) = %d", got)
	}
	if got := u64(-2); got != 1<<64-2 {
		t.Errorf("u64(-2) = %d, want the bits of int64(-2)", got)
	}
}

func TestNamespaceOrder(t *testing.T) {
	root := &pmnsNode{pmid: stream.PMIDNull}
	root.add(1, "a.x")
	root.add(2, "b")
	root.add(3, "a.y")
	root.add(3, "c") // a second name of PMID 3
	root.add(4, "b") // taken by PMID 2: ignored, as libpcp does
	var got []string
	root.walk("", func(name string, _ stream.PMID) { got = append(got, name) })
	// libpcp puts new children first.
	if want := []string{"c", "b", "a.y", "a.x"}; !slices.Equal(got, want) {
		t.Errorf("walk = %v, want %v", got, want)
	}
	names := map[stream.PMID][]string{}
	root.allNames("", func(name string, p stream.PMID) { names[p] = append([]string{name}, names[p]...) })
	if want := []string{"a.y", "c"}; !slices.Equal(names[3], want) {
		t.Errorf("names of PMID 3 = %v, want %v", names[3], want)
	}
}

func TestRunExample(t *testing.T) {
	in, err := filepath.Abs("../testdata/example/demo")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := Run(in, out, Options{Interval: time.Second, Samples: -1}); err != nil {
		t.Fatal(err)
	}
	a, err := format.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := stream.Collect(a.Records())
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, r := range recs {
		if _, ok := r.(*stream.Result); ok {
			results++
		}
		if _, ok := r.(*stream.LabelSet); ok {
			t.Error("a label set was written: pmlogreduce drops them")
		}
		if _, ok := r.(*stream.Text); ok {
			t.Error("help text was written: pmlogreduce drops it")
		}
	}
	if results == 0 {
		t.Error("no results written")
	}
	// Nothing is replaced: the output exists now.
	if err := Run(in, out, Options{Samples: -1}); err == nil {
		t.Error("an existing output was replaced")
	}
}

func TestRunBadInterval(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, iv := range []time.Duration{-time.Second, time.Nanosecond} {
		err := Run("../testdata/example/demo", out, Options{Interval: iv, Samples: -1})
		if !errors.Is(err, ErrInterval) {
			t.Errorf("interval %v: err = %v, want ErrInterval", iv, err)
		}
	}
	if m, _ := filepath.Glob(out + "*"); len(m) > 0 {
		t.Errorf("output left: %v", m)
	}
}

func TestRunMissingInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := Run(filepath.Join(dir, "nothing"), out, Options{Samples: -1}); err == nil {
		t.Fatal("no error for a missing input")
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("files left: %v", ents)
	}
}
