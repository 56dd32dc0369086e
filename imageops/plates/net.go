package plates

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// weightsBin is written by train/plates/train.py: the detector network with
// batch norm folded into each convolution.
//
//go:embed weights.bin
var weightsBin []byte

// tensor is a CHW float32 feature map.
type tensor struct {
	c, h, w int
	data    []float32
}

func newTensor(c, h, w int) *tensor {
	return &tensor{c: c, h: h, w: w, data: make([]float32, c*h*w)}
}

func (t *tensor) plane(i int) []float32 { return t.data[i*t.h*t.w : (i+1)*t.h*t.w] }

// conv is one convolution with bias: a full 3x3 (stem), a depthwise 3x3 or
// a pointwise 1x1, optionally followed by ReLU.
type conv struct {
	kind      int // convFull3, convDepth3 or convPoint
	cin, cout int
	stride    int
	relu      bool
	w, b      []float32
}

const (
	convFull3 = iota
	convDepth3
	convPoint
)

// block is a depthwise 3x3 then pointwise 1x1, residual when the shape is kept.
type block struct{ dw, pw *conv }

// net mirrors Net in train/plates/train.py layer for layer.
type net struct {
	stem                                       *conv
	b4a, b4b, b8a, b8b, b16a, b16b, b32a, b32b block
	l32, l16                                   *conv
	m16                                        block
	l8                                         *conv
	m8                                         block
	r8, l4                                     *conv
	m4                                         block
	head                                       *conv
}

func newBlock(cin, cout, stride int) block {
	return block{
		dw: &conv{kind: convDepth3, cin: cin, cout: cin, stride: stride, relu: true},
		pw: &conv{kind: convPoint, cin: cin, cout: cout, stride: 1, relu: true},
	}
}

func point(cin, cout int, relu bool) *conv {
	return &conv{kind: convPoint, cin: cin, cout: cout, stride: 1, relu: relu}
}

// layers returns the convolutions in the order the weights file stores them.
func (n *net) layers() []*conv {
	return []*conv{
		n.stem,
		n.b4a.dw, n.b4a.pw, n.b4b.dw, n.b4b.pw,
		n.b8a.dw, n.b8a.pw, n.b8b.dw, n.b8b.pw,
		n.b16a.dw, n.b16a.pw, n.b16b.dw, n.b16b.pw,
		n.b32a.dw, n.b32a.pw, n.b32b.dw, n.b32b.pw,
		n.l32, n.l16, n.m16.dw, n.m16.pw,
		n.l8, n.m8.dw, n.m8.pw,
		n.r8, n.l4, n.m4.dw, n.m4.pw,
		n.head,
	}
}

func newNet() *net {
	return &net{
		stem: &conv{kind: convFull3, cin: 3, cout: 8, stride: 2, relu: true},
		b4a:  newBlock(8, 24, 2), b4b: newBlock(24, 24, 1),
		b8a: newBlock(24, 48, 2), b8b: newBlock(48, 48, 1),
		b16a: newBlock(48, 64, 2), b16b: newBlock(64, 64, 1),
		b32a: newBlock(64, 96, 2), b32b: newBlock(96, 96, 1),
		l32: point(96, 32, true), l16: point(64, 32, true), m16: newBlock(32, 32, 1),
		l8: point(48, 32, true), m8: newBlock(32, 32, 1),
		r8: point(32, 16, true), l4: point(24, 16, true), m4: newBlock(16, 16, 1),
		head: point(16, 5, false),
	}
}

