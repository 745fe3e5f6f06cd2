package pcptime

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// tzifData is the part of a TZif file (RFC 8536) that glibc's posixrules
// handling looks at: the transitions, the local time types with their
// standard/wall and UT/local indicators, and the footer TZ string.
type tzifData struct {
	trans  []int64
	idx    []uint8
	types  []tzifType
	footer string // "" when absent (version 1 files)
}

type tzifType struct {
	off   int32 // seconds east of UTC
	isDST bool
	abbr  string
	isStd bool // transition times for this type are in standard time
	isUT  bool // transition times for this type are in UT
}

var errTZif = errors.New("not a TZif file")

// parseTZif decodes b. Like glibc it prefers the 64-bit data of version 2+
// files. Every count is checked against the bytes that are really there
// before anything is allocated.
func parseTZif(b []byte) (*tzifData, error) {
	d := &tzifReader{b: b}
	hdr, err := d.header()
	if err != nil {
		return nil, err
	}
	width := 4
	if hdr.version >= 2 {
		// Skip the 32-bit block and read the second header.
		skip := hdr.timecnt*5 + hdr.typecnt*6 + hdr.charcnt + hdr.leapcnt*8 + hdr.isstdcnt + hdr.isutcnt
		if !d.skip(skip) {
			return nil, fmt.Errorf("%w: truncated version 1 data block", errTZif)
		}
		if hdr, err = d.header(); err != nil {
			return nil, err
		}
		width = 8
	}
	if hdr.typecnt == 0 {
		return nil, fmt.Errorf("%w: no local time types", errTZif)
	}
	if hdr.isstdcnt > hdr.typecnt || hdr.isutcnt > hdr.typecnt {
		return nil, fmt.Errorf("%w: more indicators than local time types", errTZif)
	}
	need := hdr.timecnt*(width+1) + hdr.typecnt*6 + hdr.charcnt + hdr.leapcnt*(width+4) + hdr.isstdcnt + hdr.isutcnt
	if need > len(d.b)-d.off {
		return nil, fmt.Errorf("%w: data block needs %d bytes, %d left", errTZif, need, len(d.b)-d.off)
	}
	t := &tzifData{
		trans: make([]int64, hdr.timecnt),
		idx:   make([]uint8, hdr.timecnt),
		types: make([]tzifType, hdr.typecnt),
	}
	for i := range t.trans {
		if width == 8 {
			t.trans[i] = int64(binary.BigEndian.Uint64(d.next(8)))
		} else {
			t.trans[i] = int64(int32(binary.BigEndian.Uint32(d.next(4))))
		}
	}
	copy(t.idx, d.next(hdr.timecnt))
	for _, x := range t.idx {
		if int(x) >= hdr.typecnt {
			return nil, fmt.Errorf("%w: transition names local time type %d of %d", errTZif, x, hdr.typecnt)
		}
	}
	abbrIdx := make([]int, hdr.typecnt)
	for i := range t.types {
		p := d.next(6)
		t.types[i].off = int32(binary.BigEndian.Uint32(p))
		if p[4] > 1 {
			return nil, fmt.Errorf("%w: isdst flag %d", errTZif, p[4])
		}
		t.types[i].isDST = p[4] == 1
		abbrIdx[i] = int(p[5])
	}
	chars := d.next(hdr.charcnt)
	for i, ai := range abbrIdx {
		if ai >= len(chars) {
			return nil, fmt.Errorf("%w: abbreviation index %d beyond %d bytes", errTZif, ai, len(chars))
		}
		end := ai
		for end < len(chars) && chars[end] != 0 {
			end++
		}
		t.types[i].abbr = string(chars[ai:end])
	}
	d.next(hdr.leapcnt * (width + 4))
	for i, c := range d.next(hdr.isstdcnt) {
		t.types[i].isStd = c != 0
	}
	for i, c := range d.next(hdr.isutcnt) {
		t.types[i].isUT = c != 0
	}
	if width == 8 {
		rest := d.b[d.off:]
		if len(rest) >= 2 && rest[0] == '\n' {
			for i := 1; i < len(rest); i++ {
				if rest[i] == '\n' {
					t.footer = string(rest[1:i])
					break
				}
			}
		}
	}
	return t, nil
}

type tzifHeader struct {
	version                                               int
	isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt int
}

type tzifReader struct {
	b   []byte
	off int
}

func (d *tzifReader) header() (tzifHeader, error) {
	var h tzifHeader
	if len(d.b)-d.off < 44 || string(d.b[d.off:d.off+4]) != "TZif" {
		return h, errTZif
	}
	switch v := d.b[d.off+4]; v {
	case 0:
		h.version = 1
	case '2', '3', '4':
		h.version = int(v - '0')
	default:
		return h, fmt.Errorf("%w: version byte %#x", errTZif, v)
	}
	var n [6]int
	for i := range n {
		u := binary.BigEndian.Uint32(d.b[d.off+20+4*i:])
		if u > 1<<24 { // far beyond any real zone; keeps the arithmetic small
			return h, fmt.Errorf("%w: count %d", errTZif, u)
		}
		n[i] = int(u)
	}
	h.isutcnt, h.isstdcnt, h.leapcnt, h.timecnt, h.typecnt, h.charcnt = n[0], n[1], n[2], n[3], n[4], n[5]
	d.off += 44
	return h, nil
}

func (d *tzifReader) skip(n int) bool {
	if n > len(d.b)-d.off {
		return false
	}
	d.off += n
	return true
}

// next returns the next n bytes; callers have checked that they exist.
func (d *tzifReader) next(n int) []byte {
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// appendTZif encodes a version 2 TZif file. The version 1 block carries a
// single local time type only: Go, the one reader of these bytes, skips it.
func appendTZif(dst []byte, t *tzifData) []byte {
	hdr := func(dst []byte, timecnt, typecnt, charcnt int) []byte {
		dst = append(dst, "TZif2"...)
		dst = append(dst, make([]byte, 15)...)
		for _, n := range []int{0, 0, 0, timecnt, typecnt, charcnt} {
			dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		}
		return dst
	}
	var chars []byte
	abbr := make([]int, len(t.types))
	for i, ty := range t.types {
		abbr[i] = len(chars)
		chars = append(chars, ty.abbr...)
		chars = append(chars, 0)
	}
	// Version 1 block: one type, no transitions.
	dst = hdr(dst, 0, 1, len(t.types[0].abbr)+1)
	dst = binary.BigEndian.AppendUint32(dst, uint32(t.types[0].off))
	dst = append(dst, b2u8(t.types[0].isDST), 0)
	dst = append(dst, t.types[0].abbr...)
	dst = append(dst, 0)
	// Version 2 block.
	dst = hdr(dst, len(t.trans), len(t.types), len(chars))
	for _, tr := range t.trans {
		dst = binary.BigEndian.AppendUint64(dst, uint64(tr))
	}
	dst = append(dst, t.idx...)
	for i, ty := range t.types {
		dst = binary.BigEndian.AppendUint32(dst, uint32(ty.off))
		dst = append(dst, b2u8(ty.isDST), uint8(abbr[i]))
	}
	dst = append(dst, chars...)
	dst = append(dst, '\n')
	dst = append(dst, t.footer...)
	return append(dst, '\n')
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
