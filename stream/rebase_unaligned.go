//go:build amd64 || arm64

package stream

import (
	"math/bits"
	"unsafe"
)

// evenBlocks is evenBlocksSafe without bounds checks, which are most of
// that loop's instructions: it runs once per value of nearly every result
// pcprewrite re-encodes. Every access is inside pairs, src and blocks:
// k < n gives 8k+8 <= 8n <= len(pairs), len(src) and k*vlen+4 <= n*vlen
// <= len(blocks) (vlen >= 4). Unaligned 32-bit access is allowed on these
// machines. The new pointers are stored without waiting for the old ones
// (they are w+d when all is well); on a mismatch the
// pairs are copied back from src and it returns 4, so that the caller
// walks the whole set the general way.
func evenBlocks(pairs, src, blocks []byte, w, d, hdr uint32, vlen int) int {
	return evenBlocksWith(even12, pairs, src, blocks, w, d, hdr, vlen)
}

// even12, where the machine has it, is a quicker loop for the first pairs
// of 12-byte blocks, in groups of eight (rebase_amd64.go); nil elsewhere.
var even12 func(dst, src, blocks unsafe.Pointer, groups int, w, d, hdr uint32) bool

// evenBlocksWith is evenBlocks with its quicker loop given (tests run it
// without).
func evenBlocksWith(even12 func(dst, src, blocks unsafe.Pointer, groups int, w, d, hdr uint32) bool, pairs, src, blocks []byte, w, d, hdr uint32, vlen int) int {
	if vlen < 4 {
		return 4
	}
	step := uint32(vlen / 4)
	n := min(len(pairs)/8, len(src)/8, len(blocks)/vlen)
	if n == 0 {
		return 4
	}
	p := unsafe.Pointer(unsafe.SliceData(pairs))
	s := unsafe.Pointer(unsafe.SliceData(src))
	b := unsafe.Pointer(unsafe.SliceData(blocks))
	var bad uint32
	o := 4
	if g := n / 8; vlen == 12 && g > 0 && even12 != nil {
		if !even12(p, s, b, g, w, d, hdr) {
			bad = 1
		}
		o += 64 * g
		w += 24 * uint32(g)
		b = unsafe.Add(b, 96*g)
	}
	end := 8 * n
	for ; o < end; o += 8 {
		bad |= (*(*uint32)(unsafe.Add(s, o)) ^ bits.ReverseBytes32(w)) | (*(*uint32)(b) ^ hdr)
		*(*uint32)(unsafe.Add(p, o)) = bits.ReverseBytes32(w + d)
		w += step
		b = unsafe.Add(b, vlen)
	}
	if bad != 0 {
		copy(unsafe.Slice((*byte)(p), 8*n), unsafe.Slice((*byte)(s), 8*n))
		return 4
	}
	return 8*n + 4
}
