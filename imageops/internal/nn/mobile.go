package nn

import "sync"

// The layers of mobile networks (MobileNetV3, PP-LCNet and the text
// detector built on them): activations cheap enough to fuse into a
// convolution, 5×5 depthwise convolution, squeeze-excite, transposed 2×2
// convolution and integer nearest-neighbour upsampling.

// ActKind is an activation a convolution applies to its outputs while they
// are still in cache.
type ActKind uint8

// The activations Act applies.
const (
	Linear      ActKind = iota // none
	HardSwish                  // x·min(max(x+3, 0), 6)/6, then ·A+B
	HardSigmoid                // min(max(A·x+B, 0), 1)
)

// Act is an activation with its two parameters. For HardSwish, A and B are
// the affine map PP-LCNetV3 learns after each activation (A = 1, B = 0 for
// the plain hard-swish); for HardSigmoid, the slope and offset (1/6 and 1/2
// in PyTorch, 0.2 and 0.5 in Paddle's default).
type Act struct {
	Kind ActKind
	A, B float32
}

// apply applies a to p in place.
func (a Act) apply(p []float32) {
	switch a.Kind {
	case HardSwish:
		if useAVX2 && len(p) >= 8 {
			hswishAVX2(&p[0], len(p), a.A/6, a.B)
			p = p[len(p)&^7:]
		}
		for i, v := range p {
			p[i] = v*min(max(v+3, 0), 6)*(a.A/6) + a.B
		}
	case HardSigmoid:
		for i, v := range p {
			p[i] = min(max(a.A*v+a.B, 0), 1)
		}
	}
}

// conv5 adds the 5×5 convolution (padding 2) of src (h×w) into dst (oh×ow).
// For stride 2, src is the input plane split by columns (see split).
func conv5(dst, src []float32, h, w, oh, ow, stride int, k *[25]float32) {
	half := (w + 1) / 2
	for oy := range oh {
		drow := dst[oy*ow : (oy+1)*ow]
		for ky := range 5 {
			iy := oy*stride - 2 + ky
			if iy < 0 || iy >= h {
				continue
			}
			if stride == 1 {
				row5(drow, src[iy*w:(iy+1)*w], (*[5]float32)(k[ky*5:ky*5+5]))
				continue
			}
			// Output x reads input columns 2x-2 … 2x+2: even column x-1,
			// odd x-1, even x, odd x and even x+1.
			even := src[iy*2*half : iy*2*half+half]
			odd := src[iy*2*half+half : (iy+1)*2*half]
			for kx := range 5 {
				off := kx - 2
				row, shift := even, off>>1
				if off&1 != 0 {
					row, shift = odd, (off-1)>>1
				}
				lo, hi := max(0, -shift), min(ow, len(row)-shift)
				axpy(drow[lo:hi], row[lo+shift:hi+shift], k[ky*5+kx])
			}
		}
	}
}

// depth5 adds the 5×5 convolution at stride 1 (padding 2) of src (h×w) into
// dst, through pad, a scratch of at least (h+4)×(w+4) values whose border
// of 2 is zero: the input is copied into its middle, so that every output
// reads all 25 taps, 8 outputs at a time with AVX2.
func depth5(dst, src, pad []float32, h, w int, k *[25]float32) {
	pw := w + 4
	for y := range h {
		copy(pad[(y+2)*pw+2:(y+2)*pw+2+w], src[y*w:(y+1)*w])
	}
	for oy := range h {
		d := dst[oy*w : (oy+1)*w]
		s := pad[oy*pw : (oy+5)*pw]
		x0 := 0
		if useAVX2 && w >= 8 {
			dw5AVX2(&d[0], &s[0], pw, w, &k[0])
			x0 = w &^ 7
		}
		for x := x0; x < w; x++ {
			var sum float32
			for ky := range 5 {
				row := s[ky*pw+x : ky*pw+x+5]
				kr := k[ky*5 : ky*5+5]
				sum += kr[0]*row[0] + kr[1]*row[1] + kr[2]*row[2] + kr[3]*row[3] + kr[4]*row[4]
			}
			d[x] += sum
		}
	}
}

// row5 adds to d (one output row at stride 1) the five taps k of the input
// row s (as long as d), zero beyond its ends.
func row5(d, s []float32, k *[5]float32) {
	w := len(d)
	for kx, kv := range k {
		shift := kx - 2
		lo, hi := max(0, -shift), min(w, w-shift)
		if lo < hi {
			axpy(d[lo:hi], s[lo+shift:hi+shift], kv)
		}
	}
}

