package jpegblock

import (
	"math/rand/v2"
	"testing"
)

// TestIDCT8MatchesBasis checks the symmetric full-size inverse DCT against
// the plain sums over the basis.
func TestIDCT8MatchesBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var c [64]float32
		for k := range 64 {
			if rng.IntN(3) == 0 {
				c[k] = float32(rng.IntN(400) - 200)
			}
		}
		got := make([]uint8, 64)
		idct8(&c, got, 8)
		if i, j, w, ok := matchesBasis(&c, got); !ok {
			t.Fatalf("(%d,%d): got %d, want %d", i, j, got[j*8+i], w)
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

// TestIDCTAANMatchesBasis checks the fast inverse DCT against the plain
// sums over the basis, dense and sparse blocks alike.
func TestIDCTAANMatchesBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var q [64]int32
	for z := range q {
		q[z] = int32(1 + rng.IntN(20))
	}
	m := aanQuant(&q)
	for n := range 300 {
		var c, scaled [64]float32 // dequantised, natural order
		for z := range 64 {
			if rng.IntN(2+n%4) == 0 {
				v := int32(rng.IntN(41) - 20)
				n := unzig[z]
				c[n] = float32(v * q[z])
				scaled[n] = float32(v) * m[n]
			}
		}
		got := make([]uint8, 64)
		idctAAN(&scaled, got, 8)
		if i, j, w, ok := matchesBasis(&c, got); !ok {
			t.Fatalf("block %d (%d,%d): got %d, want %d", n, i, j, got[j*8+i], w)
		}
	}
}

// TestLevelMatchesClamp8 checks the branchless level shift and clamp
// against clamp8 across and beyond the sample range, halves included.
func TestLevelMatchesClamp8(t *testing.T) {
	for i := -4000; i <= 4000; i++ {
		v := float32(i) / 8
		if got, want := level(v), clamp8(v+128); got != want {
			t.Fatalf("level(%v) = %d, clamp8 gives %d", v, got, want)
		}
	}
}

// matchesBasis checks an 8×8 inverse DCT's output got against the plain
// sums over the basis of the dequantised coefficients c (natural order),
// within a level; it gives the first sample that is off and its wanted
// value.
func matchesBasis(c *[64]float32, got []uint8) (i, j int, want uint8, ok bool) {
	b := basis[8]
	for j := range 8 {
		for i := range 8 {
			var s float32
			for v := range 8 {
				for u := range 8 {
					s += b[j*8+v] * b[i*8+u] * c[v*8+u]
				}
			}
			if w := clamp8(s + 128); int(got[j*8+i])-int(w) > 1 || int(w)-int(got[j*8+i]) > 1 {
				return i, j, w, false
			}
		}
	}
	return 0, 0, 0, true
}
