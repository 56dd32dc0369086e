//go:build !amd64 || purego

package nn

func hswishAVX2(p *float32, n int, a6, b float32) { panic("nn: no AVX2 kernels") }

func dw5AVX2(d, s *float32, sw, m int, k *float32) { panic("nn: no AVX2 kernels") }

func fillAVX2(p *float32, n int, v float32) { panic("nn: no AVX2 kernels") }
