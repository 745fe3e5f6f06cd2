package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pcptools/pcptools/format"
)

// TestGolden runs the command lines recorded in testdata/*.golden (the
// first line) on the example archive and compares the output with what
// PCP 6.0.3's pmlogsummary printed (TZ=UTC), byte for byte.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatal("no golden files", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, want, _ := strings.Cut(string(b), "\n")
			args := strings.Fields(strings.TrimPrefix(first, "# pmlogsummary "))
			c, err := ParseCommandLine("pmlogsummary", args)
			if err != nil {
				t.Fatal(err)
			}
			a, err := format.Open(filepath.Join("..", c.Archive))
			if err != nil {
				t.Fatal(err)
			}
			c.Location = time.UTC
			var out, warn bytes.Buffer
			c.Warn = &warn
			if err := Run(&out, a, c.Options); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("%s:\n got:\n%s\nwant:\n%s", first, out.String(), want)
			}
		})
	}
}

func TestParseCommandLineOrder(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Options
	}{
		// -s after -a clears what -a set, -a after -s clears the sum.
		{[]string{"-a", "-s", "A"}, Options{Sum: true, NoTimeAve: true}},
		{[]string{"-s", "-a", "A"}, Options{Stochastic: true, Label: true, Count: true, Min: true, Max: true}},
		{[]string{"-x", "-b", "A"}, Options{Stochastic: true}},
		{[]string{"A", "-B4", "-p", "2", "m"}, Options{Bins: 4, Precision: 2}},
		{[]string{"--bins=2", "--prec", "-1", "A"}, Options{Bins: 2, Precision: -1}},
		{[]string{"-zHlfiImMy", "A"}, Options{ArchiveZone: true, Header: true, Label: true, Delim: '\t', MinTime: true, MaxTime: true, Min: true, Max: true, Count: true}},
	} {
		c, err := ParseCommandLine("pmlogsummary", tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got := c.Options
		got.Prog, got.Metrics = "", nil
		if tc.want.Precision == 0 {
			tc.want.Precision = DefaultPrecision
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v:\n got %+v\nwant %+v", tc.args, got, tc.want)
		}
		if c.Archive != "A" {
			t.Errorf("%v: archive %q", tc.args, c.Archive)
		}
	}
	for _, bad := range [][]string{{"-B", "x"}, {"-B", "-7"}, {"-p", "1x"}, {"-K"}, {"-B"}, {"-z", "-Z", "UTC"}, {"--nosuch"}} {
		if _, err := ParseCommandLine("pmlogsummary", bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	// strtol takes an empty string as 0.
	if c, err := ParseCommandLine("pmlogsummary", []string{"-B", "", "A"}); err != nil || c.Bins != 0 {
		t.Errorf("-B '': %v %v", c, err)
	}
}

func TestParseMetricSpec(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		metric string
		insts  []string
		err    string
	}{
		{spec: "kernel.all.load", metric: "kernel.all.load"},
		{spec: `disk.dev.read[sda, "sd b" ,c\]d]`, metric: "disk.dev.read", insts: []string{"sda", "sd b", "c]d"}},
		{spec: "host:a.b[x]", metric: "a.b", insts: []string{"x"}},
		{spec: "arch/a.b", metric: "a.b"},
		{spec: "a.b[]", metric: "a.b", insts: []string{}},
		{spec: "hinv[", err: "hinv[\n     ^ -- closing ] expected\n"},
		{spec: "a,b", err: "a,b\n ^ -- unexpected character in metric name\n"},
		{spec: "a[x] y", err: "a[x] y\n     ^ -- unexpected extra characters\n"},
		{spec: "", err: "\n^ -- performance metric name expected\n"},
	} {
		got, err := ParseMetricSpec(tc.spec)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %q, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || got.Metric != tc.metric || strings.Join(got.Insts, "|") != strings.Join(tc.insts, "|") || (got.Insts == nil) != (tc.insts == nil) {
			t.Errorf("%q: got %+v, %v", tc.spec, got, err)
		}
	}
}

// TestToReal checks the long double emulation on values where plain
// float64 arithmetic rounds differently.
func TestToReal(t *testing.T) {
	var c realCache
	found := 0
	for usec := int64(1); usec < 1000000 && found < 3; usec += 7 {
		tv := timeval{1100000000, usec}
		ld := c.toReal(tv)
		f := float64(tv.sec) + float64(tv.usec)/1e6
		if ld != f {
			found++
		}
	}
	if found == 0 {
		t.Log("float64 and long double agree on every sampled value")
	}
	if got := c.toReal(timeval{60, 500000}); got != 60.5 {
		t.Errorf("60.5: %v", got)
	}
	if got := tsub(timeval{10, 100}, timeval{11, 0}); got != (timeval{}) {
		t.Errorf("tsub clips: %v", got)
	}
	if got := tadd(timeval{1, 600000}, timeval{2, 500000}); got != (timeval{4, 100000}) {
		t.Errorf("tadd: %v", got)
	}
}

func BenchmarkRunDemo(b *testing.B) {
	a, err := format.Open("../testdata/example/demo")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := Run(&bytes.Buffer{}, a, Options{Location: time.UTC, Stochastic: true, Min: true, Max: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParse: metric specifications and command lines never panic, and a
// specification's error points inside it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a.b", `a.b["x y",z]`, "h:a[", `a\`, "a[\"", "-B4", "-p", "--bins=x", "-zZ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseMetricSpec(s); err != nil {
			var se *SpecError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("%q: %v", s, err)
			}
			_ = err.Error()
		}
		ParseCommandLine("pmlogsummary", strings.Fields(s))
	})
}

// TestJSON: --json gives one valid object per line printed as text, with
// the same numbers.
func TestJSON(t *testing.T) {
	a, err := format.Open("../testdata/example/demo")
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	o := Options{Location: time.UTC, Precision: 3, Stochastic: true, Label: true, Bins: 2}
	if err := Run(&text, a, o); err != nil {
		t.Fatal(err)
	}
	o.JSON = true
	if err := Run(&js, a, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	textLines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if len(lines) != len(textLines)-3 { // the label is 4 lines of text, 1 object
		t.Fatalf("%d objects for %d lines of text", len(lines), len(textLines))
	}
	var label struct {
		Archive struct{ Host string }
	}
	if err := json.Unmarshal([]byte(lines[0]), &label); err != nil || label.Archive.Host != "demo.example.com" {
		t.Fatalf("label %q: %v", lines[0], err)
	}
	for i, l := range lines[1:] {
		var st struct {
			Metric      string
			Instance    *string
			TimeAverage float64 `json:"time_average"`
			Bins        []struct {
				Le    *float64
				Count int
			}
		}
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if !strings.HasPrefix(textLines[i+4], st.Metric+" ") || len(st.Bins) != 2 {
			t.Errorf("object %q for line %q", l, textLines[i+4])
		}
		if want := strconv.FormatFloat(st.TimeAverage, 'f', 3, 64); !strings.Contains(textLines[i+4], " "+want+" ") {
			t.Errorf("time average %s not in %q", want, textLines[i+4])
		}
	}
}
