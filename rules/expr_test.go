package rules

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/expr-lang/expr/vm"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// TestDocExamples compiles every ```rules example of docs/rules.md, and
// resolves it against an archive.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```rules\n(.*?)```")
	blocks := re.FindAllStringSubmatch(string(b), -1)
	if len(blocks) < 10 {
		t.Fatalf("only %d examples in docs/rules.md", len(blocks))
	}
	var meta *format.Metadata
	if _, err := os.Stat(filepath.Join(testsuite, "archives", "src-rattle.meta")); err == nil {
		meta = loadMeta(t, "src-rattle")
	}
	for i, bl := range blocks {
		cfg, err := ParseExpr("rules.md#"+string(rune('0'+i)), bl[1])
		if err != nil {
			t.Errorf("example %d:\n%s\n%v", i, bl[1], err)
			continue
		}
		if meta != nil {
			if _, err := Compile(cfg, meta, CompileOptions{OutputVersion: 3}); err != nil {
				t.Errorf("example %d: compile: %v", i, err)
			}
		}
	}
}

func TestExprErrors(t *testing.T) {
	tests := []struct{ src, pos, want string }{
		{"metric name == { delete }", "1:14", "unexpected token"},
		{"metric name ==\n", "1:15", "expected {"},
		{"metric nme == \"x\" { delete }", "1:8", "unknown name nme"},
		{"\n\n  metric name == \"x\" {\n    type = U65\n  }", "4:12", "unknown name U65"},
		{"metric true { frob = 1 }", "1:15", `found "frob"`},
		{"metric true { type U64 }", "1:19", "expected = after type"},
		{"metric true { value = value * 2 }", "1:15", `found "value", expected delete, name, pmid, type, sem, units or indom (values change in a value rule: value SELECTOR { value = EXPR })`},
		{"value true { value = name }", "1:22", ""},
		{"widget true { }", "1:1", "expected global, metric"},
		{"metric true { delete", "1:21", "expected }"},
		{"global { time = \"1:2:3:4\" }", "1:16", "time"},
		{"indom true { inst x = 2 }", "1:18", "instance number"},
		{"metric name == \"é\" && nme { delete }", "1:23", "unknown name nme"},
	}
	for _, tc := range tests {
		_, err := ParseExpr("r", tc.src)
		e, ok := AsError(err)
		if !ok {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if e.Pos.String() != "r:"+tc.pos || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%q: got %v, want r:%s ...%s", tc.src, e, tc.pos, tc.want)
		}
	}
}

// fakeMeta is a small archive: two metrics on indom 60.2, one singular.
func fakeMeta() *format.Metadata {
	load := &stream.Desc{PMID: stream.NewPMID(60, 2, 0), Type: stream.TypeFloat, InDom: stream.NewInDomID(60, 2),
		Sem: stream.SemInstant, Names: []string{"kernel.all.load"}}
	free := &stream.Desc{PMID: stream.NewPMID(60, 1, 2), Type: stream.TypeU64, InDom: stream.InDomNull,
		Sem: stream.SemInstant, Units: stream.NewUnits(1, 0, 0, 1, 0, 0), Names: []string{"mem.util.free"}}
	user := &stream.Desc{PMID: stream.NewPMID(60, 0, 20), Type: stream.TypeU32, InDom: stream.InDomNull,
		Sem: stream.SemCounter, Names: []string{"kernel.all.cpu.user"}}
	m := &format.Metadata{
		Label:    stream.Label{Version: 2, Hostname: "h", Timezone: "UTC"},
		Descs:    []*stream.Desc{load, free, user},
		ByPMID:   map[stream.PMID]*stream.Desc{load.PMID: load, free.PMID: free, user.PMID: user},
		Resolved: map[stream.InDomID][]*stream.InstanceSet{stream.NewInDomID(60, 2): {{Insts: []int32{1, 5, 15}, Names: []string{"1 minute", "5 minute", "15 minute"}}}},
	}
	return m
}

