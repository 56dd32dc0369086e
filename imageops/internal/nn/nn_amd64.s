//go:build amd64 && !purego

#include "textflag.h"

// func point8AVX2(y, x, wt *float32, cin, n, m int, relu bool)
//
// A tile is 8 output channels × 8 pixels, held in Y0–Y7 while every input
// channel is added to it: one load of the input and eight broadcast
// weights and fused multiply-adds per input channel.
TEXT ·point8AVX2(SB), NOSPLIT, $0-49
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ wt+16(FP), DX
	MOVQ cin+24(FP), CX
	MOVQ n+32(FP), R8
	SHLQ $2, R8               // plane stride in bytes
	LEAQ (R8)(R8*2), R13      // three strides
	MOVQ m+40(FP), R9
	SHLQ $2, R9               // end of the pixels, in bytes
	VXORPS Y15, Y15, Y15
	XORQ R11, R11             // this tile's offset, in bytes

tile:
	CMPQ R11, R9
	JGE  done
	LEAQ (DI)(R11*1), R12     // output channels 0-3 of the tile
	LEAQ (R12)(R8*4), R14     // output channels 4-7
	VMOVUPS (R12), Y0
	VMOVUPS (R12)(R8*1), Y1
	VMOVUPS (R12)(R8*2), Y2
	VMOVUPS (R12)(R13*1), Y3
	VMOVUPS (R14), Y4
	VMOVUPS (R14)(R8*1), Y5
	VMOVUPS (R14)(R8*2), Y6
	VMOVUPS (R14)(R13*1), Y7
	LEAQ (SI)(R11*1), BX      // input channel 0 of the tile
	MOVQ DX, AX               // its 8 weights
	MOVQ CX, R10

channel:
	VMOVUPS      (BX), Y8
	VBROADCASTSS (AX), Y9
	VFMADD231PS  Y9, Y8, Y0
	VBROADCASTSS 4(AX), Y10
	VFMADD231PS  Y10, Y8, Y1
	VBROADCASTSS 8(AX), Y11
	VFMADD231PS  Y11, Y8, Y2
	VBROADCASTSS 12(AX), Y12
	VFMADD231PS  Y12, Y8, Y3
	VBROADCASTSS 16(AX), Y9
	VFMADD231PS  Y9, Y8, Y4
	VBROADCASTSS 20(AX), Y10
	VFMADD231PS  Y10, Y8, Y5
	VBROADCASTSS 24(AX), Y11
	VFMADD231PS  Y11, Y8, Y6
	VBROADCASTSS 28(AX), Y12
	VFMADD231PS  Y12, Y8, Y7
	ADDQ R8, BX
	ADDQ $32, AX
	DECQ R10
	JNZ  channel

	CMPB relu+48(FP), $0
	JEQ  store
	VMAXPS Y15, Y0, Y0
	VMAXPS Y15, Y1, Y1
	VMAXPS Y15, Y2, Y2
	VMAXPS Y15, Y3, Y3
	VMAXPS Y15, Y4, Y4
	VMAXPS Y15, Y5, Y5
	VMAXPS Y15, Y6, Y6
	VMAXPS Y15, Y7, Y7

store:
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, (R12)(R8*1)
	VMOVUPS Y2, (R12)(R8*2)
	VMOVUPS Y3, (R12)(R13*1)
	VMOVUPS Y4, (R14)
	VMOVUPS Y5, (R14)(R8*1)
	VMOVUPS Y6, (R14)(R8*2)
	VMOVUPS Y7, (R14)(R13*1)
	ADDQ $32, R11
	JMP  tile

done:
	VZEROUPPER
	RET

// func fma3AVX2(d, a, b, c *float32, k0, k1, k2 float32, m int)
TEXT ·fma3AVX2(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), CX
	VBROADCASTSS k0+32(FP), Y10
	VBROADCASTSS k1+36(FP), Y11
	VBROADCASTSS k2+40(FP), Y12
	MOVQ m+48(FP), BX
	SHRQ $3, BX               // whole vectors of 8
	JZ   end
	XORQ AX, AX

loop:
	VMOVUPS     (DI)(AX*1), Y0
	VFMADD231PS (SI)(AX*1), Y10, Y0
	VFMADD231PS (DX)(AX*1), Y11, Y0
	VFMADD231PS (CX)(AX*1), Y12, Y0
	VMOVUPS     Y0, (DI)(AX*1)
	ADDQ $32, AX
	DECQ BX
	JNZ  loop

end:
	VZEROUPPER
	RET
