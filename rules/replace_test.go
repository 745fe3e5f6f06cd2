package rules

import (
	"strings"
	"testing"
)

// TestReplace checks the substitution rules of PCP 6.1's pmlogrewrite
// (src/pmlogrewrite/replace.c): first match only, \1..\9, &, \x for x,
// POSIX leftmost-longest matching, and no change without a match.
func TestReplace(t *testing.T) {
	tests := []struct{ pat, with, in, want string }{
		{".*", "[redacted]", "bozo.localdomain", "[redacted]"},
		{"^([^ ]+) [^ ]+", `\1 [redacted]`, "Linux bozo.localdomain 6.1.0 #1", "Linux [redacted] 6.1.0 #1"},
		{"/.*/(.*)", `\1`, "/usr/lib/systemd/systemd", "systemd"},
		{"([0-9]+) /.*/(.*)", `\1 \2`, "000001 /usr/lib/systemd/systemd --switched-root", "000001 systemd --switched-root"},
		{"o", "0", "foo", "f0o"},              // the first match only
		{"b+", "<&>", "abbbc", "a<bbb>c"},     // & is the whole match
		{"b", `\&\\\n`, "abc", `a&\nc`},       // \x is x
		{"a|ab", "X", "abc", "Xc"},            // POSIX: the longest of the leftmost
		{"(x)|(b)", `[\1\2]`, "abc", "a[b]c"}, // an unmatched group is empty
		{"z", "y", "abc", "abc"},              // no match: unchanged
		{"", "y", "abc", "abc"},               // (the lexer never gives an empty pattern)
	}
	for _, tc := range tests {
		r, err := NewReplace(tc.pat, tc.with)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		got, ok := r.Apply(tc.in)
		if tc.pat == "" {
			continue
		}
		if got != tc.want || ok != (tc.in != tc.want) {
			t.Errorf("/%s/ -> %q on %q: %q %v, want %q", tc.pat, tc.with, tc.in, got, ok, tc.want)
		}
	}
	a, _ := NewReplace("b", "c")
	b, _ := NewReplace("c+", "d")
	if got, ok := ApplyAll([]*Replace{a, b}, "abc"); got != "ad" || !ok {
		t.Errorf("chained: %q %v, want \"ad\" true", got, ok)
	}
}

// TestParse61 parses the clauses PCP 6.1 added for pmlogredact.
func TestParse61(t *testing.T) {
	src := `
global { hostname -> "[redacted]" }
metric pmda.uname { value /^([^ ]+) [^ ]+/ -> "\1 [redacted]" }
metric proc.psinfo.exe { value "/.*/(.*)" -> "\1" value replace /x/ -> /y/ }
indom 3.9 { iname replace "([0-9]+) /.*/(.*)" -> "\1 \2" }
indom 3.39 { iname redact }
`
	cfg, err := ParsePmlogrewrite61("redact.conf", src)
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.Globals[0].Clauses[0]; g.Str != "[redacted]" {
		t.Errorf("hostname %q", g.Str)
	}
	m := cfg.Metrics[1].Clauses
	if len(m) != 2 || m[0].Op != MetricStrValue || m[0].Change.Pattern != "/.*/(.*)" || m[1].Change.With != "y" {
		t.Errorf("value clauses %+v", m)
	}
	if c := cfg.InDoms[0].Clauses[0]; c.Op != InDomReplace || c.Change.With != `\1 \2` {
		t.Errorf("iname replace %+v", c)
	}
	if c := cfg.InDoms[1].Clauses[0]; c.Op != InDomRedact {
		t.Errorf("iname redact %+v", c)
	}
	if _, err := ParsePmlogrewrite("6.0.3", src); err == nil || !strings.Contains(err.Error(), "hostname in hostname clause") {
		t.Errorf("PCP 6.0.3's grammar took PCP 6.1's clauses: %v", err)
	}
	for _, bad := range []struct{ src, want string }{
		{`metric a { value /(/ -> "x" }`, "1:18: regcomp error"},
		{`metric a { value -> "x" }`, "<regular expression> in metric value clause"},
		{`metric a { value /x/ "y" }`, "-> in metric value clause"},
		{`indom 1.2 { iname replace /x/ -> }`, "<replacement> in iname clause"},
	} {
		_, err := ParsePmlogrewrite61("", bad.src)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.src, err, bad.want)
		}
	}
}
