package rules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/pcptools/pcptools/stream"
)

// This file is our own rules language (docs/rules.md). A rule is
//
//	KIND SELECTOR { CLAUSE; CLAUSE ... }
//
// where KIND is global, metric, indom, value, text or label, SELECTOR is an
// expr-lang expression over the object (omitted for global), and clauses
// are separated by ';' or newlines. Selectors and metric clause values are
// compiled once with expr.Compile against a typed environment; Compile
// (plan.go) runs them per metric of the archive, and the engine runs value
// expressions per value with a reused vm.VM. Everything ends up in the same
// Config as a pmlogrewrite configuration.

// MetricEnv is what metric selectors and metric clause values see.
type MetricEnv struct {
	Name    string         `expr:"name"`
	Metric  string         `expr:"metric"` // same as name
	Names   []string       `expr:"names"`
	PMID    stream.PMID    `expr:"pmid"`
	Domain  int            `expr:"domain"`
	Cluster int            `expr:"cluster"`
	Item    int            `expr:"item"`
	Type    stream.Type    `expr:"type"`
	Sem     stream.Sem     `expr:"sem"`
	Units   stream.Units   `expr:"units"`
	InDom   stream.InDomID `expr:"indom"`
	Serial  int            `expr:"serial"` // serial of indom (-1 when NULL)
	Consts
}

// Consts are the named constants every environment has.
type Consts struct {
	T32      stream.Type    `expr:"I32"`
	TU32     stream.Type    `expr:"U32"`
	T64      stream.Type    `expr:"I64"`
	TU64     stream.Type    `expr:"U64"`
	TFloat   stream.Type    `expr:"FLOAT"`
	TDouble  stream.Type    `expr:"DOUBLE"`
	TString  stream.Type    `expr:"STRING"`
	Counter  stream.Sem     `expr:"COUNTER"`
	Instant  stream.Sem     `expr:"INSTANT"`
	Discrete stream.Sem     `expr:"DISCRETE"`
	Null     stream.InDomID `expr:"NULL"`
}

var consts = Consts{
	T32: stream.Type32, TU32: stream.TypeU32, T64: stream.Type64, TU64: stream.TypeU64,
	TFloat: stream.TypeFloat, TDouble: stream.TypeDouble, TString: stream.TypeString,
	Counter: stream.SemCounter, Instant: stream.SemInstant, Discrete: stream.SemDiscrete,
	Null: stream.InDomNull,
}

// InDomEnv is what indom selectors see.
type InDomEnv struct {
	InDom     stream.InDomID `expr:"indom"`
	Domain    int            `expr:"domain"`
	Serial    int            `expr:"serial"`
	Instances []int          `expr:"instances"`
	INames    []string       `expr:"inames"`
	Consts
}

// TextEnv is what text selectors see.
type TextEnv struct {
	Kind    string `expr:"kind"` // "metric" or "indom"
	Help    bool   `expr:"help"`
	Oneline bool   `expr:"oneline"`
	Ident   uint32 `expr:"ident"`
	Domain  int    `expr:"domain"`
	Cluster int    `expr:"cluster"` // metric texts
	Item    int    `expr:"item"`    // metric texts
	Serial  int    `expr:"serial"`  // indom texts
	Text    string `expr:"text"`
}

// LabelEnv is what label selectors see: one label of one label set.
type LabelEnv struct {
	Kind     string `expr:"kind"` // context, domain, cluster, item, indom, instances
	Ident    uint32 `expr:"ident"`
	Instance int    `expr:"instance"` // -1 unless kind is instances
	Name     string `expr:"name"`
	Value    string `expr:"value"` // JSON text
}

// ValueEnv is what value expressions see, per value. The engine fills it.
type ValueEnv struct {
	Name     string            `expr:"name"`
	Metric   string            `expr:"metric"`
	PMID     stream.PMID       `expr:"pmid"`
	Type     stream.Type       `expr:"type"`
	Instance int               `expr:"instance"` // -1 for a singular metric
	IName    string            `expr:"iname"`
	Value    float64           `expr:"value"`
	Time     float64           `expr:"time"` // seconds since the epoch
	Labels   map[string]string `expr:"labels"`
	Consts
}

