package logimport

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Reading a sheet's CSV ahead: one goroutine splits the rows into cells
// and parses them (the dates, the numbers for their metrics' types) while
// ImportSheet puts the values of the rows before into records and writes
// them. What the reader finds is handed over in the order it was found,
// cell by cell, so the warnings and the first error come out as they
// would from one loop.

const sheetBatch = 64 // rows handed over at a time (a hundred cells each)

type cellKind uint8

const (
	cellData  cellKind = iota
	cellEmpty          // an empty cell where data was expected: a warning
)

// sheetCell is one cell of a row, read and parsed: small (24 bytes), as
// a hundred of them a row go through memory twice. Its text is the row's.
type sheetCell struct {
	bits   uint64 // the value: an integer's 64 bits, or a float's
	i      int32  // the column
	l, col int32  // where the cell is, for messages
	kind   cellKind
	bad    bool // the value did not parse
}

type sheetRow struct {
	line  int
	text  []string // the cells' text
	cells []sheetCell
	t     time.Time
	haveT bool
	fatal error // an error after the cells, which ends the import
}

type rowBatch struct{ rows []sheetRow }

// rowReader is the reading goroutine's end of the hand-over.
type rowReader struct {
	full, free chan *rowBatch
	quit       chan struct{}
	fail       error // a read error after the last batch (set before full closes)
}

func readRows(cr *csvRows, s *Sheet, types []stream.Type, loc *time.Location, emptyZero bool, csvName string) *rowReader {
	r := &rowReader{full: make(chan *rowBatch, 2), free: make(chan *rowBatch, 3), quit: make(chan struct{})}
	for range 3 {
		r.free <- &rowBatch{}
	}
	go r.run(cr, s, types, loc, emptyZero, csvName)
	return r
}

func (r *rowReader) run(cr *csvRows, s *Sheet, types []stream.Type, loc *time.Location, emptyZero bool, csvName string) {
	defer close(r.full)
	skip := s.Heading
	var b *rowBatch
	get := func() bool {
		select {
		case b = <-r.free:
			b.rows = b.rows[:0]
			return true
		case <-r.quit:
			return false
		}
	}
	send := func() bool {
		select {
		case r.full <- b:
			b = nil
			return true
		case <-r.quit:
			return false
		}
	}
	if !get() {
		return
	}
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			r.fail = fmt.Errorf("%s: %w", csvName, err)
			break
		}
		if skip > 0 {
			skip--
			continue
		}
		sr := nextSlot(&b.rows)
		sr.line, sr.text, sr.cells, sr.haveT, sr.fatal = line, row, sr.cells[:0], false, nil
		fatal := false
		for i := range s.Columns {
			if i >= len(row) {
				break
			}
			c := &s.Columns[i]
			if c.Kind == ColSkip {
				continue
			}
			l, col := cr.FieldPos(i)
			cell := row[i]
			if cell == "" && (c.Kind == ColDatetime || !emptyZero) {
				sr.cells = append(sr.cells, sheetCell{kind: cellEmpty, l: int32(l), col: int32(col)})
				continue
			}
			switch c.Kind {
			case ColDatetime:
				t, err := s.parseDate(cell, loc)
				if err != nil {
					sr.fatal = fmt.Errorf("%s:%d:%d: %v", csvName, l, col, err)
					fatal = true
				} else {
					sr.t, sr.haveT = t, true
				}
			case ColData:
				var bits uint64
				var perr error
				if f, ok := simpleDecimal(cell); ok && types[i] == stream.TypeDouble {
					bits = math.Float64bits(f)
				} else {
					var v stream.Val
					v, perr = parseValue(types[i], cell)
					bits = valBits(types[i], v)
				}
				// Field by field into the slice: a composite literal is
				// built on the stack with narrow stores and copied with
				// wide loads the CPU cannot forward from them (a stall a
				// cell: an eighth of the reading goroutine's time).
				sc := nextSlot(&sr.cells)
				sc.bits, sc.i, sc.l, sc.col = bits, int32(i), int32(l), int32(col)
				sc.kind, sc.bad = cellData, perr != nil
			}
			if fatal {
				break
			}
		}
		if fatal {
			break
		}
		if len(b.rows) == sheetBatch {
			if !send() || !get() {
				return
			}
		}
	}
	if b != nil && len(b.rows) > 0 {
		send()
	}
}

// next returns the next batch of rows; false at the end (see err).
func (r *rowReader) next() (*rowBatch, bool) {
	b, ok := <-r.full
	return b, ok
}

// done gives a batch back for reuse.
func (r *rowReader) done(b *rowBatch) { r.free <- b }

// err is the read error that ended the rows, if any.
func (r *rowReader) err() error { return r.fail }

// stop ends the reading goroutine (at the end, or when the import fails).
func (r *rowReader) stop() {
	close(r.quit)
	for range r.full {
	}
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// simpleDecimal parses the common case of a number in a spreadsheet, an
// optional minus, digits and at most one point ("-12.75"), when the digits
// fit 2^53 and there are at most 22 decimals: then the integer of the
// digits and the power of ten are exact, and one division rounds
// correctly, so the result is strconv.ParseFloat's (Clinger's fast path).
// Anything else (exponents, spaces, a plus, long numbers) reports false.
func simpleDecimal(s string) (float64, bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 || frac > 22 {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// nextSlot grows *s by one element and returns it: zeroed when the
// slice's storage is new, as left by the last use otherwise (the callers
// set every field), reusing the storage between batches.
func nextSlot[T any](s *[]T) *T {
	n := len(*s)
	if n < cap(*s) {
		*s = (*s)[:n+1]
	} else {
		var zero T
		*s = append(*s, zero)
	}
	return &(*s)[n]
}
