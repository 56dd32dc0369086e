//go:build amd64 && !purego

#include "textflag.h"

// func hswishAVX2(p *float32, n int, a6, b float32)
TEXT ·hswishAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX               // whole vectors of 8
	JZ   hdone
	VBROADCASTSS a6+16(FP), Y10
	VBROADCASTSS b+20(FP), Y11
	MOVL $0x40400000, AX      // 3.0
	MOVQ AX, X12
	VBROADCASTSS X12, Y12
	MOVL $0x40c00000, AX      // 6.0
	MOVQ AX, X13
	VBROADCASTSS X13, Y13
	VXORPS Y15, Y15, Y15

hloop:
	VMOVUPS     (DI), Y0
	VADDPS      Y12, Y0, Y1   // x+3
	VMAXPS      Y15, Y1, Y1   // ≥ 0
	VMINPS      Y13, Y1, Y1   // ≤ 6
	VMULPS      Y1, Y0, Y0
	VFMADD213PS Y11, Y10, Y0  // ·a6 + b
	VMOVUPS     Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ  hloop

hdone:
	VZEROUPPER
	RET

// TAP adds one tap: the weight at byte offset kw of DX times the input row
// base at column offset col bytes past AX.
#define TAP(kw, col, base) \
	VBROADCASTSS kw(DX), Y1 \
	VFMADD231PS  col(base)(AX*1), Y1, Y0

#define ROW(r, base) \
	TAP((r*20+0), 0, base) \
	TAP((r*20+4), 4, base) \
	TAP((r*20+8), 8, base) \
	TAP((r*20+12), 12, base) \
	TAP((r*20+16), 16, base)

// func dw5AVX2(d, s *float32, sw, m int, k *float32)
TEXT ·dw5AVX2(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ sw+16(FP), R8
	SHLQ $2, R8               // row stride in bytes
	MOVQ m+24(FP), CX
	SHRQ $3, CX
	JZ   ddone
	MOVQ k+32(FP), DX
	LEAQ (SI)(R8*1), R9       // rows 1-4
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	XORQ AX, AX

dloop:
	VMOVUPS (DI)(AX*1), Y0
	ROW(0, SI)
	ROW(1, R9)
	ROW(2, R10)
	ROW(3, R11)
	ROW(4, R12)
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	DECQ CX
	JNZ  dloop

ddone:
	VZEROUPPER
	RET

// func fillAVX2(p *float32, n int, v float32)
TEXT ·fillAVX2(SB), NOSPLIT, $0-20
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ   fdone
	VBROADCASTSS v+16(FP), Y0

floop:
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ  floop

fdone:
	VZEROUPPER
	RET
