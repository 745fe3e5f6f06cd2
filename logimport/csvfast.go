package logimport

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
)

// csvRows reads the rows of a sheet's CSV as encoding/csv does with
// LazyQuotes and any number of fields per record, faster for the lines
// most spreadsheets are made of: no quote and no carriage return but at
// the end. Such a line is split at its commas here; at the first other
// line, the rest of the input (that line included) goes to an
// encoding/csv Reader, whose lines are counted on from there. So rows,
// line and column numbers, and errors are encoding/csv's.
type csvRows struct {
	br    *bufio.Reader
	comma byte
	line  int   // the line of the current row
	cols  []int // the 1-based column of each field of the current row
	long  []byte
	cr    *csv.Reader // after the first line this cannot split
	crOff int         // lines before cr's first
}

func newCSVRows(br *bufio.Reader, comma rune) *csvRows {
	c := &csvRows{br: br}
	if comma > 0 && comma < 0x80 && comma != '"' && comma != '\r' && comma != '\n' {
		c.comma = byte(comma)
	} else {
		// A comma of several bytes, or one encoding/csv refuses:
		// encoding/csv from the start.
		c.cr = newCSVReader(br, comma)
	}
	return c
}

func newCSVReader(r io.Reader, comma rune) *csv.Reader {
	cr := csv.NewReader(r)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	return cr
}

// Read returns the next row; io.EOF at the end.
func (c *csvRows) Read() ([]string, error) {
	if c.cr != nil {
		return c.crRead()
	}
	for {
		b, err := c.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			c.long = append(c.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = c.br.ReadSlice('\n')
				c.long = append(c.long, b...)
			}
			b = c.long
		}
		if len(b) == 0 {
			if err == nil {
				continue
			}
			return nil, err
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		c.line++
		body := b
		if body[len(body)-1] == '\n' {
			body = body[:len(body)-1]
			if n := len(body); n > 0 && body[n-1] == '\r' {
				body = body[:n-1]
			}
		} else if n := len(body); n > 0 && body[n-1] == '\r' {
			body = body[:n-1] // a carriage return at the very end
		}
		if bytes.IndexByte(body, '"') >= 0 || bytes.IndexByte(body, '\r') >= 0 {
			return c.handOver(b)
		}
		if len(body) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue // encoding/csv skips empty lines
		}
		s := string(body)
		n := 1 + bytes.Count(body, []byte{c.comma})
		row := make([]string, 0, n)
		c.cols = c.cols[:0]
		start := 0
		for i := 0; i < len(s); i++ {
			if s[i] == c.comma {
				row = append(row, s[start:i])
				c.cols = append(c.cols, start+1)
				start = i + 1
			}
		}
		row = append(row, s[start:])
		c.cols = append(c.cols, start+1)
		return row, nil
	}
}

// handOver gives the line b and the rest of the input to encoding/csv.
func (c *csvRows) handOver(b []byte) ([]string, error) {
	first := append([]byte(nil), b...)
	c.crOff = c.line - 1
	c.cr = newCSVReader(io.MultiReader(bytes.NewReader(first), c.br), rune(c.comma))
	return c.crRead()
}

// crRead reads a row through encoding/csv, its errors' lines counted
// from the start of the input.
func (c *csvRows) crRead() ([]string, error) {
	row, err := c.cr.Read()
	var pe *csv.ParseError
	if errors.As(err, &pe) && c.crOff > 0 {
		pe.StartLine += c.crOff
		pe.Line += c.crOff
	}
	return row, err
}

// FieldPos is csv.Reader.FieldPos of the current row.
func (c *csvRows) FieldPos(i int) (line, col int) {
	if c.cr != nil {
		l, col := c.cr.FieldPos(i)
		return l + c.crOff, col
	}
	return c.line, c.cols[i]
}
