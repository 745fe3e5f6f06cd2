package extract

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// A pmlogextract configuration file names the metrics to extract, each
// optionally with a list of instances:
//
//	# comments run to the end of the line
//	kernel.all.load ["1 minute", 15]
//	disk.dev                          # a non-leaf name: every metric below it
//	network.interface.in.bytes [eth0 'lo'], mem.util.free
//
// Names are PMNS names (leaf or not); instances are internal numbers or
// external names (a bare word, or a quoted string). Specifications may be
// separated by white space or commas.

// MetricSpec is one metric specification of a configuration file.
type MetricSpec struct {
	Name  string
	Insts []InstSpec // nil: every instance
	Line  int
}

// InstSpec is one instance of a MetricSpec: a number or a name.
type InstSpec struct {
	ID     int32
	Name   string
	ByName bool
}

func (s InstSpec) String() string {
	if s.ByName {
		return strconv.Quote(s.Name)
	}
	return strconv.Itoa(int(s.ID))
}

// ReadConfig reads and parses a configuration file.
func ReadConfig(path string) ([]MetricSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, b)
}

type cfgToken struct {
	kind byte // '[', ']', ',', 'n' name, 's' string, '#' number, 0 end
	text string
	line int
	col  int
}

type cfgLexer struct {
	file string
	src  []byte
	pos  int
	line int
	col  int
}

func (l *cfgLexer) errorf(line, col int, format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", l.file, line, col, fmt.Sprintf(format, args...))
}

func isNameStart(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' || c == '_' || c == '.' }

func (l *cfgLexer) next() (cfgToken, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.pos++
			l.line++
			l.col = 1
			continue
		case c == ' ' || c == '\t' || c == '\r':
			l.pos++
			l.col++
			continue
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
			continue
		}
		tok := cfgToken{line: l.line, col: l.col}
		start := l.pos
		switch {
		case c == '[' || c == ']' || c == ',':
			l.pos++
			l.col++
			tok.kind = c
			return tok, nil
		case isNameStart(c):
			for l.pos < len(l.src) && isNameChar(l.src[l.pos]) {
				l.pos++
			}
			tok.kind, tok.text = 'n', string(l.src[start:l.pos])
		case c >= '0' && c <= '9':
			for l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '9' {
				l.pos++
			}
			tok.kind, tok.text = '#', string(l.src[start:l.pos])
		case c == '"' || c == '\'':
			end := start + 1
			for end < len(l.src) && l.src[end] != c && l.src[end] != '\n' {
				end++
			}
			if end >= len(l.src) || l.src[end] != c {
				return tok, l.errorf(tok.line, tok.col, "unterminated string: a quoted instance name must end on its line")
			}
			if end == start+1 {
				return tok, l.errorf(tok.line, tok.col, "empty instance name")
			}
			l.pos = end + 1
			tok.kind, tok.text = 's', string(l.src[start+1:end])
		default:
			return tok, l.errorf(tok.line, tok.col, "unexpected character %q", c)
		}
		l.col += l.pos - start
		return tok, nil
	}
	return cfgToken{line: l.line, col: l.col}, nil
}

// ParseConfig parses a configuration file's text; name is used in errors,
// which give the line and column.
func ParseConfig(name string, src []byte) ([]MetricSpec, error) {
	l := &cfgLexer{file: name, src: src, line: 1, col: 1}
	var specs []MetricSpec
	tok, err := l.next()
	for err == nil && tok.kind != 0 {
		if tok.kind == ',' && len(specs) > 0 {
			if tok, err = l.next(); err != nil {
				break
			}
		}
		if tok.kind != 'n' {
			return nil, l.errorf(tok.line, tok.col, "expected a metric name, found %s", describe(tok))
		}
		spec := MetricSpec{Name: tok.text, Line: tok.line}
		if tok, err = l.next(); err != nil {
			break
		}
		if tok.kind == '[' {
			spec.Insts = []InstSpec{}
			for {
				if tok, err = l.next(); err != nil {
					return nil, err
				}
				if tok.kind == ',' && len(spec.Insts) > 0 {
					if tok, err = l.next(); err != nil {
						return nil, err
					}
				}
				switch tok.kind {
				case 'n', 's':
					spec.Insts = append(spec.Insts, InstSpec{Name: tok.text, ByName: true})
					continue
				case '#':
					n, perr := strconv.ParseInt(tok.text, 10, 32)
					if perr != nil {
						return nil, l.errorf(tok.line, tok.col, "instance number %s is out of range", tok.text)
					}
					spec.Insts = append(spec.Insts, InstSpec{ID: int32(n)})
					continue
				case ']':
					if len(spec.Insts) == 0 {
						return nil, l.errorf(tok.line, tok.col, "empty instance list for %s", spec.Name)
					}
				default:
					return nil, l.errorf(tok.line, tok.col, "expected an instance (a number or a name) or ']', found %s", describe(tok))
				}
				break
			}
			if tok, err = l.next(); err != nil {
				break
			}
		}
		specs = append(specs, spec)
	}
	if err != nil {
		return nil, err
	}
	return specs, nil
}

