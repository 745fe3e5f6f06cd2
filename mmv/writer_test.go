package mmv

import (
	"encoding/binary"
	"math"
)

// spec describes a small MMV file for tests: nm metrics of every numeric
// type over one indom of ni instances, plus a string metric.
type spec struct {
	version int
	flags   uint32
	cluster uint32
	nm, ni  int
	gen     uint64
	labels  bool
	type0   uint32 // the first metric's type (0: TypeI32)
}

// build lays out an MMV file as libpcp_mmv does: header, TOC, indoms,
// instances, metrics, values, strings (and labels for v3).
func build(s spec) []byte {
	le := binary.NativeEndian
	var strs [][]byte
	str := func(t string) int { strs = append(strs, []byte(t)); return len(strs) - 1 }
	ntoc := 5
	if s.labels {
		ntoc = 6
	}
	instSize, metSize := uint64(instance2Size), uint64(metric2Size)
	if s.version == 1 {
		instSize, metSize = instance1Size, metric1Size
	}
	nvals := s.nm*s.ni + 1
	indomOff := uint64(headerSize + ntoc*tocSize)
	instOff := indomOff + indomSize
	metOff := instOff + uint64(s.ni)*instSize
	valOff := metOff + uint64(s.nm+1)*metSize
	strOff := valOff + uint64(nvals)*valueSize
	// strings: per instance name (v2), per metric name (v2), one value
	type fix struct {
		at  uint64
		idx int
	}
	var fixes []fix
	b := make([]byte, strOff)
	copy(b, "MMV\x00")
	le.PutUint32(b[4:], uint32(s.version))
	le.PutUint64(b[8:], s.gen)
	le.PutUint64(b[16:], s.gen)
	le.PutUint32(b[24:], uint32(ntoc))
	le.PutUint32(b[28:], s.flags)
	le.PutUint32(b[36:], s.cluster)
	toc := func(i int, typ uint32, count int, off uint64) {
		at := headerSize + i*tocSize
		le.PutUint32(b[at:], typ)
		le.PutUint32(b[at+4:], uint32(count))
		le.PutUint64(b[at+8:], off)
	}
	toc(0, TOCIndoms, 1, indomOff)
	toc(1, TOCInstances, s.ni, instOff)
	toc(2, TOCMetrics, s.nm+1, metOff)
	toc(3, TOCValues, nvals, valOff)
	le.PutUint32(b[indomOff:], 7)
	le.PutUint32(b[indomOff+4:], uint32(s.ni))
	le.PutUint64(b[indomOff+8:], instOff)
	fixes = append(fixes, fix{indomOff + 16, str("indom seven")})
	for i := 0; i < s.ni; i++ {
		at := instOff + uint64(i)*instSize
		le.PutUint64(b[at:], indomOff)
		le.PutUint32(b[at+12:], uint32(i*2))
		name := "inst" + itoa(i)
		if s.version == 1 {
			copy(b[at+16:at+16+nameMax-1], name)
		} else {
			fixes = append(fixes, fix{at + 16, str(name)})
		}
	}
	types := []uint32{TypeI32, TypeU32, TypeI64, TypeU64, TypeFloat, TypeDouble, TypeElapsed}
	for m := 0; m <= s.nm; m++ {
		at := metOff + uint64(m)*metSize
		name := "metric" + itoa(m) + ".value"
		item := uint64(nameMax)
		if s.version == 1 {
			copy(b[at:at+nameMax-1], name)
		} else {
			fixes = append(fixes, fix{at, str(name)})
			item = 8
		}
		f := at + item
		le.PutUint32(b[f:], uint32(m+1))
		typ, indom := types[m%len(types)], uint32(7)
		if m == s.nm {
			typ, indom = TypeString, 0
		}
		if m == 0 && s.type0 != 0 {
			typ = s.type0
		}
		le.PutUint32(b[f+4:], typ)
		le.PutUint32(b[f+8:], 1+uint32(m%2)*2)
		le.PutUint32(b[f+12:], 1<<20)
		le.PutUint32(b[f+16:], indom)
		fixes = append(fixes, fix{f + 24, str("short " + name)})
	}
	v := 0
	for m := 0; m <= s.nm; m++ {
		n := s.ni
		if m == s.nm {
			n = 1
		}
		for i := 0; i < n; i++ {
			at := valOff + uint64(v)*valueSize
			v++
			le.PutUint64(b[at+16:], metOff+uint64(m)*metSize)
			if m == s.nm {
				fixes = append(fixes, fix{at + 8, str("a string value")})
				continue
			}
			le.PutUint64(b[at+24:], instOff+uint64(i)*instSize)
			switch types[m%len(types)] {
			case TypeFloat:
				le.PutUint32(b[at:], math.Float32bits(float32(m)+0.5))
			case TypeDouble:
				le.PutUint64(b[at:], math.Float64bits(float64(i)+0.25))
			default:
				le.PutUint64(b[at:], uint64(m*1000+i))
			}
		}
	}
	toc(4, TOCStrings, len(strs), strOff)
	for _, f := range fixes {
		le.PutUint64(b[f.at:], strOff+uint64(f.idx)*stringSize)
	}
	for _, t := range strs {
		slot := make([]byte, stringSize)
		copy(slot[:stringSize-1], t)
		b = append(b, slot...)
	}
	if s.labels {
		labOff := uint64(len(b))
		toc(5, TOCLabels, 2, labOff)
		for i, l := range []struct {
			flags, id uint32
			in        int32
			json      string
		}{{4, s.cluster, -1, `{"app":"test"}`}, {0x10, 1, -1, `{"m":1}`}} {
			slot := make([]byte, labelSize)
			le.PutUint32(slot, l.flags)
			le.PutUint32(slot[4:], l.id)
			le.PutUint32(slot[8:], uint32(l.in))
			copy(slot[12:], l.json)
			b = append(b, slot...)
			_ = i
		}
	}
	return b
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}
