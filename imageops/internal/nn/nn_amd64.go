//go:build amd64 && !purego

package nn

// point8AVX2 adds, for 8 output planes starting at y (planes n floats
// apart), the weighted sum of cin input planes starting at x (also n apart)
// to the first m pixels (a multiple of 8); wt holds the weights input
// channel by input channel, 8 a channel. With relu, negative sums become 0.
//
//go:noescape
func point8AVX2(y, x, wt *float32, cin, n, m int, relu bool)

// fma3AVX2 sets d[i] += k0·a[i] + k1·b[i] + k2·c[i] for i < m&^7.
//
//go:noescape
func fma3AVX2(d, a, b, c *float32, k0, k1, k2 float32, m int)
