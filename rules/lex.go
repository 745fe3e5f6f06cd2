package rules

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file is the lexer of the pmlogrewrite configuration language. It
// follows PCP 6.0.3's flex scanner (src/pmlogrewrite/lex.l) rule for rule:
// keywords are recognised only in the start condition that expects them,
// the longest match wins and, between matches of equal length, the rule
// listed first in lex.l wins (keywords and the condition-specific patterns
// come before the generic ones). Start conditions change as keywords are
// read, exactly as the flex actions do, so "type" in a metric rule makes
// "U64" a type name while elsewhere it is a metric name.

type tokKind uint8

const (
	tEOF tokKind = iota
	tLBrace
	tRBrace
	tPlus
	tMinus
	tColon
	tComma
	tLParen
	tRParen
	tAssign
	tGlobal
	tInDom
	tDuplicate
	tMetric
	tHostname
	tTimezone
	tZoneinfo
	tFeatures
	tTime
	tName
	tInst
	tIName
	tDelete
	tPMID
	tNull
	tType
	tIf
	tSem
	tUnits
	tOutput
	tRescale
	tText
	tOneline
	tHelp
	tTextStar
	tLabel
	tContext
	tLabelStar
	tDomain
	tCluster
	tItem
	tInstances
	tInstance
	tNew
	tValue
	tBits
	tGName
	tNumber
	tString
	tTextString
	tHName
	tFloat
	tJSONString
	tJSONNumber
	tJSONTrue
	tJSONFalse
	tJSONNull
	tInDomStar
	tPMIDInt
	tPMIDStar
	tTypeName
	tSemName
	tSpaceName
	tTimeName
	tCountName
	tOutputType
	tRedact  // iname redact (PCP 6.1)
	tReplace // iname replace, value replace (PCP 6.1)
	tPattern // /regular expression/ (PCP 6.1)
)

type lexCond uint8

const (
	cInitial lexCond = iota
	cGlob
	cHost
	cInDom
	cMetric
	cText
	cLabel
	cType
	cIfType
	cSem
	cUnits
	cSpace
	cTime
	cCount
	cOutput
	cKeep = 255 // keyword does not change the condition
)

type ruleState uint8

const (
	sNone ruleState = iota
	sGlobal
	sInDom
	sMetric
	sText
	sLabel
)

type keyword struct {
	word  string
	tok   tokKind
	next  lexCond
	state ruleState // set "mystate" when non-zero
	ival  int
}

