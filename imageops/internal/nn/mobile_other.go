//go:build !amd64 || purego

package nn

func hswishAVX2(p *float32, n int, a6, b float32) { panic("nn: no AVX2 kernels") }

func dwTapsAVX2(d, s *float32, offs *int, k *float32, n, m int) { panic("nn: no AVX2 kernels") }

func fillAVX2(p *float32, n int, v float32) { panic("nn: no AVX2 kernels") }

func dwTapsAVX512(d, s *float32, offs *int, k *float32, n, m int) { panic("nn: no AVX-512 kernels") }

func sigmoidAVX2(p *float32, n int) { panic("nn: no AVX2 kernels") }
