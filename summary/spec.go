package summary

import "strings"

// MetricSpec is a metric name from the command line with its instances:
// "kernel.all.load", "disk.dev.read[sda,sdb]", `proc.psinfo.rss["1 init"]`.
type MetricSpec struct {
	Metric string
	Insts  []string // nil or empty: every instance
}

// SpecError is a metric specification that does not parse; its text is
// what pmParseMetricSpec says: the spec, a caret under the offending
// character, and the complaint.
type SpecError struct {
	Spec   string
	Offset int
	Msg    string
}

func (e *SpecError) Error() string {
	var b strings.Builder
	b.WriteString(e.Spec)
	b.WriteByte('\n')
	for _, c := range []byte(e.Spec[:e.Offset]) {
		if c > ' ' && c < 0x7f {
			b.WriteByte(' ')
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteString("^ -- ")
	b.WriteString(e.Msg)
	b.WriteByte('\n')
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// ParseMetricSpec reads a metric specification as PCP's pmParseMetricSpec
// does: an optional "host:" or "archive/" prefix (ignored here, as
// pmlogsummary ignores it), the metric name with backslash escapes, and
// an optional bracketed list of instance names, separated by commas or
// spaces, each optionally in double quotes.
func ParseMetricSpec(spec string) (MetricSpec, error) {
	fail := func(at int, msg string) (MetricSpec, error) {
		return MetricSpec{}, &SpecError{spec, at, msg}
	}
	s := spec
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	mark := strings.IndexByte(s[start:], '[')
	if mark < 0 {
		mark = len(s) - 1
	} else {
		mark += start
	}
	for ; mark >= start; mark-- {
		if s[mark] == ':' || s[mark] == '/' {
			e := mark - 1
			for e >= start && isSpace(s[e]) {
				e--
			}
			if e < start {
				if s[mark] == ':' {
					return fail(start, "host name expected")
				}
				return fail(start, "archive name expected")
			}
			i = mark + 1
			break
		}
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	mStart := i
	for i < len(s) && !isSpace(s[i]) && s[i] != '[' {
		if s[i] == ']' || s[i] == ',' {
			return fail(i, "unexpected character in metric name")
		}
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		i++
	}
	mEnd := i
	if mStart == mEnd {
		return fail(mStart, "performance metric name expected")
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	var out MetricSpec
	iStart, iEnd := -1, -1
	if i < len(s) && s[i] == '[' {
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		iStart = i
		inquote := false
		for {
			if i >= len(s) {
				if inquote {
					return fail(i, "closing \" and ] expected")
				}
				return fail(i, "closing ] expected")
			}
			if s[i] == '\\' && i+1 < len(s) {
				i++
			} else if s[i] == '"' {
				inquote = !inquote
			} else if !inquote && s[i] == ']' {
				break
			}
			i++
		}
		iEnd = i
		i++
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) {
		return fail(i, "unexpected extra characters")
	}
	var name []byte
	for p := mStart; p < mEnd; p++ {
		if s[p] == '\\' && p+1 < mEnd {
			p++
		}
		name = append(name, s[p])
	}
	out.Metric = string(name)
	if iStart >= 0 {
		out.Insts = []string{}
		p := iStart
		for p < iEnd {
			var inst []byte
			if s[p] == '"' {
				p++
				for {
					if p >= iEnd {
						return fail(p, "closing \" expected (pmParseMetricSpec botch?)")
					}
					if s[p] == '\\' {
						p++
					} else if s[p] == '"' {
						break
					}
					inst = append(inst, s[p])
					p++
				}
				p++
			} else {
				for p < iEnd && !isSpace(s[p]) && s[p] != ',' {
					if s[p] == '\\' {
						p++
					}
					inst = append(inst, s[p])
					p++
				}
			}
			// A C string: a NUL inside ends it.
			if k := strings.IndexByte(string(inst), 0); k >= 0 {
				inst = inst[:k]
			}
			out.Insts = append(out.Insts, string(inst))
			for p < iEnd && (isSpace(s[p]) || s[p] == ',') {
				p++
			}
		}
	}
	return out, nil
}
