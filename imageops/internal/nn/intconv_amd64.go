//go:build amd64 && !purego

package nn

// mmVNNI is mmGo with AVX-512 VNNI: n groups, tiles tiles.
//
//go:noescape
func mmVNNI(o *float32, in, wt *int16, tbl *int, n, ostride, tiles int, corr *int32, mul, bias *float32, relu bool)

// mmAVX2 is mmGo with AVX2.
//
//go:noescape
func mmAVX2(o *float32, in, wt *int16, tbl *int, n, ostride, tiles int, corr *int32, mul, bias *float32, relu bool)

// quantPairAVX512 sets dst[2i] and dst[2i+1] to quant1(a[i], ia, za) and
// quant1(b[i], ib, zb) (clamped to top) for i < n, a multiple of 16.
//
//go:noescape
func quantPairAVX512(dst *int16, a, b *float32, n int, ia, za, ib, zb, top float32)

// quantPairAVX2 is quantPairAVX512 with AVX2: n a multiple of 8.
//
//go:noescape
func quantPairAVX2(dst *int16, a, b *float32, n int, ia, za, ib, zb, top float32)
