package logimport

import (
	"math"
	"strconv"

	"github.com/pcptools/pcptools/stream"
)

// A fast path for the lines that make up nearly all of a JSON dump: the
// results, as pcpcat --json writes them. It scans the line once, with no
// reflection and no copies, and builds the result directly. It takes only
// what it understands fully (the keys pcpcat writes, in any order, with
// any white space; numbers; strings without escapes): on anything else,
// including every error, it gives up and the line goes through
// encoding/json as before, which decides what the line means and words
// any error. So the fast path changes no outcome, only the time.

// jscan is a cursor over one line.
type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// eat skips white space and then c; false if c is not next.
func (s *jscan) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek skips white space and returns the next byte (0 at the end).
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string with no escapes and only printable ASCII (what a
// key, a PMID or a type name is); ok false otherwise.
func (s *jscan) str() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return s.b[start : s.i-1], true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// num reads a number as JSON's grammar has it; ok false otherwise.
func (s *jscan) num() ([]byte, bool) {
	s.ws()
	start := s.i
	b := s.b
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && b[s.i] >= '1' && b[s.i] <= '9':
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
		}
	default:
		return nil, false
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		d := s.i
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
		}
		if s.i == d {
			return nil, false
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		d := s.i
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
		}
		if s.i == d {
			return nil, false
		}
	}
	return b[start:s.i], true
}

// int32 reads a number that is a 32-bit integer.
func (s *jscan) int32() (int32, bool) {
	v, ok := s.num()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 32)
	return int32(n), err == nil
}

// Objects and arrays are read in loops over these, with no closures (a
// closure's variables would be allocated for each value):
//
//	more, ok := s.open('{')   // or '['
//	for ok && more {
//		... read a key (s.key) and its value, or an element ...
//		more, ok = s.next('}') // or ']'
//	}

// open reads the opening bracket c; more is false for an empty object or
// array.
func (s *jscan) open(c byte) (more, ok bool) {
	if !s.eat(c) {
		return false, false
	}
	closer := byte('}')
	if c == '[' {
		closer = ']'
	}
	if s.eat(closer) {
		return false, true
	}
	return true, true
}

// next reads what follows a member: a comma (more) or the closing c.
func (s *jscan) next(c byte) (more, ok bool) {
	if s.eat(',') {
		return true, true
	}
	return false, s.eat(c)
}

// key reads a member's key and its colon.
func (s *jscan) key() ([]byte, bool) {
	k, ok := s.str()
	return k, ok && s.eat(':')
}

// once notes the key numbered bit as seen: false when it was already (a
// key seen twice gives up: encoding/json keeps the last; not worth
// copying).
func once(seen *uint32, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}

// fastPMID reads "domain.cluster.item" within PCP's limits.
func fastPMID(b []byte) (stream.PMID, bool) {
	var n [3]uint32
	lim := [3]uint32{1<<9 - 1, 1<<12 - 1, 1<<10 - 1}
	k, digits := 0, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n[k] = n[k]*10 + uint32(c-'0')
			digits++
			if digits > 4 || n[k] > lim[k] {
				return 0, false
			}
		case c == '.' && k < 2 && digits > 0:
			k++
			digits = 0
		default:
			return 0, false
		}
	}
	if k != 2 || digits == 0 {
		return 0, false
	}
	return stream.NewPMID(n[0], n[1], n[2]), true
}

// fastResult reads a result line; ok false when the slow path must.
func (j *JSONReader) fastResult(line []byte) (stream.Record, bool) {
	if j.version == 0 {
		return nil, false
	}
	s := &jscan{b: line}
	var epoch []byte
	var seen uint32
	empty := true
	j.rb.Reset()
	more, ok := s.open('{')
	for ok && more {
		k, kok := s.key()
		if !kok {
			return nil, false
		}
		switch string(k) {
		case "kind":
			v, vok := s.str()
			ok = once(&seen, 0) && vok && string(v) == "result"
		case "epoch":
			epoch, ok = s.num()
			ok = ok && once(&seen, 1)
		case "time":
			_, ok = s.str()
			ok = ok && once(&seen, 2)
		case "metrics":
			ok = once(&seen, 3)
			var m bool
			if m, ok = s.open('['); ok && m {
				empty = false
			}
			for ok && m {
				if ok = j.fastMetric(s); ok {
					m, ok = s.next(']')
				}
			}
		default:
			ok = false
		}
		if ok {
			more, ok = s.next('}')
		}
	}
	if !ok || seen&0b1011 != 0b1011 { // kind, epoch and metrics; time is optional
		return nil, false
	}
	if s.ws(); s.i != len(line) {
		return nil, false
	}
	t, err := parseEpoch(string(epoch))
	if err != nil {
		return nil, false
	}
	if empty {
		return &stream.Mark{T: t}, true
	}
	if err := j.rb.Build(t, &j.res); err != nil {
		return nil, false
	}
	return &j.res, true
}

