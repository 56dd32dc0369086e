//go:build amd64 && !purego

package nn

// dil3AVX512 sums tiles of 8 output channels × 48 pixels: see dil3Go, the
// portable loop it mirrors. n is the number of (channel, tap) pairs.
//
//go:noescape
func dil3AVX512(o, in, wt *float32, tbl *int, bias *float32, n, ostride, tiles int, relu bool)

// dil3AVX2 is dil3AVX512 with 8 floats an instruction.
//
//go:noescape
func dil3AVX2(o, in, wt *float32, tbl *int, bias *float32, n, ostride, tiles int, relu bool)

// dil3AVX512x16 is dil3AVX512 on chunks of 16 pixels instead of tiles of 48.
//
//go:noescape
func dil3AVX512x16(o, in, wt *float32, tbl *int, bias *float32, n, ostride, chunks int, relu bool)
