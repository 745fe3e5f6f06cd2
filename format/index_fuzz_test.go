package format

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/internal/fuzzdir"
	"github.com/pcptools/pcptools/stream"
)

// FuzzIndex keeps the .meta and volume of a good archive (v2 or v3) and
// fuzzes the temporal index alone: opening, reading the index, reading
// from a time the index is used for, and checking never panic or hang,
// and a damaged index never stops the records from being read (it is only
// a warning).
func FuzzIndex(f *testing.F) {
	type src struct{ meta, vol []byte }
	var srcs []src
	// ok-foo (v2, 2 KB) as it is and converted to v3 by our writer: small
	// archives keep the executions fast.
	orig := filepath.Join(QADir, "ok-foo")
	v3 := filepath.Join(f.TempDir(), "ok-foo-v3")
	if err := fuzzConvert(orig, v3); err != nil {
		f.Skip("PCP QA archives not installed: ", err)
	}
	for _, base := range []string{orig, v3} {
		m, err1 := os.ReadFile(base + ".meta")
		v, err2 := os.ReadFile(base + ".0")
		x, err3 := os.ReadFile(base + ".index")
		if err1 != nil || err2 != nil || err3 != nil {
			f.Fatal(err1, err2, err3)
		}
		f.Add(x, len(srcs) == 1)
		srcs = append(srcs, src{m, v})
	}
	dir := fuzzdir.Dir(f)
	f.Fuzz(func(t *testing.T, index []byte, v3 bool) {
		if len(index) > 1<<20 {
			t.Skip()
		}
		defer fuzzWatchdog(10 * time.Second)()
		s := srcs[0]
		if v3 {
			s = srcs[1]
		}
		base := filepath.Join(dir, "x")
		for suffix, b := range map[string][]byte{".meta": s.meta, ".0": s.vol, ".index": index} {
			if err := os.WriteFile(base+suffix, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a, err := Open(base, WithWarn(func(error) {}))
		if err != nil {
			t.Fatalf("a damaged index stops the archive from opening: %v", err)
		}
		entries, _ := a.Index()
		count := func(opts ...RecordsOption) (int, error) {
			it := a.Records(opts...)
			defer it.Close()
			n := 0
			for it.Next() {
				n++
			}
			return n, it.Err()
		}
		all, err := count()
		if err != nil {
			t.Fatalf("a damaged index stops the records: %v", err)
		}
		// a few entries: each read costs a pass over the volume
		for i := 0; i < len(entries); i += 1 + len(entries)/3 {
			e := entries[i]
			if n, err := count(From(e.T)); err == nil && n > all {
				t.Fatalf("reading from %v gives %d records of %d", e.T, n, all)
			}
		}
		mid := a.Label().Start
		mid.Sec += 60
		count(From(mid))
		count(From(stream.Timestamp{Sec: 1 << 40}))
		Check(base, CheckOptions{})
	})
}

// fuzzConvert copies the archive in to a version 3 archive out.
func fuzzConvert(in, out string) error {
	a, err := Open(in)
	if err != nil {
		return err
	}
	w, err := Create(out, WriterOptions{Version: 3, NoSync: true})
	if err != nil {
		return err
	}
	it := a.Records()
	defer it.Close()
	for it.Next() {
		if err := w.Write(it.At()); err != nil {
			w.Abort()
			return err
		}
	}
	if it.Err() != nil {
		w.Abort()
		return it.Err()
	}
	return w.Close()
}

// fuzzWatchdog makes a hang a crash, which the fuzzer saves as a failing
// input (go test -fuzz has no timeout per input): call the function it
// returns when the input is done.
func fuzzWatchdog(d time.Duration) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			panic(fmt.Sprintf("one input took more than %v: a hang", d))
		}
	}()
	return func() { close(done) }
}
