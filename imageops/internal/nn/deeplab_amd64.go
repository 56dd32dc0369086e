//go:build amd64 && !purego

package nn

// relu6AVX2 sets p[i] = min(max(p[i], 0), 6) for i < n&^7.
//
//go:noescape
func relu6AVX2(p *float32, n int)
