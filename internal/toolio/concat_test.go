package toolio

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	qafix "github.com/pcptools/pcptools/internal/qa"
	"github.com/pcptools/pcptools/pipe"
	"github.com/pcptools/pcptools/stream"
)

// TestConcatMetadata: the METADATA frame of several archives joined
// (pcpcat A B | ...) holds exactly the metadata records the join hands
// out, in their order and with their times, for QA archives of one host
// that follow one another (among them instance domains restated after
// an archive's first data record, which the join keeps); and there is
// none for archives the join refuses.
func TestConcatMetadata(t *testing.T) {
	qa := qafix.Need(t)
	multi := qafix.Multi(t)
	for _, c := range []struct {
		names []string
		ok    bool
	}{
		{multi, true},
		{[]string{filepath.Join(qa, "20150105.17.57-00"), filepath.Join(qa, "20150105.17.57")}, true},
		{[]string{filepath.Join(qa, "20180127.08.40"), filepath.Join(qa, "20180415.09.16")}, true},
		{[]string{filepath.Join(qa, "20180127.08.40"), filepath.Join(qa, "20150105.17.57")}, false}, // two hosts
	} {
		in, err := OpenInputs(c.names, nil, func(error) {})
		if err != nil {
			t.Fatal(err)
		}
		ms, isSource := in.Iter.(pipe.MetadataSource)
		if !isSource {
			t.Fatal("the join of several archives is no MetadataSource")
		}
		frame, ok := ms.Metadata()
		var got []stream.Record
		for in.Iter.Next() {
			if _, isLabel := in.Iter.At().(*stream.Label); !isLabel && in.Iter.At().Kind() != stream.KindResult && in.Iter.At().Kind() != stream.KindMark {
				got = append(got, stream.CloneRecord(in.Iter.At()))
			}
		}
		joinErr := in.Iter.Err()
		in.Close()
		if ok != c.ok || (joinErr == nil) != c.ok {
			t.Fatalf("%v: frame %v, join error %v; want frame %v", c.names, ok, joinErr, c.ok)
		}
		if !ok {
			continue
		}
		if len(got) != len(frame) {
			t.Errorf("%v: the join hands out %d metadata records, the frame holds %d", c.names, len(got), len(frame))
		}
		for i := range min(len(got), len(frame)) {
			if !reflect.DeepEqual(got[i], frame[i]) {
				t.Fatalf("%v: metadata record %d: the join hands out %s, the frame holds %s", c.names, i, show(got[i]), show(frame[i]))
			}
		}
		t.Logf("%d archives: %d metadata records", len(c.names), len(frame))
	}
}

func show(r stream.Record) string { return fmt.Sprintf("%s at %s %+v", r.Kind(), r.Time(), r) }

// TestDataAt: an archive's first data record goes where its reader puts
// it among the metadata: after descriptors and texts as they come, and
// before the first instance domain or label set stamped after it (one
// stamped at the same time goes first); at the end when every record is
// stamped before it; nowhere when there is no data.
func TestDataAt(t *testing.T) {
	at := func(s int64) stream.Timestamp { return stream.Timestamp{Sec: s} }
	meta := []stream.Record{
		&stream.Label{Start: at(1)},
		&stream.Desc{PMID: 1},
		&stream.InDom{T: at(1), InDom: 7},
		&stream.InDom{T: at(3), InDom: 8},
		&stream.Text{Ident: 1, Text: "x"},
		&stream.LabelSet{T: at(5), Type: stream.LabelContext},
		&stream.InDom{T: at(2), InDom: 9},
	}
	for _, c := range []struct {
		first stream.Record
		want  string
	}{
		{&stream.Mark{T: at(3)}, "[label desc indom@1 indom@3 text mark@3 labelset@5 indom@2]"},
		{&stream.Mark{T: at(0)}, "[label desc mark@0 indom@1 indom@3 text labelset@5 indom@2]"},
		{&stream.Mark{T: at(9)}, "[label desc indom@1 indom@3 text labelset@5 indom@2 mark@9]"},
		{nil, "[label desc indom@1 indom@3 text labelset@5 indom@2]"},
	} {
		d := &dataAt{Iterator: stream.FromSlice(meta), first: c.first}
		var got []string
		for d.Next() {
			r := d.At()
			switch r.(type) {
			case *stream.InDom, *stream.LabelSet, *stream.Mark:
				got = append(got, fmt.Sprintf("%s@%d", r.Kind(), r.Time().Sec))
			default:
				got = append(got, r.Kind().String())
			}
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("first data %v:\n got %v\nwant %s", c.first, got, c.want)
		}
	}
}
