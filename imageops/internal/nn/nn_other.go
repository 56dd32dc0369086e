//go:build !amd64 || purego

package nn

func point8AVX2(y, x, wt *float32, cin, n, m int, relu bool) { panic("nn: no AVX2 kernels") }

func fma3AVX2(d, a, b, c *float32, k0, k1, k2 float32, m int) { panic("nn: no AVX2 kernels") }
