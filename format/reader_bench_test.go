package format

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// rdBenchArchive is the largest plain QA archive: one 7 MB volume of 845
// data records (725 results, 120 marks) and a 2 MB .meta.
const rdBenchArchive = "20180102"

// rdDataOnly makes a copy of a QA archive whose .meta holds only the
// label, so that a read of it exercises the data path alone.
func rdDataOnly(tb testing.TB, name string) (base string, dataBytes int64) {
	tb.Helper()
	src := filepath.Join(QADir, name)
	meta, err := os.ReadFile(src + ".meta")
	if err != nil {
		tb.Skip(err)
	}
	l, err := DecodeLabel(meta)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	base = filepath.Join(dir, name)
	if err := os.WriteFile(base+".meta", meta[:LabelSize(l.Version)], 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(src+".0", base+".0"); err != nil {
		tb.Fatal(err)
	}
	st, err := os.Stat(src + ".0")
	if err != nil {
		tb.Fatal(err)
	}
	return base, st.Size()
}

// BenchmarkRecords measures the data path: one op is one data record
// (framed, header==trailer checked, decoded, validated), read from a
// 1 MiB buffer. The iterator is reopened when the archive ends; that costs
// a few allocations per pass of 845 records, so allocs/op rounds to 0. The
// exact figure is TestRecordsNoAllocs's.
func BenchmarkRecords(b *testing.B) {
	needQA(b)
	base, size := rdDataOnly(b, rdBenchArchive)
	a, err := Open(base)
	if err != nil {
		b.Fatal(err)
	}
	const records = 845
	b.SetBytes(size / records)
	b.ReportAllocs()
	it := a.Records()
	n := 0
	for b.Loop() {
		for {
			if it.Next() {
				if k := it.At().Kind(); k == stream.KindResult || k == stream.KindMark {
					n++
					break
				}
				continue
			}
			if err := it.Err(); err != nil {
				b.Fatal(err)
			}
			it.Close()
			it = a.Records()
		}
	}
	it.Close()
	if n == 0 {
		b.Fatal("no records")
	}
}

// BenchmarkRecordsArchive reads the whole archive, .meta included (3371
// metadata records, each decoded into fresh memory), per op; the bytes are
// those of both files.
func BenchmarkRecordsArchive(b *testing.B) {
	needQA(b)
	base := filepath.Join(QADir, rdBenchArchive)
	var size int64
	for _, s := range []string{".meta", ".0"} {
		st, err := os.Stat(base + s)
		if err != nil {
			b.Skip(err)
		}
		size += st.Size()
	}
	a, err := Open(base)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		it := a.Records()
		for it.Next() {
		}
		if err := it.Err(); err != nil {
			b.Fatal(err)
		}
		it.Close()
	}
}

// TestRecordsNoAllocs: once a volume is open, reading a data record
// allocates nothing.
func TestRecordsNoAllocs(t *testing.T) {
	needQA(t)
	base, _ := rdDataOnly(t, rdBenchArchive)
	a, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	it := a.Records()
	defer it.Close()
	// The label, then the first record (opens the volume).
	for range 2 {
		if !it.Next() {
			t.Fatal(it.Err())
		}
	}
	allocs := testing.AllocsPerRun(800, func() {
		if !it.Next() {
			t.Fatal("archive ended early", it.Err())
		}
		if k := it.At().Kind(); k != stream.KindResult && k != stream.KindMark {
			t.Fatalf("a %s record", k)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per data record", allocs)
	}
}
