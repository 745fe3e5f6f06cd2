package format

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pcptools/pcptools/internal/fuzzdir"
	"github.com/pcptools/pcptools/stream"
)

// rdFuzzSeeds returns (meta, volume 0, index) of small plain QA archives,
// good and bad.
func rdFuzzSeeds() [][3][]byte {
	var out [][3][]byte
	add := func(dir, name string) {
		base := filepath.Join(dir, name)
		m, err1 := os.ReadFile(base + ".meta")
		d, err2 := os.ReadFile(base + ".0")
		if err1 != nil || err2 != nil || len(m)+len(d) > 64<<10 {
			return
		}
		x, _ := os.ReadFile(base + ".index")
		out = append(out, [3][]byte{m, d, x})
	}
	for _, n := range []string{"ok-foo", "omnibus_v3", "omnibus-nomark_v3", "mark-bug", "ok-interp", "rattle", "sample-secs", "interpmark", "eventrec"} {
		add(QADir, n)
	}
	for _, n := range []string{"badlen-1", "badmeta-3", "badmeta-4", "badmeta-7", "badti-2", "ok-truncbin"} {
		add(BadDir, n)
	}
	return out
}

// FuzzReadArchive writes the three inputs as x.meta, x.0 and x.index and
// does everything a reader does with them. Nothing may panic or hang.
func FuzzReadArchive(f *testing.F) {
	for _, s := range rdFuzzSeeds() {
		f.Add(s[0], s[1], s[2])
	}
	base := filepath.Join(fuzzdir.Dir(f), "x")
	f.Fuzz(func(t *testing.T, meta, vol, index []byte) {
		if len(meta)+len(vol)+len(index) > 1<<20 {
			t.Skip()
		}
		for s, b := range map[string][]byte{".meta": meta, ".0": vol, ".index": index} {
			if err := os.WriteFile(base+s, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a, err := Open(base, WithWarn(func(error) {}))
		if err != nil {
			return
		}
		it := a.Records()
		var last stream.Timestamp
		n := 0
		for it.Next() {
			r := it.At()
			if r == nil {
				t.Fatal("nil record")
			}
			if res, ok := r.(*stream.Result); ok {
				// A result that passed the reader's checks can be
				// walked and re-encoded.
				vs := res.VSets()
				for vs.Next() {
					v := vs.VSet()
					for i := range v.Values() {
						v.Value(i)
					}
				}
				if vs.Err() != nil {
					t.Fatalf("result accepted by the reader fails to walk: %v", vs.Err())
				}
			}
			last = r.Time()
			n++
		}
		if n == 0 && it.Err() == nil {
			t.Fatal("no label and no error")
		}
		it.Close()
		a.Index()
		a.Meta()
		mid := a.Label().Start
		mid.Sec += (last.Sec - mid.Sec) / 2
		it = a.Records(From(mid))
		for it.Next() {
		}
		it.Close()
	})
}

// rdMetaVersion is the archive version a metadata record's type belongs
// to (descs and texts belong to both).
func rdMetaVersion(rec []byte) int {
	if len(rec) >= 8 {
		switch binary.BigEndian.Uint32(rec[4:]) {
		case TypeInDomV2, TypeLabelV2:
			return 2
		}
	}
	return 3
}

// rdStampOK reports whether t is a timestamp the codec can round-trip: a
// v2 timestamp's microseconds are multiplied by 1000 in 32 bits, so an
// impossible microsecond field (>= 2^31/1000) decodes to a wrapped value
// that does not encode back to the same bytes.
func rdStampOK(t stream.Timestamp, version int) bool {
	return t.Nsec >= 0 && t.Nsec < 1e9 && (version == 3 || t.Nsec%1000 == 0)
}

// FuzzDecodeMeta: decoding never panics, and what decodes re-encodes to
// something that decodes to the same record.
func FuzzDecodeMeta(f *testing.F) {
	for _, s := range rdFuzzSeeds() {
		m := s[0]
		l, err := DecodeLabel(m)
		if err != nil {
			continue
		}
		recs, _ := frames(m, LabelSize(l.Version))
		for _, r := range recs {
			f.Add(r)
		}
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		r, err := DecodeMeta(rec)
		if err != nil {
			return
		}
		v := rdMetaVersion(rec)
		if !rdStampOK(r.Time(), v) {
			return // see rdStampOK
		}
		enc, err := AppendMeta(nil, r, v)
		if err != nil {
			t.Fatalf("decoded %s record does not encode: %v", r.Kind(), err)
		}
		r2, err := DecodeMeta(enc)
		if err != nil {
			t.Fatalf("re-encoded %s record does not decode: %v\n%x", r.Kind(), err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changes the %s record:\n%+v\n%+v", r.Kind(), r, r2)
		}
	})
}

// FuzzDecodeData: decoding and validating never panic; a valid result
// re-encodes to a record that decodes to the same result, in its own
// version and through the other one.
func FuzzDecodeData(f *testing.F) {
	for _, s := range rdFuzzSeeds() {
		l, err := DecodeLabel(s[1])
		if err != nil {
			continue
		}
		recs, _ := frames(s[1], LabelSize(l.Version))
		for _, r := range recs {
			f.Add(r, l.Version == 3)
		}
	}
	f.Fuzz(func(t *testing.T, rec []byte, v3 bool) {
		version := 2
		if v3 {
			version = 3
		}
		var r stream.Result
		mark, err := DecodeData(rec, version, &r)
		if err != nil || !rdStampOK(r.T, version) {
			return
		}
		var enc []byte
		if mark {
			enc = AppendMark(nil, r.T, version)
		} else {
			if r.Validate() != nil {
				return
			}
			if enc, err = AppendResult(nil, &r, version); err != nil {
				t.Fatalf("valid result does not encode: %v", err)
			}
		}
		var r2 stream.Result
		mark2, err := DecodeData(enc, version, &r2)
		if err != nil || mark2 != mark || r2.T != r.T || !bytes.Equal(r2.Body, r.Body) {
			t.Fatalf("round trip: mark %v→%v, %s→%s, err %v\n%x\n%x", mark, mark2, r.T, r2.T, err, r.Body, r2.Body)
		}
		if mark || !r.T.FitsV2() {
			return
		}
		// Through the other version and back.
		other := 5 - version
		mid, err := AppendResult(nil, &r, other)
		if err != nil {
			return // pointers out of the other version's range
		}
		var r3 stream.Result
		if _, err := DecodeData(mid, other, &r3); err != nil {
			t.Fatalf("v%d form does not decode: %v", other, err)
		}
		if err := r3.Validate(); err != nil {
			t.Fatalf("v%d form does not validate: %v", other, err)
		}
		back, err := AppendResult(nil, &r3, version)
		if err != nil || !bytes.Equal(back, enc) {
			t.Fatalf("v%d→v%d→v%d changes the record (%v)", version, other, version, err)
		}
	})
}
