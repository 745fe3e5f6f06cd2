package format

import (
	"path/filepath"
	"testing"
)

// TestSpareAfterEnd: End leaves the last compressed volume open for the
// next reader, a reader that stops early passes it on, one that reads it
// through uses it up, and every read gives what a fresh archive gives.
func TestSpareAfterEnd(t *testing.T) {
	dir := t.TempDir()
	recs := withMeta(4, testLabel(3))
	for i := 0; i < 3000; i++ {
		recs = append(recs, testResult(t, 1700000001+int64(i), int64(i), 2, 3, int64(i*i)))
	}
	base := filepath.Join(dir, "x")
	if err := writeAll(t, base, WriterOptions{VolumeRecords: 1000, Xz: true}, recs...); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rdReadAll(fresh, false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	spares := func() int {
		a.spareMu.Lock()
		defer a.spareMu.Unlock()
		if a.spares == nil {
			return 0
		}
		return len(a.spares.files)
	}
	before := spareBytes.Load()
	end, ok, err := a.End()
	if err != nil || !ok || end.Sec != 1700000001+2999 {
		t.Fatalf("End: %v %v %v", end, ok, err)
	}
	if n := spares(); n != 1 {
		t.Fatalf("after End: %d spare files, want 1 (the last volume)", n)
	}
	// A reader that takes only the first records of the last volume
	// passes the file on.
	last := a.vols[len(a.vols)-1].path
	it := a.Records(From(recs[len(recs)-10].Time()), DataOnly())
	if !it.Next() {
		t.Fatalf("no record from the last volume: %v", it.Err())
	}
	it.Close()
	if n := spares(); n != 1 {
		t.Fatalf("after a short read: %d spare files, want 1", n)
	}
	got, err := rdReadAll(a, false)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("read after End: %+v, fresh: %+v", got, want)
	}
	if n := spares(); n != 0 {
		t.Errorf("after a full read: %d spare files (%s), want none", n, last)
	}
	if b := spareBytes.Load(); b != before {
		t.Errorf("spare bytes %d after, %d before", b, before)
	}

	// Warm leaves the first volume open, its start decoding, for the
	// next reader; that reader reads what a fresh archive gives.
	w, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	w.Warm()
	w.spareMu.Lock()
	n := 0
	if w.spares != nil {
		_, ok := w.spares.files[w.vols[0].path]
		n = len(w.spares.files)
		if !ok {
			n = -1
		}
	}
	w.spareMu.Unlock()
	if n != 1 {
		t.Fatalf("after Warm: %d spare files (-1: not the first volume), want 1", n)
	}
	if got, err := rdReadAll(w, false); err != nil || got != want {
		t.Errorf("read after Warm: %+v %v, fresh: %+v", got, err, want)
	}
	if b := spareBytes.Load(); b != before {
		t.Errorf("spare bytes %d after Warm and a read, %d before", b, before)
	}
}
