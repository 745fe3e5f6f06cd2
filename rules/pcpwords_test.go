package rules

import "testing"

// pmlogrewrite's wording of parse errors (PCPText), from PCP's QA 481 and
// 483; our own (Error) is unchanged.
func TestParseErrorsInPCPWords(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"indom { indom -> 1.10 }\n", "Specification error in configuration file (C)\n[line 1] Expecting <domain>.<serial> or <domain>.* in indom rule"},
		{"metric hinv.ndisk { name -> blah blah blah }\n", "Specification error in configuration file (C)\n[line 1] syntax error"},
		{"metric hinv.ndisk { name -> hinv.* }\n", "Specification error in configuration file (C)\n[line 1] Unexpected character '*'"},
		{"metric hinv.ndisk { name -> }\n", "Specification error in configuration file (C)\n[line 1] Expecting metric name in iname clause"},
	} {
		_, err := ParsePmlogrewrite("C", c.src)
		e, ok := AsError(err)
		if !ok {
			t.Fatalf("%q: %v, want an *Error", c.src, err)
		}
		if got := e.PCPText(); got != c.want {
			t.Errorf("%q: PCPText\n%s\nwant\n%s", c.src, got, c.want)
		}
		if e.Error() == e.PCPText() {
			t.Errorf("%q: our own message is pmlogrewrite's", c.src)
		}
	}
}

func TestWarningsInPCPWordsAndOrder(t *testing.T) {
	cfg, err := ParsePmlogrewrite("C", "global { time -> 1:75 }\nmetric 511.1.1 { pmid -> 510.1.1 }\n")
	if err != nil {
		t.Fatal(err)
	}
	ws := append([]Warning(nil), cfg.Warnings...)
	// out of order, and one of another file read earlier
	ws = append([]Warning{ws[1], ws[0]}, Warning{Pos: Pos{File: "B", Line: 9}, PCP: "x"})
	SortPCP(ws, []string{"B", "C"})
	var got []string
	for _, w := range ws {
		got = append(got, w.PCPText())
	}
	want := []string{
		"Warning [B, line 9]\nx",
		"Warning [C, line 1]\nSeconds (75) in time clause more than 59",
		"Warning [C, line 2]\nDynamic metric domain field (511) for pmid",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("warning %d: %q, want %q", i, got[i], want[i])
		}
	}
}
