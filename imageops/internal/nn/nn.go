// Package nn is the small inference kit the vision networks share:
// channel-major float32 tensors, the convolutions they are built from
// (dense 3×3, dilated 3×3, depthwise 3×3 and 5×5, pointwise 1×1,
// transposed 2×2, each with batch norm folded into its weights and bias),
// their activations, squeeze-excite, nearest-neighbour upsampling, and a
// reader for the weights files the training programs export (reader.go).
// Layers given a calibrated input range run their multiply-adds on 16-bit
// integers (intconv.go). Which kernels run, portable loops or amd64
// assembly, is chosen once from the CPU (cpu.go).
package nn

import (
	"sync"
)

// Tensor is a stack of C planes of H×W float32 values, channel-major.
type Tensor struct {
	C, H, W int
	Data    []float32
}

// NewTensor returns a zeroed c×h×w tensor.
func NewTensor(c, h, w int) *Tensor {
	return &Tensor{C: c, H: h, W: w, Data: make([]float32, c*h*w)}
}

// spare holds storage given back by Free for scratch to hand out again:
// a forward pass then neither allocates nor clears most of its layers'
// outputs (on a 12-megapixel plate detection that was a tenth of the
// time). A request takes the smallest spare buffer that holds it (and is
// at most twice its size), whatever size it was made for, so a network's
// layers of many sizes share a few buffers: with a sync.Pool a size (the
// cut-out's U²-Net has dozens) kept its own buffers, held until the second
// collection after, some 250 MB against a working set of about 110 MB
// (docs/research/benchmarks-log.md). Release drops them all.
var spare struct {
	sync.Mutex
	bufs  [][]float32
	bytes int
}

// maxSpare is the most storage spare keeps; beyond it Free lets buffers go.
const maxSpare = 256 << 20

// scratch returns a c×h×w tensor whose contents are undefined: recycled
// storage when Free gave back a buffer it fits in.
func scratch(c, h, w int) *Tensor {
	n := c * h * w
	spare.Lock()
	best := -1
	for i, b := range spare.bufs {
		if k := cap(b); k >= n && k <= 2*n && (best < 0 || k < cap(spare.bufs[best])) {
			best = i
		}
	}
	var d []float32
	if best >= 0 {
		d = spare.bufs[best][:n]
		last := len(spare.bufs) - 1
		spare.bufs[best] = spare.bufs[last]
		spare.bufs[last] = nil
		spare.bufs = spare.bufs[:last]
		spare.bytes -= 4 * cap(d)
	}
	spare.Unlock()
	if d == nil {
		d = make([]float32, n)
	}
	return &Tensor{C: c, H: h, W: w, Data: d}
}

// Scratch is scratch for a network's own glue (a padded or trimmed copy):
// a c×h×w tensor whose contents are undefined, from the storage Free gave
// back where a buffer fits (fresh storage's first writes fault its pages
// in: copying into a new tensor cost a line's read 3 ms).
func Scratch(c, h, w int) *Tensor { return scratch(c, h, w) }

// Free gives the storage of tensors no longer needed back for reuse by
// Apply; the caller must not touch them again.
func Free(ts ...*Tensor) {
	spare.Lock()
	defer spare.Unlock()
	for _, t := range ts {
		d := t.Data[:cap(t.Data)]
		t.Data = nil
		if len(d) == 0 || spare.bytes+4*len(d) > maxSpare {
			continue
		}
		spare.bufs = append(spare.bufs, d)
		spare.bytes += 4 * len(d)
	}
}

// Release lets go of every buffer Free gave back, for the garbage
// collector: after a large network, before other work allocates.
func Release() {
	spare.Lock()
	clear(spare.bufs)
	spare.bufs, spare.bytes = spare.bufs[:0], 0
	spare.Unlock()
}

// planes returns the channels.
func (t *Tensor) planes() [][]float32 {
	ps := make([][]float32, t.C)
	for i := range ps {
		ps[i] = t.Plane(i)
	}
	return ps
}

