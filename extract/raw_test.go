package extract

import (
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/format"
	qafix "github.com/pcptools/pcptools/internal/qa"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/stream"
)

// TestMergeRaw: a merge writes through the kernel's copy the results it
// passes on as their inputs' readers gave them, and its files are those
// of the same merge written through user space; a selection of metrics
// (results rebuilt) leaves none to copy that way.
func TestMergeRaw(t *testing.T) {
	qa := qafix.Need(t)
	multi := qafix.Multi(t)
	one := []string{filepath.Join(qa, "20180127.08.40")}
	specs, err := ParseConfig("sel", []byte("kernel.all.load\n"))
	if err != nil {
		t.Fatal(err)
	}
	oa, err := format.Open(one[0])
	if err != nil {
		t.Fatal(err)
	}
	om, err := oa.Meta()
	if err != nil {
		t.Fatal(err)
	}
	sel := Resolve(specs, []*format.Metadata{om}, "sel", nil)
	dir := t.TempDir()
	for k, c := range []struct {
		names   []string
		opts    Options
		wantRaw bool
	}{
		{multi, Options{}, true},
		{[]string{filepath.Join(qa, "20180127.08.40"), filepath.Join(qa, "20180415.09.16")}, Options{}, true},
		{one, Options{Samples: 7}, true},
		{one, Options{Start: stream.Timestamp{Sec: 1517043000}, HasStart: true, CarryDiscrete: true}, true},
		{one, Options{Select: sel}, false},
	} {
		var outs [2]string
		raws := 0
		for i, raw := range []bool{true, false} {
			var ins []Input
			var as []*format.Archive
			for _, n := range c.names {
				a, err := format.Open(n)
				if err != nil {
					t.Fatal(err)
				}
				ins = append(ins, Input{Name: filepath.Base(n), Archive: a})
				as = append(as, a)
			}
			opts := c.opts
			_, end, ok, err := Bounds(as)
			if err != nil {
				t.Fatal(err)
			}
			opts.LogEnd, opts.HasLogEnd = end, ok
			x, err := New(ins, opts)
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = filepath.Join(dir, string(rune('a'+k))+[]string{"raw", "plain"}[i])
			sink, err := toolio.OpenOutput(outs[i], format.WriterOptions{NoSync: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for x.Next() {
				var src format.RawSource
				if raw {
					src = x
					if _, ok := x.RawRecord(x.At()); ok {
						raws++
					}
				}
				if err := toolio.WriteFrom(sink, src, x.At()); err != nil {
					t.Fatal(err)
				}
			}
			if err := x.Err(); err != nil {
				t.Fatal(err)
			}
			x.Close()
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if (raws > 0) != c.wantRaw {
			t.Errorf("case %d: %d results copied as they lie", k, raws)
		}
		qafix.SameFiles(t, outs[0], outs[1])
	}
}