// ValueExpr is a compiled per-value expression. Eval runs it on a VM the
// caller keeps (one per goroutine), which allocates nothing per call for
// arithmetic on numbers.
type ValueExpr struct {
	Src  string
	Pos  Pos
	prog *vm.Program
	// UsesLabels says that the expression reads labels, which the engine
	// then fills (building them costs a map per metric and instance).
	UsesLabels bool
}

// usesIdent is an expr AST visitor that notes whether an identifier
// appears.
type usesIdent struct {
	name  string
	found bool
}

func (u *usesIdent) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok && id.Value == u.name {
		u.found = true
	}
}

// Eval computes the new value. The result is a float64; the engine
// converts it to the metric's output type with Retype(Float64(v), type).
func (e *ValueExpr) Eval(m *vm.VM, env *ValueEnv) (float64, error) {
	// The constants (I32, COUNTER, ...) live in the environment; the
	// caller cannot set them (consts is ours), so fill them here.
	env.Consts = consts
	out, err := m.Run(e.prog, env)
	if err != nil {
		return 0, err
	}
	switch v := out.(type) {
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	}
	return 0, fmt.Errorf("value expression returned %T, want a number", out)
}

var helperFuncs = []expr.Option{
	expr.Function("PMID", func(p ...any) (any, error) {
		return stream.NewPMID(uint32(p[0].(int)), uint32(p[1].(int)), uint32(p[2].(int))), nil
	}, new(func(int, int, int) stream.PMID)),
	expr.Function("INDOM", func(p ...any) (any, error) {
		return stream.NewInDomID(uint32(p[0].(int)), uint32(p[1].(int))), nil
	}, new(func(int, int) stream.InDomID)),
	expr.Function("UNITS", func(p ...any) (any, error) {
		return parseUnits(p[0].(string))
	}, new(func(string) stream.Units)),
	expr.Function("TYPE", func(p ...any) (any, error) {
		t, ok := typeNames[strings.ToUpper(p[0].(string))]
		if !ok {
			return nil, fmt.Errorf("unknown type %q", p[0])
		}
		return t, nil
	}, new(func(string) stream.Type)),
	expr.Function("pmidstr", func(p ...any) (any, error) { return p[0].(stream.PMID).String(), nil },
		new(func(stream.PMID) string)),
	expr.Function("indomstr", func(p ...any) (any, error) { return p[0].(stream.InDomID).String(), nil },
		new(func(stream.InDomID) string)),
}

// parseUnits reads "dimSpace,dimTime,dimCount,scaleSpace,scaleTime,scaleCount"
// with pmlogrewrite's scale names.
func parseUnits(s string) (stream.Units, error) {
	f := strings.Split(s, ",")
	if len(f) != 6 {
		return 0, fmt.Errorf("units %q: want 6 comma-separated fields", s)
	}
	var dim [3]int
	for i := range dim {
		v, err := strconv.Atoi(strings.TrimSpace(f[i]))
		if err != nil || v < -8 || v > 7 {
			return 0, fmt.Errorf("units %q: bad dimension %q", s, f[i])
		}
		dim[i] = v
	}
	ss, ok1 := spaceNames[strings.ToUpper(strings.TrimSpace(f[3]))]
	st, ok2 := timeNames[strings.ToUpper(strings.TrimSpace(f[4]))]
	c := strings.ToUpper(strings.TrimSpace(f[5]))
	sc := 0
	if c == "ONE" {
		sc = 0
	} else if v, err := strconv.Atoi(c); err == nil && v >= -8 && v <= 7 {
		sc = v
	} else {
		return 0, fmt.Errorf("units %q: bad count scale %q", s, f[5])
	}
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("units %q: bad space or time scale", s)
	}
	return stream.NewUnits(dim[0], dim[1], dim[2], ss, st, sc), nil
}

// ---------------------------------------------------------------------------
// predicates and values backed by programs

type exprProg struct {
	prog *vm.Program
	pos  Pos
	src  string
}

func metricEnv(m *MetricInfo) *MetricEnv {
	d := m.Desc
	serial := -1
	if d.InDom != stream.InDomNull {
		serial = int(d.InDom.Serial())
	}
	return &MetricEnv{Name: m.Name, Metric: m.Name, Names: m.Names, PMID: d.PMID,
		Domain: int(d.PMID.Domain()), Cluster: int(d.PMID.Cluster()), Item: int(d.PMID.Item()),
		Type: d.Type, Sem: d.Sem, Units: d.Units, InDom: d.InDom, Serial: serial, Consts: consts}
}

