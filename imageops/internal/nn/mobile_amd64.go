//go:build amd64 && !purego

package nn

// hswishAVX2 sets p[i] = p[i]·min(max(p[i]+3, 0), 6)·a6 + b for i < n&^7
// (hard-swish with its gain already divided by 6, and offset).
//
//go:noescape
func hswishAVX2(p *float32, n int, a6, b float32)

// dwTapsAVX2 adds to d[i], for i < m&^7, the sum over taps t < n of
// k[t]·s[offs[t]+i]: a depthwise convolution's output row, its taps at
// fixed offsets in a zero-bordered input.
//
//go:noescape
func dwTapsAVX2(d, s *float32, offs *int, k *float32, n, m int)

// fillAVX2 sets p[i] = v for i < n&^7.
//
//go:noescape
func fillAVX2(p *float32, n int, v float32)

// dwTapsAVX512 is dwTapsAVX2 on the first m&^63 outputs, 64 at a time.
//
//go:noescape
func dwTapsAVX512(d, s *float32, offs *int, k *float32, n, m int)

// sigmoidAVX2 sets p[i] to 1/(1+e^-p[i]) for i < n&^7.
//
//go:noescape
func sigmoidAVX2(p *float32, n int)