// fastMetric reads one metric's object into the result builder.
func (j *JSONReader) fastMetric(s *jscan) bool {
	var pmid stream.PMID
	var typ stream.Type
	var code int32
	var seen uint32
	var vals []byte // the values array, read once the type is known
	inline := false // the values were read where they stand
	more, ok := s.open('{')
	for ok && more {
		k, kok := s.key()
		if !kok {
			return false
		}
		switch string(k) {
		case "pmid":
			var v []byte
			if v, ok = s.str(); ok {
				pmid, ok = fastPMID(v)
			}
			ok = ok && once(&seen, 0)
		case "name":
			_, ok = s.str()
			ok = ok && once(&seen, 1)
		case "type":
			var v []byte
			if v, ok = s.str(); ok {
				typ, ok = j.typeOf(v)
			}
			ok = ok && once(&seen, 2)
		case "code":
			code, ok = s.int32()
			ok = ok && once(&seen, 3)
		case "error":
			_, ok = s.str()
			ok = ok && once(&seen, 4)
		case "values":
			if !once(&seen, 5) {
				return false
			}
			if seen&0b1101 == 0b101 {
				// pmid and type first, as pcpcat writes them: the
				// values are read as they come, not scanned twice.
				inline = true
				ok = j.openSet(pmid, typ) && j.fastValues(s, typ)
				break
			}
			start := s.i
			ok = s.skipValues()
			vals = s.b[start:s.i]
		default:
			ok = false
		}
		if ok {
			more, ok = s.next('}')
		}
	}
	if !ok || seen&1 == 0 {
		return false
	}
	if inline {
		// A code after values read in place: the slow path decides.
		return seen&(1<<3) == 0
	}
	if seen&(1<<3) != 0 {
		j.rb.AddError(pmid, code)
		return true
	}
	if seen&(1<<2) == 0 || !j.openSet(pmid, typ) {
		return false
	}
	if vals == nil {
		return true
	}
	return j.fastValues(&jscan{b: vals}, typ)
}

// openSet starts pmid's value set in the builder, for the types the fast
// path reads.
func (j *JSONReader) openSet(pmid stream.PMID, typ stream.Type) bool {
	switch typ {
	case stream.Type64, stream.TypeU64, stream.TypeDouble:
		j.rb.OpenBits(pmid, typ)
	case stream.Type32, stream.TypeU32, stream.TypeFloat, stream.TypeString:
		j.rb.Open(pmid, typ)
	default:
		return false
	}
	return true
}

// fastValues reads a values array into the set openSet started.
func (j *JSONReader) fastValues(s *jscan, typ stream.Type) bool {
	more, ok := s.open('[')
	for ok && more {
		if ok = j.fastValue(s, typ); ok {
			more, ok = s.next(']')
		}
	}
	return ok
}

// typeOf reads a type name as pcpcat writes it (the last one is kept).
func (j *JSONReader) typeOf(v []byte) (stream.Type, bool) {
	if len(v) > 0 && string(v) == j.lastTypeName {
		return j.lastType, true
	}
	t, ok := typeByName[string(v)]
	if ok {
		j.lastType, j.lastTypeName = t, string(v)
	}
	return t, ok
}

// skipValues moves over the values array (checked when it is read).
func (s *jscan) skipValues() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				s.i++
				return true
			}
		case '"':
			if _, ok := s.str(); !ok {
				return false
			}
			continue
		}
		s.i++
	}
	return false
}

// fastValue reads {"inst":N,"instance":"...","value":V}.
func (j *JSONReader) fastValue(s *jscan, typ stream.Type) bool {
	inst := stream.InstNull
	var raw, str []byte
	var seen uint32
	more, ok := s.open('{')
	for ok && more {
		k, kok := s.key()
		if !kok {
			return false
		}
		switch string(k) {
		case "inst":
			inst, ok = s.int32()
			ok = ok && once(&seen, 0)
		case "instance":
			_, ok = s.str()
			ok = ok && once(&seen, 1)
		case "value":
			if s.peek() == '"' {
				str, ok = s.str()
			} else {
				raw, ok = s.num()
			}
			ok = ok && once(&seen, 2)
		default:
			ok = false
		}
		if ok {
			more, ok = s.next('}')
		}
	}
	if !ok || seen&(1<<2) == 0 {
		return false
	}
	isStr := raw == nil
	switch typ {
	case stream.TypeString:
		if !isStr {
			return false
		}
		j.rb.Put(stream.Val{Inst: inst, S: string(str)})
		return true
	case stream.TypeFloat, stream.TypeDouble:
		var f float64
		if isStr {
			switch string(str) {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return false
			}
		} else {
			bits := 64
			if typ == stream.TypeFloat {
				bits = 32
			}
			var err error
			if f, err = strconv.ParseFloat(string(raw), bits); err != nil {
				return false
			}
		}
		if typ == stream.TypeFloat {
			j.rb.Put(stream.Val{Inst: inst, F: f})
		} else {
			j.rb.PutBits(inst, math.Float64bits(f))
		}
		return true
	}
	if isStr {
		return false
	}
	switch typ {
	case stream.Type64:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return false
		}
		j.rb.PutBits(inst, uint64(n))
	case stream.TypeU64:
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return false
		}
		j.rb.PutBits(inst, n)
	case stream.Type32:
		n, err := strconv.ParseInt(string(raw), 10, 32)
		if err != nil {
			return false
		}
		j.rb.Put(stream.Val{Inst: inst, I: n})
	case stream.TypeU32:
		n, err := strconv.ParseUint(string(raw), 10, 32)
		if err != nil {
			return false
		}
		j.rb.Put(stream.Val{Inst: inst, U: n})
	default:
		return false
	}
	return true
}