// keywords per start condition, in lex.l order.
var keywords = map[lexCond][]keyword{
	cInitial: {
		{"global", tGlobal, cKeep, sGlobal, 0},
		{"metric", tMetric, cKeep, sMetric, 0},
		{"indom", tInDom, cKeep, sInDom, 0},
		{"text", tText, cText, sText, 0},
		{"label", tLabel, cLabel, sLabel, 0},
	},
	cGlob: {
		{"hostname", tHostname, cHost, 0, 0},
		{"time", tTime, cKeep, 0, 0},
		{"tz", tTimezone, cKeep, 0, 0},
		{"timezone", tTimezone, cKeep, 0, 0},
		{"zoneinfo", tZoneinfo, cKeep, 0, 0},
		{"features", tFeatures, cKeep, 0, 0},
		{"bits", tBits, cKeep, 0, 0},
	},
	cInDom: {
		{"delete", tDelete, cKeep, 0, 0},
		{"indom", tInDom, cKeep, 0, 0},
		{"duplicate", tDuplicate, cKeep, 0, 0},
		{"iname", tIName, cKeep, 0, 0},
		{"redact", tRedact, cKeep, 0, 0},
		{"replace", tReplace, cKeep, 0, 0},
		{"inst", tInst, cKeep, 0, 0},
	},
	cMetric: {
		{"delete", tDelete, cKeep, 0, 0},
		{"name", tName, cKeep, 0, 0},
		{"pmid", tPMID, cKeep, 0, 0},
		{"type", tType, cType, 0, 0},
		{"indom", tInDom, cKeep, 0, 0},
		{"NULL", tNull, cKeep, 0, 0},
		{"output", tOutput, cOutput, 0, 0},
		{"sem", tSem, cSem, 0, 0},
		{"units", tUnits, cUnits, 0, 0},
		{"rescale", tRescale, cKeep, 0, 0},
		{"value", tValue, cKeep, 0, 0},
		{"replace", tReplace, cKeep, 0, 0},
	},
	cText: {
		{"delete", tDelete, cKeep, 0, 0},
		{"metric", tMetric, cKeep, 0, 0},
		{"indom", tInDom, cKeep, 0, 0},
		{"oneline", tOneline, cKeep, 0, 0},
		{"help", tHelp, cKeep, 0, 0},
		{"text", tText, cKeep, 0, 0},
		{"*", tTextStar, cKeep, 0, 0},
	},
	cLabel: {
		{"delete", tDelete, cKeep, 0, 0},
		{"context", tContext, cKeep, 0, 0},
		{"domain", tDomain, cKeep, 0, 0},
		{"cluster", tCluster, cKeep, 0, 0},
		{"item", tItem, cKeep, 0, 0},
		{"indom", tInDom, cKeep, 0, 0},
		{"instances", tInstances, cKeep, 0, 0},
		{"instance", tInstance, cKeep, 0, 0},
		{"new", tNew, cKeep, 0, 0},
		{"label", tLabel, cKeep, 0, 0},
		{"value", tValue, cKeep, 0, 0},
		{"true", tJSONTrue, cKeep, 0, 0},
		{"false", tJSONFalse, cKeep, 0, 0},
		{"null", tJSONNull, cKeep, 0, 0},
		{"*", tLabelStar, cKeep, 0, 0},
	},
	cType: {
		{"32", tTypeName, cMetric, 0, 0}, {"U32", tTypeName, cMetric, 0, 1},
		{"64", tTypeName, cMetric, 0, 2}, {"U64", tTypeName, cMetric, 0, 3},
		{"FLOAT", tTypeName, cMetric, 0, 4}, {"DOUBLE", tTypeName, cMetric, 0, 5},
		{"if", tIf, cIfType, 0, 0},
	},
	cIfType: {
		{"32", tTypeName, cType, 0, 0}, {"U32", tTypeName, cType, 0, 1},
		{"64", tTypeName, cType, 0, 2}, {"U64", tTypeName, cType, 0, 3},
		{"FLOAT", tTypeName, cType, 0, 4}, {"DOUBLE", tTypeName, cType, 0, 5},
	},
	cOutput: {
		{"first", tOutputType, cMetric, 0, int(OutputFirst)},
		{"last", tOutputType, cMetric, 0, int(OutputLast)},
		{"min", tOutputType, cMetric, 0, int(OutputMin)},
		{"max", tOutputType, cMetric, 0, int(OutputMax)},
		{"sum", tOutputType, cMetric, 0, int(OutputSum)},
		{"avg", tOutputType, cMetric, 0, int(OutputAvg)},
		{"inst", tInst, cMetric, 0, 0},
		{"iname", tIName, cMetric, 0, 0},
	},
	cSem: {
		{"COUNTER", tSemName, cMetric, 0, 1},
		{"INSTANT", tSemName, cMetric, 0, 3},
		{"DISCRETE", tSemName, cMetric, 0, 4},
	},
	cSpace: {
		{"BYTE", tSpaceName, cUnits, 0, 0}, {"KBYTE", tSpaceName, cUnits, 0, 1},
		{"MBYTE", tSpaceName, cUnits, 0, 2}, {"GBYTE", tSpaceName, cUnits, 0, 3},
		{"TBYTE", tSpaceName, cUnits, 0, 4}, {"PBYTE", tSpaceName, cUnits, 0, 5},
		{"EBYTE", tSpaceName, cUnits, 0, 6}, {"0", tSpaceName, cUnits, 0, 0},
	},
	cTime: {
		{"NSEC", tTimeName, cUnits, 0, 0}, {"USEC", tTimeName, cUnits, 0, 1},
		{"MSEC", tTimeName, cUnits, 0, 2}, {"SEC", tTimeName, cUnits, 0, 3},
		{"MIN", tTimeName, cUnits, 0, 4}, {"HOUR", tTimeName, cUnits, 0, 5},
		{"0", tTimeName, cUnits, 0, 0},
	},
	cCount: {
		{"ONE", tCountName, cMetric, 0, 0},
	},
}

