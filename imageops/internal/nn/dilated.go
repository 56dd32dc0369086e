package nn

import (
	"math"
	"sync"
)

// Dil3 is a dense 3×3 convolution at stride 1 with dilation D (padding D,
// so the output has the input's size) and bias, optionally followed by
// ReLU: the layer U²-Net is built from. It is computed as one matrix
// product over a zero-bordered copy of the input, in which the nine taps of
// every input channel are the same pixels shifted by a fixed offset: tiles
// of 8 output channels × 48 pixels are summed over every (channel, tap) pair
// (AVX-512 or AVX2 kernels, or the portable loop they mirror). Unlike
// Conv's Full3 this reads the input once per 8 outputs, not once per output.
type Dil3 struct {
	Cin, Cout, D    int
	ReLU            bool
	Weights, Biases []float32 // Cout×Cin×3×3 and Cout

	// InRange, when set, is the calibrated range of the input (one for all
	// channels or one each): the layer then
	// runs on integers (intconv.go). Seen, when set, records every input
	// (calibration).
	InRange []Range
	Seen    Observer

	packOnce sync.Once
	packed   []float32 // blocks of 8 outputs, (channel, tap) by (channel, tap), 8 a pair
	bias8    []float32 // Biases, zero-padded to a multiple of 8
	qOnce    sync.Once
	q        *qconv
}

// tile is the pixels one kernel call sums at a time, in each of 8 outputs.
const tile = 48

// inPlane is one input channel of a layer: a plane w pixels wide, read
// enlarged f times by nearest neighbour (f 1: as it is).
type inPlane struct {
	data []float32
	w, f int
}

// whole is x's channels as a layer's inputs, as they are.
func whole(x *Tensor) []inPlane {
	ps := make([]inPlane, x.C)
	for i := range ps {
		ps[i] = inPlane{data: x.Plane(i), w: x.W, f: 1}
	}
	return ps
}

// row returns row y of the enlarged plane: the plane's own, or dst filled.
func (p inPlane) row(y int, dst []float32) []float32 {
	if p.f == 1 {
		return p.data[y*p.w : (y+1)*p.w]
	}
	p.rowInto(dst, y)
	return dst
}

// rowInto sets dst (w·f pixels) to row y of the enlarged plane.
func (p inPlane) rowInto(dst []float32, y int) {
	src := p.data[y/p.f*p.w : (y/p.f+1)*p.w]
	if p.f == 1 {
		copy(dst, src)
		return
	}
	dst = dst[:len(src)*p.f]
	for x, v := range src {
		for i := range p.f {
			dst[x*p.f+i] = v
		}
	}
}

// enlarged is planes as whole planes of h rows (calibration: what the
// layer reads).
func enlarged(planes []inPlane, h int) [][]float32 {
	out := make([][]float32, len(planes))
	for i, p := range planes {
		if p.f == 1 {
			out[i] = p.data
			continue
		}
		w := p.w * p.f
		out[i] = make([]float32, h*w)
		for y := range h {
			p.rowInto(out[i][y*w:(y+1)*w], y)
		}
	}
	return out
}

// pack regroups the weights for the kernels, in blocks of 8 outputs (the
// last padded with zero outputs).
func (c *Dil3) pack() {
	c.packOnce.Do(func() {
		blocks := (c.Cout + 7) / 8
		c.packed = make([]float32, blocks*c.Cin*9*8)
		c.bias8 = make([]float32, blocks*8)
		copy(c.bias8, c.Biases)
		for co := range c.Cout {
			for ci := range c.Cin {
				for k := range 9 {
					c.packed[((co/8*c.Cin+ci)*9+k)*8+co%8] = c.Weights[(co*c.Cin+ci)*9+k]
				}
			}
		}
	})
}

