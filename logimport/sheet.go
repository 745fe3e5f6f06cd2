package logimport

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Sheet is a sheet2pcp mapfile: how the columns of a spreadsheet (CSV)
// map onto metrics. See sheet2pcp(1); existing mapfiles work unchanged.
type Sheet struct {
	Heading  int    // rows to skip at the start
	Hostname string // "" for the -h option or this machine
	Timezone string // "+HHMM", "-HHMM" or "" (UTC)
	DateFmt  string // DMY (default), MDY or YMD
	Metrics  []Metric
	Columns  []Column
}

// Column kinds.
const (
	ColSkip = iota
	ColDatetime
	ColData
)

// Column is one column of the sheet.
type Column struct {
	Kind     int
	Metric   string
	Instance string // "" for a singular metric
}

// mapErr is a mapfile error at a position.
func mapErr(name string, d *xml.Decoder, format string, args ...any) error {
	line, col := d.InputPos()
	return fmt.Errorf("%s:%d:%d: %s", name, line, col, fmt.Sprintf(format, args...))
}

var pmConsts = map[string]int64{
	"PM_TYPE_32": 0, "PM_TYPE_U32": 1, "PM_TYPE_64": 2, "PM_TYPE_U64": 3, "PM_TYPE_FLOAT": 4, "PM_TYPE_DOUBLE": 5,
	"PM_TYPE_STRING": 6, "PM_SEM_COUNTER": 1, "PM_SEM_INSTANT": 3, "PM_SEM_DISCRETE": 4,
	"PM_SPACE_BYTE": 0, "PM_SPACE_KBYTE": 1, "PM_SPACE_MBYTE": 2, "PM_SPACE_GBYTE": 3, "PM_SPACE_TBYTE": 4,
	"PM_SPACE_PBYTE": 5, "PM_SPACE_EBYTE": 6, "PM_TIME_NSEC": 0, "PM_TIME_USEC": 1, "PM_TIME_MSEC": 2,
	"PM_TIME_SEC": 3, "PM_TIME_MIN": 4, "PM_TIME_HOUR": 5, "PM_COUNT_ONE": 0, "PMI_DOMAIN": Domain,
}

