package dump

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/fuzzdir"
	"github.com/pcptools/pcptools/internal/mutate"
	"github.com/pcptools/pcptools/stream"
)

// FuzzLabelSet fuzzes one label set record (its body after the timestamp:
// label type, ident, number of sets, then each set's instance, JSON length,
// JSON, number of labels and labels) in a minimal archive, and runs what
// interprets label sets: the decoder, the -e and -a views, the JSON export
// and the checks. Nothing may panic or hang; name and value offsets that
// point outside the JSON are damage to report, not to follow.
func FuzzLabelSet(f *testing.F) {
	for _, n := range []string{"omnibus_v3", "omnibus_v2"} {
		m, err := os.ReadFile(filepath.Join("/var/lib/pcp/testsuite/archives", n+".meta"))
		if err != nil {
			continue
		}
		for _, r := range mutate.Records(".meta", m) {
			rec := m[r.Off : r.Off+r.Len]
			switch r.Kind {
			case "labelset":
				f.Add(append([]byte(nil), rec[20:len(rec)-4]...), false)
			case "label-v2":
				f.Add(append([]byte(nil), rec[16:len(rec)-4]...), true)
			}
		}
	}
	// one set, one label {"a":1}
	f.Add([]byte("\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff\xff\xff\x00\x00\x00\x07{\"a\":1}\x00\x00\x00\x01\x00\x02\x01\x00\x00\x05\x00\x01"), false)
	base := filepath.Join(fuzzdir.Dir(f), "x")
	f.Fuzz(func(t *testing.T, body []byte, v2 bool) {
		if len(body) > 1<<16 {
			t.Skip()
		}
		version, typ := 3, uint32(format.TypeLabel)
		if v2 {
			version, typ = 2, format.TypeLabelV2
		}
		start := stream.Timestamp{Sec: 1700000000}
		l := stream.Label{Version: version, PID: 1, Start: start, Hostname: "h", Timezone: "UTC"}
		meta := format.AppendLabel(nil, &l, version, -1)
		at := len(meta)
		meta = binary.BigEndian.AppendUint32(meta, 0)
		meta = binary.BigEndian.AppendUint32(meta, typ)
		meta = format.AppendTimestamp(meta, start, version)
		meta = append(meta, body...)
		n := uint32(len(meta) - at + 4)
		binary.BigEndian.PutUint32(meta[at:], n)
		meta = binary.BigEndian.AppendUint32(meta, n)
		vol := format.AppendLabel(nil, &l, version, 0)
		vol = format.AppendMark(vol, stream.Timestamp{Sec: start.Sec + 1}, version)

		format.DecodeMeta(meta[at:])
		for s, b := range map[string][]byte{".meta": meta, ".0": vol} {
			if err := os.WriteFile(base+s, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a, err := format.Open(base, format.WithWarn(func(error) {}))
		if err != nil {
			return
		}
		opts := Options{All: true, LabelSets: true, Location: time.UTC, Warn: io.Discard}
		Dump(io.Discard, a, opts)
		JSON(io.Discard, a, opts)
		format.Check(base, format.CheckOptions{})
	})
}
