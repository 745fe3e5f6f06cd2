package dump

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/pcptools/pcptools/stream"
)

// This file prints single values the way libpcp's pmPrintValue does (with
// a minimum width of 1, as pmdumplog always asks), without fmt and without
// allocating.

// appendPMID appends a PMID as pmIDStr does: "d.c.i", "PM_ID_NULL", or
// "c.*.*" for the root of a dynamic namespace subtree (domain 511, item 0).
func appendPMID(dst []byte, p stream.PMID) []byte {
	if p == stream.PMIDNull {
		return append(dst, "PM_ID_NULL"...)
	}
	if p.Domain() == 511 && p.Item() == 0 {
		dst = strconv.AppendUint(dst, uint64(p.Cluster()), 10)
		return append(dst, ".*.*"...)
	}
	dst = strconv.AppendUint(dst, uint64(p.Domain()), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64(p.Cluster()), 10)
	dst = append(dst, '.')
	return strconv.AppendUint(dst, uint64(p.Item()), 10)
}

// appendInDom appends an instance domain as pmInDomStr does.
func appendInDom(dst []byte, id stream.InDomID) []byte {
	if id == stream.InDomNull {
		return append(dst, "PM_INDOM_NULL"...)
	}
	dst = strconv.AppendUint(dst, uint64(id.Domain()), 10)
	dst = append(dst, '.')
	return strconv.AppendUint(dst, uint64(id.Serial()), 10)
}

// appendNames appends a metric's names joined by " or ", or "<nonames>".
func appendNames(dst []byte, names []string) []byte {
	if len(names) == 0 {
		return append(dst, "<nonames>"...)
	}
	for i, n := range names {
		if i > 0 {
			dst = append(dst, " or "...)
		}
		dst = append(dst, n...)
	}
	return dst
}

// appendG appends f as C's printf("%.<prec>g") does, including glibc's
// spelling of infinities and NaNs.
func appendG(dst []byte, f float64, prec int) []byte {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(dst, "-nan"...)
		}
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', prec, 64)
}

// appendHex appends v as printf("%x").
func appendHex(dst []byte, v uint32) []byte { return strconv.AppendUint(dst, uint64(v), 16) }

const hexDigits = "0123456789abcdef"

// extractOK reports whether pmExtractValue would accept a value of type
// typ in the given format; when it would not, pmPrintValue falls back to
// printing the raw value (its PM_TYPE_UNKNOWN case).
func extractOK(typ stream.Type, insitu bool, v stream.Value) bool {
	if insitu {
		switch typ {
		case stream.Type32, stream.TypeU32, stream.TypeFloat:
			return true
		}
		return false
	}
	vlen := len(v.Payload) + 4
	switch typ {
	case stream.Type64:
		return vlen == 12 && (v.VType == uint8(stream.Type64) || v.VType == 0)
	case stream.TypeU64:
		return vlen == 12 && (v.VType == uint8(stream.TypeU64) || v.VType == 0)
	case stream.TypeDouble:
		return vlen == 12 && (v.VType == uint8(stream.TypeDouble) || v.VType == 0)
	case stream.TypeFloat:
		return vlen == 8 && (v.VType == uint8(stream.TypeFloat) || v.VType == 0)
	case stream.TypeString:
		return v.VType == uint8(stream.TypeString) || v.VType == 0
	case stream.TypeAggregate:
		return v.VType == uint8(stream.TypeAggregate) || v.VType == 0
	}
	return false
}

// blockUint64 reads a 64-bit block as libpcp hands it to pmExtractValue.
// Blocks that say what they hold are converted from network order on
// decode; blocks of type 0 (written by very old loggers) are not, so a
// little-endian host reads their bytes backwards.
func blockUint64(v stream.Value) uint64 {
	if v.VType == 0 {
		return binary.LittleEndian.Uint64(v.Payload)
	}
	return binary.BigEndian.Uint64(v.Payload)
}

// blockUint32 is blockUint64 for 4-byte blocks.
func blockUint32(v stream.Value) uint32 {
	if v.VType == 0 {
		return binary.LittleEndian.Uint32(v.Payload)
	}
	return binary.BigEndian.Uint32(v.Payload)
}

