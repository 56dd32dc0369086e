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
	ReLU6                      // min(max(x, 0), 6): MobileNetV2's
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
		if use.avx2 && len(p) >= 8 {
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
	case ReLU6:
		relu6(p)
	}
}

// depthwise sets y to c's k×k depthwise convolution of x (padding k/2,
// stride 1 or 2) with its biases and activations. Each plane is first
// copied into a zero-bordered scratch (at stride 2 with each row split into
// its even and odd columns), in which an output row's k² taps are whole
// rows read at fixed offsets: the kernel sums them all into 8 outputs at a
// time. An output row gets its bias, taps and activation while in cache.
func depthwise(y, x *Tensor, c *Conv) {
	k := 3
	if c.Kind == Depth5 {
		k = 5
	}
	p := k / 2
	h, w, s := x.H, x.W, c.Stride
	ow := y.W
	// The scratch's rows: the padded row, or at stride 2 its even columns
	// then its odd ones, each half ow+p long.
	rowLen := w + 2*p
	if s == 2 {
		rowLen = 2 * (ow + p)
	}
	pad := scratch(1, h+2*p, rowLen)
	defer Free(pad)
	clear(pad.Data)
	offs := make([]int, k*k)
	for ky := range k {
		for kx := range k {
			off := kx
			if s == 2 {
				off = kx / 2
				if kx%2 == 1 {
					off += ow + p
				}
			}
			offs[ky*k+kx] = ky*rowLen + off
		}
	}
	for ch := range c.Cout {
		src := x.Plane(ch)
		for yy := range h {
			row := pad.Data[(yy+p)*rowLen : (yy+p+1)*rowLen]
			in := src[yy*w : (yy+1)*w]
			if s == 1 {
				copy(row[p:p+w], in)
				continue
			}
			// Padded column j = i+p goes to the half of its parity, at j/2.
			even, odd := row[p/2:ow+p], row[ow+p+(p+1)/2:]
			if p%2 == 1 {
				even, odd = row[ow+p+p/2:], row[(p+1)/2:ow+p]
			}
			even, odd = even[:(w+1)/2], odd[:w/2]
			for m := range odd {
				even[m], odd[m] = in[2*m], in[2*m+1]
			}
			if w%2 == 1 {
				even[w/2] = in[w-1]
			}
		}
		kw := c.Weights[ch*k*k : (ch+1)*k*k]
		dst := y.Plane(ch)
		for oy := range y.H {
			d := dst[oy*ow : (oy+1)*ow]
			fill(d, c.Biases[ch])
			base := pad.Data[oy*s*rowLen:]
			x0 := 0
			if use.avx512 && use.avx2 && ow >= 64 {
				dwTapsAVX512(&d[0], &base[0], &offs[0], &kw[0], len(offs), ow)
				x0 = ow &^ 63
			}
			if use.avx2 && ow-x0 >= 8 {
				dwTapsAVX2(&d[x0], &base[x0], &offs[0], &kw[0], len(offs), ow-x0)
				x0 += (ow - x0) &^ 7
			}
			for i := x0; i < ow; i++ {
				var sum float32
				for t, o := range offs {
					sum += kw[t] * base[o+i]
				}
				d[i] += sum
			}
			c.relu(d)
		}
	}
}

