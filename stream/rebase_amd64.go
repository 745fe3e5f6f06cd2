package stream

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

func init() {
	if cpu.X86.HasAVX2 {
		even12 = even12Vec
		even12Check = even12CheckVec
	}
}

// even12AVX2 is the loop of even12Vec, eight pairs and blocks a turn
// (rebase_amd64.s): groups turns from dst, src and blocks, with k holding
// the expected pointers of the first turn's pairs 0-3 and 4-7 (in the odd
// words), the move d, the block header and the step of a turn (each in
// every word). It stores the moved pointers, with the instances from src,
// and returns 1 if any pointer or header was not as expected.
//
//go:noescape
func even12AVX2(dst, src, blocks *byte, groups int, k *[5][8]uint32) uint32

// even12Vec is evenBlocks' loop for 12-byte blocks (the values of the
// 64-bit types) in groups of eight, with AVX2: it does the first 8*groups
// pairs and blocks and returns whether all were as expected.
func even12Vec(dst, src, blocks unsafe.Pointer, groups int, w, d, hdr uint32) bool {
	var k [5][8]uint32
	for i := 0; i < 4; i++ {
		k[0][2*i+1] = w + 3*uint32(i)
		k[1][2*i+1] = w + 3*uint32(i+4)
	}
	for i := range 8 {
		k[2][i], k[3][i], k[4][i] = d, hdr, 24
	}
	return even12AVX2((*byte)(dst), (*byte)(src), (*byte)(blocks), groups, &k) == 0
}

// even12CheckAVX2 is even12AVX2 without the stores: it returns 1 if any
// of groups turns of eight pairs from src does not point at the next
// 12-byte block from blocks, or any block's header is not k[3]'s.
//
//go:noescape
func even12CheckAVX2(src, blocks *byte, groups int, k *[5][8]uint32) uint32

// even12CheckVec is even12Check with AVX2.
func even12CheckVec(src, blocks unsafe.Pointer, groups int, w, hdr uint32) bool {
	var k [5][8]uint32
	for i := 0; i < 4; i++ {
		k[0][2*i+1] = w + 3*uint32(i)
		k[1][2*i+1] = w + 3*uint32(i+4)
	}
	for i := range 8 {
		k[3][i], k[4][i] = hdr, 24
	}
	return even12CheckAVX2((*byte)(src), (*byte)(blocks), groups, &k) == 0
}