func (p *exprProg) run(env any) (any, error) {
	var m vm.VM
	return m.Run(p.prog, env)
}

func (p *exprProg) MatchMetric(m *MetricInfo) (bool, error) {
	v, err := p.run(metricEnv(m))
	b, _ := v.(bool)
	return b, err
}

func (p *exprProg) EvalMetric(m *MetricInfo) (any, error) { return p.run(metricEnv(m)) }

func indomEnv(id stream.InDomID, set *stream.InstanceSet) *InDomEnv {
	env := &InDomEnv{InDom: id, Domain: int(id.Domain()), Serial: int(id.Serial()), Consts: consts}
	if set != nil {
		for _, in := range set.Insts {
			env.Instances = append(env.Instances, int(in))
		}
		env.INames = set.Names
	}
	return env
}

func (p *exprProg) MatchInDom(id stream.InDomID, set *stream.InstanceSet) (bool, error) {
	v, err := p.run(indomEnv(id, set))
	b, _ := v.(bool)
	return b, err
}

func (p *exprProg) EvalInDom(id stream.InDomID, set *stream.InstanceSet) (any, error) {
	return p.run(indomEnv(id, set))
}

func (p *exprProg) EvalText(t *stream.Text) (any, error) { return p.run(textEnv(t)) }

func (p *exprProg) MatchText(t *stream.Text) (bool, error) {
	v, err := p.run(textEnv(t))
	b, _ := v.(bool)
	return b, err
}

func textEnv(t *stream.Text) *TextEnv {
	env := &TextEnv{Kind: "metric", Help: t.Type&stream.TextHelp != 0, Oneline: t.Type&stream.TextOneline != 0, Ident: t.Ident, Text: t.Text}
	if t.Type&stream.TextInDom != 0 {
		env.Kind = "indom"
		id := stream.InDomID(t.Ident)
		env.Domain, env.Serial = int(id.Domain()), int(id.Serial())
	} else {
		id := stream.PMID(t.Ident)
		env.Domain, env.Cluster, env.Item = int(id.Domain()), int(id.Cluster()), int(id.Item())
	}
	return env
}

var labelKinds = map[uint32]string{
	stream.LabelContext: "context", stream.LabelDomain: "domain", stream.LabelCluster: "cluster",
	stream.LabelItem: "item", stream.LabelInDom: "indom", stream.LabelInstances: "instances",
}

func (p *exprProg) MatchLabel(l *LabelInfo) (bool, error) {
	env := &LabelEnv{Kind: labelKinds[l.Type], Ident: l.Ident, Instance: int(l.Inst), Name: l.Name, Value: l.Value}
	v, err := p.run(env)
	b, _ := v.(bool)
	return b, err
}

// ---------------------------------------------------------------------------
// the parser

// ParseExpr parses rules in our language. The error, if any, is an *Error
// whose position is 1-based (expr's 0-based columns are converted).
func ParseExpr(file, src string) (cfg *Config, err error) {
	p := &exprParser{file: file, src: src, line: 1, col: 1, cfg: &Config{}}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			cfg, err = nil, e
		}
	}()
	p.parse()
	return p.cfg, nil
}

type exprParser struct {
	file      string
	src       string
	off       int
	line, col int
	cfg       *Config
}

func (p *exprParser) pos() Pos { return Pos{File: p.file, Line: p.line, Col: p.col} }

