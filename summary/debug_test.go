package summary

import "testing"

// TestParseDebug: -D takes PCP's comma-separated option names; "all"
// turns on every trace, other names none, and repeated -D options add up.
func TestParseDebug(t *testing.T) {
	for _, c := range []struct {
		arg  string
		from Debug
		want Debug
	}{
		{"appl0", Debug{}, Debug{Appl0: true}},
		{"appl0,appl2", Debug{}, Debug{Appl0: true, Appl2: true}},
		{"pdu,appl1", Debug{}, Debug{Appl1: true}},
		{"all", Debug{}, Debug{true, true, true}},
		{"pdu", Debug{Appl2: true}, Debug{Appl2: true}},
		{"", Debug{}, Debug{}},
	} {
		if got := ParseDebug(c.arg, c.from); got != c.want {
			t.Errorf("ParseDebug(%q, %+v) = %+v, want %+v", c.arg, c.from, got, c.want)
		}
	}
}
