//go:build !amd64 || purego

package nn

func mmVNNI(o *float32, in, wt *int16, tbl *int, n, ostride, tiles int, corr *int32, mul, bias *float32, relu bool) {
	panic("nn: no VNNI kernel")
}

func mmAVX2(o *float32, in, wt *int16, tbl *int, n, ostride, tiles int, corr *int32, mul, bias *float32, relu bool) {
	panic("nn: no AVX2 kernels")
}

func quantPairAVX512(dst *int16, a, b *float32, n int, ia, za, ib, zb, top float32) {
	panic("nn: no AVX-512 kernels")
}

func quantPairAVX2(dst *int16, a, b *float32, n int, ia, za, ib, zb, top float32) {
	panic("nn: no AVX2 kernels")
}