func describe(t cfgToken) string {
	switch t.kind {
	case 0:
		return "the end of the file"
	case 'n':
		return fmt.Sprintf("name %q", t.text)
	case 's':
		return fmt.Sprintf("string %q", t.text)
	case '#':
		return "number " + t.text
	}
	return fmt.Sprintf("%q", string(t.kind))
}

// Selection is a resolved configuration: the metrics to keep and, for
// each, the instances (nil: all), as pmlogextract resolves them against the
// input archives.
type Selection struct {
	pick   map[stream.PMID]stream.Pick
	indoms map[stream.InDomID]bool
	pmids  []stream.PMID
}

// PMIDs returns the selected metrics, in the order they were resolved.
func (s *Selection) PMIDs() []stream.PMID { return s.pmids }

func (s *Selection) wantPMID(p stream.PMID) bool { _, ok := s.pick[p]; return ok }

// wantInDom reports whether indom is the domain of a selected metric.
func (s *Selection) wantInDom(id stream.InDomID) bool { return s.indoms[id] }

// Resolve turns configuration specs into a Selection using the metadata of
// the inputs (in command-line order; nil entries are skipped): a name is
// looked up in each input's names, as a metric or as the root of a subtree;
// a metric's instances are looked up in the first input that has the
// metric, by number in any version of its instance domain, by name as
// libpcp does (an exact match in the newest version that has one, else an
// instance whose name up to its first space starts the name given). Names
// and instances that are not found are warnings, as in pmlogextract.
func Resolve(specs []MetricSpec, metas []*format.Metadata, file string, warn func(error)) *Selection {
	sel := &Selection{pick: map[stream.PMID]stream.Pick{}, indoms: map[stream.InDomID]bool{}}
	warnf := func(line int, format string, args ...any) {
		if warn != nil {
			warn(fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
		}
	}
	type leaf struct {
		name string
		pmid stream.PMID
	}
	leaves := make([][]leaf, len(metas))
	for i, m := range metas {
		if m == nil {
			continue
		}
		for _, d := range m.Descs {
			for _, n := range d.Names {
				leaves[i] = append(leaves[i], leaf{n, d.PMID})
			}
		}
		sort.SliceStable(leaves[i], func(a, b int) bool { return leaves[i][a].name < leaves[i][b].name })
	}
	for _, spec := range specs {
		found := false
		for i, m := range metas {
			if m == nil {
				continue
			}
			for _, lf := range leaves[i] {
				if lf.name != spec.Name && !strings.HasPrefix(lf.name, spec.Name+".") {
					continue
				}
				found = true
				if _, dup := sel.pick[lf.pmid]; dup {
					continue
				}
				d := m.ByPMID[lf.pmid]
				if d == nil {
					continue
				}
				p := stream.Pick{Keep: true}
				switch {
				case spec.Insts == nil && d.InDom == stream.InDomNull:
					p.Insts = []int32{-1}
				case spec.Insts == nil:
				default:
					p.Insts = []int32{}
					for _, is := range spec.Insts {
						inst, ok := lookupInst(m, d.InDom, is)
						if !ok {
							warnf(spec.Line, "instance %s is not defined for the metric %q", is, lf.name)
							continue
						}
						p.Insts = append(p.Insts, inst)
					}
					if len(p.Insts) == 0 {
						warnf(spec.Line, "none of the instances for metric %q are valid, metric not extracted", lf.name)
						continue
					}
				}
				sel.pick[lf.pmid] = p
				sel.pmids = append(sel.pmids, lf.pmid)
				if d.InDom != stream.InDomNull {
					sel.indoms[d.InDom] = true
				}
			}
		}
		if !found {
			warnf(spec.Line, "no metric %q in any input archive: ignored", spec.Name)
		}
	}
	return sel
}

func lookupInst(m *format.Metadata, id stream.InDomID, is InstSpec) (int32, bool) {
	if id == stream.InDomNull {
		return 0, false
	}
	vs := m.Resolved[id]
	if !is.ByName {
		for i := len(vs) - 1; i >= 0; i-- {
			if _, ok := vs[i].Lookup(is.ID); ok {
				return is.ID, true
			}
		}
		return 0, false
	}
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		for j, n := range v.Names {
			if n == is.Name {
				return v.Insts[j], true
			}
		}
		for j, n := range v.Names {
			if k := strings.IndexByte(n, ' '); k >= 0 && strings.HasPrefix(is.Name, n[:k]) {
				return v.Insts[j], true
			}
		}
	}
	return 0, false
}
