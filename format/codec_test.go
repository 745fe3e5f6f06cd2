package format

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// QADir is where pcp-testsuite installs PCP's QA archives.
const QADir = "/var/lib/pcp/testsuite/archives"

// needQA skips a test when PCP's QA archives are missing, except in CI,
// where their absence is a set-up failure.
func needQA(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(QADir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PCP QA archives missing in CI: %v", err)
		}
		t.Skipf("PCP QA archives not installed: %v", err)
	}
}

// frames splits a file body after its label into records, stopping at the
// first damaged one.
func frames(b []byte, from int) (recs [][]byte, offs []int) {
	for off := from; off+4 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n < 12 || off+n > len(b) || binary.BigEndian.Uint32(b[off+n-4:]) != uint32(n) {
			break
		}
		recs = append(recs, b[off:off+n])
		offs = append(offs, off)
		off += n
	}
	return
}

func TestCodecRoundTripQA(t *testing.T) {
	needQA(t)
	metas, _ := filepath.Glob(filepath.Join(QADir, "*.meta"))
	if len(metas) < 100 {
		t.Fatalf("only %d .meta files in %s", len(metas), QADir)
	}
	var nmeta, ndata int
	for _, m := range metas {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		l, err := DecodeLabel(b)
		if err != nil {
			continue // damaged on purpose (badlabel-*, etc.)
		}
		lab := AppendLabel(nil, &l, l.Version, l.Vol)
		if l.Version == 3 && !bytes.Equal(lab, b[:len(lab)]) {
			t.Errorf("%s: label does not round-trip", m)
		}
		recs, offs := frames(b, LabelSize(l.Version))
		for i, rec := range recs {
			r, err := DecodeMeta(rec)
			if err != nil {
				t.Logf("%v", AtFile(err, m, int64(offs[i])))
				continue
			}
			if d, ok := r.(*stream.InDom); ok && d.Encoding == stream.InDomV2 && l.Version == 3 {
				continue
			}
			out, err := AppendMeta(nil, r, l.Version)
			if err != nil {
				t.Errorf("%s: offset %d: encode: %v", m, offs[i], err)
				continue
			}
			if !bytes.Equal(out, rec) {
				t.Errorf("%s: offset %d: %s record does not round-trip\n got %x\nwant %x", m, offs[i], r.Kind(), out, rec)
			}
			nmeta++
		}
		base := strings.TrimSuffix(m, ".meta")
		d, err := os.ReadFile(base + ".0")
		if err != nil {
			continue
		}
		recs, offs = frames(d, LabelSize(l.Version))
		var res stream.Result
		for i, rec := range recs {
			mark, err := DecodeData(rec, l.Version, &res)
			if err != nil {
				t.Logf("%v", AtFile(err, base+".0", int64(offs[i])))
				continue
			}
			var out []byte
			if mark {
				out = AppendMark(nil, res.T, l.Version)
			} else {
				if err := res.Validate(); err != nil {
					t.Logf("%v", AtFile(err, base+".0", int64(offs[i])))
					continue
				}
				out, err = AppendResult(nil, &res, l.Version)
				if err != nil {
					t.Fatal(err)
				}
				// Through the other version and back must also be lossless.
				other := 5 - l.Version
				mid, err := AppendResult(nil, &res, other)
				if err != nil {
					t.Fatal(err)
				}
				var r2 stream.Result
				if _, err := DecodeData(mid, other, &r2); err != nil {
					t.Fatal(err)
				}
				r2.T = res.T // v2 keeps only microseconds
				back, _ := AppendResult(nil, &r2, l.Version)
				if !bytes.Equal(back, rec) {
					t.Errorf("%s: offset %d: v%d->v%d->v%d changes the record", base, offs[i], l.Version, other, l.Version)
				}
			}
			if !bytes.Equal(out, rec) {
				t.Errorf("%s.0: offset %d: data record does not round-trip", base, offs[i])
			}
			ndata++
		}
	}
	t.Logf("%d metadata and %d data records round-tripped", nmeta, ndata)
}
