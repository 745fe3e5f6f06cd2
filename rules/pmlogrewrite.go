package rules

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// This file is the recursive-descent parser of pmlogrewrite(1) rules, one
// function per production of PCP 6.0.3's src/pmlogrewrite/gram.y. Checks
// that need no archive (identifier ranges, BITS range, a serial missing
// from an indom) are made here, as gram.y makes them; everything that
// depends on the archive is left to Compile.

// LoadPmlogrewrite parses pmlogrewrite rules from each path, as repeated
// -c options do: a file, or a directory whose entries not starting with '.'
// are parsed in sorted order (pmlogrewrite uses readdir order, which is
// not reproducible). Subdirectories are skipped. The first error stops.
func LoadPmlogrewrite(paths ...string) (*Config, error) { return load(false, paths) }

// LoadPmlogrewrite61 is LoadPmlogrewrite with the grammar of PCP 6.1's
// pmlogrewrite, which pmlogredact's rules need: VALUE [REPLACE] /re/ ->
// "new" in metric rules, INAME REDACT and INAME REPLACE /re/ -> "new" in
// instance domain rules, a quoted string as the global hostname.
func LoadPmlogrewrite61(paths ...string) (*Config, error) { return load(true, paths) }

func load(v61 bool, paths []string) (*Config, error) {
	cfg := &Config{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		files := []string{p}
		if st.IsDir() {
			ents, err := os.ReadDir(p)
			if err != nil {
				return nil, err
			}
			files = files[:0]
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				fp := filepath.Join(p, e.Name())
				if fst, err := os.Stat(fp); err != nil {
					return nil, err
				} else if !fst.Mode().IsRegular() {
					continue
				}
				files = append(files, fp)
			}
			sort.Strings(files)
		} else if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a file or directory", p)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			c, err := parse(f, string(src), v61)
			if err != nil {
				return nil, err
			}
			cfg.Append(c)
		}
	}
	return cfg, nil
}

// ParsePmlogrewrite parses one pmlogrewrite configuration. As in
// pmlogrewrite, a file must hold at least one rule. The error, if any, is
// an *Error.
func ParsePmlogrewrite(file, src string) (*Config, error) { return parse(file, src, false) }

// ParsePmlogrewrite61 parses one configuration in PCP 6.1's grammar (see
// LoadPmlogrewrite61).
func ParsePmlogrewrite61(file, src string) (*Config, error) { return parse(file, src, true) }

func parse(file, src string, v61 bool) (cfg *Config, err error) {
	p := &parser{lx: newLexer(file, src), cfg: &Config{Files: []string{file}}, v61: v61}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			cfg, err = nil, e
		}
	}()
	p.advance()
	p.config()
	return p.cfg, nil
}

type parser struct {
	lx  *lexer
	tok token
	cfg *Config
	v61 bool // PCP 6.1's additions (LoadPmlogrewrite61)
}

// fail stops the parse; ParsePmlogrewrite recovers the *Error.
// Our messages are pmlogrewrite's, but for the first letter: PCP is
// pmlogrewrite's wording.
func (p *parser) fail(pos Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	panic(&Error{Pos: pos, Msg: msg, PCP: UpperFirst(msg)})
}

func (p *parser) expected(what string) {
	panic(&Error{Pos: p.tok.pos, Msg: fmt.Sprintf("found %s, expected %s", p.tok.describe(), what), PCP: "Expecting " + what})
}

func (p *parser) warn(pos Pos, format string, args ...any) *Warning {
	p.cfg.Warnings = append(p.cfg.Warnings, Warning{Pos: pos, Msg: fmt.Sprintf(format, args...), Always: true})
	return &p.cfg.Warnings[len(p.cfg.Warnings)-1]
}

func (p *parser) advance() token {
	prev := p.tok
	t, err := p.lx.next()
	if err != nil {
		panic(err)
	}
	p.tok = t
	return prev
}

func (p *parser) is(k tokKind) bool { return p.tok.kind == k }