// appendValue appends one value as pmPrintValue(f, valfmt, typ, v, 1).
// Event types are not handled here: pmdumplog expands them itself.
func appendValue(dst []byte, typ stream.Type, v stream.Value) []byte {
	insitu := v.Insitu
	if !extractOK(typ, insitu, v) {
		return appendRaw(dst, v)
	}
	switch typ {
	case stream.Type32:
		if insitu {
			return strconv.AppendInt(dst, int64(int32(v.Word)), 10)
		}
	case stream.TypeU32:
		if insitu {
			return strconv.AppendUint(dst, uint64(v.Word), 10)
		}
	case stream.Type64:
		return strconv.AppendInt(dst, int64(blockUint64(v)), 10)
	case stream.TypeU64:
		return strconv.AppendUint(dst, blockUint64(v), 10)
	case stream.TypeFloat:
		var bits uint32
		if insitu {
			bits = v.Word
		} else {
			bits = blockUint32(v)
		}
		return appendG(dst, float64(math.Float32frombits(bits)), 8)
	case stream.TypeDouble:
		return appendG(dst, math.Float64frombits(blockUint64(v)), 16)
	case stream.TypeString:
		s := v.Payload
		for i, c := range s {
			if c == 0 {
				s = s[:i]
				break
			}
		}
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	case stream.TypeAggregate:
		return appendRaw(dst, v)
	}
	return appendRaw(dst, v)
}

// hostBytes returns a value block's payload as it sits in memory on a
// little-endian host after libpcp has decoded the record: blocks whose
// own type says 64-bit integer, double or float are byte-swapped, all
// others are left as they are on disk.
func hostBytes(v stream.Value, scratch *[8]byte) []byte {
	p := v.Payload
	var n int
	switch stream.Type(v.VType) {
	case stream.Type64, stream.TypeU64, stream.TypeDouble:
		n = 8
	case stream.TypeFloat:
		n = 4
	default:
		return p
	}
	if len(p) < n {
		return p
	}
	for i := 0; i < n; i++ {
		scratch[i] = p[n-1-i]
	}
	if len(p) == n {
		return scratch[:n]
	}
	// Longer blocks keep their tail; such blocks only come from damage.
	b := make([]byte, len(p))
	copy(b, scratch[:n])
	copy(b[n:], p[n:])
	return b
}

// appendRaw is pmPrintValue's fallback for aggregates and for values whose
// type does not match their encoding: an insitu word as unsigned, float
// (unless NaN) and hex; a block as a 64-bit integer and double when it is
// 8 bytes long, a float when 4, a quoted string when every byte is
// printable, then always the bytes in hex.
func appendRaw(dst []byte, v stream.Value) []byte {
	if v.Insitu {
		dst = strconv.AppendUint(dst, uint64(v.Word), 10)
		if f := math.Float32frombits(v.Word); !math.IsNaN(float64(f)) {
			dst = append(dst, ' ')
			dst = appendG(dst, float64(f), 8)
		}
		dst = append(dst, " 0x"...)
		return appendHex(dst, v.Word)
	}
	var scratch [8]byte
	b := hostBytes(v, &scratch)
	done := false
	if len(b) == 8 {
		dst = strconv.AppendUint(dst, binary.LittleEndian.Uint64(b), 10)
		done = true
		if f := math.Float64frombits(binary.LittleEndian.Uint64(b)); !math.IsNaN(f) {
			dst = append(dst, ' ')
			dst = appendG(dst, f, 16)
		}
	}
	if len(b) == 4 {
		if f := math.Float32frombits(binary.LittleEndian.Uint32(b)); !math.IsNaN(float64(f)) {
			dst = appendG(dst, float64(f), 8)
			done = true
		}
	}
	printable := true
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			printable = false
			break
		}
	}
	if printable {
		if done {
			dst = append(dst, ' ')
		}
		dst = append(dst, '"')
		dst = append(dst, b...)
		dst = append(dst, '"')
		done = true
	}
	if done {
		dst = append(dst, ' ')
	}
	dst = append(dst, '[')
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(dst, ']')
}

// appendFrac appends "." and the first prec digits of a nanosecond count,
// printing whatever is there (negative or too large values included) as
// printf("%0*d") would after PCP's integer division.
func appendFrac(dst []byte, nsec int64, prec int) []byte {
	dst = append(dst, '.')
	if prec == 6 {
		nsec /= 1000
	}
	return appendPadInt(dst, nsec, prec)
}

// appendPadInt appends v as printf("%0<width>d").
func appendPadInt(dst []byte, v int64, width int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		width--
		u := uint64(-v)
		return appendPadUint(dst, u, width)
	}
	return appendPadUint(dst, uint64(v), width)
}

func appendPadUint(dst []byte, u uint64, width int) []byte {
	var b [24]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	for len(b)-i < width {
		i--
		b[i] = '0'
	}
	return append(dst, b[i:]...)
}

// appendRightInt appends v right-aligned in width columns, as "%<width>d".
func appendRightInt(dst []byte, v int64, width int) []byte {
	var b [24]byte
	s := strconv.AppendInt(b[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, ' ')
	}
	return append(dst, s...)
}