// Plane returns channel i.
func (t *Tensor) Plane(i int) []float32 { return t.Data[i*t.H*t.W : (i+1)*t.H*t.W] }

// Kind is a convolution's shape.
type Kind int

// The convolutions the networks use.
const (
	Full3  Kind = iota // dense 3×3 over all input channels
	Depth3             // depthwise 3×3: one kernel per channel
	Point              // pointwise 1×1
	Depth5             // depthwise 5×5 (padding 2)
)

// Conv is one convolution with bias (padding 1 for 3×3, 2 for 5×5),
// optionally followed by ReLU or by the activation Act. Stride 2 halves
// each side, rounding up.
type Conv struct {
	Kind            Kind
	Cin, Cout       int
	Stride          int
	ReLU            bool
	Act             Act // applied after ReLU, if both are set
	Weights, Biases []float32
	// InRange, when set, is the calibrated range of the input (one for all
	// channels or one each) of a pointwise
	// convolution at stride 1: it then runs on integers (intconv.go). Seen,
	// when set, records every input (calibration).
	InRange []Range
	Seen    Observer

	qOnce sync.Once
	q     *qconv

	// packed holds, for a 1×1 convolution, the weights of its outputs in
	// blocks of 8 regrouped input channel by input channel, as the AVX2
	// kernel reads them; for a dense 3×3 one at stride 2, as dil3 reads
	// them (see full3s2), with bias8. Made on first use.
	packOnce sync.Once
	packed   []float32
	bias8    []float32
}

// WeightShape is the shape the weights file stores for c's weights.
func (c *Conv) WeightShape() []int {
	switch c.Kind {
	case Full3:
		return []int{c.Cout, c.Cin, 3, 3}
	case Depth3:
		return []int{c.Cout, 1, 3, 3}
	case Depth5:
		return []int{c.Cout, 1, 5, 5}
	}
	return []int{c.Cout, c.Cin, 1, 1}
}

// Read fills c's weights and bias from r, checking their shapes.
func (c *Conv) Read(r *Reader) {
	c.Weights = r.Floats(c.WeightShape()...)
	c.Biases = r.Floats(c.Cout)
}

// Apply returns c applied to x. Each output plane starts at its bias and
// gets ReLU while it is still in cache, rather than in a pass of its own.
func (c *Conv) Apply(x *Tensor) *Tensor {
	oh, ow := x.H, x.W
	if c.Stride == 2 {
		oh, ow = (x.H+1)/2, (x.W+1)/2
	}
	if c.Seen != nil {
		c.Seen.Add(x.planes())
	}
	if c.InRange != nil && use.integers && c.Kind == Point && c.Stride == 1 && x.H*x.W > 1 {
		c.qOnce.Do(func() { c.q = newQconv(c.InRange, c.Weights, c.Biases, c.Cin, c.Cout, 1) })
		y := applyInt(c.q, whole(x), x.H, x.W, 0, 1, c.Cout, c.ReLU)
		for ch := range c.Cout {
			c.Act.apply(y.Plane(ch))
		}
		return y
	}
	y := scratch(c.Cout, oh, ow)
	if c.Kind == Depth3 || c.Kind == Depth5 {
		depthwise(y, x, c)
		return y
	}
	if c.Kind == Full3 && c.Stride == 2 && (use.avx2 || use.avx512) {
		full3s2(y, x, c)
		return y
	}
	if c.Kind != Point { // pointwise fills its chunks as it goes, in cache
		for ch := range c.Cout {
			fill(y.Plane(ch), c.Biases[ch])
		}
	}
	// in returns input plane i as conv3 reads it.
	in := func(i int) []float32 { return x.Plane(i) }
	if c.Stride == 2 && c.Kind != Point {
		// Each plane split once, however many outputs read it.
		sp := scratch(x.C, x.H, 2*ow)
		defer Free(sp)
		for i := range x.C {
			split(sp.Plane(i), x.Plane(i), x.H, x.W)
		}
		in = sp.Plane
	}
	switch c.Kind {
	case Full3:
		for co := range c.Cout {
			dst := y.Plane(co)
			for ci := range c.Cin {
				var k [9]float32
				copy(k[:], c.Weights[(co*c.Cin+ci)*9:])
				conv3(dst, in(ci), x.H, x.W, oh, ow, c.Stride, &k)
			}
			c.relu(dst)
		}
	default:
		pointwise(y, x, c)
	}
	return y
}