// parseNet reads the weights file: "PLT1", a tensor count, then per tensor
// its rank, dims and little-endian float32 data (weight, bias per layer).
func parseNet(data []byte) (*net, error) {
	n := newNet()
	if len(data) < 8 || string(data[:4]) != "PLT1" {
		return nil, errors.New("plate weights: bad magic")
	}
	count := int(binary.LittleEndian.Uint32(data[4:]))
	layers := n.layers()
	if count != 2*len(layers) {
		return nil, fmt.Errorf("plate weights: %d tensors, want %d", count, 2*len(layers))
	}
	off := 8
	read := func(want []int) ([]float32, error) {
		if off+4 > len(data) {
			return nil, errors.New("plate weights: truncated")
		}
		rank := int(binary.LittleEndian.Uint32(data[off:]))
		off += 4
		if rank != len(want) || off+4*rank > len(data) {
			return nil, fmt.Errorf("plate weights: rank %d, want %d", rank, len(want))
		}
		size := 1
		for i := range rank {
			d := int(binary.LittleEndian.Uint32(data[off+4*i:]))
			if d != want[i] {
				return nil, fmt.Errorf("plate weights: shape mismatch at dim %d: %d, want %d", i, d, want[i])
			}
			size *= d
		}
		off += 4 * rank
		if off+4*size > len(data) {
			return nil, errors.New("plate weights: truncated")
		}
		v := make([]float32, size)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:]))
		}
		off += 4 * size
		return v, nil
	}
	for _, l := range layers {
		var shape []int
		switch l.kind {
		case convFull3:
			shape = []int{l.cout, l.cin, 3, 3}
		case convDepth3:
			shape = []int{l.cout, 1, 3, 3}
		default:
			shape = []int{l.cout, l.cin, 1, 1}
		}
		var err error
		if l.w, err = read(shape); err != nil {
			return nil, err
		}
		if l.b, err = read([]int{l.cout}); err != nil {
			return nil, err
		}
	}
	if off != len(data) {
		return nil, errors.New("plate weights: trailing bytes")
	}
	return n, nil
}

var (
	loadOnce   sync.Once
	loadedNet  *net
	loadNetErr error
)

// embeddedNet parses the embedded weights once.
func embeddedNet() (*net, error) {
	loadOnce.Do(func() { loadedNet, loadNetErr = parseNet(weightsBin) })
	return loadedNet, loadNetErr
}

// forward runs the network on x (3 channels, sides multiples of 32) and
// returns the head: channel 0 the plate logit, 1..4 log distances (in
// strides) to the box's left, top, right and bottom edges.
func (n *net) forward(ctx context.Context, x *tensor) (*tensor, error) {
	steps := []func(){}
	var f4, f8, f16, f32, p *tensor
	steps = append(steps,
		func() { x = n.stem.apply(x) },
		func() { f4 = n.b4b.apply(n.b4a.apply(x)) },
		func() { f8 = n.b8b.apply(n.b8a.apply(f4)) },
		func() { f16 = n.b16b.apply(n.b16a.apply(f8)) },
		func() { f32 = n.b32b.apply(n.b32a.apply(f16)) },
		func() { p = n.m16.apply(upAdd(n.l16.apply(f16), n.l32.apply(f32))) },
		func() { p = n.r8.apply(n.m8.apply(upAdd(n.l8.apply(f8), p))) },
		func() { p = n.head.apply(n.m4.apply(upAdd(n.l4.apply(f4), p))) },
	)
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s()
	}
	return p, nil
}

func (b block) apply(x *tensor) *tensor {
	y := b.pw.apply(b.dw.apply(x))
	if b.dw.stride == 1 && b.pw.cin == b.pw.cout {
		for i, v := range x.data {
			y.data[i] += v
		}
	}
	return y
}

// upAdd adds the nearest-neighbour 2x upsampling of small to big, in place.
func upAdd(big, small *tensor) *tensor {
	for c := range big.c {
		bp, sp := big.plane(c), small.plane(c)
		for y := range big.h {
			brow := bp[y*big.w : (y+1)*big.w]
			srow := sp[(y/2)*small.w : (y/2+1)*small.w]
			for x := range brow {
				brow[x] += srow[x/2]
			}
		}
	}
	return big
}