func TestCompilePmlogrewritePlan(t *testing.T) {
	cfg, err := ParsePmlogrewrite("p", `
indom 60.2 { inst 1 -> 60 iname "5 minute" -> "300 second" inst 15 -> delete }
metric mem.util.free { units -> 1,0,0,MBYTE,0,0 RESCALE pmid -> 61.*.* }
metric kernel.all.load { indom -> NULL output avg type -> DOUBLE }
metric 60.0.* { type if U32 -> U64 sem -> instant }
global { time -> -0.25 hostname -> other }
`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(cfg, fakeMeta(), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Changes() {
		t.Error("no changes")
	}
	free := plan.Metric(stream.NewPMID(60, 1, 2))
	if free == nil || free.New.PMID != stream.NewPMID(61, 1, 2) || free.Changes&ChangeRescale == 0 {
		t.Fatalf("free: %+v", free)
	}
	s, _ := ScaleFor(free.Old.Units, free.New.Units)
	if got := s.Apply(Uint64(1672)); got != Uint64(2) {
		t.Errorf("rescale: %v", got)
	}
	load := plan.Metric(stream.NewPMID(60, 2, 0))
	if load.Output != OutputAvg || load.New.InDom != stream.InDomNull || load.New.Type != stream.TypeDouble || load.InstMap == nil {
		t.Errorf("load: %+v", load)
	}
	if load.OutputInstance(5) != stream.InstNull {
		t.Error("output instance")
	}
	ip := plan.InDom(stream.NewInDomID(60, 2))
	if n, ok := ip.MapInst(1); !ok || n != 60 {
		t.Errorf("MapInst(1) = %d %v", n, ok)
	}
	if _, ok := ip.MapInst(15); ok {
		t.Error("15 not deleted")
	}
	set := ip.Apply(&stream.InstanceSet{Insts: []int32{1, 5, 15}, Names: []string{"1 minute", "5 minute", "15 minute"}})
	if len(set.Insts) != 2 || set.Insts[0] != 60 || set.Names[1] != "300 second" {
		t.Errorf("apply: %+v", set)
	}
	user := plan.Metric(stream.NewPMID(60, 0, 20))
	if user.New.Type != stream.TypeU64 || user.New.Sem != stream.SemInstant {
		t.Errorf("user: %+v", user.New)
	}
	g := plan.Global
	if g.Shift == nil || g.Shift.Nanos() != -250000000 || *g.Hostname != "other" {
		t.Errorf("global: %+v", g)
	}
	if got := g.Shift.Apply(stream.Timestamp{Sec: 10, Nsec: 100}); got != (stream.Timestamp{Sec: 9, Nsec: 750000100}) {
		t.Errorf("shift: %v", got)
	}

	// Conflicts report both positions.
	cfg, _ = ParsePmlogrewrite("c", "metric kernel.all.load { type -> DOUBLE }\nmetric 60.2.* { type -> U64 }\n")
	_, err = Compile(cfg, fakeMeta(), CompileOptions{})
	e, ok := AsError(err)
	if !ok || e.Pos.String() != "c:2:17" || e.Other.String() != "c:1:26" {
		t.Errorf("conflict: %v", err)
	}
	cfg, _ = ParsePmlogrewrite("c", "indom 60.2 { indom -> 60.3 }\nmetric kernel.all.load { indom -> 60.4 }\n")
	_, err = Compile(cfg, fakeMeta(), CompileOptions{})
	if e, ok := AsError(err); !ok || e.Other.String() != "c:1:14" {
		t.Errorf("indom conflict: %v", err)
	}
	// Nothing applies: -q would exit early.
	cfg, _ = ParsePmlogrewrite("q", "metric no.such { delete }\nmetric mem.util.free { type -> U64 }\n")
	plan, err = Compile(cfg, fakeMeta(), CompileOptions{})
	if err != nil || plan.Changes() || len(plan.Warnings) != 2 {
		t.Errorf("no-op plan: %v %v %v", err, plan.Changes(), plan.Warnings)
	}
}

func TestCompileExprPlan(t *testing.T) {
	cfg, err := ParseExpr("e", `
metric name startsWith "kernel.all." && type == U32 { type = U64; name = name + ".wide" }
metric domain == 60 && cluster == 1 { pmid = PMID(61, cluster, item) }
value when metric == "mem.util.free" { value = instance < 0 ? value * 1024 : value }
`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(cfg, fakeMeta(), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := plan.Metric(stream.NewPMID(60, 0, 20))
	if user == nil || user.New.Type != stream.TypeU64 || user.New.Names[0] != "kernel.all.cpu.user.wide" {
		t.Fatalf("user: %+v", user)
	}
	if plan.Metric(stream.NewPMID(60, 2, 0)) != nil {
		t.Error("load (FLOAT) should not match type == U32")
	}
	free := plan.Metric(stream.NewPMID(60, 1, 2))
	if free.New.PMID != stream.NewPMID(61, 1, 2) || free.Value == nil {
		t.Fatalf("free: %+v", free)
	}
	var m vm.VM
	env := &ValueEnv{Name: "mem.util.free", Instance: -1, Value: 2}
	v, err := free.Value.Eval(&m, env)
	if err != nil || v != 2048 {
		t.Errorf("eval = %v %v", v, err)
	}
	allocs := testing.AllocsPerRun(100, func() { free.Value.Eval(&m, env) })
	t.Logf("value expression: %.0f allocs per run", allocs)
	if math.IsNaN(v) {
		t.Fatal()
	}
}

// TestClauseWrongTypeHint: a metric clause whose expression gives the
// wrong kind of value says what it wants (a string for units is the
// usual slip).
func TestClauseWrongTypeHint(t *testing.T) {
	for src, want := range map[string]string{
		`metric name == "mem.util.free" { units = "count" }`: `units value count (string) has the wrong type: give UNITS("dimSpace,dimTime,dimCount,scaleSpace,scaleTime,scaleCount"), e.g. UNITS("0,0,1,0,0,ONE") for a count`,
		`metric name == "mem.util.free" { sem = "counter" }`: `has the wrong type: give COUNTER, INSTANT or DISCRETE`,
		`metric name == "mem.util.free" { name = 7 }`:        `has the wrong type: give a string`,
	} {
		cfg, err := ParseExpr("r", src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(cfg, fakeMeta(), CompileOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	// the hint's own example compiles
	cfg, err := ParseExpr("r", `metric name == "mem.util.free" { units = UNITS("0,0,1,0,0,ONE") }`)
	if err == nil {
		_, err = Compile(cfg, fakeMeta(), CompileOptions{})
	}
	if err != nil {
		t.Error(err)
	}
}