// fill sets every value of p to v.
func fill(p []float32, v float32) {
	if use.avx2 && len(p) >= 8 {
		fillAVX2(&p[0], len(p), v)
		p = p[len(p)&^7:]
	}
	for i := range p {
		p[i] = v
	}
}

// relu applies c's activations, if it has any, to p in place.
func (c *Conv) relu(p []float32) {
	if c.ReLU {
		for i, v := range p {
			p[i] = max(v, 0)
		}
	}
	c.Act.apply(p)
}

// UpAdd adds the nearest-neighbour 2× upsampling of small to big, in place,
// and returns big.
func UpAdd(big, small *Tensor) *Tensor {
	for c := range big.C {
		bp, sp := big.Plane(c), small.Plane(c)
		for y := range big.H {
			brow := bp[y*big.W : (y+1)*big.W]
			srow := sp[(y/2)*small.W : (y/2+1)*small.W]
			// Two big pixels a small one.
			pairs := brow[:len(brow)&^1]
			srow = srow[:len(pairs)/2]
			for x, v := range srow {
				pairs[2*x] += v
				pairs[2*x+1] += v
			}
			if len(brow)%2 == 1 {
				brow[len(brow)-1] += sp[(y/2)*small.W+len(brow)/2]
			}
		}
	}
	return big
}

// conv3 adds the 3x3 convolution (padding 1) of src (h×w) into dst (oh×ow).
// For stride 2, src is the input plane split by columns (see split).
func conv3(dst, src []float32, h, w, oh, ow, stride int, k *[9]float32) {
	for oy := range oh {
		drow := dst[oy*ow : (oy+1)*ow]
		for ky := range 3 {
			iy := oy*stride - 1 + ky
			if iy < 0 || iy >= h {
				continue
			}
			k0, k1, k2 := k[ky*3], k[ky*3+1], k[ky*3+2]
			if stride == 1 {
				srow := src[iy*w : (iy+1)*w]
				// Column 0 and ow-1 lack a neighbour.
				drow[0] += k1*srow[0] + k2*srow[min(1, w-1)]*b2f(w > 1)
				if ow > 1 {
					drow[ow-1] += k0*srow[ow-2] + k1*srow[ow-1]
				}
				if ow > 2 {
					taps(drow[1:ow-1], srow[0:ow-2], srow[1:ow-1], srow[2:ow], k0, k1, k2)
				}
				continue
			}
			// Stride 2: output x reads input 2x-1, 2x, 2x+1, that is odd
			// column x-1, even column x and odd column x.
			even := src[iy*2*ow : iy*2*ow+ow]
			odd := src[iy*2*ow+ow : (iy+1)*2*ow]
			drow[0] += k1*even[0] + k2*odd[0]
			if ow > 1 {
				taps(drow[1:ow], odd[0:ow-1], even[1:ow], odd[1:ow], k0, k1, k2)
			}
		}
	}
}

// split writes to out the plane p (h×w) as rows of its ow = ⌈w/2⌉ even
// columns followed by its ow odd columns (the last 0 when w is odd), the
// layout conv3 reads at stride 2: every tap then reads consecutive values.
func split(out, p []float32, h, w int) {
	ow := (w + 1) / 2
	for y := range h {
		row := p[y*w : (y+1)*w]
		even := out[2*y*ow : 2*y*ow+ow]
		odd := out[2*y*ow+ow : 2*(y+1)*ow]
		for x := range w / 2 {
			even[x], odd[x] = row[2*x], row[2*x+1]
		}
		if w%2 == 1 {
			even[ow-1], odd[ow-1] = row[w-1], 0
		}
	}
}