func (l *conv) apply(x *tensor) *tensor {
	oh, ow := x.h, x.w
	if l.stride == 2 {
		oh, ow = (x.h+1)/2, (x.w+1)/2
	}
	y := newTensor(l.cout, oh, ow)
	switch l.kind {
	case convFull3:
		for co := range l.cout {
			dst := y.plane(co)
			for ci := range l.cin {
				var k [9]float32
				copy(k[:], l.w[(co*l.cin+ci)*9:])
				conv3(dst, x.plane(ci), x.h, x.w, oh, ow, l.stride, &k)
			}
		}
	case convDepth3:
		for c := range l.cout {
			var k [9]float32
			copy(k[:], l.w[c*9:])
			conv3(y.plane(c), x.plane(c), x.h, x.w, oh, ow, l.stride, &k)
		}
	default:
		pointwise(y, x, l.w)
	}
	for c := range l.cout {
		b := l.b[c]
		p := y.plane(c)
		if l.relu {
			for i, v := range p {
				p[i] = max(v+b, 0)
			}
		} else {
			for i, v := range p {
				p[i] = v + b
			}
		}
	}
	return y
}

// conv3 adds the 3x3 convolution (padding 1) of src into dst.
func conv3(dst, src []float32, h, w, oh, ow, stride int, k *[9]float32) {
	for oy := range oh {
		drow := dst[oy*ow : (oy+1)*ow]
		for ky := range 3 {
			iy := oy*stride - 1 + ky
			if iy < 0 || iy >= h {
				continue
			}
			srow := src[iy*w : (iy+1)*w]
			k0, k1, k2 := k[ky*3], k[ky*3+1], k[ky*3+2]
			if stride == 1 {
				// Column 0 and ow-1 lack a neighbour.
				drow[0] += k1*srow[0] + k2*srow[min(1, w-1)]*b2f(w > 1)
				if ow > 1 {
					drow[ow-1] += k0*srow[ow-2] + k1*srow[ow-1]
				}
				if ow > 2 {
					d := drow[1 : ow-1]
					a := srow[0 : ow-2]
					b := srow[1 : ow-1]
					c := srow[2:ow]
					_ = a[len(d)-1]
					_ = b[len(d)-1]
					_ = c[len(d)-1]
					for i := range d {
						d[i] += k0*a[i] + k1*b[i] + k2*c[i]
					}
				}
				continue
			}
			// Stride 2: output x reads input 2x-1, 2x, 2x+1.
			drow[0] += k1*srow[0] + k2*srow[min(1, w-1)]*b2f(w > 1)
			for ox := 1; ox < ow; ox++ {
				ix := 2*ox - 1
				v := k0 * srow[ix]
				if ix+1 < w {
					v += k1 * srow[ix+1]
				}
				if ix+2 < w {
					v += k2 * srow[ix+2]
				}
				drow[ox] += v
			}
		}
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// pointwise sets y = W·x over channels (a 1x1 convolution without bias),
// in column chunks that stay in cache, four output by four input channels
// at a time so that each loaded value feeds four multiply-adds.
func pointwise(y, x *tensor, w []float32) {
	const chunk = 256
	n := x.h * x.w
	cin, cout := x.c, y.c
	for p0 := 0; p0 < n; p0 += chunk {
		p1 := min(p0+chunk, n)
		co := 0
		for ; co+4 <= cout; co += 4 {
			o0 := y.data[co*n+p0 : co*n+p1]
			o1 := y.data[(co+1)*n+p0 : (co+1)*n+p1]
			o2 := y.data[(co+2)*n+p0 : (co+2)*n+p1]
			o3 := y.data[(co+3)*n+p0 : (co+3)*n+p1]
			ci := 0
			for ; ci+4 <= cin; ci += 4 {
				a := x.data[ci*n+p0 : ci*n+p1]
				b := x.data[(ci+1)*n+p0 : (ci+1)*n+p1]
				c := x.data[(ci+2)*n+p0 : (ci+2)*n+p1]
				d := x.data[(ci+3)*n+p0 : (ci+3)*n+p1]
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
				in := x.data[ci*n+p0 : ci*n+p1]
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
		}
		for ; co < cout; co++ {
			o := y.data[co*n+p0 : co*n+p1]
			for ci := range cin {
				in := x.data[ci*n+p0 : ci*n+p1]
				wv := w[co*cin+ci]
				o := o[:len(in)]
				for i, v := range in {
					o[i] += wv * v
				}
			}
		}
	}
}
