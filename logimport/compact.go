package logimport

import (
	"fmt"
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// CompactSheet makes a Sheet from pcpimport's compact column list, one
// spec per column, in order:
//
//	time                      the date and time (RFC 3339, or the sheet's DateFmt)
//	skip                      a column to leave out
//	NAME[INST]:TYPE:SEM:UNITS a metric's value; everything after NAME optional
//
// TYPE is 32 U32 64 U64 FLOAT DOUBLE (the default) or STRING; SEM is
// instant (the default), counter or discrete; UNITS as pmUnitsStr writes
// them ("Kbyte / sec", "count", "" for none). The first column naming a
// metric defines it; later ones may only add instances. Metrics with
// instances get an instance domain each, in domain 245, instances
// numbered from 0 in column order.
func CompactSheet(cols []string, heading int, dateFmt string) (*Sheet, error) {
	s := &Sheet{Heading: heading, DateFmt: dateFmt}
	if s.DateFmt == "" {
		s.DateFmt = "YMD"
	}
	byName := map[string]int{}
	serial := uint32(0)
	hasTime := false
	for i, spec := range cols {
		switch spec {
		case "time":
			if hasTime {
				return nil, fmt.Errorf("column %d: a second time column", i+1)
			}
			hasTime = true
			s.Columns = append(s.Columns, Column{Kind: ColDatetime})
			continue
		case "skip":
			s.Columns = append(s.Columns, Column{Kind: ColSkip})
			continue
		}
		f := strings.SplitN(spec, ":", 4)
		name, inst := f[0], ""
		if j := strings.IndexByte(name, '['); j >= 0 {
			if !strings.HasSuffix(name, "]") {
				return nil, fmt.Errorf("column %d: %q: missing ]", i+1, spec)
			}
			name, inst = name[:j], name[j+1:len(name)-1]
			if inst == "" {
				return nil, fmt.Errorf("column %d: %q: empty instance", i+1, spec)
			}
		}
		m := Metric{Name: name, PMID: stream.PMIDNull, Type: stream.TypeDouble, InDom: stream.InDomNull, Sem: stream.SemInstant}
		var err error
		if len(f) > 1 && f[1] != "" {
			if m.Type, err = ParseType(f[1]); err != nil {
				return nil, fmt.Errorf("column %d: %v", i+1, err)
			}
		}
		if len(f) > 2 && f[2] != "" {
			if m.Sem, err = ParseSem(f[2]); err != nil {
				return nil, fmt.Errorf("column %d: %v", i+1, err)
			}
		}
		if len(f) > 3 {
			if m.Units, err = ParseUnits(f[3]); err != nil {
				return nil, fmt.Errorf("column %d: %v", i+1, err)
			}
		}
		if k, ok := byName[name]; ok {
			if len(f) > 1 {
				return nil, fmt.Errorf("column %d: %s is defined by column %d already", i+1, name, k+1)
			}
			if (inst == "") != (s.Metrics[k].InDom == stream.InDomNull) {
				return nil, fmt.Errorf("column %d: %s has instances in some columns and not in others", i+1, name)
			}
		} else {
			if inst != "" {
				m.InDom = stream.NewInDomID(Domain, serial)
				serial++
			}
			byName[name] = len(s.Metrics)
			s.Metrics = append(s.Metrics, m)
		}
		s.Columns = append(s.Columns, Column{Kind: ColData, Metric: name, Instance: inst})
	}
	if !hasTime {
		return nil, fmt.Errorf("no time column")
	}
	if len(s.Metrics) == 0 {
		return nil, fmt.Errorf("no metric column")
	}
	return s, nil
}
