package nn

import (
	"math"
	"slices"
	"unsafe"
)

// Integer convolutions. A layer given the calibrated range of its input
// (Range) runs its multiply-adds on integers: the input quantised per
// tensor to 12 bits (0..4095: scale and zero point from the range), the
// weights per output channel to the integers -2047..2047, the products
// summed in int32 and the sums turned back into floats with the bias
// (dequantised) before the layer's activation, which stays in float.
//
// The integers are exact on every path, so the same input gives the same
// output bits on any CPU: each output's weights are scaled so that no sum
// of products can leave int32 (newQconv), and the VNNI kernel (VPDPWSSD:
// pairs of 16-bit products into int32), the AVX2 one (VPMADDWD, VPADDD)
// and the portable loop compute the same sums. Everything around the
// kernels (quantising, dequantising) computes the same operations in the
// same order on every path.
//
// 8-bit inputs and weights (VPDPBUSD, twice the multiply-adds an
// instruction) were measured first and moved the results too far (see
// docs/research/performance.md), so the inputs and weights are 16-bit
// integers of 12 bits.
//
// The kernels compute tiles of 8 output channels × 48 positions of a
// (possibly zero-bordered) plane laid out as pairs of channels: two int16
// a position, channels 2g and 2g+1 of pair g. A group is one (pair, tap):
// its 2 values at a position times 2 weights of each output.

// Range is the span of values a layer's input (or one of its channels)
// took on the calibration photos; with it the layer runs on integers.
type Range struct{ Lo, Hi float32 }

// Observer records a layer's input, channel by channel, for calibration.
type Observer interface{ Add(planes [][]float32) }

// wmax is the largest quantised weight, amax the largest input.
const (
	wmax = 2047
	amax = 4095
)

// qconv is a layer's integer form.
type qconv struct {
	inv    []float32 // per input channel: the inverse of its step
	zp     []int16   // per input channel: the integer for input 0
	groups int       // (pair, tap) groups
	wt     []int16   // blocks of 8 outputs: group by group, 8 outputs × 2 weights
	corr   []int32   // per output: Σ zero point · weight over its inputs
	mul    []float32 // per output: the step of its sums
	bias   []float32 // per output
}

