package rules

import (
	"strings"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		src  string
		pos  string // line:col
		want string // part of the message
	}{
		{"", "1:1", "end of file"},
		{"# only a comment\n", "2:1", "end of file"},
		{"metrics foo { }", "1:1", "expected global, indom"},
		{"global hostname -> a", "1:8", "expected { after global"},
		{"global { hostname a }", "1:19", "-> in hostname clause"},
		{"global { hostname -> \"a\" }", "1:22", "hostname in hostname clause"},
		{"global { tz -> GMT }", "1:16", "timezone string"},
		{"global { zoneinfo GMT }", "1:19", "-> in zoneinfo clause"},
		{"global {\n  time -> }", "2:11", "delta of the form"},
		{"global { time -> 1:2:3:4 }", "1:23", "expected hostname, time"},
		{"global { time -> +-3 }", "1:19", "delta of the form"},
		{"global { features -> bits(32) }", "1:27", "not in the range 0..31"},
		{"global { features -> bits() }", "1:27", "list of bit numbers"},
		{"global { features -> bits(1,2 }", "1:31", ") after"},
		{"global { features -> \"x\" }", "1:22", "features value"},
		{"global { unknown -> 1 }", "1:10", "expected hostname, time"},
		{"global { }\nindom", "2:6", "<domain>.<serial>"},
		{"indom 1. { }", "1:7", "missing serial field"},
		{"indom 0.5 { }", "1:7", "illegal domain field (0)"},
		{"indom 511.1 { }", "1:7", "illegal domain field (511)"},
		{"indom 1.4194304 { }", "1:7", "illegal serial field"},
		{"indom 1.2.3 { }", "1:7", "<domain>.<serial>"},
		{"indom 1.5 { indom 1.10 }", "1:19", "-> in indom clause"},
		{"indom 1.5 { indom -> NULL }", "1:22", "found name \"NULL\""},
		{"indom 1.5 { iname 15 -> \"a\" }", "1:19", "old external instance name"},
		{"indom 1.5 {\n\tiname \"15\" -> }", "2:16", "new external instance name string or DELETE"},
		{"indom 1.5 { iname \"15\" - }", "1:24", "-> in iname clause"},
		{"indom 1.5 { inst -1 -> 2 }", "1:18", "old internal instance identifier"},
		{"indom 1.5 { inst 1 -> \"2\" }", "1:23", "new internal instance identifier"},
		{"indom 1.5 { iname \"\" -> \"x\" }", "1:19", "old external instance name"},
		{"metric { delete }", "1:8", "metric name or"},
		{"metric 1.*.2 { delete }", "1:8", "found identifier 1.*"},
		{"metric 1.18 { delete }", "1:8", "metric name or"},
		{"metric 0.1.2 { delete }", "1:8", "illegal domain field (0)"},
		{"metric 1.4096.2 { }", "1:8", "illegal cluster field"},
		{"metric 1.1.1024 { }", "1:8", "illegal item field"},
		{"metric foo { ? }", "1:14", "unexpected character '?'"},
		{"metric foo { delete", "1:20", "found end of file"},
		{"metric foo delete }", "1:12", "{ after metric rule"},
		{"metric foo { type -> STRING }", "1:22", "XXX (from PM_TYPE_XXX) in type clause"},
		{"metric foo { type U64 }", "1:19", "-> in type clause"},
		{"metric foo { type if -> U64 }", "1:22", "after if in type clause"},
		{"metric foo { sem -> bogus }", "1:21", "PM_SEM_XXX"},
		{"metric foo { units -> 1,0,0,KBYTE,0 }", "1:37", ", between fields"},
		{"metric foo { units -> 1,0,0,1,0,0 }", "1:29", "scaleSpace"},
		{"metric foo { units -> 1,0,0,KBYTE,FOO,0 }", "1:35", "scaleTime"},
		{"metric foo { units -> 1,0,0,0,0,X }", "1:33", "scaleCount"},
		{"metric foo { units -> a,0,0,0,0,0 }", "1:23", "dim* fields"},
		{"metric foo { name -> \"quoted\" }", "1:22", "metric name in name clause"},
		{"metric foo { pmid -> 1.2 }", "1:22", "in pmid clause"},
		{"metric foo { indom -> }", "1:23", "<domain>.<serial> or NULL"},
		{"metric foo { indom -> NULL output bogus }", "1:35", "FIRST or LAST"},
		{"metric foo { indom -> NULL output iname 5 }", "1:41", "instance name string"},
		{"metric foo { } }", "1:16", "expected global, indom"},
		{"metric text { }", "1:8", "metric name or"},
		{"text hinv.ncpu { delete }", "1:6", "metric or indom after text"},
		{"text metric foo all { delete }", "1:17", "oneline, help, *"},
		{"text metric foo { indom -> 1.2 }", "1:19", "delete, text, metric or }"},
		{"text indom 1.5 { metric -> 1.2.3 }", "1:18", "delete, text, indom or }"},
		{"text metric foo { text -> \"\" }", "1:27", "a text string"},
		{"text metric foo \"open { delete }", "1:17", "unexpected character '\"'"},
		{"label bogus { }", "1:7", "context, domain, cluster"},
		{"label context 42 { delete }", "1:15", "{ (or label name and value)"},
		{"label context { new \"a\" }", "1:25", "label value after new"},
		{"label context { label -> a }", "1:26", "label name string"},
		{"label domain 1 { cluster -> 1.2 }", "1:18", "delete, domain, label"},
		{"label cluster 1.18.2 { }", "1:15", "<domain>.<cluster> or <domain>.*"},
		{"label instances 1.5 { indom -> 1.10 }", "1:23", "delete, instances, instance"},
		{"label context { value -> - }", "1:28", "label value in value clause"},
		{"label context \"a\" 1.5 { }", "1:19", "{ (or label name"},
		{"metric foo { delete }\n\n   metric bar { delete delete x }", "3:31", "delete, pmid, name"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		_, err := ParsePmlogrewrite("f.conf", tc.src)
		if err == nil {
			t.Errorf("%q: no error", tc.src)
			continue
		}
		e, ok := AsError(err)
		if !ok {
			t.Errorf("%q: %T %v", tc.src, err, err)
			continue
		}
		got := e.Pos.String()
		if got != "f.conf:"+tc.pos || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%q:\n got  %v\n want f.conf:%s: ...%s...", tc.src, e, tc.pos, tc.want)
		}
	}
}

