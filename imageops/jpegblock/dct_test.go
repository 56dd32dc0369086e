package jpegblock

import (
	"math/rand/v2"
	"testing"
)

// TestIDCT8MatchesBasis checks the symmetric full-size inverse DCT against
// the plain sums over the basis.
func TestIDCT8MatchesBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := basis[8]
	for range 200 {
		var c [64]float32
		for k := range 64 {
			if rng.IntN(3) == 0 {
				c[k] = float32(rng.IntN(400) - 200)
			}
		}
		got := make([]uint8, 64)
		idct8(&c, got, 8)
		for j := range 8 {
			for i := range 8 {
				var s float32
				for v := range 8 {
					for u := range 8 {
						s += b[j*8+v] * b[i*8+u] * c[v*8+u]
					}
				}
				if w := clamp8(s + 128); int(got[j*8+i])-int(w) > 1 || int(w)-int(got[j*8+i]) > 1 {
					t.Fatalf("(%d,%d): got %d, want %d", i, j, got[j*8+i], w)
				}
			}
		}
	}
}

// TestFDCTMatchesBasis checks the forward DCT against the plain sums.
func TestFDCTMatchesBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := basis[8]
	var one [64]int32
	for k := range one {
		one[k] = 1
	}
	for range 100 {
		in := make([]uint8, 64)
		for k := range in {
			in[k] = uint8(rng.IntN(256))
		}
		got := fdct(in, 8, &one)
		for k := range 64 {
			v, u := unzig[k]/8, unzig[k]%8
			var s float64
			for y := range 8 {
				for x := range 8 {
					s += float64(b[y*8+v]) * float64(b[x*8+u]) * (float64(in[y*8+x]) - 128)
				}
			}
			if d := float64(got[k]) - s; d > 0.51 || d < -0.51 {
				t.Fatalf("coefficient %d: got %d, want %.2f", k, got[k], s)
			}
		}
	}
}
