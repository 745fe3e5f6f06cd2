package logimport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

// jsonRecords reads JSON lines with or without the fast path: each record
// as its text (results as their bytes), then the error.
func jsonRecords(in string, fast bool) []string {
	r := NewJSONReader(strings.NewReader(in), "in")
	r.noFast = !fast
	var out []string
	for r.Next() {
		switch rec := r.At().(type) {
		case *stream.Result:
			out = append(out, fmt.Sprintf("result %v %x", rec.T, rec.Body))
		default:
			out = append(out, fmt.Sprintf("%T %+v", rec, rec))
		}
	}
	return append(out, fmt.Sprint(r.Err()))
}

const fastLabel = `{"kind":"label","epoch":1.0,"version":2,"hostname":"h","timezone":"UTC","pid":1,"features":0}` + "\n"

var fastSeeds = []string{
	`{"kind":"result","time":"2024-01-01T00:19:20.003604Z","epoch":1704068360.003604000,"metrics":[{"pmid":"245.0.0","name":"a.b","type":"U64","values":[{"inst":0,"instance":"cpu0","value":11349687102},{"inst":1,"instance":"cpu1","value":2}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":7}]},{"pmid":"1.2.4","type":"32","values":[{"value":-7}]}]}`,
	`{"kind":"result","epoch":2.5,"metrics":[{"pmid":"1.2.3","type":"DOUBLE","values":[{"inst":3,"value":1.5e300},{"inst":4,"value":"NaN"},{"inst":5,"value":"-Infinity"}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"FLOAT","values":[{"value":0.1}]},{"pmid":"1.2.5","type":"STRING","values":[{"value":"hello"}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","error":"no values","code":-12345}]}`,
	`{"kind":"result","epoch":2,"metrics":[]}`,
	` { "metrics" : [ { "values" : [ { "value" : 1 , "inst" : 2 } ] , "type" : "64" , "pmid" : "511.4095.1023" } ] , "epoch" : 3 , "kind" : "result" } `,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":4294967296}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"u32","values":[{"value":1}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":1,"value":2}]}]}`,
	`{"Kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":1}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":01}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"STRING","values":[{"value":"a\"b"}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","values":[{"value":1}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":null}]} trailing`,
	`{"kind":"result","epoch":-2,"metrics":[{"pmid":"512.0.0","type":"U32","values":[{"inst":-1,"value":1}]}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"AGGREGATE","values":[{"value":{"hex":"0a0b"}}]}]}`,
	`{"kind":"mark","epoch":2}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"U32","values":[{"value":1}],"code":-12345}]}`,
	`{"kind":"result","epoch":2,"metrics":[{"pmid":"1.2.3","type":"EVENT","values":[]}]}`,
}

// TestJSONFastPath: the fast path reads every seed line as encoding/json
// does (or leaves it to it), and takes the lines pcpcat writes.
func TestJSONFastPath(t *testing.T) {
	for _, line := range fastSeeds {
		in := fastLabel + line + "\n"
		slow, fast := jsonRecords(in, false), jsonRecords(in, true)
		if strings.Join(slow, "\n") != strings.Join(fast, "\n") {
			t.Errorf("%s:\nslow: %q\nfast: %q", line, slow, fast)
		}
	}
	r := NewJSONReader(strings.NewReader(fastLabel), "in")
	r.Next()
	for _, line := range fastSeeds[:7] {
		if _, ok := r.fastResult([]byte(line)); !ok {
			t.Errorf("the fast path left %s to encoding/json", line)
		}
	}
}

// FuzzJSONFast: whatever the line, the fast path gives what the slow one
// gives.
func FuzzJSONFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") || !bytes.Contains([]byte(line), []byte("result")) {
			return
		}
		in := fastLabel + line + "\n"
		slow, fast := jsonRecords(in, false), jsonRecords(in, true)
		if strings.Join(slow, "\n") != strings.Join(fast, "\n") {
			t.Errorf("%s:\nslow: %q\nfast: %q", line, slow, fast)
		}
	})
}
