//go:build !amd64 || purego

package nn

func relu6AVX2(p *float32, n int) { panic("nn: no AVX2 kernels") }
