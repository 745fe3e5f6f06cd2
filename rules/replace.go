package rules

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// Replace is a regular expression substitution of PCP 6.1's pmlogrewrite
// (`value /re/ -> "new"` in a metric rule, `iname replace /re/ -> "new"`
// in an instance domain rule; pmlogredact's rules are made of them).
//
// The expression is a POSIX extended regular expression, matched
// leftmost-longest as regcomp(3) with REG_EXTENDED matches it. Only the
// first match is replaced. In the replacement, \1 to \9 stand for the
// subexpressions, & for the whole match, and a backslash before any other
// character stands for that character.
type Replace struct {
	Pattern string
	With    string
	re      *regexp.Regexp
}

// NewReplace compiles a substitution. The pattern is parsed as POSIX ERE
// syntax (Go's regexp/syntax.POSIX) with "." matching a newline too, as
// regcomp without REG_NEWLINE has it (instance names and strings can hold
// newlines: QA's procpid-encode2 has a command spanning several lines).
func NewReplace(pattern, with string) (*Replace, error) {
	tree, err := syntax.Parse(pattern, syntax.POSIX|syntax.DotNL)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	re.Longest()
	return &Replace{Pattern: pattern, With: with, re: re}, nil
}

// Apply returns s with the first match replaced, and whether there was a
// match.
func (r *Replace) Apply(s string) (string, bool) {
	m := r.re.FindStringSubmatchIndex(s)
	if m == nil {
		return s, false
	}
	var b strings.Builder
	b.WriteString(s[:m[0]])
	slash := false
	for i := 0; i < len(r.With); i++ {
		c := r.With[i]
		switch {
		case slash:
			slash = false
			if c >= '1' && c <= '9' {
				if k := int(c-'0') * 2; k+1 < len(m) && m[k] >= 0 {
					b.WriteString(s[m[k]:m[k+1]])
				}
				continue
			}
			b.WriteByte(c)
		case c == '\\':
			slash = true
		case c == '&':
			b.WriteString(s[m[0]:m[1]])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(s[m[1]:])
	return b.String(), true
}

// ApplyAll runs the substitutions in order, each on the result of the one
// before, and reports whether any matched (pmlogrewrite then writes the
// new value; otherwise the value is left as it was).
func ApplyAll(rs []*Replace, s string) (string, bool) {
	changed := false
	for _, r := range rs {
		var ok bool
		if s, ok = r.Apply(s); ok {
			changed = true
		}
	}
	return s, changed
}