// taps sets d[i] += k0·a[i] + k1·b[i] + k2·c[i]; a, b and c are at least
// as long as d.
func taps(d, a, b, c []float32, k0, k1, k2 float32) {
	i := 0
	if use.avx2 && len(d) >= 8 {
		fma3AVX2(&d[0], &a[0], &b[0], &c[0], k0, k1, k2, len(d))
		i = len(d) &^ 7
	}
	d = d[i:]
	a, b, c = a[i:len(d)+i], b[i:len(d)+i], c[i:len(d)+i]
	for j := range d {
		d[j] += k0*a[j] + k1*b[j] + k2*c[j]
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// packedWeights returns c's weights for point8AVX2: those of its first
// Cout&^7 outputs, each block of 8 outputs input channel by input channel.
func (c *Conv) packedWeights() []float32 {
	c.packOnce.Do(func() {
		wide := c.Cout &^ 7
		c.packed = make([]float32, wide*c.Cin)
		for co := range wide {
			for ci := range c.Cin {
				c.packed[(co/8*c.Cin+ci)*8+co%8] = c.Weights[co*c.Cin+ci]
			}
		}
	})
	return c.packed
}

// pointwise sets y to c's biases plus W·x over channels (a 1x1
// convolution), with c's activations, in column chunks that stay in cache.
// With AVX-512 see below; with AVX2 the kernel takes
// eight output channels by eight pixels at a time; otherwise, and for what
// is left over, four output by four input channels at a time so that each
// loaded value feeds four multiply-adds.
func pointwise(y, x *Tensor, c *Conv) {
	n := x.H * x.W
	cin, cout, w := x.C, y.C, c.Weights
	done := c.relu
	// one adds to output channel co's pixels [p0, p1) the weighted sum of
	// the input channels', one channel at a time.
	one := func(co, p0, p1 int) {
		o := y.Data[co*n+p0 : co*n+p1]
		for ci := range cin {
			in := x.Data[ci*n+p0 : ci*n+p1]
			wv := w[co*cin+ci]
			for i, v := range in {
				o[i] += wv * v
			}
		}
		done(o)
	}
	if n == 1 {
		// A fully connected layer: one dot product per output.
		copy(y.Data, c.Biases)
		for co := range cout {
			row := w[co*cin : (co+1)*cin]
			var s0, s1, s2, s3 float32
			ci := 0
			for ; ci+4 <= cin; ci += 4 {
				s0 += row[ci] * x.Data[ci]
				s1 += row[ci+1] * x.Data[ci+1]
				s2 += row[ci+2] * x.Data[ci+2]
				s3 += row[ci+3] * x.Data[ci+3]
			}
			for ; ci < cin; ci++ {
				s0 += row[ci] * x.Data[ci]
			}
			y.Data[co] += (s0 + s1) + (s2 + s3)
		}
		done(y.Data)
		return
	}
	// wide are the output channels the AVX2 kernel takes, in blocks of 8.
	wide := 0
	var wt []float32
	if use.avx2 && n >= 8 && cin > 0 {
		wide, wt = cout&^7, c.packedWeights()
	}
	// With AVX-512, the blocks of 8 outputs go by whole tiles through the
	// dilated convolution's kernel (dil3AVX512: 8 outputs × 48 pixels in
	// registers), each input channel a (channel, tap) pair of one tap; it
	// starts from the biases. Chunks are then 5 tiles.
	chunk := 256
	var tbl []int
	if wide > 0 && use.avx512 {
		chunk = 5 * tile
		tbl = make([]int, cin)
		for ci := range tbl {
			tbl[ci] = 4 * ci * n
		}
	}
	for p0 := 0; p0 < n; p0 += chunk {
		p1 := min(p0+chunk, n)
		tiles := 0
		if tbl != nil {
			tiles = (p1 - p0) / tile
		}
		start := p0 + tiles*tile // the pixels the tiles leave
		for co := range cout {
			from := p0
			if co < wide {
				from = start
			}
			fill(y.Data[co*n+from:co*n+p1], c.Biases[co])
		}
		if wide > 0 {
			m := (p1 - start) &^ 7
			for co := 0; co < wide; co += 8 {
				if tiles > 0 {
					dil3AVX512(&y.Data[co*n+p0], &x.Data[p0], &wt[co*cin], &tbl[0], &c.Biases[co], cin, n, tiles, c.ReLU)
				}
				if m > 0 {
					point8AVX2(&y.Data[co*n+start], &x.Data[start], &wt[co*cin], cin, n, m, c.ReLU)
				}
				for k := co; k < co+8; k++ {
					c.Act.apply(y.Data[k*n+p0 : k*n+start+m])
					if start+m < p1 {
						one(k, start+m, p1) // the chunk's last pixels, short of a vector
					}
				}
			}
		}
		co := wide
		for ; co+4 <= cout; co += 4 {
			o0 := y.Data[co*n+p0 : co*n+p1]
			o1 := y.Data[(co+1)*n+p0 : (co+1)*n+p1]
			o2 := y.Data[(co+2)*n+p0 : (co+2)*n+p1]
			o3 := y.Data[(co+3)*n+p0 : (co+3)*n+p1]
			ci := 0
			for ; ci+4 <= cin; ci += 4 {
				a := x.Data[ci*n+p0 : ci*n+p1]
				b := x.Data[(ci+1)*n+p0 : (ci+1)*n+p1]
				c := x.Data[(ci+2)*n+p0 : (ci+2)*n+p1]
				d := x.Data[(ci+3)*n+p0 : (ci+3)*n+p1]
				w0 := w[co*cin+ci : co*cin+ci+4]
				w1 := w[(co+1)*cin+ci : (co+1)*cin+ci+4]
				w2 := w[(co+2)*cin+ci : (co+2)*cin+ci+4]
				w3 := w[(co+3)*cin+ci : (co+3)*cin+ci+4]
				w00, w01, w02, w03 := w0[0], w0[1], w0[2], w0[3]
				w10, w11, w12, w13 := w1[0], w1[1], w1[2], w1[3]
				w20, w21, w22, w23 := w2[0], w2[1], w2[2], w2[3]
				w30, w31, w32, w33 := w3[0], w3[1], w3[2], w3[3]
				m := len(a)
				b, c, d = b[:m], c[:m], d[:m]
				o0, o1, o2, o3 := o0[:m], o1[:m], o2[:m], o3[:m]
				for i := range m {
					va, vb, vc, vd := a[i], b[i], c[i], d[i]
					o0[i] += w00*va + w01*vb + w02*vc + w03*vd
					o1[i] += w10*va + w11*vb + w12*vc + w13*vd
					o2[i] += w20*va + w21*vb + w22*vc + w23*vd
					o3[i] += w30*va + w31*vb + w32*vc + w33*vd
				}
			}
			for ; ci < cin; ci++ {
				in := x.Data[ci*n+p0 : ci*n+p1]
				w0, w1, w2, w3 := w[co*cin+ci], w[(co+1)*cin+ci], w[(co+2)*cin+ci], w[(co+3)*cin+ci]
				m := len(in)
				o0, o1, o2, o3 := o0[:m], o1[:m], o2[:m], o3[:m]
				for i, v := range in {
					o0[i] += w0 * v
					o1[i] += w1 * v
					o2[i] += w2 * v
					o3[i] += w3 * v
				}
			}
			done(o0)
			done(o1)
			done(o2)
			done(o3)
		}
		for ; co < cout; co++ {
			one(co, p0, p1)
		}
	}
}
