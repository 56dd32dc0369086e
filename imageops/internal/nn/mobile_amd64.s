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
	// The constants go in with VEX-encoded moves: a legacy SSE MOVQ into
	// X12 leaves the upper half of Y12 to merge, and every instruction of
	// the loop reading it then ran about 5 times slower (measured on an
	// AMD EPYC, Zen 3, under KVM).
	MOVL $0x40400000, AX      // 3.0
	VMOVD AX, X12
	VBROADCASTSS X12, Y12
	MOVL $0x40c00000, AX      // 6.0
	VMOVD AX, X13
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

// func dwTapsAVX2(d, s *float32, offs *int, k *float32, n, m int)
//
// Two vectors of 8 outputs at a time (each weight broadcast once for both),
// then one.
TEXT ·dwTapsAVX2(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ k+24(FP), DX
	MOVQ n+32(FP), R9
	MOVQ m+40(FP), CX
	SHRQ $3, CX               // whole vectors
	JZ   tdone

tpair:
	CMPQ CX, $2
	JLT  tone
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y2
	XORQ BX, BX               // tap

tpairtap:
	MOVQ (R8)(BX*8), AX       // its offset, in floats
	VBROADCASTSS (DX)(BX*4), Y1
	VFMADD231PS  (SI)(AX*4), Y1, Y0
	VFMADD231PS  32(SI)(AX*4), Y1, Y2
	INCQ BX
	CMPQ BX, R9
	JLT  tpairtap
	VMOVUPS Y0, (DI)
	VMOVUPS Y2, 32(DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $2, CX
	JMP  tpair

tone:
	CMPQ CX, $0
	JEQ  tdone
	VMOVUPS (DI), Y0
	XORQ BX, BX

tonetap:
	MOVQ (R8)(BX*8), AX
	VBROADCASTSS (DX)(BX*4), Y1
	VFMADD231PS  (SI)(AX*4), Y1, Y0
	INCQ BX
	CMPQ BX, R9
	JLT  tonetap
	VMOVUPS Y0, (DI)

tdone:
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

// func dwTapsAVX512(d, s *float32, offs *int, k *float32, n, m int)
//
// dwTapsAVX2 on blocks of 64 outputs (four vectors of 16, each weight
// broadcast once for all four), for the first m&^63.
TEXT ·dwTapsAVX512(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ k+24(FP), DX
	MOVQ n+32(FP), R9
	MOVQ m+40(FP), CX
	SHRQ $6, CX               // whole blocks of 64
	JZ   zdone

zblock:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z2
	VMOVUPS 128(DI), Z3
	VMOVUPS 192(DI), Z4
	XORQ BX, BX               // tap

ztap:
	MOVQ (R8)(BX*8), AX       // its offset, in floats
	VBROADCASTSS (DX)(BX*4), Z1
	VFMADD231PS  (SI)(AX*4), Z1, Z0
	VFMADD231PS  64(SI)(AX*4), Z1, Z2
	VFMADD231PS  128(SI)(AX*4), Z1, Z3
	VFMADD231PS  192(SI)(AX*4), Z1, Z4
	INCQ BX
	CMPQ BX, R9
	JLT  ztap
	VMOVUPS Z0, (DI)
	VMOVUPS Z2, 64(DI)
	VMOVUPS Z3, 128(DI)
	VMOVUPS Z4, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	DECQ CX
	JNZ  zblock

zdone:
	VZEROUPPER
	RET

// BCAST sets register r to the float32 with bits b in all lanes.
#define BCAST(b, r, x) \
	MOVL $b, AX \
	MOVQ AX, x \
	VBROADCASTSS x, r

// func sigmoidAVX2(p *float32, n int)
//
// p[i] = 1/(1+e^-p[i]) for i < n&^7, as exp32 computes e^v: 2^k·e^r with
// k the nearest integer to v/ln2 and e^r by its Taylor series to the 7th
// power, here in -x + k·ln2 = r, v = -x clamped to [-87, 88].
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ   sdone
	BCAST(0x3f000000, Y4, X4)   // 1/2
	BCAST(0x3e2aaaab, Y5, X5)   // 1/6
	BCAST(0x3d2aaaab, Y6, X6)   // 1/24
	BCAST(0x3c088889, Y7, X7)   // 1/120
	BCAST(0xc2b00000, Y8, X8)   // -88
	BCAST(0x42ae0000, Y9, X9)   // 87
	BCAST(0xbfb8aa3b, Y10, X10) // -1/ln2
	BCAST(0x3f317200, Y11, X11) // ln2, high part
	BCAST(0x35bfbe8e, Y12, X12) // ln2, low part
	BCAST(0x3f800000, Y13, X13) // 1
	BCAST(0x3ab60b61, Y14, X14) // 1/720
	BCAST(0x39500d01, Y15, X15) // 1/5040

sloop:
	VMOVUPS (DI), Y0
	VMAXPS  Y8, Y0, Y0
	VMINPS  Y9, Y0, Y0
	VMULPS  Y10, Y0, Y1
	VROUNDPS $0, Y1, Y1          // k
	VMOVAPS Y0, Y2
	VFMADD231PS Y11, Y1, Y2      // t = x + k·ln2 = -r
	VFMADD231PS Y12, Y1, Y2
	VMOVAPS Y15, Y3              // Horner in r = -t
	VFNMADD213PS Y14, Y2, Y3
	VFNMADD213PS Y7, Y2, Y3
	VFNMADD213PS Y6, Y2, Y3
	VFNMADD213PS Y5, Y2, Y3
	VFNMADD213PS Y4, Y2, Y3
	VFNMADD213PS Y13, Y2, Y3
	VFNMADD213PS Y13, Y2, Y3     // e^r
	VCVTPS2DQ Y1, Y1
	VPSLLD  $23, Y1, Y1
	VPADDD  Y13, Y1, Y1          // 2^k: k added to 1's exponent
	VMULPS  Y1, Y3, Y3           // e^-x
	VADDPS  Y13, Y3, Y3
	VDIVPS  Y3, Y13, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ  sloop

sdone:
	VZEROUPPER
	RET
