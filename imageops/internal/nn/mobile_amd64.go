//go:build amd64 && !purego

package nn

// hswishAVX2 sets p[i] = p[i]·min(max(p[i]+3, 0), 6)·a6 + b for i < n&^7
// (hard-swish with its gain already divided by 6, and offset).
//
//go:noescape
func hswishAVX2(p *float32, n int, a6, b float32)

// dw5AVX2 adds to d[i], for i < m&^7, the 5×5 taps k (row-major) of the
// zero-bordered input s: the sum over ky, kx of k[5·ky+kx]·s[ky·sw+i+kx].
//
//go:noescape
func dw5AVX2(d, s *float32, sw, m int, k *float32)

// fillAVX2 sets p[i] = v for i < n&^7.
//
//go:noescape
func fillAVX2(p *float32, n int, v float32)
