package stream

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

// evenBody is a result of one metric whose n 64-bit values lie in 12-byte
// blocks one after the other, as PCP lays them out: Validate's quick path.
func evenBody(version uint8, n int) []byte {
	b := binary.BigEndian.AppendUint32(nil, 1) // numpmid
	b = binary.BigEndian.AppendUint32(b, 0x0c00_0001)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, ValDptr)
	blocks := len(b) + 8*n
	base := PointerBase(version)
	for i := 0; i < n; i++ {
		b = binary.BigEndian.AppendUint32(b, uint32(i))
		b = binary.BigEndian.AppendUint32(b, base+uint32(blocks/4+3*i))
	}
	for i := 0; i < n; i++ {
		b = binary.BigEndian.AppendUint32(b, uint32(3)<<24|12) // PM_TYPE_64
		b = binary.BigEndian.AppendUint64(b, uint64(i)*1000)
	}
	return b
}

// walkOK is the verdict of the slow walk over every value.
func walkOK(r *Result) bool { return r.walkValues() == nil && layoutOK(r) }

// layoutOK is libpcp's layout rule, computed apart from Validate through
// VSets: value formats 0 to 2, and the value blocks (each rounded up to
// whole words) starting right after the value sets and filling the rest
// of the body.
func layoutOK(r *Result) bool {
	b := r.Body // (framed: the walk passed)
	base := int(PointerBase(r.Version))
	pos, first, blocks := 4, len(b), 0
	for k := 0; k < int(binary.BigEndian.Uint32(b)); k++ {
		numval := int(int32(binary.BigEndian.Uint32(b[pos+4:])))
		pos += 8
		if numval <= 0 {
			continue
		}
		valfmt := binary.BigEndian.Uint32(b[pos:])
		pairs := pos + 4
		pos = pairs + 8*numval
		if valfmt > ValSptr {
			return false
		}
		if valfmt == ValInsitu {
			continue
		}
		for i := 0; i < numval; i++ {
			off := (int(binary.BigEndian.Uint32(b[pairs+8*i+4:])) - base) * 4
			first = min(first, off)
			blocks += (int(binary.BigEndian.Uint32(b[off:])&0xffffff) + 3) &^ 3
		}
	}
	if first == len(b) {
		return pos == len(b)
	}
	return first == pos && pos+blocks == len(b)
}

// TestValidateEvenBlocks: with and without the quick check of evenly laid
// out blocks, Validate agrees with itself and with the walk over every
// value, for every byte of such bodies changed (each bit of the pairs and
// headers, a few values of each byte elsewhere) and for bodies cut short.
func TestValidateEvenBlocks(t *testing.T) {
	if even12Check == nil {
		t.Skip("no quick check on this machine") // (not amd64 with AVX2)
	}
	orig := even12Check
	defer func() { even12Check = orig }()
	var passed int // groups the quick check passed
	quick := func(src, blocks unsafe.Pointer, groups int, w, hdr uint32) bool {
		ok := orig(src, blocks, groups, w, hdr)
		if ok {
			passed += groups
		}
		return ok
	}
	validate := func(r *Result, q bool) error {
		if q {
			even12Check = quick
		} else {
			even12Check = nil
		}
		return r.Validate()
	}
	for _, version := range []uint8{2, 3} {
		for _, n := range []int{8, 9, 16, 23, 64} {
			body := evenBody(version, n)
			r := &Result{Version: version, Body: body}
			if err := validate(r, true); err != nil {
				t.Fatalf("v%d n=%d: a sound body fails: %v", version, n, err)
			}
			check := func(what string, b []byte) {
				t.Helper()
				r := &Result{Version: version, Body: b}
				eq, ev := validate(r, true), validate(r, false)
				if (eq == nil) != (ev == nil) {
					t.Fatalf("v%d n=%d %s: quick check says %v, value by value %v", version, n, what, eq, ev)
				}
				if (eq == nil) != walkOK(r) {
					t.Fatalf("v%d n=%d %s: Validate says %v, the walk %v", version, n, what, eq, walkOK(r))
				}
			}
			for i := range body {
				for _, x := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff} {
					b := append([]byte(nil), body...)
					b[i] ^= x
					check("byte changed", b)
				}
			}
			for k := 0; k < len(body); k++ {
				check("cut short", body[:k])
			}
		}
	}
	if passed == 0 {
		t.Fatal("the quick check never passed a group")
	}
}