func pmConst(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if v, ok := pmConsts[s]; ok {
		return v, true
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return v, err == nil
}

func parseIDs(s string, n int) ([]uint32, bool) {
	f := strings.Split(s, ".")
	if len(f) != n {
		return nil, false
	}
	out := make([]uint32, n)
	for i, x := range f {
		if i == 0 && x == "PMI_DOMAIN" {
			out[i] = Domain
			continue
		}
		v, err := strconv.ParseUint(x, 10, 32)
		if err != nil {
			return nil, false
		}
		out[i] = uint32(v)
	}
	return out, true
}

// ParseSheet reads a mapfile; errors name the file, line and column.
func ParseSheet(r io.Reader, name string) (*Sheet, error) {
	d := xml.NewDecoder(r)
	s := &Sheet{DateFmt: "DMY"}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, mapErr(name, d, format, args...)) }
	var in string // "metric" or "data"
	var text string
	var m Metric
	seenSheet, hasDatetime, ndata := false, false, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line, col := d.InputPos()
			return nil, fmt.Errorf("%s:%d:%d: %v", name, line, col, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range t.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch t.Name.Local {
			case "sheet":
				seenSheet = true
				for k, v := range attrs {
					switch k {
					case "heading":
						n, err := strconv.Atoi(v)
						if err != nil || n < 0 {
							bad("bad heading=%q", v)
						}
						s.Heading = n
					case "hostname":
						s.Hostname = v
					case "timezone":
						s.Timezone = v
					case "datefmt":
						if v != "DMY" && v != "MDY" && v != "YMD" {
							bad("bad format for attribute datefmt=%q", v)
						}
						s.DateFmt = v
					default:
						bad("attribute %s=%q not expected for <sheet>", k, v)
					}
				}
			case "metric":
				in, text = "metric", ""
				m = Metric{PMID: stream.PMIDNull, Type: stream.TypeFloat, InDom: stream.InDomNull, Sem: stream.SemInstant}
				for k, v := range attrs {
					switch k {
					case "pmid":
						if v == "PM_ID_NULL" {
							break
						}
						ids, ok := parseIDs(v, 3)
						if !ok {
							bad("bad format for attribute pmid=%q", v)
							break
						}
						m.PMID = stream.NewPMID(ids[0], ids[1], ids[2])
					case "indom":
						if v == "PM_INDOM_NULL" {
							break
						}
						ids, ok := parseIDs(v, 2)
						if !ok {
							bad("bad format for attribute indom=%q", v)
							break
						}
						m.InDom = stream.NewInDomID(ids[0], ids[1])
					case "units":
						f := strings.Split(v, ",")
						var n [6]int64
						ok := len(f) == 6
						for i := 0; ok && i < 6; i++ {
							n[i], ok = pmConst(f[i])
						}
						if !ok {
							bad("bad format for attribute units=%q", v)
							break
						}
						m.Units = stream.NewUnits(int(n[0]), int(n[1]), int(n[2]), uint(n[3]), uint(n[4]), int(n[5]))
					case "type":
						n, ok := pmConst(v)
						if !ok {
							bad("bad value for attribute type=%q", v)
						}
						m.Type = stream.Type(n)
					case "sem":
						n, ok := pmConst(v)
						if !ok {
							bad("bad value for attribute sem=%q", v)
						}
						m.Sem = stream.Sem(n)
					default:
						bad("attribute %s=%q not expected for <metric>", k, v)
					}
				}
			case "data", "datetime", "skip":
				for k, v := range attrs {
					bad("attribute %s=%q not expected for <%s>", k, v, t.Name.Local)
				}
				switch t.Name.Local {
				case "data":
					in, text = "data", ""
				case "datetime":
					if hasDatetime {
						bad("a second <datetime>")
					}
					hasDatetime = true
					s.Columns = append(s.Columns, Column{Kind: ColDatetime})
				default:
					s.Columns = append(s.Columns, Column{Kind: ColSkip})
				}
			default:
				bad("unexpected element <%s>", t.Name.Local)
			}
		case xml.CharData:
			if strings.TrimSpace(string(t)) == "" {
				continue
			}
			if in == "" {
				bad("unexpected text %q", strings.TrimSpace(string(t)))
				continue
			}
			text += string(t)
		case xml.EndElement:
			switch t.Name.Local {
			case "metric":
				m.Name = strings.TrimSpace(text)
				if m.Name == "" {
					bad("missing metric name in <metric>")
				} else {
					s.Metrics = append(s.Metrics, m)
				}
				in = ""
			case "data":
				spec := strings.TrimSpace(text)
				c := Column{Kind: ColData, Metric: spec}
				if i := strings.IndexByte(spec, '['); i >= 0 {
					c.Metric, c.Instance = spec[:i], spec[i+1:]
					if strings.Count(spec, "[") > 1 {
						bad("extra [ in metricspec %q", spec)
					} else if !strings.HasSuffix(c.Instance, "]") {
						bad("missing ] in metricspec %q", spec)
					}
					c.Instance = strings.TrimSuffix(c.Instance, "]")
				}
				if spec == "" {
					bad("missing metricspec in <data>")
				}
				if !s.hasMetric(c.Metric) {
					bad("metric name (%s) in <data> not defined in an earlier <metric>", c.Metric)
				}
				s.Columns = append(s.Columns, c)
				ndata++
				in = ""
			case "sheet":
				if !hasDatetime {
					bad("missing <datetime> element")
				} else if ndata == 0 {
					bad("no <data> element")
				}
			}
		}
	}
	if !seenSheet {
		errs = append(errs, fmt.Errorf("%s: no <sheet> element", name))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Sheet) hasMetric(name string) bool {
	for _, m := range s.Metrics {
		if m.Name == name {
			return true
		}
	}
	return false
}

