package extract

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	src := "# comment\nkernel.all.load [\"1 minute\", 15 'x y']\n  disk.dev , hinv.ncpu\nsample.bin [100 200,300]\n"
	specs, err := ParseConfig("c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 4 {
		t.Fatalf("%d specs: %+v", len(specs), specs)
	}
	if s := specs[0]; s.Name != "kernel.all.load" || len(s.Insts) != 3 || s.Insts[0].Name != "1 minute" || s.Insts[1].ID != 15 || s.Insts[2].Name != "x y" || s.Line != 2 {
		t.Errorf("spec 0: %+v", s)
	}
	if s := specs[1]; s.Name != "disk.dev" || s.Insts != nil || s.Line != 3 {
		t.Errorf("spec 1: %+v", s)
	}
	if s := specs[3]; len(s.Insts) != 3 || s.Insts[2].ID != 300 {
		t.Errorf("spec 3: %+v", s)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"foo [", "c:1:6: expected an instance"},
		{"foo []", "c:1:6: empty instance list"},
		{"42", "c:1:1: expected a metric name, found number 42"},
		{"foo\n  bar [1 2\n", "c:3:1: expected an instance"},
		{"foo ['']", "c:1:6: empty instance name"},
		{"foo [\"abc\n\"]", "c:1:6: unterminated string"},
		{"foo $", "c:1:5: unexpected character '$'"},
		{", foo", "c:1:1: expected a metric name, found \",\""},
		{"foo [99999999999]", "out of range"},
	} {
		_, err := ParseConfig("c", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.src, err, c.want)
		}
	}
}
