//go:build amd64 || arm64

package stream

import (
	"math/bits"
	"unsafe"
)

// evenBlocks is evenBlocksSafe without bounds checks, which are most of
// that loop's instructions: it runs once per value of nearly every result
// pcprewrite re-encodes. Every access is inside pairs and blocks: k < n
// gives 8k+8 <= 8n <= len(pairs) and k*vlen+4 <= n*vlen <= len(blocks)
// (vlen >= 4). Unaligned 32-bit access is allowed on these machines. On a
// mismatch it moves the pointers back and returns 4, so that the caller
// walks the whole set the general way.
func evenBlocks(pairs, blocks []byte, w, d, hdr uint32, vlen int) int {
	if vlen < 4 {
		return 4
	}
	step := uint32(vlen / 4)
	n := min(len(pairs)/8, len(blocks)/vlen)
	if n == 0 {
		return 4
	}
	p := unsafe.Pointer(unsafe.SliceData(pairs))
	b := unsafe.Pointer(unsafe.SliceData(blocks))
	var bad uint32
	for k := 0; k < n; k++ {
		x := (*uint32)(unsafe.Add(p, 8*k+4))
		v := *x
		bad |= (v ^ bits.ReverseBytes32(w)) | (*(*uint32)(unsafe.Add(b, k*vlen)) ^ hdr)
		*x = bits.ReverseBytes32(bits.ReverseBytes32(v) + d) // w+d when all is well
		w += step
	}
	if bad != 0 {
		for k := 0; k < n; k++ {
			x := (*uint32)(unsafe.Add(p, 8*k+4))
			*x = bits.ReverseBytes32(bits.ReverseBytes32(*x) - d)
		}
		return 4
	}
	return 8*n + 4
}
