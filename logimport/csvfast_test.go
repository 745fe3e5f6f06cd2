package logimport

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// csvTrace reads all of in with r's Read and FieldPos: what a sheet import
// sees of it.
func csvTrace(read func() ([]string, error), pos func(int) (int, int)) string {
	var b strings.Builder
	for {
		row, err := read()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			fmt.Fprintf(&b, "error %v\n", err)
			return b.String()
		}
		for i, f := range row {
			l, c := pos(i)
			fmt.Fprintf(&b, "%d:%d %q ", l, c, f)
		}
		b.WriteString("\n")
	}
}

func csvBoth(in string, comma rune) (want, got string) {
	cr := newCSVReader(strings.NewReader(in), comma)
	want = csvTrace(cr.Read, cr.FieldPos)
	c := newCSVRows(bufio.NewReaderSize(strings.NewReader(in), 16), comma)
	got = csvTrace(c.Read, c.FieldPos)
	return want, got
}

// TestCSVRows: the fast splitter reads as encoding/csv does (LazyQuotes,
// any number of fields): rows, line and column of each field, errors;
// through lines longer than the buffer, empty lines, carriage returns, and
// quotes, after which encoding/csv reads the rest.
func TestCSVRows(t *testing.T) {
	cases := []string{
		"", "\n", "a", "a\n", "a,b\n\nc,d\n", "a,b\r\n,c\r\n", "a\r", "a\rb,c\n", "x,\"q,r\"\n1,2\n",
		"1,2\n3,\"4\n5\",6\n7,8", "\"unterminated,1\n2,3\n", "a,b\n\r\n\r\nc\n", "long field beyond sixteen bytes,x\n",
		"a;b\n", ",,\n,\n",
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "1", ",", ";", "\n", "\r", "\"", " ", "\t", "é", "\r\n", "17.5"}
	for range 20000 {
		var b strings.Builder
		for n := r.IntN(30); n > 0; n-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, in := range cases {
		for _, comma := range []rune{',', ';', '\t', '"', 'é'} {
			if want, got := csvBoth(in, comma); want != got {
				t.Fatalf("%q, comma %q:\nencoding/csv: %s\nours:         %s", in, comma, want, got)
			}
		}
	}
}

// FuzzCSVRows: any input, the same as encoding/csv.
func FuzzCSVRows(f *testing.F) {
	f.Add("a,b\n\"c\",d\r\n\n1,2")
	f.Fuzz(func(t *testing.T, in string) {
		if want, got := csvBoth(in, ','); want != got {
			t.Errorf("%q:\nencoding/csv: %s\nours:         %s", in, want, got)
		}
	})
}