// full3s2 sets y to c's dense 3×3 convolution of x at stride 2 (padding
// 1) with its biases and activations, as a matrix product like Dil3's: the
// input is copied once into a zero-bordered form whose rows are split into
// their even and odd columns, in which the 9 taps of each input channel
// read consecutive pixels for consecutive outputs at fixed offsets; dil3's
// kernels then sum tiles of 8 outputs × 48 pixels over every (channel,
// tap) pair. (The stem of a network: few input channels, the largest
// output.)
func full3s2(y, x *Tensor, c *Conv) {
	c.packOnce.Do(func() {
		blocks := (c.Cout + 7) / 8
		c.packed = make([]float32, blocks*c.Cin*9*8)
		c.bias8 = make([]float32, blocks*8)
		copy(c.bias8, c.Biases)
		for co := range c.Cout {
			for k := range c.Cin * 9 {
				c.packed[(co/8*c.Cin*9+k)*8+co%8] = c.Weights[co*c.Cin*9+k]
			}
		}
	})
	h, w, oh, ow := x.H, x.W, y.H, y.W
	// Padded row r is input row r-1; its padded column j (input column
	// j-1) is at j/2 in the even half or ow+1+j/2 in the odd half.
	half := ow + 1
	rowLen := 2 * half
	plane := (h + 2) * rowLen
	pad := scratch(1, 1, c.Cin*plane+tile+rowLen+16)
	defer Free(pad)
	clear(pad.Data)
	for ci := range c.Cin {
		src := x.Plane(ci)
		for yy := range h {
			row := pad.Data[ci*plane+(yy+1)*rowLen : ci*plane+(yy+2)*rowLen]
			in := src[yy*w : (yy+1)*w]
			// Input column i is padded column i+1: odd columns of the
			// input go to the even half from 1 on, even ones to the odd.
			even, odd := row[1:half], row[half:]
			for m := range w / 2 {
				odd[m], even[m] = in[2*m], in[2*m+1]
			}
			if w%2 == 1 {
				odd[w/2] = in[w-1]
			}
		}
	}
	// Output x reads padded columns 2x, 2x+1, 2x+2: even x, odd x, even x+1.
	cols := [3]int{0, half, 1}
	tbl := make([]int, c.Cin*9)
	for ci := range c.Cin {
		for k := range 9 {
			tbl[ci*9+k] = 4 * (ci*plane + k/3*rowLen + cols[k%3])
		}
	}
	blocks := (c.Cout + 7) / 8
	n := oh * ow
	out := y
	if c.Cout%8 != 0 {
		out = scratch(blocks*8, oh, ow) // the last block's padding outputs too
		defer Free(out)
	}
	full, rest := ow/tile, ow%tile
	var spare [8 * tile]float32
	for oy := range oh {
		at := 2 * oy * rowLen // padded row 2·oy is the window's top
		for b := range blocks {
			o := out.Data[b*8*n+oy*ow:]
			wt := c.packed[b*c.Cin*9*8 : (b+1)*c.Cin*9*8]
			bias := c.bias8[b*8 : b*8+8]
			if full > 0 {
				dil3(o, pad.Data, at, wt, tbl, bias, n, full, c.ReLU)
			}
			if rest > 0 {
				dil3(spare[:], pad.Data, at+full*tile, wt, tbl, bias, tile, 1, c.ReLU)
				for j := range 8 {
					copy(o[j*n+full*tile:j*n+ow], spare[j*tile:j*tile+rest])
				}
			}
		}
	}
	if out != y {
		copy(y.Data, out.Data[:c.Cout*n])
	}
	c.Act.apply(y.Data)
}