// newQconv quantises weights w (cout × cin × taps, output-major) for inputs
// in ranges in (one per input channel, or one for all). Each input
// channel's step is folded into its weights before they are quantised per
// output, so a sum of products has one step per output.
func newQconv(in []Range, w, bias []float32, cin, cout, taps int) *qconv {
	q := &qconv{inv: make([]float32, cin), zp: make([]int16, cin)}
	step := make([]float32, cin)
	for ci := range cin {
		r := in[0]
		if len(in) == cin {
			r = in[ci]
		}
		lo, hi := min(r.Lo, 0), max(r.Hi, 0)
		if hi-lo < 1e-6 {
			hi = lo + 1e-6
		}
		step[ci] = (hi - lo) / amax
		q.inv[ci] = 1 / step[ci]
		q.zp[ci] = int16(math.Round(float64(-lo / step[ci])))
	}
	pairs := (cin + 1) / 2
	q.groups = pairs * taps
	blocks := (cout + 7) / 8
	q.wt = make([]int16, blocks*q.groups*16)
	q.corr = make([]int32, blocks*8)
	q.mul = make([]float32, blocks*8)
	q.bias = make([]float32, blocks*8)
	copy(q.bias, bias)
	for co := range cout {
		row := w[co*cin*taps : (co+1)*cin*taps]
		// The step: the largest weight at most wmax, and the sum of
		// the weights' sizes (each rounded up by at most a half) times
		// amax within int32, so that no sum of products overflows.
		m, sum := float32(0), float64(0)
		for i, v := range row {
			a := abs32(v * step[i/taps])
			m, sum = max(m, a), sum+float64(a)
		}
		room := float64(math.MaxInt32/amax - len(row))
		sw := max(m/wmax, float32(sum/room))
		if sw == 0 {
			sw = 1
		}
		q.mul[co] = sw
		corr := int32(0)
		for ci := range cin {
			for k := range taps {
				v := int16(math.Round(float64(row[ci*taps+k] * step[ci] / sw)))
				g := ci/2*taps + k
				q.wt[((co/8*q.groups+g)*8+co%8)*2+ci%2] = v
				corr += int32(q.zp[ci]) * int32(v)
			}
		}
		q.corr[co] = corr
	}
	return q
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// mmInt sets tiles of 8 outputs × 48 positions (o: 8 planes ostride apart)
// to the sums over the groups of tbl (byte offsets from in[at]), wt's 16
// weights a group, dequantised with the 8 outputs' corr, mul and bias.
func mmInt(o []float32, in []int16, at int, wt []int16, tbl []int, ostride, tiles int, corr []int32, mul, bias []float32, relu bool) {
	switch use.intKernel {
	case IntKernelVNNI:
		mmVNNI(&o[0], &in[at], &wt[0], &tbl[0], len(tbl), ostride, tiles, &corr[0], &mul[0], &bias[0], relu)
	case IntKernelAVX2:
		mmAVX2(&o[0], &in[at], &wt[0], &tbl[0], len(tbl), ostride, tiles, &corr[0], &mul[0], &bias[0], relu)
	default:
		mmGo(o, in, at, wt, tbl, ostride, tiles, corr, mul, bias, relu)
	}
}

// mmGo is the portable loop the kernels mirror.
func mmGo(o []float32, in []int16, at int, wt []int16, tbl []int, ostride, tiles int, corr []int32, mul, bias []float32, relu bool) {
	var sums [tile]int32
	for t := range tiles {
		for j := range 8 {
			clear(sums[:])
			for g, off := range tbl {
				w0, w1 := int32(wt[g*16+j*2]), int32(wt[g*16+j*2+1])
				p := at + off/2 + t*tile*2
				src := in[p : p+2*tile]
				for i := range sums {
					sums[i] += int32(src[2*i])*w0 + int32(src[2*i+1])*w1
				}
			}
			dequant(o[j*ostride+t*tile:j*ostride+(t+1)*tile], sums[:], corr[j], mul[j], bias[j], relu)
		}
	}
}

// dequant sets o to the sums s as floats: the kernels compute the same
// operations in the same order (no fused multiply-add).
func dequant(o []float32, s []int32, corr int32, mul, bias float32, relu bool) {
	o = o[:len(s)]
	for i, v := range s {
		f := float32(float32(v-corr)*mul) + bias
		if relu {
			f = max(f, 0)
		}
		o[i] = f
	}
}

// band is the tiles of positions a 1×1 convolution computes for every
// output before the next: its inputs stay in cache.
const band = 4

// applyInt returns a convolution of taps taps (1, or 9 at dilation d) on
// integers: planes are the input's cin planes of h×w (as read enlarged);
// the output has cout planes of h×w; relu clamps at 0.
func applyInt(q *qconv, planes []inPlane, h, w, d, taps int, cout int, relu bool) *Tensor {
	pw := w + 2*d
	plane := (h + 2*d) * pw // positions of a pair's bordered plane
	pairs := (len(planes) + 1) / 2
	if taps == 1 {
		plane = h * w
	}
	reach := d*pw + d // the farthest a tap reads from its position
	front := reach
	// Past the last plane: what the last tile reads beyond it.
	size := 2 * (front + pairs*plane + tile + reach + 16)
	// The quantised input lives in float storage from scratch, so that it
	// is recycled with the layers' outputs (and let go by Release): a
	// pool of its own kept faulting in fresh pages for every size.
	st := scratch(1, 1, (size+1)/2)
	defer Free(st)
	buf := unsafe.Slice((*int16)(unsafe.Pointer(&st.Data[0])), size)
	// Each pair's plane: its rows with a border of d, the borders (and
	// the slack before the first and after the last) at the zero points;
	// the weights of a channel past the last are 0.
	zero := q.zp[len(planes)-1]
	var rowA, rowB []float32 // an enlarged plane's row
	if slices.ContainsFunc(planes, func(p inPlane) bool { return p.f > 1 }) {
		rowA, rowB = make([]float32, w), make([]float32, w)
	}
	for g := range pairs {
		z0, z1 := q.zp[2*g], zero
		if 2*g+1 < len(planes) {
			z1 = q.zp[2*g+1]
		}
		base := 2 * (front + g*plane)
		from, end := base+2*d*pw, base+2*(h+d)*pw
		if g == 0 {
			fillPairs(buf[:from], z0, z1)
		} else {
			fillPairs(buf[base:from], z0, z1)
		}
		if g == pairs-1 {
			fillPairs(buf[end:], z0, z1)
		} else {
			fillPairs(buf[end:base+2*plane], z0, z1)
		}
		a := planes[2*g]
		b := a
		if 2*g+1 < len(planes) {
			b = planes[2*g+1]
		}
		for yy := range h {
			row := buf[base+2*(yy+d)*pw : base+2*(yy+d+1)*pw]
			for i := 0; i < 2*d; i += 2 {
				row[i], row[i+1] = z0, z1
				row[2*(d+w)+i], row[2*(d+w)+i+1] = z0, z1
			}
			q.quantPair(row[2*d:2*(d+w)], a.row(yy, rowA), b.row(yy, rowB), 2*g)
		}
	}
	tbl := make([]int, q.groups)
	for g := range pairs {
		for k := range taps {
			off := g * plane
			if taps == 9 {
				off += ((k/3-1)*pw + (k%3 - 1)) * d
			}
			tbl[g*taps+k] = 4 * off
		}
	}
	blocks := (cout + 7) / 8
	y := scratch(blocks*8, h, w) // the last block's padding outputs too
	n := h * w
	var spare [8 * tile]float32
	// run computes m positions from position p (in a pair's plane) into
	// output pixel at on: whole tiles straight into the output, the rest
	// through spare.
	run := func(b, p, at, m int) {
		wt := q.wt[b*q.groups*16 : (b+1)*q.groups*16]
		c, mul, bias := q.corr[8*b:], q.mul[8*b:], q.bias[8*b:]
		full := m / tile
		if full > 0 {
			mmInt(y.Data[8*b*n+at:], buf, 2*(front+p), wt, tbl, n, full, c, mul, bias, relu)
		}
		if left := m - full*tile; left > 0 {
			mmInt(spare[:], buf, 2*(front+p+full*tile), wt, tbl, tile, 1, c, mul, bias, relu)
			for j := range 8 {
				o := y.Data[(8*b+j)*n+at+full*tile:]
				copy(o[:left], spare[j*tile:j*tile+left])
			}
		}
	}
	if taps == 1 {
		// Bands of positions, every block: the band's inputs stay in cache.
		for p0 := 0; p0 < n; p0 += band * tile {
			m := min(band*tile, n-p0)
			for b := range blocks {
				run(b, p0, p0, m)
			}
		}
	} else {
		// Row by row, every block: the row's three input rows stay in cache.
		for yy := range h {
			for b := range blocks {
				run(b, (yy+d)*pw+d, yy*w, w)
			}
		}
	}
	y.C, y.Data = cout, y.Data[:cout*n]
	return y
}

// fillPairs sets p to z0, z1, z0, z1, ….
func fillPairs(p []int16, z0, z1 int16) {
	if len(p) <= 64 { // a row's border: a loop, not copies
		for i := 0; i+1 < len(p); i += 2 {
			p[i], p[i+1] = z0, z1
		}
		return
	}
	p[0], p[1] = z0, z1
	for k := 2; k < len(p); k *= 2 {
		copy(p[k:], p[:k])
	}
}

// quantPair sets dst to a and b quantised as input channels ci and ci+1,
// interleaved.
func (q *qconv) quantPair(dst []int16, a, b []float32, ci int) {
	ia, za := q.inv[ci], float32(q.zp[ci])+0.5
	ib, zb := ia, za
	if ci+1 < len(q.inv) {
		ib, zb = q.inv[ci+1], float32(q.zp[ci+1])+0.5
	}
	i := 0
	if use.avx512 && use.intKernel != IntKernelGo && len(a) >= 16 {
		i = len(a) &^ 15
		quantPairAVX512(&dst[0], &a[0], &b[0], i, ia, za, ib, zb, amax)
	}
	if use.avx2 && use.intKernel != IntKernelGo && len(a)-i >= 8 {
		n := (len(a) - i) &^ 7
		quantPairAVX2(&dst[2*i], &a[i], &b[i], n, ia, za, ib, zb, amax)
		i += n
	}
	dst = dst[:2*len(a)]
	b = b[:len(a)]
	for ; i < len(a); i++ {
		dst[2*i] = quant1(a[i], ia, za)
		dst[2*i+1] = quant1(b[i], ib, zb)
	}
}

// quant1 is v quantised with inverse step inv and zero point z-0.5.
func quant1(v, inv, z float32) int16 {
	f := float32(v*inv) + z
	return int16(min(max(f, 0), amax))
}
