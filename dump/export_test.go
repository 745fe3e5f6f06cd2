package dump

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// TestExportQA checks on every QA archive that each JSON line is a valid
// object of a known kind, that the CSV parses, and that both carry the
// same values as the pmdumplog view.
func TestExportQA(t *testing.T) {
	var bases []string
	for _, b := range qaBases(t) {
		// The heavy and the big compressed archives cost minutes of
		// decompression for three full passes; the compatibility test
		// covers their reading.
		if !heavyArchives[filepath.Base(b)] && !bigCompressed(b) || os.Getenv("DUMPTEST_FULL") != "" {
			bases = append(bases, b)
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, b := range bases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			checkExport(t, b)
		}()
	}
	wg.Wait()
}

func checkExport(t *testing.T, base string) {
	name := filepath.Base(base)
	a, err := format.Open(base)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	opts := Options{Location: time.UTC}
	var js, cs, txt bytes.Buffer
	jerr := JSON(&js, a, opts)
	cerr := CSV(&cs, a, opts)
	derr := Dump(&txt, a, opts)
	if (jerr == nil) != (derr == nil) || (cerr == nil) != (derr == nil) {
		t.Errorf("%s: errors differ: json %v, csv %v, dump %v", name, jerr, cerr, derr)
		return
	}
	// Results in the text view: their first line ends " N metric(s)".
	sc := bufio.NewScanner(&txt)
	sc.Buffer(nil, 1<<24)
	results := 0
	for sc.Scan() {
		l := sc.Text()
		if len(l) > 0 && l[0] >= '0' && l[0] <= '9' && (strings.HasSuffix(l, " metric") || strings.HasSuffix(l, " metrics")) {
			results++
		}
	}
	kinds := map[string]int{}
	jsonValues := 0
	dec := bufio.NewScanner(&js)
	dec.Buffer(nil, 1<<26)
	line := 0
	for dec.Scan() {
		line++
		var obj map[string]any
		if err := json.Unmarshal(dec.Bytes(), &obj); err != nil {
			t.Errorf("%s: JSON line %d: %v: %.200s", name, line, err, dec.Text())
			return
		}
		k, _ := obj["kind"].(string)
		kinds[k]++
		if _, err := time.Parse(time.RFC3339Nano, obj["time"].(string)); err != nil {
			t.Errorf("%s: JSON line %d: time: %v", name, line, err)
		}
		if k == "result" {
			for _, m := range obj["metrics"].([]any) {
				if vs, ok := m.(map[string]any)["values"].([]any); ok {
					jsonValues += len(vs)
				}
			}
		}
	}
	for k := range kinds {
		switch k {
		case "label", "desc", "indom", "labelset", "text", "result", "mark":
		default:
			t.Errorf("%s: unknown kind %q", name, k)
		}
	}
	if kinds["label"] != 1 {
		t.Errorf("%s: %d labels", name, kinds["label"])
	}
	if derr == nil && kinds["result"] != results {
		t.Errorf("%s: %d JSON results, %d in the text view", name, kinds["result"], results)
	}
	r := csv.NewReader(&cs)
	r.FieldsPerRecord = 4
	rows := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Errorf("%s: CSV: %v", name, err)
			return
		}
		if rows == 0 && strings.Join(rec, ",") != "time,metric,instance,value" {
			t.Errorf("%s: CSV header %q", name, rec)
		}
		rows++
	}
	if derr == nil && rows-1 != jsonValues {
		t.Errorf("%s: %d CSV rows, %d JSON values", name, rows-1, jsonValues)
	}
}

// TestExportGolden pins the JSON and CSV of a few records by hand.
func TestExportGolden(t *testing.T) {
	bases := qaBases(t)
	var base string
	for _, b := range bases {
		if filepath.Base(b) == "20041125" {
			base = b
		}
	}
	if base == "" {
		t.Skip("20041125 not among the QA archives")
	}
	a, err := format.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Location: time.UTC, Metrics: []string{"hinv.ncpu", "kernel.all.load", "pmcd.pmlogger.host"}, Finish: "@23:11:07"}
	var js, cs bytes.Buffer
	if err := JSON(&js, a, opts); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, l := range strings.Split(js.String(), "\n") {
		if strings.Contains(l, `"kind":"result"`) {
			results = append(results, l)
		}
	}
	want := []string{
		`{"kind":"result","time":"2004-11-24T23:10:06.248424Z","epoch":1101337806.248424000,"metrics":[{"pmid":"2.3.3","name":"pmcd.pmlogger.host","type":"STRING","values":[{"inst":13014,"instance":"13014","value":"mortenb.oslo.sgi.com"}]}]}`,
	}
	if len(results) < 1 || results[0] != want[0] {
		t.Errorf("first JSON result:\n got %s\nwant %s", first(results), want[0])
	}
	if err := CSV(&cs, a, opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(cs.String(), "\n")
	if lines[0] != "time,metric,instance,value" || lines[1] != "2004-11-24T23:10:06.248424Z,pmcd.pmlogger.host,13014,mortenb.oslo.sgi.com" {
		t.Errorf("CSV starts:\n%s", strings.Join(lines[:min(4, len(lines))], "\n"))
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return s[0]
}

// TestJSONString checks the JSON string encoder against encoding/json.
func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "ctl\x01\x1f\x7f", "tab\tnl\n", "utf8 é ✓", "bad \xff\xfe utf8"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%q: %s does not parse: %v", s, got, err)
			continue
		}
		// Each invalid byte becomes one U+FFFD.
		want := strings.ReplaceAll(strings.ReplaceAll(s, "\xff", "\ufffd"), "\xfe", "\ufffd")
		if back != want {
			t.Errorf("%q: round trip %q", s, back)
		}
	}
}

// TestAppendEpoch checks negative times with fractions.
func TestAppendEpoch(t *testing.T) {
	for _, c := range []struct {
		ts   stream.Timestamp
		want string
	}{
		{stream.Timestamp{Sec: 1, Nsec: 5}, "1.000000005"},
		{stream.Timestamp{Sec: -1, Nsec: 500000000}, "-0.500000000"},
		{stream.Timestamp{Sec: -2, Nsec: 0}, "-2.000000000"},
	} {
		if got := string(appendEpoch(nil, c.ts)); got != c.want {
			t.Errorf("%v: got %s want %s", c.ts, got, c.want)
		}
	}
}