// zone returns the label's timezone and the offset east of UTC for times.
func (s *Sheet) zone() (string, int, error) {
	z := s.Timezone
	if z == "" || z == "UTC" {
		return "UTC", 0, nil
	}
	if len(z) != 5 || z[0] != '+' && z[0] != '-' {
		return "", 0, fmt.Errorf("timezone %q: want +HHMM or -HHMM", z)
	}
	hh, err1 := strconv.Atoi(z[1:3])
	mm, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("timezone %q: want +HHMM or -HHMM", z)
	}
	off := (hh*60 + mm) * 60
	sign := "PCP+"
	if z[0] == '+' {
		sign = "PCP-"
	} else {
		off = -off
	}
	return sign + z[1:3] + ":" + z[3:5], off, nil
}

// parseDate reads a sheet's date and time as sheet2pcp does: fields split
// at space, colon, slash and dash; seconds optional; the date in the
// sheet's order; two-digit years before 81 in the 2000s.
func (s *Sheet) parseDate(v string, loc *time.Location) (time.Time, error) {
	// RFC 3339 has a T after its 10-character date; nothing else parses.
	if len(v) > 10 && v[10] == 'T' {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t, nil // what sheet2pcp cannot read, so no clash
		}
	}
	// The fields between separators (empty ones dropped), 5 or 6 of them.
	var f [6]string
	nf, start := 0, -1
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == ' ' || v[i] == ':' || v[i] == '/' || v[i] == '-' {
			if start >= 0 {
				if nf == len(f) {
					return time.Time{}, fmt.Errorf("bad datetime %q", v)
				}
				f[nf], nf, start = v[start:i], nf+1, -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if nf == 5 {
		f[5], nf = "00", 6
	}
	if nf != 6 {
		return time.Time{}, fmt.Errorf("bad datetime %q", v)
	}
	var n [6]int
	for i, x := range f {
		var err error
		if n[i], err = strconv.Atoi(x); err != nil {
			return time.Time{}, fmt.Errorf("bad datetime %q", v)
		}
	}
	var y, mo, d int
	switch s.DateFmt {
	case "MDY":
		mo, d, y = n[0], n[1], n[2]
	case "YMD":
		y, mo, d = n[0], n[1], n[2]
	default:
		d, mo, y = n[0], n[1], n[2]
	}
	if y < 100 {
		if y <= 80 {
			y += 2000
		} else {
			y += 1900
		}
	}
	t := time.Date(y, time.Month(mo), d, n[3], n[4], n[5], 0, loc)
	if t.Day() != d || int(t.Month()) != mo || t.Hour() != n[3] || t.Minute() != n[4] || t.Second() != n[5] {
		return time.Time{}, fmt.Errorf("bad datetime %q", v)
	}
	return t, nil
}

// SheetOptions configure ImportSheet.
type SheetOptions struct {
	Options             // Hostname and Timezone are overridden by the mapfile's
	Comma   rune        // 0: guessed from the first line (; , or tab)
	Warn    func(error) // empty cells and column count mismatches
	// EmptyZero puts an empty cell as libpcp_import parses "": 0 for a
	// number, "" for a string, as sheet2pcp does. By default an empty cell
	// gives no value, with a warning.
	EmptyZero bool
	// OnRow, when set, is called for each row read after the heading: a
	// progress display.
	OnRow func()
}

// guessComma picks the separator of a CSV line: the most frequent of ;
// , and tab outside quotes (comma on a tie).
func guessComma(line string) rune {
	counts := map[rune]int{}
	inq := false
	for _, r := range line {
		switch {
		case r == '"':
			inq = !inq
		case !inq && (r == ';' || r == ',' || r == '\t'):
			counts[r]++
		}
	}
	best := ','
	for _, r := range []rune{';', '\t'} {
		if counts[r] > counts[best] {
			best = r
		}
	}
	return best
}

// ImportSheet reads CSV rows and writes them as records through an
// Importer made by create. Every problem is an error naming the file, line
// and column: a cell that does not parse for its metric, a time that is
// not a time or goes backwards, a row with no time. An empty cell gives no
// value (with a warning; see EmptyZero), as a missing cell does. Rows with
// the same time make records with the same time, as sheet2pcp's do.
func ImportSheet(s *Sheet, csvR io.Reader, csvName string, o SheetOptions,
	create func(Options) (*Importer, error)) (err error) {
	opts := o.Options
	if s.Hostname != "" {
		opts.Hostname = s.Hostname
	}
	label, off, err := s.zone()
	if err != nil {
		return err
	}
	opts.Timezone = label
	loc := time.FixedZone(label, off)
	br := newPeekReader(csvR)
	comma := o.Comma
	if comma == 0 {
		comma = guessComma(br.firstLine())
	}
	cr := newCSVRows(br.Reader, comma)
	warn := o.Warn
	if warn == nil {
		warn = func(error) {}
	}
	im, err := create(opts)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			im.Abort()
		}
	}()
	for _, m := range s.Metrics {
		if _, err := im.AddMetric(m); err != nil {
			return fmt.Errorf("mapfile: metric %s: %w", m.Name, err)
		}
	}
	handles := make([]Handle, len(s.Columns))
	next := map[stream.InDomID]int32{}
	seen := map[string]bool{}
	for i, c := range s.Columns {
		if c.Kind != ColData {
			continue
		}
		var id stream.InDomID = stream.InDomNull
		for _, m := range s.Metrics {
			if m.Name == c.Metric {
				id = m.InDom
			}
		}
		if c.Instance != "" && id != stream.InDomNull {
			key := fmt.Sprint(id, "\x00", c.Instance)
			if !seen[key] {
				seen[key] = true
				if err := im.AddInstance(id, c.Instance, next[id]); err != nil {
					return fmt.Errorf("mapfile: instance %q of %s: %w", c.Instance, c.Metric, err)
				}
				next[id]++
			}
		}
		if handles[i], err = im.Handle(c.Metric, c.Instance); err != nil {
			return fmt.Errorf("mapfile: column %d (%s[%s]): %w", i+1, c.Metric, c.Instance, err)
		}
	}
	types := make([]stream.Type, len(s.Columns))
	for i, h := range handles {
		if h.m > 0 {
			types[i] = im.metrics[h.m-1].desc.Type
		}
	}
	rows := readRows(cr, s, types, loc, o.EmptyZero, csvName)
	defer rows.stop()
	warned := false
	for {
		b, ok := rows.next()
		if !ok {
			break
		}
		for ri := range b.rows {
			row := &b.rows[ri]
			if o.OnRow != nil {
				o.OnRow()
			}
			if len(row.text) != len(s.Columns) && !warned {
				warned = true
				warn(fmt.Errorf("%s:%d: %d columns, the mapfile has %d: the extra ones give no values", csvName, row.line, len(row.text), len(s.Columns)))
			}
			for ci := range row.cells {
				c := &row.cells[ci]
				switch c.kind {
				case cellEmpty:
					warn(fmt.Errorf("%s:%d:%d: cell empty, but data expected", csvName, c.l, c.col))
				case cellData:
					h, text := handles[c.i], row.text[c.i]
					var perr error
					if c.bad {
						perr = ErrConv
					}
					v := pendVal{inst: h.inst, bits: c.bits}
					if types[c.i] == stream.TypeString {
						v.s = text // (only then: a string is a pointer to store, with the GC's write barrier)
					}
					if err := im.put(h, v, perr, text); err != nil {
						return fmt.Errorf("%s:%d:%d: %s: %w", csvName, c.l, c.col, s.Columns[c.i].Metric, err)
					}
				}
			}
			if row.fatal != nil {
				return row.fatal
			}
			if !row.haveT {
				return fmt.Errorf("%s:%d: no datetime in the row", csvName, row.line)
			}
			if err := im.WriteTime(row.t); err != nil && !errors.Is(err, ErrNoData) {
				return fmt.Errorf("%s:%d: %w", csvName, row.line, err)
			}
		}
		rows.done(b)
	}
	if err := rows.err(); err != nil {
		return err
	}
	return im.End()
}
