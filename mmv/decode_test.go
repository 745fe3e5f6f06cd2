package mmv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDecodeBuilt(t *testing.T) {
	for _, v := range []int{1, 2, 3} {
		data := build(spec{version: v, nm: 7, ni: 3, gen: 99, cluster: 5, labels: v == 3, flags: FlagSentinel})
		f, err := Decode("x", data)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if f.Version != v || f.Cluster != 5 || f.Generation != 99 || len(f.Metrics) != 8 || len(f.Values) != 22 {
			t.Fatalf("v%d: decoded %+v", v, f)
		}
		if got := f.Metrics[2].Name; got != "metric2.value" {
			t.Errorf("v%d: metric name %q", v, got)
		}
		if got := f.Indoms[0].Instances[2].External; got != "inst2" {
			t.Errorf("v%d: instance name %q", v, got)
		}
		last := f.Values[len(f.Values)-1]
		if last.String != "a string value" || last.Instance != -1 {
			t.Errorf("v%d: string value %+v", v, last)
		}
		if got := f.Values[4].Float(f.Metrics[f.Values[4].Metric].Type, time.Now()); got != 1001 {
			t.Errorf("v%d: value %v, want 1001", v, got)
		}
		if v == 3 && (len(f.Labels) != 2 || f.Labels[0].JSON != `{"app":"test"}`) {
			t.Errorf("labels %+v", f.Labels)
		}
		var out bytes.Buffer
		if sts := Dump(&out, "x", data, time.Now()); sts != 0 {
			t.Errorf("v%d: dump status %d:\n%s", v, sts, out.String())
		}
	}
}

// TestReadGeneration: a file whose generation numbers differ is read
// again, a bounded number of times, and then reported as in flux.
func TestReadGeneration(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := build(spec{version: 2, nm: 2, ni: 2, gen: 5})
	binary.NativeEndian.PutUint64(data[16:], 6)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(p, 3, time.Millisecond)
	if !errors.Is(err, ErrInFlux) || !strings.Contains(err.Error(), p+": offset 8:") {
		t.Fatalf("err = %v, want in flux naming file and offset", err)
	}
	binary.NativeEndian.PutUint64(data[16:], 5)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p, 3, time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// hostile checks that neither Decode nor Dump panics on data, and that
// Decode's errors name the file and an offset.
func hostile(t *testing.T, data []byte) {
	t.Helper()
	f, err := Decode("bad", data)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "bad: offset ") {
			t.Errorf("error %q does not name the file and offset", err)
		}
	} else if f == nil {
		t.Errorf("nil file and nil error")
	}
	Dump(io.Discard, "bad", data, time.Unix(0, 0))
}

func TestHostile(t *testing.T) {
	for _, v := range []int{1, 2, 3} {
		good := build(spec{version: v, nm: 4, ni: 2, gen: 1, labels: v == 3})
		for n := 0; n < len(good); n++ {
			hostile(t, good[:n]) // truncated at every byte
		}
		le := binary.NativeEndian
		put := func(off int, val uint64, size int) []byte {
			b := bytes.Clone(good)
			if size == 4 {
				le.PutUint32(b[off:], uint32(val))
			} else {
				le.PutUint64(b[off:], val)
			}
			return b
		}
		ntoc := int(le.Uint32(good[24:]))
		cases := map[string][]byte{
			"tocs-huge":     put(24, 0x7fffffff, 4),
			"tocs-negative": put(24, 0x80000000, 4),
		}
		for i := 0; i < ntoc; i++ {
			at := 40 + 16*i
			cases["self-"+itoa(i)] = put(at+8, uint64(at), 8) // a TOC pointing at itself
			cases["count-overflow-"+itoa(i)] = put(at+4, 0x7fffffff, 4)
			cases["count-negative-"+itoa(i)] = put(at+4, 0xffffffff, 4)
			cases["offset-past-end-"+itoa(i)] = put(at+8, uint64(len(good)), 8)
			cases["offset-wraps-"+itoa(i)] = put(at+8, ^uint64(0)-8, 8)
		}
		// every 8-byte word set to a wrapping offset, one at a time
		for off := 40; off+8 <= len(good); off += 8 {
			cases["word-"+itoa(off)] = put(off, ^uint64(0)-100, 8)
		}
		for name, b := range cases {
			t.Run(name, func(t *testing.T) { hostile(t, b) })
			if _, err := Decode("bad", b); err == nil && strings.HasPrefix(name, "self-") {
				t.Errorf("v%d %s: a TOC pointing at itself decoded without error", v, name)
			}
		}
	}
}

// TestDumpFlagString covers mmvdump's rendering of unknown flag bits.
func TestDumpFlagString(t *testing.T) {
	for flags, want := range map[uint32]string{0: "none", 7: "noprefix, process, sentinel",
		2: "process", 9: "noprefix, unknown=8"} {
		if got := flagString(flags); got != want {
			t.Errorf("flagString(%#x) = %q, want %q", flags, got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, v := range []int{1, 2, 3} {
		f.Add(build(spec{version: v, nm: 3, ni: 2, gen: 1, labels: v == 3}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode("fuzz", data)
		if err == nil && file == nil {
			t.Fatal("nil file and nil error")
		}
		Dump(io.Discard, "fuzz", data, time.Unix(0, 0))
	})
}