type token struct {
	kind tokKind
	text string // raw text, or the string's content for tString/tTextString
	ival int    // keyword value (type, sem, scale, output)
	pos  Pos
}

// describe says what a token is, for "found ..." in messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tString, tTextString:
		return fmt.Sprintf("string %q", t.text)
	case tJSONString:
		return "string " + t.text
	case tGName, tHName:
		return fmt.Sprintf("name %q", t.text)
	case tNumber, tFloat, tJSONNumber:
		return "number " + t.text
	case tInDomStar, tPMIDInt, tPMIDStar:
		return "identifier " + t.text
	}
	return fmt.Sprintf("%q", t.text)
}

type lexer struct {
	file  string
	src   string
	off   int
	line  int
	col   int
	cond  lexCond
	state ruleState
	comma int
}

func newLexer(file, src string) *lexer {
	return &lexer{file: file, src: src, line: 1, col: 1}
}

func (l *lexer) pos() Pos { return Pos{File: l.file, Line: l.line, Col: l.col} }

// advance consumes n bytes, keeping line and column.
func (l *lexer) advance(n int) {
	for _, r := range l.src[l.off : l.off+n] {
		if r == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
	}
	l.off += n
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }

func digits(s string, i int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j - i
}

// next returns the next token, or an error for a character no rule matches.
func (l *lexer) next() (token, *Error) {
	for {
		if l.off >= len(l.src) {
			return token{kind: tEOF, pos: l.pos()}, nil
		}
		c := l.src[l.off]
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r':
			l.advance(1)
			continue
		case c == '#':
			n := strings.IndexByte(l.src[l.off:], '\n')
			if n < 0 {
				n = len(l.src) - l.off
			}
			l.advance(n)
			continue
		}
		break
	}
	s := l.src[l.off:]
	pos := l.pos()

	// 1. keywords of the current start condition
	bestLen, best := 0, token{}
	var bestKw *keyword
	for i := range keywords[l.cond] {
		kw := &keywords[l.cond][i]
		if len(kw.word) > bestLen && len(s) >= len(kw.word) && strings.EqualFold(s[:len(kw.word)], kw.word) {
			bestLen, bestKw = len(kw.word), kw
			best = token{kind: kw.tok, ival: kw.ival}
		}
	}
	try := func(n int, k tokKind) {
		if n > bestLen {
			bestLen, bestKw = n, nil
			best = token{kind: k}
		}
	}
	// 2. condition-specific patterns, listed before the generic ones
	switch l.cond {
	case cHost:
		if isAlnum(s[0]) {
			n := 1
			for n < len(s) && (isAlnum(s[n]) || s[n] == '.' || s[n] == '-') {
				n++
			}
			try(n, tHName)
		}
	case cUnits:
		if s[0] == ',' {
			try(1, tComma)
		}
	case cCount:
		try(digits(s, 0), tCountName)
	}
	// 3. generic patterns, in lex.l order
	if s[0] == '"' {
		try(matchString(s), tString)
		try(matchTextString(s), tTextString)
	}
	if s[0] == '/' {
		try(matchPattern(s), tPattern)
	}
	if isDigit(s[0]) {
		d := digits(s, 0)
		try(d, tNumber)
		if d < len(s) && s[d] == '.' {
			try(d+1+digits(s, d+1), tFloat)
			if d+1 < len(s) && s[d+1] == '*' {
				try(d+2, tInDomStar)
			}
			if d2 := digits(s, d+1); d2 > 0 && d+1+d2 < len(s) && s[d+1+d2] == '.' {
				p := d + 2 + d2
				if d3 := digits(s, p); d3 > 0 {
					try(p+d3, tPMIDInt)
				}
				if p < len(s) && s[p] == '*' {
					try(p+1, tPMIDStar)
				}
			}
			if d+3 < len(s) && s[d+1:d+4] == "*.*" {
				try(d+4, tPMIDStar)
			}
		}
		try(matchJSONNumber(s), tJSONNumber)
	}
	if s[0] == '"' {
		try(matchJSONString(s), tJSONString)
	}
	if isLetter(s[0]) {
		try(matchGName(s), tGName)
	}
	if strings.HasPrefix(s, "->") {
		try(2, tAssign)
	}
	if bestLen == 0 {
		if k, ok := punct[s[0]]; ok {
			try(1, k)
		}
	}
	if bestLen == 0 {
		r, _ := utf8.DecodeRuneInString(s)
		msg := fmt.Sprintf("unexpected character %q", r)
		return token{}, &Error{Pos: pos, Msg: msg, PCP: UpperFirst(msg)}
	}
	best.pos = pos
	best.text = s[:bestLen]
	switch best.kind {
	case tString, tPattern:
		best.text = s[1 : bestLen-1]
	case tTextString:
		best.text = unescapeText(s[1 : bestLen-1])
	case tLBrace:
		switch l.state {
		case sGlobal:
			l.cond = cGlob
		case sInDom:
			l.cond = cInDom
		case sMetric:
			l.cond = cMetric
		}
	case tRBrace:
		l.state = sNone
		l.cond = cInitial
	case tComma:
		if l.cond == cUnits {
			l.comma++
			switch l.comma {
			case 3:
				l.cond = cSpace
			case 4:
				l.cond = cTime
			case 5:
				l.cond = cCount
			}
		}
	case tCountName:
		if bestKw == nil {
			fmt.Sscan(best.text, &best.ival)
		}
		l.cond = cMetric
	case tHName:
		l.cond = cGlob
	}
	if bestKw != nil {
		if bestKw.state != 0 {
			l.state = bestKw.state
		}
		if bestKw.next != cKeep {
			l.cond = bestKw.next
		}
		if bestKw.tok == tUnits {
			l.comma = 0
		}
	}
	l.advance(bestLen)
	return best, nil
}