// axpy sets d[i] += k·s[i]; s is at least as long as d.
func axpy(d, s []float32, k float32) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] += k * v
	}
}

// Mean returns the mean of each of x's planes, a C×1×1 tensor (global
// average pooling).
func Mean(x *Tensor) *Tensor {
	y := scratch(x.C, 1, 1)
	for c := range x.C {
		var s float64
		for _, v := range x.Plane(c) {
			s += float64(v)
		}
		y.Data[c] = float32(s / float64(x.H*x.W))
	}
	return y
}

// SE is squeeze-and-excitation: every channel of a tensor is scaled by a
// gate computed from the means of all its channels, Expand(Reduce(means)),
// Reduce with ReLU and Expand with a hard sigmoid (its Act).
type SE struct {
	Reduce, Expand *Conv
	// Residual scales by 1+gate (x + x·gate, as RSEFPN's shortcut does)
	// instead of by the gate.
	Residual bool
}

// Apply scales x's channels in place and returns x.
func (s *SE) Apply(x *Tensor) *Tensor {
	m := Mean(x)
	r := s.Reduce.Apply(m)
	g := s.Expand.Apply(r)
	Free(m, r)
	for c := range x.C {
		k := g.Data[c]
		if s.Residual {
			k++
		}
		p := x.Plane(c)
		for i := range p {
			p[i] *= k
		}
	}
	Free(g)
	return x
}

// Deconv2 is a transposed convolution with a 2×2 kernel at stride 2 and no
// padding, with bias, optionally followed by ReLU: every input pixel becomes
// a 2×2 block of output pixels, each a 1×1 convolution of the input pixel's
// channels. It is computed as one pointwise convolution with 4·Cout outputs
// (the fast kernels), whose planes are then interleaved.
type Deconv2 struct {
	Cin, Cout int
	ReLU      bool
	Weights   []float32 // Cin×Cout×2×2, as ONNX and PyTorch store them
	Biases    []float32

	once  sync.Once
	point *Conv // its output (dy·2+dx)·Cout+co is output co's pixel (2y+dy, 2x+dx)
}

// WeightShape is the shape the weights file stores for d's weights.
func (d *Deconv2) WeightShape() []int { return []int{d.Cin, d.Cout, 2, 2} }

// Apply returns d applied to x: Cout × 2H × 2W.
func (d *Deconv2) Apply(x *Tensor) *Tensor {
	d.once.Do(func() {
		// Outputs past 4·Cout, zero, round the count up to the AVX2
		// kernel's blocks of 8.
		cout := (4*d.Cout + 7) &^ 7
		p := &Conv{Kind: Point, Cin: d.Cin, Cout: cout, Stride: 1, ReLU: d.ReLU}
		p.Weights, p.Biases = make([]float32, cout*d.Cin), make([]float32, cout)
		for k := range 4 {
			for co := range d.Cout {
				o := k*d.Cout + co
				p.Biases[o] = d.Biases[co]
				for ci := range d.Cin {
					p.Weights[o*d.Cin+ci] = d.Weights[(ci*d.Cout+co)*4+k]
				}
			}
		}
		d.point = p
	})
	p := d.point.Apply(x)
	y := scratch(d.Cout, 2*x.H, 2*x.W)
	w := 2 * x.W
	for co := range d.Cout {
		dst := y.Plane(co)
		for k := range 4 {
			dy, dx := k/2, k%2
			src := p.Plane(k*d.Cout + co)
			for yy := range x.H {
				srow := src[yy*x.W : (yy+1)*x.W]
				drow := dst[(2*yy+dy)*w+dx:]
				for xx, v := range srow {
					drow[2*xx] = v
				}
			}
		}
	}
	Free(p)
	return y
}

// Upsample returns x enlarged f times by nearest neighbour (each pixel an
// f×f block: ONNX Resize "nearest" with "asymmetric" coordinates at an
// integer scale).
func Upsample(x *Tensor, f int) *Tensor {
	y := scratch(x.C, f*x.H, f*x.W)
	w := f * x.W
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for yy := range x.H {
			srow := src[yy*x.W : (yy+1)*x.W]
			first := dst[f*yy*w : (f*yy+1)*w]
			for xx, v := range srow {
				for i := range f {
					first[f*xx+i] = v
				}
			}
			for i := 1; i < f; i++ {
				copy(dst[(f*yy+i)*w:(f*yy+i+1)*w], first)
			}
		}
	}
	return y
}