func TestLexerQuirks(t *testing.T) {
	cfg, err := ParsePmlogrewrite("q", `
METRIC Foo.Bar { TYPE IF u32 -> u64 Units -> 1,-1,0,kbyte,sec,one RESCALE }
metric name.type { name -> a-b=c.d }   # keywords only where expected
text metric 1.2.3 help oneline "say \"hi\"" { text -> "multi
line" }
label instances 60.2 "5 minute" "k" -12e3 { value -> "" }
global { time -> -1:02:03.25 hostname -> 10.0.0.1 }
`)
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Metrics[0]
	if m.Match.Name != "Foo.Bar" || m.Clauses[0].IfType != stream.TypeU32 || m.Clauses[0].Type != stream.TypeU64 {
		t.Errorf("type if: %+v", m.Clauses[0])
	}
	u := m.Clauses[1].Units
	if u != stream.NewUnits(1, -1, 0, 1, 3, 0) || !m.Clauses[1].Rescale {
		t.Errorf("units %x", uint32(u))
	}
	if cfg.Metrics[1].Match.Name != "name.type" || cfg.Metrics[1].Clauses[0].Name != "a-b=c.d" {
		t.Errorf("names: %+v", cfg.Metrics[1])
	}
	tx := cfg.Texts[0]
	if tx.Types != stream.TextHelp|stream.TextOneline || *tx.Content != `say "hi"` || tx.Clauses[0].Text != "multi\nline" {
		t.Errorf("text: %+v %q", tx, tx.Clauses[0].Text)
	}
	l := cfg.Labels[0]
	if !l.Target.HasInstName || l.Target.InstName != "5 minute" || *l.Name != "k" || *l.Value != "-12e3" || l.Clauses[0].Value != `""` {
		t.Errorf("label: %+v", l)
	}
	g := cfg.Globals[0].Clauses
	if !g[0].Time.Neg || g[0].Time.Sec != 3723 || g[0].Time.Nsec != 250000000 || g[1].Str != "10.0.0.1" {
		t.Errorf("global: %+v", g)
	}
	if g[0].Time.Nanos() != -3723250000000 {
		t.Errorf("nanos %d", g[0].Time.Nanos())
	}
	if pos := cfg.Labels[0].Pos; pos.Line != 6 || pos.Col != 1 {
		t.Errorf("label pos %v (line counting across a multi-line string)", pos)
	}
}
