#include "textflag.h"

// Byte order swap within each 32-bit word, in both 128-bit lanes.
DATA bswap32<>+0x00(SB)/8, $0x0405060700010203
DATA bswap32<>+0x08(SB)/8, $0x0c0d0e0f08090a0b
DATA bswap32<>+0x10(SB)/8, $0x0405060700010203
DATA bswap32<>+0x18(SB)/8, $0x0c0d0e0f08090a0b
GLOBL bswap32<>(SB), RODATA|NOPTR, $32

// The odd words: the value (pointer) words of four instance/value pairs.
DATA oddWords<>+0x00(SB)/8, $0xffffffff00000000
DATA oddWords<>+0x08(SB)/8, $0xffffffff00000000
DATA oddWords<>+0x10(SB)/8, $0xffffffff00000000
DATA oddWords<>+0x18(SB)/8, $0xffffffff00000000
GLOBL oddWords<>(SB), RODATA|NOPTR, $32

// The header words of eight 12-byte blocks (words 0, 3, 6, ..., 21) in
// the three 32-byte loads that cover them: words 0, 3, 6 of the first,
// 1, 4, 7 of the second, 2, 5 of the third.
DATA hdrWords0<>+0x00(SB)/8, $0x00000000ffffffff
DATA hdrWords0<>+0x08(SB)/8, $0xffffffff00000000
DATA hdrWords0<>+0x10(SB)/8, $0x0000000000000000
DATA hdrWords0<>+0x18(SB)/8, $0x00000000ffffffff
GLOBL hdrWords0<>(SB), RODATA|NOPTR, $32
DATA hdrWords1<>+0x00(SB)/8, $0xffffffff00000000
DATA hdrWords1<>+0x08(SB)/8, $0x0000000000000000
DATA hdrWords1<>+0x10(SB)/8, $0x00000000ffffffff
DATA hdrWords1<>+0x18(SB)/8, $0xffffffff00000000
GLOBL hdrWords1<>(SB), RODATA|NOPTR, $32
DATA hdrWords2<>+0x00(SB)/8, $0x0000000000000000
DATA hdrWords2<>+0x08(SB)/8, $0x00000000ffffffff
DATA hdrWords2<>+0x10(SB)/8, $0xffffffff00000000
DATA hdrWords2<>+0x18(SB)/8, $0x0000000000000000
GLOBL hdrWords2<>(SB), RODATA|NOPTR, $32

// LOADK loads k's expected pointers, header and step, the shuffles and
// masks, and clears the mismatches (registers as in even12AVX2).
#define LOADK \
	VMOVDQU 0(AX), Y8 \
	VMOVDQU 32(AX), Y9 \
	VMOVDQU 96(AX), Y11 \
	VMOVDQU 128(AX), Y12 \
	VMOVDQU bswap32<>(SB), Y13 \
	VMOVDQU oddWords<>(SB), Y14 \
	VMOVDQU hdrWords0<>(SB), Y6 \
	VMOVDQU hdrWords1<>(SB), Y15 \
	VPXOR Y7, Y7, Y7

// CHECKHDRS adds to Y7 the mismatches of the headers of the eight blocks
// at BX (Y2, Y3 clobbered).
#define CHECKHDRS \
	VMOVDQU 0(BX), Y2 \
	VPXOR Y11, Y2, Y2 \
	VPAND Y6, Y2, Y2 \
	VMOVDQU 32(BX), Y3 \
	VPXOR Y11, Y3, Y3 \
	VPAND Y15, Y3, Y3 \
	VPOR Y2, Y3, Y2 \
	VMOVDQU 64(BX), Y3 \
	VPXOR Y11, Y3, Y3 \
	VPAND hdrWords2<>(SB), Y3, Y3 \
	VPOR Y2, Y3, Y2 \
	VPOR Y2, Y7, Y7

// func even12AVX2(dst, src, blocks *byte, groups int, k *[5][8]uint32) uint32
//
// See even12 (rebase_amd64.go). Registers: Y8, Y9 the expected pointers
// of pairs 0-3 and 4-7 of a group (odd words), Y10 the move, Y11 the block
// header, Y12 the step of a group, Y7 the mismatches.
TEXT ·even12AVX2(SB), NOSPLIT, $0-44
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), BX
	MOVQ groups+24(FP), CX
	MOVQ k+32(FP), AX
	VMOVDQU 64(AX), Y10
	LOADK
	TESTQ CX, CX
	JEQ done

loop:
	// Pairs 0-7: the pointers as expected?
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VPSHUFB Y13, Y8, Y2
	VPXOR Y0, Y2, Y2
	VPSHUFB Y13, Y9, Y3
	VPXOR Y1, Y3, Y3
	VPOR Y2, Y3, Y2
	VPAND Y14, Y2, Y2
	VPOR Y2, Y7, Y7

	// The moved pointers, with the instances as they are.
	VPADDD Y10, Y8, Y4
	VPSHUFB Y13, Y4, Y4
	VPBLENDD $0xaa, Y4, Y0, Y0
	VMOVDQU Y0, 0(DI)
	VPADDD Y10, Y9, Y5
	VPSHUFB Y13, Y5, Y5
	VPBLENDD $0xaa, Y5, Y1, Y1
	VMOVDQU Y1, 32(DI)

	// Blocks 0-7: every header as expected?
	CHECKHDRS

	VPADDD Y12, Y8, Y8
	VPADDD Y12, Y9, Y9
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $96, BX
	DECQ CX
	JNZ loop

done:
	VPTEST Y7, Y7
	SETNE AL
	MOVBLZX AL, AX
	MOVL AX, ret+40(FP)
	VZEROUPPER
	RET

// func even12CheckAVX2(src, blocks *byte, groups int, k *[5][8]uint32) uint32
//
// even12AVX2 without the stores (Result.Validate): whether the pairs of
// groups turns point at consecutive 12-byte blocks, each with the header
// of k[3]. The same registers, less the move.
TEXT ·even12CheckAVX2(SB), NOSPLIT, $0-36
	MOVQ src+0(FP), SI
	MOVQ blocks+8(FP), BX
	MOVQ groups+16(FP), CX
	MOVQ k+24(FP), AX
	LOADK
	TESTQ CX, CX
	JEQ cdone

cloop:
	VPSHUFB Y13, Y8, Y2
	VPXOR 0(SI), Y2, Y2
	VPSHUFB Y13, Y9, Y3
	VPXOR 32(SI), Y3, Y3
	VPOR Y2, Y3, Y2
	VPAND Y14, Y2, Y2
	VPOR Y2, Y7, Y7

	CHECKHDRS

	VPADDD Y12, Y8, Y8
	VPADDD Y12, Y9, Y9
	ADDQ $64, SI
	ADDQ $96, BX
	DECQ CX
	JNZ cloop

cdone:
	VPTEST Y7, Y7
	SETNE AL
	MOVBLZX AL, AX
	MOVL AX, ret+32(FP)
	VZEROUPPER
	RET