// Mean returns the mean of each of x's planes, a C×1×1 tensor (global
// average pooling).
func Mean(x *Tensor) *Tensor {
	y := scratch(x.C, 1, 1)
	for c := range x.C {
		// Four running sums, so that the additions need not wait for
		// each other.
		p := x.Plane(c)
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(p); i += 4 {
			q := p[i : i+4 : i+4]
			s0 += float64(q[0])
			s1 += float64(q[1])
			s2 += float64(q[2])
			s3 += float64(q[3])
		}
		for ; i < len(p); i++ {
			s0 += float64(p[i])
		}
		y.Data[c] = float32((s0 + s1 + s2 + s3) / float64(len(p)))
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
	g := s.Gate(m)
	Free(m)
	return Scale(x, g)
}

// Scale multiplies each channel c of x by k[c] in place and returns x.
func Scale(x *Tensor, k []float32) *Tensor {
	for c, v := range k {
		p := x.Plane(c)
		for i := range p {
			p[i] *= v
		}
	}
	return x
}

// Gate returns the factor Apply scales each channel by, given the
// channels' means (C×1×1): the gate, or 1 + the gate when Residual.
func (s *SE) Gate(means *Tensor) []float32 {
	r := s.Reduce.Apply(means)
	g := s.Expand.Apply(r)
	out := make([]float32, g.C)
	for c, v := range g.Data {
		if s.Residual {
			v++
		}
		out[c] = v
	}
	Free(r, g)
	return out
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
	p := d.Phases(x)
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

// Phases returns d applied to x with its output pixels not yet
// interleaved, at x's size: plane (dy·2+dx)·Cout+co holds output co's
// pixels (2y+dy, 2x+dx), and 4·Cout planes are followed by up to 7 of
// padding. The Cout planes of one (dy, dx) are a tensor a following
// pointwise layer can read as they are (see View).
func (d *Deconv2) Phases(x *Tensor) *Tensor {
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
	return d.point.Apply(x)
}

// View returns the c planes of t from plane first on, sharing t's storage:
// never to be given to Free.
func (t *Tensor) View(first, c int) *Tensor {
	n := t.H * t.W
	return &Tensor{C: c, H: t.H, W: t.W, Data: t.Data[first*n : (first+c)*n]}
}

// Upsample returns x enlarged f times by nearest neighbour (each pixel an
// f×f block: ONNX Resize "nearest" with "asymmetric" coordinates at an
// integer scale).
func Upsample(x *Tensor, f int) *Tensor {
	y := scratch(x.C, f*x.H, f*x.W)
	upsample(y.Data, x, f)
	return y
}

// upsample writes x enlarged f times by nearest neighbour to dst.
func upsample(dst []float32, x *Tensor, f int) {
	if f == 1 {
		copy(dst, x.Data)
		return
	}
	w := f * x.W
	for c := range x.C {
		src, out := x.Plane(c), dst[c*f*x.H*w:(c+1)*f*x.H*w]
		for yy := range x.H {
			srow := src[yy*x.W : (yy+1)*x.W]
			first := out[f*yy*w : (f*yy+1)*w]
			for xx, v := range srow {
				for i := range f {
					first[f*xx+i] = v
				}
			}
			for i := 1; i < f; i++ {
				copy(out[(f*yy+i)*w:(f*yy+i+1)*w], first)
			}
		}
	}
}

// UpConv3 is a 3×3 convolution (stride 1, padding 1, no bias) of a tensor
// enlarged F times by nearest neighbour, computed at the small tensor's
// resolution. In the enlarged tensor, every output pixel of a block of F×F
// reads one pixel of the small tensor or its neighbours, by which side of
// the block it lies on: top row, middle rows or bottom row, and the same
// for columns. For each of those 9 cases the taps that fall on the same
// small pixel are summed into one weight, giving a 3×3 convolution of the
// small tensor; the 9 convolutions (4 for F = 2, whose blocks have no
// middle) run as one Dil3 and each enlarged output pixel takes its case's.
// For F = 8 that is 9 small convolutions for 64 enlarged pixels, 1/7 of the
// work; for F = 2, 4 for 4, as much.
type UpConv3 struct {
	Cin, Cout, F int
	Weights      []float32 // Cout×Cin×3×3

	once  sync.Once
	cases *Dil3 // output c·Cout+co is output co for case c = row case·sides + column case
}

// upSide is which side of its F-pixel block position p (0 ≤ p < f) lies
// on: 0 the first, 1 the middle, 2 the last.
func upSide(p, f int) int {
	switch {
	case p == 0:
		return 0
	case p == f-1:
		return 2
	}
	return 1
}

// upSides lists the sides a block of f pixels has: no middle for f = 2.
func upSides(f int) []int {
	if f == 2 {
		return []int{0, 2}
	}
	return []int{0, 1, 2}
}

// upCase is the index in upSides(f) of position p's side.
func upCase(p, f int) int {
	if f == 2 {
		return p
	}
	return upSide(p, f)
}

// AddTo adds u's convolution of x enlarged F times to y, which is
// Cout × F·x.H × F·x.W.
func (u *UpConv3) AddTo(y, x *Tensor) {
	sides := upSides(u.F)
	ns := len(sides)
	u.once.Do(func() {
		d := &Dil3{Cin: u.Cin, Cout: ns * ns * u.Cout, D: 1, Weights: make([]float32, ns*ns*u.Cout*u.Cin*9), Biases: make([]float32, ns*ns*u.Cout)}
		// A tap at offset t (-1, 0, 1) of an enlarged pixel on side s of its
		// block reads the small pixel at offset by(s, t): -1 only from the
		// first side, +1 only from the last (for F ≥ 2).
		by := func(s, t int) int {
			if s == 0 && t == -1 {
				return -1
			}
			if s == 2 && t == 1 {
				return 1
			}
			return 0
		}
		for c := range ns * ns {
			rs, cs := sides[c/ns], sides[c%ns]
			for co := range u.Cout {
				for ci := range u.Cin {
					src := u.Weights[(co*u.Cin+ci)*9:]
					dst := d.Weights[((c*u.Cout+co)*u.Cin+ci)*9:]
					for ky := range 3 {
						for kx := range 3 {
							sy, sx := by(rs, ky-1), by(cs, kx-1)
							dst[(sy+1)*3+sx+1] += src[ky*3+kx]
						}
					}
				}
			}
		}
		u.cases = d
	})
	r := u.cases.Apply(x)
	f, w, n := u.F, y.W, x.H*x.W
	for co := range u.Cout {
		out := y.Plane(co)
		for yy := range y.H {
			sy := yy / f
			row := out[yy*w : (yy+1)*w]
			for px := range f {
				c := ns*upCase(yy%f, f) + upCase(px, f)
				src := r.Data[(c*u.Cout+co)*n+sy*x.W : (c*u.Cout+co)*n+(sy+1)*x.W]
				for bx, v := range src {
					row[bx*f+px] += v
				}
			}
		}
	}
	Free(r)
}

// ReLU sets x's negative values to 0 in place and returns x.
func ReLU(x *Tensor) *Tensor {
	for i, v := range x.Data {
		x.Data[i] = max(v, 0)
	}
	return x
}