func (p *exprParser) fail(pos Pos, format string, args ...any) {
	panic(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (p *exprParser) advance(n int) {
	for _, r := range p.src[p.off : p.off+n] {
		if r == '\n' {
			p.line++
			p.col = 1
		} else {
			p.col++
		}
	}
	p.off += n
}

// skipSpace skips blanks and comments; with newlines false it stops at a
// newline.
func (p *exprParser) skipSpace(newlines bool) {
	for p.off < len(p.src) {
		c := p.src[p.off]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n'):
			p.advance(1)
		case c == '#':
			n := strings.IndexByte(p.src[p.off:], '\n')
			if n < 0 {
				n = len(p.src) - p.off
			}
			p.advance(n)
		default:
			return
		}
	}
}

func (p *exprParser) word() (string, Pos) {
	pos := p.pos()
	n := 0
	for p.off+n < len(p.src) {
		c := p.src[p.off+n]
		if !(isAlnum(c) || c == '_') {
			break
		}
		n++
	}
	w := p.src[p.off : p.off+n]
	p.advance(n)
	return w, pos
}

// scanUntil returns the text up to (not including) the first byte of stop
// found outside string literals and brackets; at is its position.
func (p *exprParser) scanUntil(stop string) (text string, start Pos, found byte) {
	start = p.pos()
	depth := 0
	i := p.off
	for i < len(p.src) {
		c := p.src[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(p.src) && p.src[j] != c {
				if p.src[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == '{' && depth > 0:
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0 && strings.IndexByte(stop, c) >= 0:
			text = p.src[p.off:i]
			p.advance(i - p.off)
			return text, start, c
		}
		i++
	}
	text = p.src[p.off:]
	p.advance(len(p.src) - p.off)
	return text, start, 0
}

func (p *exprParser) parse() {
	for {
		p.skipSpace(true)
		if p.off >= len(p.src) {
			return
		}
		kind, pos := p.word()
		if kind == "" {
			r, _ := utf8.DecodeRuneInString(p.src[p.off:])
			p.fail(pos, "found %q, expected global, metric, indom, value, text or label", r)
		}
		switch kind {
		case "global", "metric", "indom", "value", "text", "label":
		default:
			p.fail(pos, "found %q, expected global, metric, indom, value, text or label", kind)
		}
		p.skipSpace(false)
		if kind == "value" && strings.HasPrefix(p.src[p.off:], "when") && p.off+4 < len(p.src) && !isAlnum(p.src[p.off+4]) {
			p.advance(4)
		}
		sel, selPos, found := p.scanUntil("{\n")
		if found != '{' {
			p.fail(p.pos(), "found %s, expected { after the %s selector", describeAt(found), kind)
		}
		p.advance(1)
		clauses := p.clauses()
		switch kind {
		case "global":
			if strings.TrimSpace(sel) != "" {
				p.fail(selPos, "global takes no selector")
			}
			p.globalRule(pos, clauses)
		case "metric":
			p.metricRule(pos, sel, selPos, clauses)
		case "indom":
			p.indomRule(pos, sel, selPos, clauses)
		case "value":
			p.valueRule(pos, sel, selPos, clauses)
		case "text":
			p.textRule(pos, sel, selPos, clauses)
		case "label":
			p.labelRule(pos, sel, selPos, clauses)
		}
	}
}

func describeAt(c byte) string {
	switch c {
	case 0:
		return "end of file"
	case '\n':
		return "end of line"
	}
	return strconv.Quote(string(c))
}

type clause struct {
	text string
	pos  Pos
}

// clauses reads up to the closing brace.
func (p *exprParser) clauses() []clause {
	var out []clause
	for {
		p.skipSpace(true)
		if p.off >= len(p.src) {
			p.fail(p.pos(), "found end of file, expected }")
		}
		if p.src[p.off] == '}' {
			p.advance(1)
			return out
		}
		if p.src[p.off] == ';' {
			p.advance(1)
			continue
		}
		text, pos, _ := p.scanUntil(";\n}")
		trimmed := strings.TrimRight(text, " \t\r")
		if trimmed != "" {
			out = append(out, clause{text: trimmed, pos: pos})
		}
	}
}

// compile compiles an expression starting at pos, mapping expr's error
// position to the file.
func (p *exprParser) compile(src string, pos Pos, env any, opts ...expr.Option) *vm.Program {
	lead := len(src) - len(strings.TrimLeft(src, " \t"))
	pos.Col += lead
	src = strings.TrimSpace(src)
	if src == "" {
		p.fail(pos, "found nothing, expected an expression")
	}
	all := append([]expr.Option{expr.Env(env)}, helperFuncs...)
	prog, err := expr.Compile(src, append(all, opts...)...)
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			at := pos
			if fe.Line > 1 {
				at.Line += fe.Line - 1
				at.Col = fe.Column + 1
			} else {
				at.Col += fe.Column
			}
			p.fail(at, "%s", fe.Message)
		}
		p.fail(pos, "%v", err)
	}
	return prog
}

// splitAssign splits "key = value" (or "key value"); rest keeps its offset.
func splitKey(c clause) (key, rest string, restPos Pos) {
	t := c.text
	n := 0
	for n < len(t) && (isAlnum(t[n]) || t[n] == '_') {
		n++
	}
	key = t[:n]
	rest = t[n:]
	restPos = c.pos
	restPos.Col += utf8.RuneCountInString(key)
	return
}

func trimPrefixPos(s string, pos Pos, prefix string) (string, Pos, bool) {
	lead := len(s) - len(strings.TrimLeft(s, " \t"))
	if !strings.HasPrefix(s[lead:], prefix) {
		return s, pos, false
	}
	pos.Col += lead + utf8.RuneCountInString(prefix)
	return s[lead+len(prefix):], pos, true
}

// trailingWord removes a trailing keyword (rescale, duplicate, output ...).
func trailingWord(s, w string) (string, bool) {
	t := strings.TrimRight(s, " \t")
	if strings.HasSuffix(t, " "+w) || strings.HasSuffix(t, "\t"+w) {
		return t[:len(t)-len(w)], true
	}
	return s, false
}

func (p *exprParser) constValue(src string, pos Pos) any {
	prog := p.compile(src, pos, Consts{})
	var m vm.VM
	v, err := m.Run(prog, consts)
	if err != nil {
		p.fail(pos, "%v", err)
	}
	return v
}

func (p *exprParser) globalRule(pos Pos, cls []clause) {
	r := &GlobalRule{Pos: pos}
	for _, c := range cls {
		key, rest, rpos := splitKey(c)
		rest, rpos, ok := trimPrefixPos(rest, rpos, "=")
		if !ok {
			p.fail(rpos, "expected = after %s", key)
		}
		gc := GlobalClause{Pos: c.pos}
		v := p.constValue(rest, rpos)
		str := func() string {
			s, ok := v.(string)
			if !ok {
				p.fail(rpos, "%s: want a string, got %T", key, v)
			}
			return s
		}
		switch key {
		case "hostname":
			gc.Kind, gc.Str = GlobalHostname, str()
		case "timezone", "tz":
			gc.Kind, gc.Str = GlobalTimeZone, str()
		case "zoneinfo":
			gc.Kind, gc.Str = GlobalZoneInfo, str()
		case "features":
			n, ok := v.(int)
			if !ok || n < 0 || n > 1<<32-1 {
				p.fail(rpos, "features: want an integer, got %v", v)
			}
			gc.Kind, gc.Features = GlobalFeatures, uint32(n)
		case "time":
			s := str()
			g, err := ParsePmlogrewrite("", "global { time -> "+s+" }")
			if err != nil || len(g.Globals[0].Clauses) != 1 {
				p.fail(rpos, "time %q: want [+-][[HH:]MM:]SS[.frac]", s)
			}
			gc.Kind, gc.Time = GlobalTime, g.Globals[0].Clauses[0].Time
		default:
			p.fail(c.pos, "found %q, expected hostname, timezone, zoneinfo, features or time", key)
		}
		r.Clauses = append(r.Clauses, gc)
	}
	p.cfg.Globals = append(p.cfg.Globals, r)
}

func (p *exprParser) selector(sel string, pos Pos, env any) *exprProg {
	return &exprProg{prog: p.compile(sel, pos, env, expr.AsBool()), pos: pos, src: strings.TrimSpace(sel)}
}

func (p *exprParser) metricRule(pos Pos, sel string, selPos Pos, cls []clause) {
	r := &MetricRule{Pos: pos}
	pr := p.selector(sel, selPos, MetricEnv{})
	r.Match = MetricID{Kind: IDDynamic, Pred: pr, Src: pr.src}
	for _, c := range cls {
		key, rest, rpos := splitKey(c)
		mc := MetricClause{Pos: c.pos, IfType: stream.TypeNoSupport}
		if key == "delete" {
			if strings.TrimSpace(rest) != "" {
				p.fail(rpos, "found %q, expected end of clause after delete", strings.TrimSpace(rest))
			}
			mc.Op = MetricDelete
			r.Clauses = append(r.Clauses, mc)
			continue
		}
		rest, rpos, ok := trimPrefixPos(rest, rpos, "=")
		if !ok {
			p.fail(rpos, "expected = after %s", key)
		}
		switch key {
		case "name":
			mc.Op = MetricName
		case "pmid":
			mc.Op = MetricPMID
		case "type":
			mc.Op = MetricType
		case "sem":
			mc.Op = MetricSem
		case "units":
			mc.Op = MetricUnits
			rest, mc.Rescale = trailingWord(rest, "rescale")
		case "indom":
			mc.Op = MetricInDom
			if i := strings.LastIndex(rest, " output "); i >= 0 {
				out := strings.Fields(rest[i+len(" output "):])
				rest = rest[:i]
				mc.Output = p.output(out, c.pos)
			}
		default:
			hint := ""
			if key == "value" {
				hint = " (values change in a value rule: value SELECTOR { value = EXPR })"
			}
			p.fail(c.pos, "found %q, expected delete, name, pmid, type, sem, units or indom%s", key, hint)
		}
		mc.Dyn = &exprProg{prog: p.compile(rest, rpos, MetricEnv{}), pos: rpos}
		r.Clauses = append(r.Clauses, mc)
	}
	p.cfg.Metrics = append(p.cfg.Metrics, r)
}

func (p *exprParser) output(f []string, pos Pos) Output {
	if len(f) == 0 {
		p.fail(pos, "expected first, last, min, max, sum, avg, inst N or iname \"name\" after output")
	}
	switch strings.ToLower(f[0]) {
	case "first":
		return Output{Kind: OutputFirst}
	case "last":
		return Output{Kind: OutputLast}
	case "min":
		return Output{Kind: OutputMin}
	case "max":
		return Output{Kind: OutputMax}
	case "sum":
		return Output{Kind: OutputSum}
	case "avg":
		return Output{Kind: OutputAvg}
	case "inst":
		if len(f) == 2 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				return Output{Kind: OutputInst, Inst: int32(n)}
			}
		}
	case "iname":
		if len(f) >= 2 {
			if s, err := strconv.Unquote(strings.Join(f[1:], " ")); err == nil {
				return Output{Kind: OutputIName, IName: s}
			}
		}
	}
	p.fail(pos, "bad output clause %q", strings.Join(f, " "))
	return Output{}
}

