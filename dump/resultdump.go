package dump

import (
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
				dst = strconv.AppendInt(dst, int64(inst), 10)
				dst = append(dst, " or ???] "...)
			} else {
				dst = append(dst, "   "...)
			}
			dst = append(dst, "value "...)
			v, err := vs.Value(j)
			switch {
			case err != nil:
				dst = append(dst, "bad value"...)
			case haveDesc:
				dst = appendValue(dst, d.Type, v)
			case v.Insitu:
				dst = appendRaw(dst, v)
			default:
				dst = appendValue(dst, stream.Type(v.VType), v)
			}
			dst = append(dst, '\n')
		}
	}
	return dst
}