// Apply returns c applied to x, or to the tensors stacked by channel (Cin
// channels together), each smaller one enlarged by nearest neighbour to the
// largest one's size (a whole factor, the same on both axes): the stacking and the
// enlarging are done while the input is copied into its bordered form, not
// in a pass and a tensor of their own.
func (c *Dil3) Apply(xs ...*Tensor) *Tensor {
	x := xs[0]
	for _, t := range xs {
		if t.H > x.H {
			x = t
		}
	}
	d, h, w := max(c.D, 1), x.H, x.W
	planes := make([]inPlane, 0, c.Cin)
	for _, t := range xs {
		for i := range t.C {
			planes = append(planes, inPlane{data: t.Plane(i), w: t.W, f: h / t.H})
		}
	}
	if c.Seen != nil {
		c.Seen.Add(enlarged(planes, h))
	}
	if c.InRange != nil && use.integers {
		c.qOnce.Do(func() { c.q = newQconv(c.InRange, c.Weights, c.Biases, c.Cin, c.Cout, 9) })
		return applyInt(c.q, planes, h, w, d, 9, c.Cout, c.ReLU)
	}
	c.pack()
	pw, ph := w+2*d, h+2*d
	plane := ph * pw
	// The input with a zero border of d, planes one after another, with room
	// before the first and past the last for the reads of junk pixels (the
	// border columns of the first row and the last tile's excess).
	padded := scratch(1, 1, d+len(planes)*plane+tile+d+16)
	clear(padded.Data[:d])
	p := padded.Data[d:]
	for ci, src := range planes {
		dst := p[ci*plane : (ci+1)*plane]
		clear(dst[:d*pw])
		clear(dst[(h+d)*pw:])
		for y := range h {
			row := dst[(y+d)*pw : (y+d+1)*pw]
			clear(row[:d])
			src.rowInto(row[d:d+w], y)
			clear(row[d+w:])
		}
	}
	clear(p[len(planes)*plane:])
	defer Free(padded)
	// Each (channel, tap) pair's offset from the output pixel's centre, in bytes.
	tbl := make([]int, c.Cin*9)
	for ci := range c.Cin {
		for k := range 9 {
			tbl[ci*9+k] = 4 * (ci*plane + ((k/3-1)*pw+(k%3-1))*d)
		}
	}
	// Row by row, every block of 8 outputs: the row's three input rows of
	// every channel stay in cache for all of them. Whole tiles are written
	// straight into the output, the row's end by 16-pixel chunks (AVX-512)
	// and, for what is left, through a tile of scratch.
	blocks := (c.Cout + 7) / 8
	y := scratch(blocks*8, h, w) // the last block's padding outputs too
	n := h * w
	full, rest := w/tile, w%tile
	var spare [8 * tile]float32
	for yy := range h {
		at := d + (yy+d)*pw + d // the input under output pixel (yy, 0)
		for b := range blocks {
			o := y.Data[b*8*n+yy*w:]
			wt := c.packed[b*c.Cin*9*8 : (b+1)*c.Cin*9*8]
			bias := c.bias8[b*8 : b*8+8]
			if full > 0 {
				dil3(o, padded.Data, at, wt, tbl, bias, n, full, c.ReLU)
			}
			x0, left := full*tile, rest
			if use.avx512 && left >= 16 {
				dil3AVX512x16(&o[x0], &padded.Data[at+x0], &wt[0], &tbl[0], &bias[0], len(tbl), n, left/16, c.ReLU)
				x0 += left &^ 15
				left &= 15
			}
			if left > 0 {
				dil3(spare[:], padded.Data, at+x0, wt, tbl, bias, tile, 1, c.ReLU)
				for j := range 8 {
					copy(o[j*n+x0:j*n+x0+left], spare[j*tile:j*tile+left])
				}
			}
		}
	}
	y.C, y.Data = c.Cout, y.Data[:c.Cout*n]
	return y
}

// dil3 sums nt tiles of 8 output planes (ostride apart, starting at o) over
// the (channel, tap) pairs of tbl, reading the input p at index at plus each
// pair's offset (in bytes), with wt's 8 weights a pair and the 8 biases.
func dil3(o, p []float32, at int, wt []float32, tbl []int, bias []float32, ostride, nt int, relu bool) {
	switch {
	case use.avx512:
		dil3AVX512(&o[0], &p[at], &wt[0], &tbl[0], &bias[0], len(tbl), ostride, nt, relu)
	case use.avx2:
		dil3AVX2(&o[0], &p[at], &wt[0], &tbl[0], &bias[0], len(tbl), ostride, nt, relu)
	default:
		dil3Go(o, p, at, wt, tbl, bias, ostride, nt, relu)
	}
}

// dil3Go is the portable loop the kernels mirror, one output at a time.
func dil3Go(o, p []float32, at int, wt []float32, tbl []int, bias []float32, ostride, nt int, relu bool) {
	m := nt * tile
	for j := range 8 {
		dst := o[j*ostride : j*ostride+m]
		for i := range dst {
			dst[i] = bias[j]
		}
		for k, off := range tbl {
			wv := wt[k*8+j]
			if wv == 0 {
				continue
			}
			src := p[at+off/4 : at+off/4+m]
			for i, v := range src {
				dst[i] += wv * v
			}
		}
		if relu {
			for i, v := range dst {
				dst[i] = max(v, 0)
			}
		}
	}
}

