//go:build !amd64 || purego

package nn

func dil3AVX512(o, in, wt *float32, tbl *int, bias *float32, n, ostride, tiles int, relu bool) {
	panic("nn: no AVX-512 kernels")
}

func dil3AVX2(o, in, wt *float32, tbl *int, bias *float32, n, ostride, tiles int, relu bool) {
	panic("nn: no AVX2 kernels")
}

func dil3AVX512x16(o, in, wt *float32, tbl *int, bias *float32, n, ostride, chunks int, relu bool) {
	panic("nn: no AVX-512 kernels")
}