var punct = map[byte]tokKind{
	'{': tLBrace, '}': tRBrace, '+': tPlus, '-': tMinus, ':': tColon,
	',': tComma, '(': tLParen, ')': tRParen,
}

// matchPattern: \/[^/\n][^/\n]*\/ (a regular expression, PCP 6.1's
// pmlogrewrite)
func matchPattern(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return 0
		case '/':
			if i == 1 {
				return 0
			}
			return i + 1
		}
	}
	return 0
}

// matchString: \"[^\"\n][^\"\n]*\"
func matchString(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return 0
		case '"':
			if i == 1 {
				return 0
			}
			return i + 1
		}
	}
	return 0
}

// matchTextString: \"(\\\"|[^\"])+\" with flex's longest match: the
// closing quote is the last quote reachable before a quote that is not
// escaped by a backslash.
func matchTextString(s string) int {
	best := 0
	for i := 1; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		if i >= 2 {
			best = i + 1
		}
		if i < 2 || s[i-1] != '\\' {
			break
		}
	}
	return best
}

// matchJSONString: \"(\\[\"\\/bfnrt]|\\uXXXX|[^\"\\\n])*\"
func matchJSONString(s string) int {
	i := 1
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c == '\n':
			return 0
		case c == '\\':
			if i+1 >= len(s) {
				return 0
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) {
					return 0
				}
				for _, h := range []byte(s[i+2 : i+6]) {
					if !(isDigit(h) || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0
					}
				}
				i += 6
			default:
				return 0
			}
		default:
			i++
		}
	}
	return 0
}

// matchJSONNumber: (0|[1-9][0-9]*)(\.[0-9]+)?([eE][\+-]?[0-9]+)?
func matchJSONNumber(s string) int {
	n := 0
	if s[0] == '0' {
		n = 1
	} else {
		n = digits(s, 0)
	}
	if n+1 < len(s) && s[n] == '.' && isDigit(s[n+1]) {
		n += 1 + digits(s, n+1)
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if d := digits(s, m); d > 0 {
			n = m + d
		}
	}
	return n
}

// matchGName: [A-Za-z]([A-Za-z0-9_.]|([=-][A-Za-z0-9_.]))*
func matchGName(s string) int {
	ok := func(c byte) bool { return isAlnum(c) || c == '_' || c == '.' }
	i := 1
	for i < len(s) {
		if ok(s[i]) {
			i++
			continue
		}
		if (s[i] == '=' || s[i] == '-') && i+1 < len(s) && ok(s[i+1]) {
			i += 2
			continue
		}
		break
	}
	return i
}

// unescapeText drops each backslash and keeps the character after it.
func unescapeText(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
