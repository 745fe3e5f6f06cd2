package pipe

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// twoStreams returns two streams of one host, the second starting after
// the first ends, each with the same descriptor.
func twoStreams(t *testing.T, hostB string) (a, b []byte) {
	p := stream.NewPMID(60, 0, 1)
	body := resultBody(3, tset{pmid: p, valfmt: stream.ValInsitu, vals: []tval{{inst: stream.InstNull, word: 7}}})
	desc := func(at stream.Timestamp) *stream.Desc {
		return &stream.Desc{T: at, PMID: p, Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemInstant, Names: []string{"sample.a"}}
	}
	t0, t1, t2 := ts(1700000000, 0), ts(1700000010, 0), ts(1700000100, 0)
	a = encode(t, []stream.Record{
		&stream.Label{Version: 3, Start: t0, Vol: -1, Hostname: "host-a", Timezone: "UTC"},
		desc(t0), &stream.Result{T: t0, Version: 3, Body: body}, &stream.Result{T: t1, Version: 3, Body: body},
	})
	b = encode(t, []stream.Record{
		&stream.Label{Version: 3, Start: t2, Vol: -1, Hostname: hostB, Timezone: "UTC"},
		desc(t2), &stream.Result{T: t2, Version: 3, Body: body},
	})
	return a, b
}

func kinds(t *testing.T, it stream.Iterator) (string, error) {
	t.Helper()
	var ks []string
	for it.Next() {
		ks = append(ks, it.At().Kind().String())
	}
	return strings.Join(ks, " "), it.Err()
}

// Issue 15: `(pcpcat A; pcpcat B) | pcpcat -m` printed A and dropped B
// with exit status 0. Streams that follow one another are joined as
// archives named together are: a <mark> between, metadata not repeated.
func TestConcatenatedStreamsJoined(t *testing.T) {
	a, b := twoStreams(t, "host-a")
	got, err := kinds(t, Concatenated(bytes.NewReader(cat2(a, b)), "standard input"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		stream.KindLabel.String(), stream.KindDesc.String(), stream.KindResult.String(), stream.KindResult.String(),
		stream.KindMark.String(), stream.KindLabel.String(), stream.KindResult.String(),
	}, " ")
	if got != want {
		t.Errorf("joined streams:\n got %s\nwant %s", got, want)
	}
	// One stream alone reads as before.
	got, err = kinds(t, Concatenated(bytes.NewReader(a), "standard input"))
	if err != nil || strings.Count(got, stream.KindResult.String()) != 2 {
		t.Errorf("one stream: %s, %v", got, err)
	}
}

func TestConcatenatedStreamsNeverSilent(t *testing.T) {
	a, b := twoStreams(t, "host-a")
	_, other := twoStreams(t, "host-b")
	for _, c := range []struct {
		name  string
		input []byte
		want  string
		off   int64
	}{
		{"bytes after END", cat2(a, []byte("garbage\n")), `"garbage\n" follows the END frame`, int64(len(a))},
		{"a second stream cut short", cat2(a, b[:len(b)-10]), "stream 2", -1},
		{"a second header cut short", cat2(a, b[:5]), "stream 2", -1},
		{"another host", cat2(a, other), `host "host-b" differs`, -1},
		{"out of order", cat2(b, a), "overlap", -1},
	} {
		_, err := kinds(t, Concatenated(bytes.NewReader(c.input), "standard input"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
			continue
		}
		var fe *format.FormatError
		if c.off >= 0 && (!errors.As(err, &fe) || fe.Offset != c.off) {
			t.Errorf("%s: error %v, want a FormatError at offset %d", c.name, err, c.off)
		}
	}
}
