// Package streamtest writes small record streams for tests: a label and
// metrics whose values can be made unreadable, as a flipped bit in a
// result or a descriptor makes them (a 64-bit value block where the
// metric's type is 32-bit, a value in place where it is a DOUBLE:
// PM_ERR_CONV).
package streamtest

import (
	"bytes"
	"io"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// T0 is the label's start and the first result's time; result i is i
// seconds later.
var T0 = stream.Timestamp{Sec: 1700000000}

// Metric is a metric without instances, of Type (U32 when 0, or DOUBLE);
// Bad says which results hold its value in the other's encoding (nil:
// none): a U32's in a 64-bit block, a DOUBLE's in place. Units are its
// descriptor's (none when zero).
type Metric struct {
	Name  string
	Type  stream.Type
	Units stream.Units
	Bad   func(i int) bool
}

// Write writes to w the stream of a label (host "bad", UTC), the metrics'
// descriptors (PMIDs 60.0.1, 60.0.2, ... in order) and n results, result
// i holding each metric's value i. It returns the label and the
// descriptors.
func Write(w io.Writer, n int, ms ...Metric) (*stream.Label, []stream.Record, error) {
	lab := &stream.Label{Version: 2, Hostname: "bad", Timezone: "UTC", Start: T0}
	pw := pipe.NewWriter(w)
	descs := make([]stream.Record, len(ms))
	for k, m := range ms {
		if ms[k].Type == 0 {
			ms[k].Type = stream.TypeU32
		}
		descs[k] = &stream.Desc{T: T0, PMID: stream.NewPMID(60, 0, uint32(k+1)), Type: ms[k].Type,
			InDom: stream.InDomNull, Sem: stream.SemInstant, Units: m.Units, Names: []string{m.Name}}
	}
	for _, r := range append([]stream.Record{lab}, descs...) {
		if err := pw.Write(r); err != nil {
			return nil, nil, err
		}
	}
	var rb stream.ResultBuilder
	for i := range n {
		rb.Reset()
		for k, m := range ms {
			typ := m.Type
			if m.Bad != nil && m.Bad(i) {
				typ = stream.TypeU64
				if m.Type == stream.TypeDouble {
					typ = stream.TypeU32
				}
			}
			rb.Add(stream.NewPMID(60, 0, uint32(k+1)), typ, stream.Val{Inst: stream.InstNull, U: uint64(i), F: float64(i)})
		}
		var r stream.Result
		if err := rb.Build(stream.Timestamp{Sec: T0.Sec + int64(i)}, &r); err != nil {
			return nil, nil, err
		}
		if err := pw.Write(&r); err != nil {
			return nil, nil, err
		}
	}
	return lab, descs, pw.Close()
}

// Stream writes the stream Write writes (n results of ms) into a buffer
// and returns it with the stream's metadata (label and descriptors), as a
// METADATA frame or an archive's .meta would give it up front.
func Stream(t testing.TB, n int, ms ...Metric) (*bytes.Buffer, *format.Metadata) {
	t.Helper()
	var buf bytes.Buffer
	lab, descs, err := Write(&buf, n, ms...)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := format.MetadataOf(*lab, descs)
	if err != nil {
		t.Fatal(err)
	}
	return &buf, meta
}
