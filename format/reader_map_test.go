package format

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// readTranscript reads the data of the archive at base with opts and
// describes every record, warning and the final error, so that two ways of
// reading can be compared.
func readTranscript(base string, opts ...RecordsOption) string {
	var sb strings.Builder
	a, err := Open(base, WithWarn(func(err error) { fmt.Fprintf(&sb, "warning: %v\n", err) }))
	if err != nil {
		return "open: " + err.Error()
	}
	it := a.Records(append(opts, DataOnly())...)
	defer it.Close()
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Result:
			fmt.Fprintf(&sb, "result %s %d %x\n", r.T, len(r.Body), sha256.Sum256(r.Body))
		case *stream.Mark:
			fmt.Fprintf(&sb, "mark %s\n", r.T)
		case *stream.Label:
			fmt.Fprintf(&sb, "label vol %d %s\n", r.Vol, r.Start)
		default:
			fmt.Fprintf(&sb, "%T\n", r)
		}
	}
	if err := it.Err(); err != nil {
		fmt.Fprintf(&sb, "error: %v\n", err)
	}
	return sb.String()
}

// TestMappedReadsAsStreamed: reading a volume through its mapping, with or
// without the checker running ahead, gives the same records, warnings and
// errors as reading it through a buffer, on every QA archive, good and bad.
func TestMappedReadsAsStreamed(t *testing.T) {
	needQA(t)
	bases := qaBases(t)
	bad, _ := filepath.Glob("/var/lib/pcp/testsuite/badarchives/*")
	bases = append(bases, bad...)
	small := []RecordsOption{BufferSize(16 << 10)} // windows and reports of a few pages
	for _, base := range bases {
		if !hasPlainVolume(base) {
			continue
		}
		start := time.Now()
		want := readTranscript(base, Streamed())
		for name, opts := range map[string][]RecordsOption{
			"mapped":                 {Mapped()},
			"mapped, no check ahead": {Mapped(), NoCheckAhead()},
			"mapped, small window":   append(small, Mapped()),
		} {
			if got := readTranscript(base, opts...); got != want {
				t.Errorf("%s: %s read differs from streamed:\n got %s\nwant %s", base, name, clip(got), clip(want))
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Logf("%s: %v", base, d)
		}
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// hasPlainVolume reports whether base has an uncompressed data volume
// (the only kind that is mapped), or cannot be opened (the error is then
// compared).
func hasPlainVolume(base string) bool {
	a, err := Open(base)
	if err != nil {
		return true
	}
	for _, v := range a.vols {
		if _, suf := compress.SplitSuffix(v.path); suf == "" {
			return true
		}
	}
	return false
}

// TestMappedDamageMidVolume: a result that frames but fails the structural
// check, deep in a mapped volume, is reported the same way (file, offset,
// what is wrong) whether the checker ran ahead of the reader or not.
func TestMappedDamageMidVolume(t *testing.T) {
	needQA(t)
	// Walk to a record about two thirds in and give it an impossible
	// number of value sets.
	base := copyQA(t, "20180127.08.40", func(b []byte) {
		off := LabelSize(2)
		for off < len(b)*2/3 {
			off += int(binary.BigEndian.Uint32(b[off:]))
		}
		binary.BigEndian.PutUint32(b[off+DataHeaderSize(2):], 1<<30)
		t.Logf("damaged the record at offset %d", off)
	})
	want := readTranscript(base, Streamed())
	if !strings.Contains(want, "error: ") {
		t.Fatalf("the damage was not found:\n%s", clip(want[max(len(want)-2000, 0):]))
	}
	for name, opts := range map[string][]RecordsOption{
		"mapped":                 {Mapped()},
		"mapped, no check ahead": {Mapped(), NoCheckAhead()},
		"mapped, small window":   {Mapped(), BufferSize(16 << 10)},
	} {
		if got := readTranscript(base, opts...); got != want {
			t.Errorf("%s read differs from streamed:\n got ...%s\nwant ...%s", name, got[max(len(got)-500, 0):], want[max(len(want)-500, 0):])
		}
	}
}

// TestMappedVolumeCutShort: a volume truncated by another process while it
// is read through its mapping faults when the reader reaches the lost
// pages. With faults made panics (as the tools do, toolio.GuardFaults),
// the reader's goroutine gets a panic that says so, and the checker
// running ahead (or, when the consumer checks, the prefetcher) does not
// bring the process down.
func TestMappedVolumeCutShort(t *testing.T) {
	needQA(t)
	for _, deferred := range []bool{false, true} {
		base := copyQA(t, "20180127.08.40", nil)
		a, err := Open(base)
		if err != nil {
			t.Fatal(err)
		}
		it := a.Records(DataOnly(), Mapped())
		if deferred && !it.(stream.CheckDeferrer).DeferChecks() {
			t.Fatal("DeferChecks refused")
		}
		for i := 0; i < 3 && it.Next(); i++ {
		}
		if deferred != (it.(*archiveIter).dr.pf != nil) {
			t.Fatalf("deferred %v, but prefetching %v", deferred, !deferred)
		}
		if err := os.Truncate(base+".0", 8192); err != nil {
			t.Fatal(err)
		}
		func() {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			fault := func() (r any) {
				defer func() { r = recover() }()
				for it.Next() {
				}
				return nil
			}()
			if _, ok := fault.(interface{ Addr() uintptr }); !ok {
				t.Fatalf("deferred %v: reading past the cut: %v (err %v), want a memory fault", deferred, fault, it.Err())
			}
		}()
		it.Close()
	}
}

// copyQA copies the single-volume QA archive name into a temporary
// directory, passing its volume's bytes through change first (when not
// nil), and returns the copy's base name.
func copyQA(t *testing.T, name string, change func([]byte)) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "a")
	for _, suf := range []string{".0", ".meta", ".index"} {
		b, err := os.ReadFile(filepath.Join(QADir, name) + suf)
		if err != nil {
			t.Fatal(err)
		}
		if suf == ".0" && change != nil {
			change(b)
		}
		if err := os.WriteFile(base+suf, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// TestReadBuffer: with ReadBuffer, the volumes are read through the
// caller's buffer (the results' bodies lie in it, volume after volume),
// and the records are those read without it.
func TestReadBuffer(t *testing.T) {
	needQA(t)
	for _, name := range []string{"ok-mv-bar", "20180127.08.40"} {
		base := filepath.Join(QADir, name)
		buf := make([]byte, 16<<10)
		want := readTranscript(base, BufferSize(len(buf)))
		if got := readTranscript(base, BufferSize(len(buf)), ReadBuffer(buf)); got != want {
			t.Fatalf("%s: read through a lent buffer:\n%s\nwant\n%s", name, clip(got), clip(want))
		}
		a, err := Open(base)
		if err != nil {
			t.Fatal(err)
		}
		it := a.Records(DataOnly(), BufferSize(len(buf)), ReadBuffer(buf))
		vol, in := int32(0), map[int32]int{} // results in buf, by volume
		for it.Next() {
			switch r := it.At().(type) {
			case *stream.Label:
				vol = r.Vol
			case *stream.Result:
				if len(r.Body) > 0 && len(r.Body) < len(buf)/2 {
					p := uintptr(unsafe.Pointer(&r.Body[0]))
					if b := uintptr(unsafe.Pointer(&buf[0])); p >= b && p < b+uintptr(len(buf)) {
						in[vol]++
					}
				}
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		if want := len(a.vols); len(in) != want {
			t.Errorf("%s: results read through the lent buffer in %d of %d volumes (%v)", name, len(in), want, in)
		}
		t.Logf("%s: results in the lent buffer by volume: %v", name, in)
	}
}