func (p *parser) accept(k tokKind) bool {
	if p.tok.kind == k {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expect(k tokKind, what string) token {
	if p.tok.kind != k {
		p.expected(what)
	}
	return p.advance()
}

// config: spec { spec } EOF
func (p *parser) config() {
	if p.is(tEOF) {
		p.expected("a global, indom, metric, text or label rule (a file may not be empty)")
	}
	for !p.is(tEOF) {
		switch p.tok.kind {
		case tGlobal:
			p.globalSpec()
		case tInDom:
			p.indomSpec()
		case tMetric:
			p.metricSpec()
		case tText:
			p.textSpec()
		case tLabel:
			p.labelSpec()
		default:
			p.expected("global, indom, metric, text or label")
		}
	}
}

// ---------------------------------------------------------------------------
// numbers

func (p *parser) atoi(t token) int64 {
	v, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil || v > math.MaxInt32 {
		p.fail(t.pos, "number %s out of range", t.text)
	}
	return v
}

func (p *parser) number(what string) int64 {
	return p.atoi(p.expect(tNumber, what))
}

// ---------------------------------------------------------------------------
// global

func (p *parser) globalSpec() {
	r := &GlobalRule{Pos: p.advance().pos}
	p.expect(tLBrace, "{ after global")
	for !p.accept(tRBrace) {
		c := GlobalClause{Pos: p.tok.pos}
		switch p.tok.kind {
		case tHostname:
			p.advance()
			p.expect(tAssign, "-> in hostname clause")
			switch p.tok.kind {
			case tHName, tGName, tNumber, tFloat:
				c.Kind, c.Str = GlobalHostname, p.advance().text
			case tString:
				if !p.v61 {
					p.expected("hostname in hostname clause")
				}
				c.Kind, c.Str = GlobalHostname, p.advance().text
			default:
				p.expected("hostname in hostname clause")
			}
		case tTimezone, tZoneinfo:
			kind, what := GlobalTimeZone, "timezone"
			if p.is(tZoneinfo) {
				kind, what = GlobalZoneInfo, "zoneinfo"
			}
			p.advance()
			p.expect(tAssign, "-> in "+what+" clause")
			c.Kind, c.Str = kind, p.expect(tString, what+" string in "+what+" clause").text
		case tFeatures:
			p.advance()
			p.expect(tAssign, "-> in features clause")
			c.Kind, c.Features = GlobalFeatures, p.featureBits()
		case tTime:
			p.advance()
			p.expect(tAssign, "-> in time clause")
			c.Kind, c.Time = GlobalTime, p.signTime()
			// pmlogrewrite has read the next token (the time may go
			// on) when it acts on the clause.
			c.PCPLine = p.tok.pos.Line
		default:
			p.expected("hostname, time, timezone, zoneinfo, features or }")
		}
		r.Clauses = append(r.Clauses, c)
	}
	p.cfg.Globals = append(p.cfg.Globals, r)
}

func (p *parser) featureBits() uint32 {
	if p.is(tNumber) {
		t := p.advance()
		v, err := strconv.ParseUint(t.text, 10, 64)
		if err != nil || v > math.MaxUint32 {
			p.fail(t.pos, "features value %s out of range", t.text)
		}
		return uint32(v)
	}
	if !p.accept(tBits) {
		p.expected("features value (a number or bits(...)) in features clause")
	}
	p.expect(tLParen, "( after \"bits\" in features clause")
	var v uint32
	for {
		t := p.expect(tNumber, "list of bit numbers after \"bits(\" in features clause")
		b, err := strconv.Atoi(t.text)
		if err != nil || b < 0 || b > 31 {
			p.fail(t.pos, "bit %q not in the range 0..31", t.text)
		}
		v |= 1 << b
		if !p.accept(tComma) {
			break
		}
	}
	p.expect(tRParen, ") after \"bits(\" in features clause")
	return v
}

const timeWhat = "delta of the form [+-][HH:[MM:]]SS[.d...] in time clause"

// signTime: [+|-] ( N:N:(F|N) | N:(F|N) | F | N )
func (p *parser) signTime() TimeShift {
	var ts TimeShift
	if p.accept(tMinus) {
		ts.Neg = true
	} else {
		p.accept(tPlus)
	}
	secs := func() (int64, int32, token) {
		t := p.tok
		switch t.kind {
		case tNumber:
			p.advance()
			return p.atoi(t), 0, t
		case tFloat:
			p.advance()
			f, _ := strconv.ParseFloat(t.text, 64)
			whole := math.Trunc(f)
			return int64(whole), int32(1e9*(f-whole) + 0.5), t
		}
		p.expected(timeWhat)
		return 0, 0, t
	}
	if p.is(tFloat) {
		s, ns, t := secs()
		if s > 59 {
			p.warn(t.pos, "seconds (%s) in time clause more than 59", t.text).As("Seconds (%.6f) in time clause more than 59", float64(s)+float64(ns)/1e9)
		}
		ts.Sec, ts.Nsec = s, ns
		return ts
	}
	first := p.expect(tNumber, timeWhat)
	a := p.atoi(first)
	if !p.accept(tColon) {
		if a > 59 {
			p.warn(first.pos, "seconds (%d) in time clause more than 59", a).As("Seconds (%d) in time clause more than 59", a)
		}
		ts.Sec = a
		return ts
	}
	if p.is(tNumber) {
		bt := p.advance()
		b := p.atoi(bt)
		if p.accept(tColon) {
			s, ns, st := secs()
			if b > 59 {
				p.warn(bt.pos, "minutes (%d) in time clause more than 59", b).As("Minutes (%d) in time clause more than 59", b)
			}
			if s > 59 {
				p.warn(st.pos, "seconds (%s) in time clause more than 59", st.text).As("Seconds (%.6f) in time clause more than 59", float64(s)+float64(ns)/1e9)
			}
			ts.Sec, ts.Nsec = a*3600+b*60+s, ns
			return ts
		}
		if a > 59 {
			p.warn(first.pos, "minutes (%d) in time clause more than 59", a).As("Minutes (%d) in time clause more than 59", a)
		}
		if b > 59 {
			p.warn(bt.pos, "seconds (%d) in time clause more than 59", b).As("Seconds (%d) in time clause more than 59", b)
		}
		ts.Sec = a*60 + b
		return ts
	}
	s, ns, st := secs()
	if a > 59 {
		p.warn(first.pos, "minutes (%d) in time clause more than 59", a).As("Minutes (%d) in time clause more than 59", a)
	}
	if s > 59 {
		p.warn(st.pos, "seconds (%s) in time clause more than 59", st.text).As("Seconds (%.6f) in time clause more than 59", float64(s)+float64(ns)/1e9)
	}
	ts.Sec, ts.Nsec = a*60+s, ns
	return ts
}

// ---------------------------------------------------------------------------
// identifiers

// dynamicDomain is DYNAMIC_PMID: metrics of that domain are derived or
// dynamic, and indoms may not use it.
const dynamicDomain = 511

func splitDots(s string) []string { return strings.Split(s, ".") }

func (p *parser) field(t token, s string) uint32 {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v > math.MaxInt32 {
		p.fail(t.pos, "number %s in %s out of range", s, t.text)
	}
	return uint32(v)
}

// indomInt: FLOAT (d.s) | INDOM_STAR (d.*)
func (p *parser) indomInt(what string) InDomPattern {
	t := p.tok
	var r InDomPattern
	switch t.kind {
	case tFloat:
		f := splitDots(t.text)
		if f[1] == "" {
			p.fail(t.pos, "missing serial field for indom %s", t.text)
		}
		r.Domain, r.Serial = p.field(t, f[0]), p.field(t, f[1])
	case tInDomStar:
		r.Domain, r.Star = p.field(t, splitDots(t.text)[0]), true
	default:
		p.expected(what)
	}
	p.advance()
	if r.Domain < 1 || r.Domain >= dynamicDomain {
		p.fail(t.pos, "illegal domain field (%d) for indom", r.Domain)
	}
	if r.Serial >= 1<<22 {
		p.fail(t.pos, "illegal serial field (%d) for indom", r.Serial)
	}
	r.Src = t.text
	return r
}

func (p *parser) indomTarget(what string) InDomTarget {
	r := p.indomInt(what)
	return InDomTarget{Domain: r.Domain, Serial: r.Serial, StarSerial: r.Star}
}

func (p *parser) checkPMIDFields(t token, d, c, i uint32) {
	if d < 1 || d > dynamicDomain {
		p.fail(t.pos, "illegal domain field (%d) for pmid", d)
	}
	if d == dynamicDomain {
		p.warn(t.pos, "dynamic metric domain field (%d) for pmid", d).As("Dynamic metric domain field (%d) for pmid", d)
	}
	if c >= 4096 {
		p.fail(t.pos, "illegal cluster field (%d) for pmid", c)
	}
	if i >= 1024 {
		p.fail(t.pos, "illegal item field (%d) for pmid", i)
	}
}

// pmidInt: PMID_INT (d.c.i) | PMID_STAR (d.c.* or d.*.*)
func (p *parser) pmidInt(what string) MetricID {
	t := p.tok
	var m MetricID
	switch t.kind {
	case tPMIDInt:
		f := splitDots(t.text)
		m = MetricID{Kind: IDExact, Domain: p.field(t, f[0]), Cluster: p.field(t, f[1]), Item: p.field(t, f[2])}
	case tPMIDStar:
		f := splitDots(t.text)
		if f[1] == "*" {
			m = MetricID{Kind: IDStar2, Domain: p.field(t, f[0])}
		} else {
			m = MetricID{Kind: IDStar1, Domain: p.field(t, f[0]), Cluster: p.field(t, f[1])}
		}
	default:
		p.expected(what)
	}
	p.advance()
	p.checkPMIDFields(t, m.Domain, m.Cluster, m.Item)
	m.Src = t.text
	return m
}

func (p *parser) pmidTarget(what string) PMIDTarget {
	m := p.pmidInt(what)
	return PMIDTarget{Domain: m.Domain, Cluster: m.Cluster, Item: m.Item,
		StarCluster: m.Kind == IDStar2, StarItem: m.Kind != IDExact}
}

const metricIDWhat = "metric name or <domain>.<cluster>.<item> or <domain>.<cluster>.* or <domain>.*.*"

// pmidOrName: pmidInt | GNAME
func (p *parser) pmidOrName() MetricID {
	if p.is(tGName) {
		t := p.advance()
		return MetricID{Kind: IDName, Name: t.text, Src: t.text}
	}
	return p.pmidInt(metricIDWhat)
}

// ---------------------------------------------------------------------------
// indom rules

func (p *parser) indomSpec() {
	r := &InDomRule{Pos: p.advance().pos}
	r.Match = p.indomInt("<domain>.<serial> or <domain>.* in indom rule")
	p.expect(tLBrace, "{ after indom rule identifier")
	for !p.accept(tRBrace) {
		c := InDomClause{Pos: p.tok.pos}
		switch p.tok.kind {
		case tInDom:
			p.advance()
			p.expect(tAssign, "-> in indom clause")
			c.Op = InDomChangeID
			c.Duplicate = p.accept(tDuplicate)
			c.Target = p.indomTarget("<domain>.<serial> or <domain>.* in indom clause")
		case tIName:
			p.advance()
			if p.v61 && p.accept(tRedact) {
				c.Op = InDomRedact
				break
			}
			if p.v61 && p.accept(tReplace) {
				c.Op, c.Change = InDomReplace, p.replacement("iname")
				break
			}
			c.OldName = p.expect(tString, "old external instance name string in iname clause").text
			p.expect(tAssign, "-> in iname clause")
			switch {
			case p.is(tString):
				c.Op, c.NewName = InDomRename, p.advance().text
			case p.accept(tDelete):
				c.Op = InDomDeleteName
			default:
				p.expected("new external instance name string or DELETE in iname clause")
			}
		case tInst:
			p.advance()
			c.OldInst = int32(p.number("old internal instance identifier in inst clause"))
			p.expect(tAssign, "-> in inst clause")
			switch {
			case p.is(tNumber):
				c.Op, c.NewInst = InDomRenumber, int32(p.atoi(p.advance()))
			case p.accept(tDelete):
				c.Op = InDomDeleteInst
			default:
				p.expected("new internal instance identifier or DELETE in inst clause")
			}
		default:
			p.expected("indom, iname, inst or }")
		}
		r.Clauses = append(r.Clauses, c)
	}
	p.cfg.InDoms = append(p.cfg.InDoms, r)
}

// ---------------------------------------------------------------------------
// metric rules

func (p *parser) metricSpec() {
	r := &MetricRule{Pos: p.advance().pos}
	r.Match = p.metricIDOrFail()
	p.expect(tLBrace, "{ after metric rule identifier")
	for !p.accept(tRBrace) {
		r.Clauses = append(r.Clauses, p.metricOpt())
	}
	for i := range r.Clauses {
		r.Clauses[i].RuleEnd = p.tok.pos.Line
	}
	p.cfg.Metrics = append(p.cfg.Metrics, r)
}

func (p *parser) metricIDOrFail() MetricID {
	switch p.tok.kind {
	case tGName, tPMIDInt, tPMIDStar:
		return p.pmidOrName()
	}
	p.expected(metricIDWhat + " in metric rule")
	return MetricID{}
}

func (p *parser) metricOpt() MetricClause {
	c := MetricClause{Pos: p.tok.pos, IfType: stream.TypeNoSupport}
	switch p.tok.kind {
	case tDelete:
		p.advance()
		c.Op = MetricDelete
	case tPMID:
		p.advance()
		p.expect(tAssign, "-> in pmid clause")
		c.Op = MetricPMID
		c.PMID = p.pmidTarget("<domain>.<cluster>.<item> or <domain>.<cluster>.* or <domain>.*.* in pmid clause")
	case tName:
		p.advance()
		p.expect(tAssign, "-> in name clause")
		if !p.is(tGName) {
			// (pmlogrewrite 6.0.3 says "iname clause" here)
			panic(&Error{Pos: p.tok.pos, Msg: fmt.Sprintf("found %s, expected metric name in name clause", p.tok.describe()),
				PCP: "Expecting metric name in iname clause"})
		}
		c.Op, c.Name = MetricName, p.advance().text
	case tType:
		p.advance()
		c.Op = MetricType
		if p.accept(tIf) {
			c.HasIf = true
			c.IfType = stream.Type(p.expect(tTypeName, "XXX (from PM_TYPE_XXX) after if in type clause").ival)
		}
		p.expect(tAssign, "-> in type clause")
		c.Type = stream.Type(p.expect(tTypeName, "XXX (from PM_TYPE_XXX) in type clause").ival)
	case tSem:
		p.advance()
		p.expect(tAssign, "-> in sem clause")
		c.Op, c.Sem = MetricSem, stream.Sem(p.expect(tSemName, "XXX (from PM_SEM_XXX) in sem clause").ival)
	case tUnits:
		p.advance()
		p.expect(tAssign, "-> in units clause")
		var dim [3]int
		for i := range dim {
			neg := false
			if p.accept(tMinus) {
				neg = true
			} else {
				p.accept(tPlus)
			}
			dim[i] = int(p.number("3 numeric values for dim* fields of units"))
			if neg {
				dim[i] = -dim[i]
			}
			p.expect(tComma, ", between fields of units")
		}
		ss := p.expect(tSpaceName, "0 or XXX (from PM_SPACE_XXX) for scaleSpace field of units").ival
		p.expect(tComma, ", between fields of units")
		st := p.expect(tTimeName, "0 or XXX (from PM_TIME_XXX) for scaleTime field of units").ival
		p.expect(tComma, ", between fields of units")
		sc := p.expect(tCountName, "0 or ONE for scaleCount field of units").ival
		c.Op = MetricUnits
		c.Units = stream.NewUnits(dim[0], dim[1], dim[2], uint(ss), uint(st), sc)
		if c.Rescale = p.accept(tRescale); !c.Rescale {
			c.PCPLine = p.tok.pos.Line
		}
	case tInDom:
		p.advance()
		p.expect(tAssign, "-> in indom clause")
		c.Op = MetricInDom
		if p.accept(tNull) {
			c.InDom = InDomTarget{Null: true}
		} else {
			c.InDom = p.indomTarget("<domain>.<serial> or NULL in indom clause")
		}
		if !p.is(tOutput) {
			c.PCPLine = p.tok.pos.Line
		}
		if p.accept(tOutput) {
			switch p.tok.kind {
			case tInst:
				p.advance()
				c.Output = Output{Kind: OutputInst, Inst: int32(p.number("instance number after OUTPUT INST"))}
			case tIName:
				p.advance()
				c.Output = Output{Kind: OutputIName, IName: p.expect(tString, "instance name string after OUTPUT INAME").text}
			case tOutputType:
				c.Output = Output{Kind: OutputKind(p.advance().ival)}
			default:
				p.expected("FIRST or LAST or INST or INAME or MIN or MAX or SUM or AVG for OUTPUT instance option")
			}
		}
	case tValue:
		if !p.v61 {
			p.expected("delete, pmid, name, type, sem, units, indom or }")
		}
		p.advance()
		p.accept(tReplace)
		c.Op, c.Change = MetricStrValue, p.replacement("metric value")
	default:
		// pmlogrewrite's grammar has no error rule here: yacc's own words
		panic(&Error{Pos: p.tok.pos, Msg: fmt.Sprintf("found %s, expected delete, pmid, name, type, sem, units, indom, value or }", p.tok.describe()),
			PCP: "syntax error"})
	}
	return c
}

// patternText takes a /pattern/ or a "string".
func (p *parser) patternText(expected string) string {
	if !p.is(tPattern) && !p.is(tString) {
		p.expected(expected)
	}
	return p.advance().text
}

// replacement parses `/re/ -> "new"` (either may be written as a /pattern/
// or a "string", as PCP 6.1's grammar allows) and compiles it.
func (p *parser) replacement(what string) *Replace {
	at := p.tok.pos
	pat := p.patternText("<regular expression> in " + what + " clause")
	p.expect(tAssign, "-> in "+what+" clause")
	with := p.patternText("<replacement> in " + what + " clause")
	r, err := NewReplace(pat, with)
	if err != nil {
		p.fail(at, "regcomp error: %v", err)
	}
	return r
}

// ---------------------------------------------------------------------------
// text rules

func (p *parser) textSpec() {
	r := &TextRule{Pos: p.advance().pos}
	switch p.tok.kind {
	case tMetric:
		p.advance()
		r.Metric = p.metricIDOrFail()
	case tInDom:
		p.advance()
		r.IsInDom = true
		r.InDom = p.indomInt("<domain>.<serial> or <domain>.* in text rule")
	default:
		p.expected("metric or indom after text")
	}
	for {
		switch p.tok.kind {
		case tTextStar:
			r.Types |= stream.TextOneline | stream.TextHelp
		case tHelp:
			r.Types |= stream.TextHelp
		case tOneline:
			r.Types |= stream.TextOneline
		default:
			goto done
		}
		p.advance()
	}
done:
	if r.Types == 0 {
		r.Types = stream.TextOneline
	}
	if p.is(tString) || p.is(tTextString) {
		s := p.advance().text
		r.Content = &s
	}
	p.expect(tLBrace, "{ (or oneline, help, * or a content string) in text rule")
	for !p.accept(tRBrace) {
		c := TextClause{Pos: p.tok.pos}
		switch {
		case p.is(tDelete):
			p.advance()
			c.Op = TextDelete
		case p.is(tText):
			p.advance()
			p.expect(tAssign, "-> in text clause")
			if !p.is(tString) && !p.is(tTextString) {
				p.expected("a text string in text clause")
			}
			c.Op, c.Text = TextChange, p.advance().text
		case p.is(tMetric) && !r.IsInDom:
			p.advance()
			p.expect(tAssign, "-> in metric clause")
			c.Op, c.PMID = TextMetric, p.pmidTarget("<domain>.<cluster>.<item> or <domain>.<cluster>.* or <domain>.*.* in metric clause")
		case p.is(tInDom) && r.IsInDom:
			p.advance()
			p.expect(tAssign, "-> in indom clause")
			c.Op, c.InDom = TextInDom, p.indomTarget("<domain>.<serial> or <domain>.* in indom clause")
		default:
			if r.IsInDom {
				p.expected("delete, text, indom or }")
			}
			p.expected("delete, text, metric or }")
		}
		r.Clauses = append(r.Clauses, c)
	}
	p.cfg.Texts = append(p.cfg.Texts, r)
}

// ---------------------------------------------------------------------------
// label rules

func (p *parser) labelSpec() {
	r := &LabelRule{Pos: p.advance().pos}
	tg := &r.Target
	switch p.tok.kind {
	case tContext:
		p.advance()
		tg.Type = stream.LabelContext
		p.labelDetails(r)
	case tDomain:
		p.advance()
		tg.Type = stream.LabelDomain
		t := p.expect(tNumber, "domain number in label domain rule")
		d := p.atoi(t)
		p.checkPMIDFields(t, uint32(d), 0, 0)
		tg.Domain = uint32(d)
		p.labelDetails(r)
	case tCluster:
		p.advance()
		tg.Type = stream.LabelCluster
		tg.Cluster = p.clusterTarget("<domain>.<cluster> or <domain>.* in label cluster rule")
		p.labelDetails(r)
	case tItem:
		p.advance()
		tg.Type = stream.LabelItem
		tg.Metric = p.metricIDOrFail()
		p.labelDetails(r)
	case tInDom, tInstances:
		inst := p.is(tInstances)
		p.advance()
		tg.Type = stream.LabelInDom
		if inst {
			tg.Type = stream.LabelInstances
		}
		tg.InDom = p.indomInt("<domain>.<serial> or <domain>.* in label rule")
		if inst {
			tg.AnyInst = true
			switch p.tok.kind {
			case tString:
				tg.AnyInst, tg.HasInstName, tg.InstName = false, true, p.advance().text
				p.labelDetails(r)
			case tNumber:
				tg.AnyInst, tg.Inst = false, int32(p.atoi(p.advance()))
				p.labelDetails(r)
			case tLabelStar:
				p.advance()
				p.labelDetails(r)
			}
		} else {
			p.labelDetails(r)
		}
	default:
		p.expected("context, domain, cluster, item, indom or instances after label")
	}
	p.expect(tLBrace, "{ (or label name and value) in label rule")
	for !p.accept(tRBrace) {
		c := LabelClause{Pos: p.tok.pos}
		switch p.tok.kind {
		case tDelete:
			p.advance()
			c.Op = LabelDelete
		case tLabel:
			p.advance()
			p.expect(tAssign, "-> in label clause")
			c.Op, c.Name = LabelRename, p.jsonName("label name string in label clause")
		case tValue:
			p.advance()
			p.expect(tAssign, "-> in value clause")
			c.Op, c.Value = LabelValue, p.jsonValue("label value in value clause")
		case tNew:
			p.advance()
			c.Op = LabelNew
			c.Name = p.jsonName("label name string after new")
			c.Value = p.jsonValue("label value after new label name")
			if r.Name != nil || r.Value != nil {
				p.warn(c.Pos, "the target label name and value must both not be specified for a NEW label and will be ignored")
			}
		default:
			p.labelIDClause(r, &c)
		}
		r.Clauses = append(r.Clauses, c)
	}
	p.cfg.Labels = append(p.cfg.Labels, r)
}

var labelOptWhat = map[uint32]string{
	stream.LabelContext:   "delete, label, value, new or }",
	stream.LabelDomain:    "delete, domain, label, value, new or }",
	stream.LabelCluster:   "delete, cluster, label, value, new or }",
	stream.LabelItem:      "delete, item, label, value, new or }",
	stream.LabelInDom:     "delete, indom, label, value, new or }",
	stream.LabelInstances: "delete, instances, instance, label, value, new or }",
}

// labelIDClause parses the clause that moves labels to another object;
// which one is allowed depends on the rule's target.
func (p *parser) labelIDClause(r *LabelRule, c *LabelClause) {
	ty := r.Target.Type
	switch {
	case ty == stream.LabelDomain && p.is(tDomain):
		p.advance()
		p.expect(tAssign, "-> in domain clause")
		c.Op, c.Domain = LabelDomain, uint32(p.number("domain number in domain clause"))
	case ty == stream.LabelCluster && p.is(tCluster):
		p.advance()
		p.expect(tAssign, "-> in cluster clause")
		c.Op, c.Cluster = LabelCluster, p.clusterTarget("<domain>.<cluster> or <domain>.* in cluster clause")
	case ty == stream.LabelItem && p.is(tItem):
		p.advance()
		p.expect(tAssign, "-> in item clause")
		c.Op, c.PMID = LabelItem, p.pmidTarget("<domain>.<cluster>.<item> or <domain>.<cluster>.* or <domain>.*.* in item clause")
	case ty == stream.LabelInDom && p.is(tInDom):
		p.advance()
		p.expect(tAssign, "-> in indom clause")
		c.Op, c.InDom = LabelInDom, p.indomTarget("<domain>.<serial> or <domain>.* in indom clause")
	case ty == stream.LabelInstances && p.is(tInstances):
		p.advance()
		p.expect(tAssign, "-> in instances clause")
		c.Op, c.InDom = LabelInstances, p.indomTarget("<domain>.<serial> or <domain>.* in instances clause")
	case ty == stream.LabelInstances && p.is(tInstance):
		p.advance()
		p.expect(tAssign, "-> in instance clause")
		c.Op, c.Instance = LabelInstance, int32(p.number("instance number in instance clause"))
	default:
		p.expected(labelOptWhat[ty])
	}
}

// clusterTarget: FLOAT (d.c) | INDOM_STAR (d.*)
func (p *parser) clusterTarget(what string) ClusterTarget {
	t := p.tok
	var c ClusterTarget
	switch t.kind {
	case tFloat:
		f := splitDots(t.text)
		if f[1] == "" {
			p.fail(t.pos, "missing cluster field in %s", t.text)
		}
		c.Domain, c.Cluster = p.field(t, f[0]), p.field(t, f[1])
	case tInDomStar:
		c.Domain, c.StarCluster = p.field(t, splitDots(t.text)[0]), true
	default:
		p.expected(what)
	}
	p.advance()
	p.checkPMIDFields(t, c.Domain, c.Cluster, 0)
	return c
}

// labelDetails: optlabeldetails := jsonname optlabelvalue | '*' optlabelvalue | ε
func (p *parser) labelDetails(r *LabelRule) {
	switch p.tok.kind {
	case tString, tJSONString:
		n := p.jsonName("")
		r.Name = &n
	case tLabelStar:
		p.advance()
	default:
		return
	}
	switch p.tok.kind {
	case tLabelStar:
		p.advance()
	case tString, tJSONString, tNumber, tJSONNumber, tMinus, tJSONTrue, tJSONFalse, tJSONNull:
		v := p.jsonValue("label value (a string, number, true, false or null) or *")
		r.Value = &v
	}
}

// jsonName: STRING | JSON_STRING (only "" lexes as the latter)
func (p *parser) jsonName(what string) string {
	switch p.tok.kind {
	case tString:
		return p.advance().text
	case tJSONString:
		t := p.advance().text
		return t[1 : len(t)-1]
	}
	p.expected(what)
	return ""
}

// jsonValue: jsonname | [-] NUMBER | [-] JSON_NUMBER | true | false | null,
// returned as JSON text.
func (p *parser) jsonValue(what string) string {
	switch p.tok.kind {
	case tString:
		return `"` + p.advance().text + `"`
	case tJSONString:
		return p.advance().text
	case tJSONTrue, tJSONFalse, tJSONNull:
		return strings.ToLower(p.advance().text)
	case tNumber, tJSONNumber:
		return p.advance().text
	case tMinus:
		p.advance()
		if p.is(tNumber) || p.is(tJSONNumber) {
			return "-" + p.advance().text
		}
	}
	p.expected(what)
	return ""
}

// AsError returns err as an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
