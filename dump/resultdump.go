package dump

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// AppendResultDump appends what libpcp's __pmPrintResult prints of a
// result, as PCP's tools print one when they give up on it (pmlogrewrite,
// when a value cannot be converted): a header line, then each value set
// with its metric's names (pmNameAll), its values printed as pmPrintValue
// prints them for the metric's type in the archive (pmLookupDesc), each
// instance as "inst [N or ???]" (the instance names are not looked up
// there: in the dumps PCP's tools make of archive results, they never
// are). Value set number set, when it is one, shows only its first done
// values (a tool that stopped part way through it says so, as
// pmlogrewrite sets numval to the values it got through). The header's
// address is libpcp's pointer, which no one can reproduce: 0 here.
func AppendResultDump(dst []byte, res *stream.Result, meta *ArchiveMeta, loc *time.Location, set, done int) []byte {
	return appendResultDump(dst, res, meta, nil, loc, set, done)
}

// appendResultDump is AppendResultDump naming each instance, when ver is
// not nil, as pmNameInDom finds it in the context: in the version of its
// domain that ver gives (nil: none, "???").
func appendResultDump(dst []byte, res *stream.Result, meta *ArchiveMeta, ver func(stream.InDomID) *indomVersion, loc *time.Location, set, done int) []byte {
	t := res.T
	dst = fmt.Appendf(dst, "__pmResult dump from 0x0 timestamp: %d.%09d %s numpmid: %d\n",
		t.Sec, t.Nsec, time.Unix(t.Sec, int64(t.Nsec)).In(loc).Format("15:04:05.000000000"), res.NumPMID())
	it := res.VSets()
	for i := 0; it.Next(); i++ {
		vs := it.VSet()
		dst = append(dst, "  "...)
		dst = appendPMID(dst, vs.PMID)
		if names := meta.Names(vs.PMID); len(names) > 0 {
			dst = append(dst, " ("...)
			dst = append(dst, strings.Join(names, ", ")...)
			dst = append(dst, "):"...)
		} else {
			dst = append(dst, " (<noname>):"...)
		}
		numval := int(vs.NumVal)
		if i == set && numval > done {
			numval = done
		}
		switch {
		case numval == 0:
			dst = append(dst, " No values returned!\n"...)
			continue
		case numval < 0:
			dst = append(dst, ' ')
			dst = appendErrStr(dst, vs.NumVal)
			dst = append(dst, '\n')
			continue
		}
		d, haveDesc := meta.Desc(vs.PMID)
		dst = fmt.Appendf(dst, " numval: %d valfmt: %d vlist[]:\n", numval, vs.ValFmt)
		for j := 0; j < numval; j++ {
			inst := vs.Inst(j)
			if numval > 1 || inst != stream.InstNull {
				dst = append(dst, "    inst ["...)
				if haveDesc && ver != nil {
					dst = appendInst(dst, ver(d.InDom), inst)
				} else {
					dst = strconv.AppendInt(dst, int64(inst), 10)
					dst = append(dst, " or ???"...)
				}
				dst = append(dst, "] "...)
			} else {
				dst = append(dst, "   "...)
			}
			dst = append(dst, "value "...)
			v, err := vs.Value(j)
			switch {
			case err != nil:
				dst = append(dst, "bad value"...)
			case haveDesc:
				dst = appendPrintValue(dst, d.Type, v, loc)
			case v.Insitu:
				dst = appendRaw(dst, v)
			default:
				dst = appendPrintValue(dst, stream.Type(v.VType), v, loc)
			}
			dst = append(dst, '\n')
		}
	}
	return dst
}

// appendPrintValue is appendValue with what pmPrintValue prints of an
// event array: a summary of its records (print_event_summary), or for an
// in-place value pmlogger's logging control state.
func appendPrintValue(dst []byte, typ stream.Type, v stream.Value, loc *time.Location) []byte {
	if typ != stream.TypeEvent && typ != stream.TypeHighresEvent {
		return appendValue(dst, typ, v)
	}
	if v.Insitu {
		w := v.Word
		dst = append(dst, "[pmlc control "...)
		if w&2 != 0 {
			dst = append(dst, "mand "...)
		} else {
			dst = append(dst, "adv "...)
		}
		if w&1 != 0 {
			dst = append(dst, "on "...)
		} else {
			dst = append(dst, "off "...)
		}
		switch {
		case w&8 == 0:
			dst = append(dst, "nl "...)
		case w&4 != 0:
			dst = append(dst, ' ')
		default:
			dst = append(dst, "na "...)
		}
		return fmt.Appendf(dst, "%d]", (w>>4)&0x0fffffff)
	}
	return appendEventSummary(dst, v.Payload, typ == stream.TypeHighresEvent, loc)
}

// appendEventSummary is libpcp's print_event_summary of an event array's
// payload (from its record count): the number of records, how many
// parameters were missed, and the first and last records' times. It
// walks the records as libpcp does, which does not step past a record
// flagged as missed: from there on it counts that record's parameters
// again for each record left, and takes the last time from it.
func appendEventSummary(dst []byte, p []byte, highres bool, loc *time.Location) []byte {
	u32 := func(off int) uint32 {
		if off < 0 || off+4 > len(p) {
			return 0
		}
		return binary.BigEndian.Uint32(p[off:])
	}
	stamp := func(off int) []byte {
		if highres {
			sec := int64(u32(off))<<32 | int64(u32(off+4))
			nsec := int64(u32(off+8))<<32 | int64(u32(off+12))
			t := time.Unix(sec, 0).In(loc)
			return fmt.Appendf(nil, "%02d:%02d:%02d.%09d", t.Hour(), t.Minute(), t.Second(), int32(nsec))
		}
		t := time.Unix(int64(int32(u32(off))), 0).In(loc)
		return fmt.Appendf(nil, "%02d:%02d:%02d.%03d", t.Hour(), t.Minute(), t.Second(), int32(u32(off+4))/1000)
	}
	nrecords := int32(u32(0))
	tsSize := 8
	if highres {
		tsSize = 16
	}
	base, nmissed := 4, int32(0)
	for r := int32(0); r < nrecords-1 && base < len(p); r++ {
		flags, nparams := u32(base+tsSize), u32(base+tsSize+4)
		if flags&eventFlagMissed != 0 {
			// libpcp stays on this record for every one left: counted
			// at once, so that a record count of 2^31 costs nothing.
			nmissed += int32(int64(int32(nparams)) * int64(nrecords-1-r))
			break
		}
		base += tsSize + 8
		for q := uint32(0); q < nparams && base < len(p); q++ {
			base += 4 + (int(u32(base+4)&0xffffff)+3)&^3
		}
	}
	dst = fmt.Appendf(dst, "[%d event record", nrecords)
	if nrecords != 1 {
		dst = append(dst, 's')
	}
	if nmissed > 0 {
		dst = fmt.Appendf(dst, " (%d missed)", nmissed)
	}
	if nrecords > 0 {
		dst = append(dst, " timestamp"...)
		if nrecords > 1 {
			dst = append(dst, 's')
		}
		dst = append(dst, ' ')
		dst = append(dst, stamp(4)...)
		if nrecords > 1 {
			dst = append(dst, "..."...)
			dst = append(dst, stamp(base)...)
		}
	}
	return append(dst, ']')
}