// MaxPool2 returns the 2×2 max-pooling of x at stride 2, a partial window
// at an odd edge pooled over the pixels it has (ceil mode).
func MaxPool2(x *Tensor) *Tensor {
	oh, ow := (x.H+1)/2, (x.W+1)/2
	y := scratch(x.C, oh, ow)
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for oy := range oh {
			r0 := src[2*oy*x.W : (2*oy+1)*x.W]
			r1 := r0
			if 2*oy+1 < x.H {
				r1 = src[(2*oy+1)*x.W : (2*oy+2)*x.W]
			}
			drow := dst[oy*ow : (oy+1)*ow]
			for ox := range x.W / 2 {
				drow[ox] = max(r0[2*ox], r0[2*ox+1], r1[2*ox], r1[2*ox+1])
			}
			if x.W%2 == 1 {
				drow[ow-1] = max(r0[x.W-1], r1[x.W-1])
			}
		}
	}
	return y
}

// MaxPool3s2 returns the 3×3 max-pooling of x at stride 2 with padding 1
// (the padding never wins): ceil(H/2) × ceil(W/2), as ONNX's MaxPool with
// pads 1 and ceil_mode 0 gives.
func MaxPool3s2(x *Tensor) *Tensor {
	oh, ow := (x.H+1)/2, (x.W+1)/2
	y := scratch(x.C, oh, ow)
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for oy := range oh {
			y0, y1 := max(2*oy-1, 0), min(2*oy+1, x.H-1)
			drow := dst[oy*ow : (oy+1)*ow]
			for ox := range ow {
				x0, x1 := max(2*ox-1, 0), min(2*ox+1, x.W-1)
				m := src[y0*x.W+x0]
				for yy := y0; yy <= y1; yy++ {
					for _, v := range src[yy*x.W+x0 : yy*x.W+x1+1] {
						m = max(m, v)
					}
				}
				drow[ox] = m
			}
		}
	}
	return y
}

// Resize returns x resampled bilinearly to h×w with pixel centres aligned
// (PyTorch's align_corners=False, ONNX's pytorch_half_pixel).
func Resize(x *Tensor, h, w int) *Tensor {
	y := scratch(x.C, h, w)
	x0, x1, fx := axis(x.W, w)
	y0, y1, fy := axis(x.H, h)
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for oy := range h {
			a, b, f := src[y0[oy]*x.W:(y0[oy]+1)*x.W], src[y1[oy]*x.W:(y1[oy]+1)*x.W], fy[oy]
			drow := dst[oy*w : (oy+1)*w]
			for ox := range drow {
				top := a[x0[ox]] + (a[x1[ox]]-a[x0[ox]])*fx[ox]
				bot := b[x0[ox]] + (b[x1[ox]]-b[x0[ox]])*fx[ox]
				drow[ox] = top + (bot-top)*f
			}
		}
	}
	return y
}

// axis maps each of n output samples onto an axis of sn input samples: the
// two neighbours and the second's weight (coordinates below 0 clamp to 0).
func axis(sn, n int) (i0, i1 []int, f []float32) {
	i0, i1, f = make([]int, n), make([]int, n), make([]float32, n)
	scale := float32(sn) / float32(n)
	for i := range n {
		s := max((float32(i)+0.5)*scale-0.5, 0)
		j := min(int(s), sn-1)
		i0[i], i1[i], f[i] = j, min(j+1, sn-1), s-float32(j)
	}
	return i0, i1, f
}

// Concat returns the tensors stacked by channel (all of one size).
func Concat(ts ...*Tensor) *Tensor {
	c := 0
	for _, t := range ts {
		c += t.C
	}
	y := scratch(c, ts[0].H, ts[0].W)
	off := 0
	for _, t := range ts {
		off += copy(y.Data[off:], t.Data)
	}
	return y
}

// Add adds b to a in place and returns a.
func Add(a, b *Tensor) *Tensor {
	for i, v := range b.Data {
		a.Data[i] += v
	}
	return a
}

// Sigmoid applies the logistic function to x in place and returns x.
func Sigmoid(x *Tensor) *Tensor {
	p := x.Data
	if use.avx2 && len(p) >= 8 {
		sigmoidAVX2(&p[0], len(p))
		p = p[len(p)&^7:]
	}
	for i, v := range p {
		p[i] = 1 / (1 + exp32(-v))
	}
	return x
}

// exp32 is e^v to within a few parts in 10⁷ (relative), 0 below -87 and
// +Inf above 88: 2^k·e^r with |r| ≤ ln2/2 and e^r by its Taylor series to
// the 7th power, several times faster than math.Exp.
func exp32(v float32) float32 {
	if v < -87 {
		return 0
	}
	if v > 88 {
		return float32(math.Inf(1))
	}
	const ln2Hi, ln2Lo = 0.693145751953125, 1.428606765330187e-06
	k := float32(math.Floor(float64(v*1.4426950408889634 + 0.5)))
	r := (v - k*ln2Hi) - k*ln2Lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}
