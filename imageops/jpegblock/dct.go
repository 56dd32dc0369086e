package jpegblock

import "math"

// unzig maps a coefficient's zigzag index to its natural (row·8+column) one.
var unzig = [64]int{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
}

// keepFor is how many zigzag coefficients an n×n reduced IDCT reads: the
// top-left n×n of the block all lie before it.
var keepFor = map[int]int{1: 1, 2: 5, 4: 25, 8: 64}

// basis[n][i*n+u] is the n-point inverse DCT's weight of frequency u at
// output i: c(u)/2·cos((2i+1)uπ/2n), c(0) = 1/√2. For n < 8 this samples
// the 8-point reconstruction from its lowest n frequencies at the centre of
// each group of 8/n pixels, so an output is (close to) their mean.
var basis = func() map[int][]float32 {
	m := map[int][]float32{}
	for _, n := range []int{1, 2, 4, 8} {
		b := make([]float32, n*n)
		for i := range n {
			for u := range n {
				c := 0.5
				if u == 0 {
					c = 0.5 / math.Sqrt2
				}
				b[i*n+u] = float32(c * math.Cos(float64(2*i+1)*float64(u)*math.Pi/float64(2*n)))
			}
		}
		m[n] = b
	}
	return m
}()

// idct writes the n×n reduced (n = 8: full) inverse DCT of the dequantised
// coefficients coef (natural order, 8×8) to out at stride, level-shifted
// and clamped to 0..255.
func idct(coef *[64]float32, n int, out []uint8, stride int) {
	b := basis[n]
	var tmp [64]float32 // tmp[v*8+i]: rows of frequencies v, columns transformed
	rows := 0           // rows of frequencies up to the last with a coefficient
	for v := range n {
		row := coef[v*8 : v*8+n]
		zero := true
		for _, c := range row {
			if c != 0 {
				zero = false
				break
			}
		}
		if zero {
			continue
		}
		rows = v + 1
		for i := range n {
			var s float32
			bi := b[i*n : i*n+n]
			for u, c := range row {
				s += bi[u] * c
			}
			tmp[v*8+i] = s
		}
	}
	for j := range n {
		bj := b[j*n : j*n+rows]
		o := out[j*stride : j*stride+n]
		for i := range o {
			var s float32
			for v, w := range bj {
				s += w * tmp[v*8+i]
			}
			o[i] = clamp8(s + 128)
		}
	}
}

// clamp8 rounds v to the nearest of 0..255.
func clamp8(v float32) uint8 {
	v += 0.5
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v)
}

// fdct returns the quantised coefficients (zigzag order) of the 8×8
// samples at in (stride) with quantisation table q (zigzag order).
func fdct(in []uint8, stride int, q *[64]int32) [64]int32 {
	b := basis[8]
	var tmp, f [64]float32
	for y := range 8 {
		for u := range 8 {
			var s float32
			for x := range 8 {
				s += b[x*8+u] * (float32(in[y*stride+x]) - 128)
			}
			tmp[y*8+u] = s
		}
	}
	for v := range 8 {
		for u := range 8 {
			var s float32
			for y := range 8 {
				s += b[y*8+v] * tmp[y*8+u]
			}
			f[v*8+u] = s
		}
	}
	var out [64]int32
	for k := range 64 {
		out[k] = int32(math.Round(float64(f[unzig[k]]) / float64(q[k])))
	}
	return out
}