func (p *exprParser) indomRule(pos Pos, sel string, selPos Pos, cls []clause) {
	r := &InDomRule{Pos: pos}
	pr := p.selector(sel, selPos, InDomEnv{})
	r.Match = InDomPattern{Pred: pr, Src: pr.src}
	for _, c := range cls {
		key, rest, rpos := splitKey(c)
		ic := InDomClause{Pos: c.pos}
		switch key {
		case "indom":
			rest, rpos, ok := trimPrefixPos(rest, rpos, "=")
			if !ok {
				p.fail(rpos, "expected = after indom")
			}
			rest, ic.Duplicate = trailingWord(rest, "duplicate")
			ic.Op = InDomChangeID
			ic.Dyn = &exprProg{prog: p.compile(rest, rpos, InDomEnv{}), pos: rpos}
		case "iname", "inst":
			// iname "old" = "new" | iname "old" delete | inst N = M | inst N delete
			var old any
			rest = strings.TrimSpace(rest)
			var after string
			if key == "iname" {
				s, err := strconv.QuotedPrefix(rest)
				if err != nil {
					p.fail(rpos, "iname: expected a quoted instance name")
				}
				old, _ = strconv.Unquote(s)
				after = strings.TrimSpace(rest[len(s):])
			} else {
				f := strings.Fields(rest)
				n, err := strconv.Atoi(firstOr(f))
				if err != nil {
					p.fail(rpos, "inst: expected an instance number")
				}
				old = n
				after = strings.TrimSpace(strings.TrimPrefix(rest, firstOr(f)))
			}
			if after == "delete" {
				if key == "iname" {
					ic.Op, ic.OldName = InDomDeleteName, old.(string)
				} else {
					ic.Op, ic.OldInst = InDomDeleteInst, int32(old.(int))
				}
				break
			}
			if !strings.HasPrefix(after, "=") {
				p.fail(rpos, "%s: expected = or delete after the old instance", key)
			}
			v := p.constValue(after[1:], rpos)
			if key == "iname" {
				s, ok := v.(string)
				if !ok {
					p.fail(rpos, "iname: new name must be a string")
				}
				ic.Op, ic.OldName, ic.NewName = InDomRename, old.(string), s
			} else {
				n, ok := v.(int)
				if !ok {
					p.fail(rpos, "inst: new instance must be an integer")
				}
				ic.Op, ic.OldInst, ic.NewInst = InDomRenumber, int32(old.(int)), int32(n)
			}
		default:
			p.fail(c.pos, "found %q, expected indom, iname or inst", key)
		}
		r.Clauses = append(r.Clauses, ic)
	}
	p.cfg.InDoms = append(p.cfg.InDoms, r)
}

