//go:build amd64 && !purego

#include "textflag.h"

// func relu6AVX2(p *float32, n int)
TEXT ·relu6AVX2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX               // whole vectors of 8
	JZ   rdone
	// VEX-encoded moves for the constants (see hswishAVX2).
	MOVL $0x40c00000, AX      // 6.0
	VMOVD AX, X13
	VBROADCASTSS X13, Y13
	VXORPS Y15, Y15, Y15

rloop:
	VMOVUPS (DI), Y0
	VMAXPS  Y15, Y0, Y0       // ≥ 0
	VMINPS  Y13, Y0, Y0       // ≤ 6
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ  rloop

rdone:
	VZEROUPPER
	RET
