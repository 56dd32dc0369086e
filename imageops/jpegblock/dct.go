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
	if n == 8 {
		idct8(coef, out, stride)
		return
	}
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

// idct8 is idct at full size, using the basis' symmetry: output 7−i has
// the even frequencies' sum of output i and the odd ones' negated, so
// each half costs half the multiplications.
func idct8(coef *[64]float32, out []uint8, stride int) {
	b := basis[8]
	var tmp [64]float32 // tmp[v*8+i]: rows of frequencies v, columns transformed
	for v := range 8 {
		r := coef[v*8 : v*8+8 : v*8+8]
		if r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0 && r[4] == 0 && r[5] == 0 && r[6] == 0 && r[7] == 0 {
			continue
		}
		t := tmp[v*8 : v*8+8 : v*8+8]
		for i := range 4 {
			bi := b[i*8 : i*8+8 : i*8+8]
			e := bi[0]*r[0] + bi[2]*r[2] + bi[4]*r[4] + bi[6]*r[6]
			o := bi[1]*r[1] + bi[3]*r[3] + bi[5]*r[5] + bi[7]*r[7]
			t[i], t[7-i] = e+o, e-o
		}
	}
	for j := range 4 {
		bj := b[j*8 : j*8+8 : j*8+8]
		top, bot := out[j*stride:j*stride+8], out[(7-j)*stride:(7-j)*stride+8]
		for i := range 8 {
			e := bj[0]*tmp[i] + bj[2]*tmp[16+i] + bj[4]*tmp[32+i] + bj[6]*tmp[48+i]
			o := bj[1]*tmp[8+i] + bj[3]*tmp[24+i] + bj[5]*tmp[40+i] + bj[7]*tmp[56+i]
			top[i], bot[i] = clamp8(e+o+128), clamp8(e-o+128)
		}
	}
}

// fdct returns the quantised coefficients (zigzag order) of the 8×8
// samples at in (stride) with quantisation table q (zigzag order).
func fdct(in []uint8, stride int, q *[64]int32) [64]int32 {
	b := basis[8]
	var tmp, f [64]float32
	// Sample x and 7−x meet every frequency u with the same weight, the
	// odd ones with opposite signs: transform their sums and differences.
	for y := range 8 {
		row := in[y*stride : y*stride+8 : y*stride+8]
		var s, d [4]float32
		for x := range 4 {
			a, c := float32(row[x])-128, float32(row[7-x])-128
			s[x], d[x] = a+c, a-c
		}
		for u := range 8 {
			v := &d
			if u%2 == 0 {
				v = &s
			}
			tmp[y*8+u] = b[u]*v[0] + b[8+u]*v[1] + b[16+u]*v[2] + b[24+u]*v[3]
		}
	}
	for u := range 8 {
		var s, d [4]float32
		for y := range 4 {
			a, c := tmp[y*8+u], tmp[(7-y)*8+u]
			s[y], d[y] = a+c, a-c
		}
		for v := range 8 {
			w := &d
			if v%2 == 0 {
				w = &s
			}
			f[v*8+u] = b[v]*w[0] + b[8+v]*w[1] + b[16+v]*w[2] + b[24+v]*w[3]
		}
	}
	var out [64]int32
	for k := range 64 {
		out[k] = int32(math.Round(float64(f[unzig[k]]) / float64(q[k])))
	}
	return out
}

// aanScale[k] is the factor the fast inverse DCT wants coefficient row or
// column k scaled by beforehand: 1, then cos(kπ/16)·√2.
var aanScale = func() (s [8]float32) {
	for k := range 8 {
		s[k] = 1
		if k > 0 {
			s[k] = float32(math.Cos(float64(k)*math.Pi/16) * math.Sqrt2)
		}
	}
	return s
}()

// aanQuant returns a quantisation table (zigzag) turned into the fast
// inverse DCT's multipliers, in natural order: q·aanScale[row]·aanScale[col]/8
// (the /8 is the transform's own normalisation).
func aanQuant(q *[64]int32) (m [64]float32) {
	for z := range 64 {
		n := unzig[z]
		m[n] = float32(q[z]) * aanScale[n/8] * aanScale[n%8] / 8
	}
	return m
}

// idctAAN writes the full inverse DCT of coefficients already multiplied
// by aanQuant's table (natural order) to out at stride, level-shifted and
// clamped. It is the Arai–Agui–Nakajima factorisation: 5 multiplications
// and 29 additions a line, against idct8's 32 multiplications. Columns
// with no AC coefficient (most of a photo's) take their DC alone.
func idctAAN(c *[64]float32, out []uint8, stride int) {
	var ws [64]float32
	for u := range 8 {
		if c[8+u] == 0 && c[16+u] == 0 && c[24+u] == 0 && c[32+u] == 0 &&
			c[40+u] == 0 && c[48+u] == 0 && c[56+u] == 0 {
			d := c[u]
			for v := range 8 {
				ws[v*8+u] = d
			}
			continue
		}
		var o [8]float32
		aan1D(c[u], c[8+u], c[16+u], c[24+u], c[32+u], c[40+u], c[48+u], c[56+u], &o)
		for v := range 8 {
			ws[v*8+u] = o[v]
		}
	}
	for y := range 8 {
		r := ws[y*8 : y*8+8 : y*8+8]
		var o [8]float32
		aan1D(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], &o)
		row := out[y*stride : y*stride+8 : y*stride+8]
		for x := range 8 {
			row[x] = level(o[x])
		}
	}
}

// level is clamp8(v + 128) without branches (a photo's samples near black
// and white are a coin toss for a predictor): the conversion truncates,
// which for v + 128.5 > 0 is the floor clamp8 takes.
func level(v float32) uint8 {
	return uint8(min(max(int32(v+128.5), 0), 255))
}

// aan1D is one 8-point line of idctAAN: inputs by frequency, outputs by
// position.
func aan1D(d0, d1, d2, d3, d4, d5, d6, d7 float32, o *[8]float32) {
	// Even part.
	t10, t11 := d0+d4, d0-d4
	t13 := d2 + d6
	t12 := (d2-d6)*1.414213562 - t13
	e0, e3 := t10+t13, t10-t13
	e1, e2 := t11+t12, t11-t12
	// Odd part.
	z13, z10 := d5+d3, d5-d3
	z11, z12 := d1+d7, d1-d7
	t7 := z11 + z13
	t11 = (z11 - z13) * 1.414213562
	z5 := (z10 + z12) * 1.847759065
	t10 = 1.082392200*z12 - z5
	t12 = -2.613125930*z10 + z5
	t6 := t12 - t7
	t5 := t11 - t6
	t4 := t10 + t5
	o[0], o[7] = e0+t7, e0-t7
	o[1], o[6] = e1+t6, e1-t6
	o[2], o[5] = e2+t5, e2-t5
	o[4], o[3] = e3+t4, e3-t4
}
