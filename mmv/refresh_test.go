package mmv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestRefreshLikeDecode: a refresh after values changed gives what
// decoding the new bytes gives; after any other byte changed (metadata,
// a value's metric or instance offset, a generation), it refuses.
func TestRefreshLikeDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sp := range []spec{
		{version: 1, nm: 2, ni: 3, gen: 1},
		{version: 2, nm: 4, ni: 2, gen: 5, flags: FlagSentinel},
		{version: 3, nm: 3, ni: 3, gen: 9, labels: true},
	} {
		base := build(sp)
		f, err := Decode("f", base)
		if err != nil {
			t.Fatal(err)
		}
		old := append([]byte(nil), base...)
		valEnd := int(f.valOff) + len(f.Values)*valueSize
		for i := 0; i < 500; i++ {
			data := append([]byte(nil), old...)
			k := r.IntN(len(f.Values))
			at := int(f.valOff) + k*valueSize
			isString := f.Metrics[f.Values[k].Metric].Type == TypeString
			var wantOK bool
			switch r.IntN(3) {
			case 0, 1: // a value moves (for a string, its slot offset: refused)
				off := r.IntN(16)
				if isString {
					off = r.IntN(8) // (the value word of a string slot is not read)
				}
				data[at+off] ^= byte(1 + r.IntN(255))
				wantOK = true
			default: // anything else moves
				var off int
				for {
					off = r.IntN(len(data))
					if off < int(f.valOff) || off >= valEnd || (off-int(f.valOff))%valueSize >= 16 {
						break
					}
				}
				data[off] ^= byte(1 + r.IntN(255))
			}
			g := cloneFile(f)
			ok := g.Refresh(old, data)
			if ok != wantOK {
				t.Fatalf("v%d mutation %d: Refresh %v, want %v", sp.version, i, ok, wantOK)
			}
			if !ok {
				continue
			}
			want, err := Decode("f", data)
			if err != nil {
				t.Fatalf("v%d mutation %d: refreshed, but the bytes do not decode: %v", sp.version, i, err)
			}
			if !reflect.DeepEqual(g.Values, want.Values) {
				t.Fatalf("v%d mutation %d: refreshed values differ from decoded ones", sp.version, i)
			}
			f, old = g, data
		}
	}
}

func cloneFile(f *File) *File {
	g := *f
	g.Values = append([]Value(nil), f.Values...)
	return &g
}

// TestSamplerRefreshLikeDecode: samples of files whose values change
// between samples (and one rewritten with a new generation midway) give
// the same records whether each sample decodes its files or refreshes
// them.
func TestSamplerRefreshLikeDecode(t *testing.T) {
	defer func() { noRefresh, noPlan = false, false }()
	run := func(off, offPlan bool) ([]string, int) {
		noRefresh, noPlan = off, offPlan
		dir := t.TempDir()
		r := rand.New(rand.NewPCG(1, 1))
		files := map[string][]byte{
			"a": build(spec{version: 2, nm: 3, ni: 3, gen: 1, cluster: 3}),
			"b": build(spec{version: 3, nm: 2, ni: 2, gen: 2, labels: true, flags: FlagSentinel}),
		}
		s := &Sampler{Path: dir, Tries: 1, Wait: time.Millisecond, Now: func() time.Time { return time.Unix(1700000100, 0) }}
		var out []string
		for i := 0; i < 40; i++ {
			for _, name := range []string{"a", "b"} { // (in order: the random mutations must repeat)
				b := files[name]
				f, err := Decode(name, b)
				if err != nil {
					t.Fatal(err)
				}
				for k := range f.Values {
					if f.Metrics[f.Values[k].Metric].Type != TypeString && r.IntN(2) == 0 {
						at := int(f.valOff) + k*valueSize
						b[at+r.IntN(8)] = byte(r.IntN(256))
						if r.IntN(10) == 0 {
							for j := 0; j < 8; j++ {
								b[at+j] = 0xff // the sentinel, in b
							}
						}
					}
				}
				if i == 20 && name == "a" {
					files[name] = build(spec{version: 2, nm: 3, ni: 4, gen: 3, cluster: 3})
					b = files[name]
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := &collector{}
			if err := s.Sample(time.Unix(1700000000+int64(i), 0), c.emit); err != nil {
				t.Fatal(err)
			}
			for _, rec := range c.recs {
				out = append(out, fmt.Sprintf("%d %#v", i, rec))
			}
		}
		return out, s.planned
	}
	decoded, _ := run(true, true)
	for _, mode := range []struct {
		name              string
		noRefresh, noPlan bool
	}{{"refreshing", false, true}, {"planned", true, false}, {"refreshing and planned", false, false}} {
		got, planned := run(mode.noRefresh, mode.noPlan)
		t.Logf("%s: %d of 40 samples through a plan", mode.name, planned)
		if !mode.noPlan && planned < 5 {
			t.Fatalf("%s: %d of 40 samples through a plan", mode.name, planned)
		}
		if len(decoded) != len(got) {
			t.Fatalf("%d records %s, %d decoding", len(got), mode.name, len(decoded))
		}
		for i := range decoded {
			if decoded[i] != got[i] {
				t.Fatalf("record %d differs:\ndecoding: %s\n%s: %s", i, decoded[i], mode.name, got[i])
			}
		}
	}
}