func firstOr(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func (p *exprParser) valueRule(pos Pos, sel string, selPos Pos, cls []clause) {
	pr := p.selector(sel, selPos, MetricEnv{})
	if len(cls) != 1 {
		p.fail(pos, "a value rule has exactly one clause: value = EXPR")
	}
	key, rest, rpos := splitKey(cls[0])
	rest, rpos, ok := trimPrefixPos(rest, rpos, "=")
	if key != "value" || !ok {
		p.fail(cls[0].pos, "expected value = EXPR")
	}
	var uses usesIdent
	uses.name = "labels"
	prog := p.compile(rest, rpos, ValueEnv{}, expr.AsFloat64(), expr.Patch(&uses))
	p.cfg.Values = append(p.cfg.Values, &ValueRule{Pos: pos, Match: MetricID{Kind: IDDynamic, Pred: pr, Src: pr.src},
		Expr: &ValueExpr{Src: strings.TrimSpace(rest), Pos: rpos, prog: prog, UsesLabels: uses.found}})
}

func (p *exprParser) textRule(pos Pos, sel string, selPos Pos, cls []clause) {
	r := &TextRule{Pos: pos, Types: stream.TextOneline | stream.TextHelp}
	r.Pred = p.selector(sel, selPos, TextEnv{})
	for _, c := range cls {
		key, rest, rpos := splitKey(c)
		tc := TextClause{Pos: c.pos}
		if key == "delete" {
			tc.Op = TextDelete
			r.Clauses = append(r.Clauses, tc)
			continue
		}
		rest, rpos, ok := trimPrefixPos(rest, rpos, "=")
		if !ok {
			p.fail(rpos, "expected = after %s", key)
		}
		switch key {
		case "text":
			s, ok := p.constValue(rest, rpos).(string)
			if !ok {
				p.fail(rpos, "text: want a string")
			}
			tc.Op, tc.Text = TextChange, s
		case "metric", "indom":
			tc.Op = TextMetric
			if key == "indom" {
				tc.Op = TextInDom
			}
			tc.Dyn = &exprProg{prog: p.compile(rest, rpos, TextEnv{}), pos: rpos}
		default:
			p.fail(c.pos, "found %q, expected delete, text, metric or indom", key)
		}
		r.Clauses = append(r.Clauses, tc)
	}
	p.cfg.Texts = append(p.cfg.Texts, r)
}

func (p *exprParser) labelRule(pos Pos, sel string, selPos Pos, cls []clause) {
	r := &LabelRule{Pos: pos}
	r.Pred = p.selector(sel, selPos, LabelEnv{})
	for _, c := range cls {
		key, rest, rpos := splitKey(c)
		lc := LabelClause{Pos: c.pos}
		if key == "delete" {
			lc.Op = LabelDelete
			r.Clauses = append(r.Clauses, lc)
			continue
		}
		rest, rpos, ok := trimPrefixPos(rest, rpos, "=")
		if !ok {
			p.fail(rpos, "expected = after %s", key)
		}
		v, ok := p.constValue(rest, rpos).(string)
		if !ok {
			p.fail(rpos, "%s: want a string", key)
		}
		switch key {
		case "name":
			lc.Op, lc.Name = LabelRename, v
		case "value":
			lc.Op, lc.Value = LabelValue, v
		default:
			p.fail(c.pos, "found %q, expected delete, name or value", key)
		}
		r.Clauses = append(r.Clauses, lc)
	}
	p.cfg.Labels = append(p.cfg.Labels, r)
}
