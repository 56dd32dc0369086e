package cutout

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// weightsBin is the trained network, written by train/cutout/train.py.
//
//go:embed weights.bin
var weightsBin []byte

// Input normalisation used in training: x = (rgb/255 - inMean) / inStd.
const (
	inMean = 0.5
	inStd  = 0.25
)

// plane is a stack of c float32 planes of h×w, channel-major.
type plane struct {
	c, h, w int
	d       []float32
}

func newPlane(c, h, w int) *plane {
	return &plane{c: c, h: h, w: w, d: make([]float32, c*h*w)}
}

func (p *plane) ch(i int) []float32 { return p.d[i*p.h*p.w : (i+1)*p.h*p.w] }

// conv holds a convolution with BatchNorm folded in: weights and a bias per output channel.
type conv struct {
	w, b []float32
}

// block is a depthwise 3×3 convolution then a pointwise 1×1 one, each followed by ReLU.
type block struct {
	cin, cout, stride int
	dw, pw            conv
}

// network is the small U-Net of train/cutout/train.py. It maps an image whose sides
// are multiples of 32 to car logits at half its resolution.
type network struct {
	widths [5]int
	stem   conv
	enc    []block // e1, e2a, e2b, e3a, e3b, e4a, e4b, e5a, e5b, e5c
	dec    []block // d4, d3, d2, d1
	head   conv
}

var (
	loadOnce   sync.Once
	loadedNet  *network
	loadNetErr error
)

// model returns the embedded network, parsed once.
func model() (*network, error) {
	loadOnce.Do(func() { loadedNet, loadNetErr = parseNetwork(weightsBin) })
	return loadedNet, loadNetErr
}

// parseNetwork reads the file written by train.py's export: "CUT1", the five widths,
// then tensors (rank, dims, little-endian float32 data) in forward order.
func parseNetwork(b []byte) (*network, error) {
	r := &reader{b: b}
	if string(r.bytes(4)) != "CUT1" {
		return nil, errors.New("cutout weights: bad magic")
	}
	if n := r.u32(); n != 5 {
		return nil, fmt.Errorf("cutout weights: %d widths, want 5", n)
	}
	n := &network{}
	for i := range n.widths {
		n.widths[i] = int(r.u32())
	}
	count := int(r.u32())
	w := n.widths
	tensor := func(shape ...int) []float32 {
		if r.err != nil {
			return nil
		}
		rank := int(r.u32())
		if rank != len(shape) {
			r.err = fmt.Errorf("tensor rank %d, want %d", rank, len(shape))
			return nil
		}
		size := 1
		for i := range shape {
			if d := int(r.u32()); d != shape[i] {
				r.err = fmt.Errorf("tensor shape dim %d is %d, want %d", i, d, shape[i])
				return nil
			}
			size *= shape[i]
		}
		raw := r.bytes(4 * size)
		if raw == nil {
			return nil
		}
		out := make([]float32, size)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out
	}
	mkBlock := func(cin, cout, stride int) block {
		return block{cin: cin, cout: cout, stride: stride,
			dw: conv{w: tensor(cin, 1, 3, 3), b: tensor(cin)},
			pw: conv{w: tensor(cout, cin, 1, 1), b: tensor(cout)}}
	}
	n.stem = conv{w: tensor(w[0], 3, 3, 3), b: tensor(w[0])}
	n.enc = []block{
		mkBlock(w[0], w[0], 1),
		mkBlock(w[0], w[1], 2), mkBlock(w[1], w[1], 1),
		mkBlock(w[1], w[2], 2), mkBlock(w[2], w[2], 1),
		mkBlock(w[2], w[3], 2), mkBlock(w[3], w[3], 1),
		mkBlock(w[3], w[4], 2), mkBlock(w[4], w[4], 1), mkBlock(w[4], w[4], 1),
	}
	n.dec = []block{
		mkBlock(w[4]+w[3], w[3], 1),
		mkBlock(w[3]+w[2], w[2], 1),
		mkBlock(w[2]+w[1], w[1], 1),
		mkBlock(w[1]+w[0], w[0], 1),
	}
	n.head = conv{w: tensor(1, w[0], 1, 1), b: tensor(1)}
	if r.err != nil {
		return nil, fmt.Errorf("cutout weights: %w", r.err)
	}
	if want := 2 + 2*2*(len(n.enc)+len(n.dec)) + 2; count != want {
		return nil, fmt.Errorf("cutout weights: %d tensors, want %d", count, want)
	}
	if len(r.b) != r.off {
		return nil, fmt.Errorf("cutout weights: %d trailing bytes", len(r.b)-r.off)
	}
	return n, nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if r.off+n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// forward runs the network on x (3 normalised channels, sides multiples of 32) and
// returns the logits, one channel at half of x's resolution.
func (n *network) forward(x *plane) *plane {
	s1 := n.enc[0].run(stem(x, n.stem))
	s2 := n.enc[2].run(n.enc[1].run(s1))
	s3 := n.enc[4].run(n.enc[3].run(s2))
	s4 := n.enc[6].run(n.enc[5].run(s3))
	s5 := n.enc[9].run(n.enc[8].run(n.enc[7].run(s4)))
	y := n.dec[0].run(upConcat(s5, s4))
	y = n.dec[1].run(upConcat(y, s3))
	y = n.dec[2].run(upConcat(y, s2))
	y = n.dec[3].run(upConcat(y, s1))
	out := newPlane(1, y.h, y.w)
	pointwise(out, y, n.head, false)
	return out
}

// stem is the dense 3×3 stride-2 convolution from RGB, with ReLU.
func stem(x *plane, c conv) *plane {
	cout := len(c.b)
	out := newPlane(cout, x.h/2, x.w/2)
	for o := 0; o < cout; o++ {
		dst := out.ch(o)
		fill(dst, c.b[o])
		for i := 0; i < x.c; i++ {
			acc3x3(dst, x.ch(i), x.h, x.w, c.w[(o*x.c+i)*9:(o*x.c+i)*9+9], 2)
		}
		relu(dst)
	}
	return out
}

func (b *block) run(x *plane) *plane {
	mid := newPlane(x.c, x.h/b.stride, x.w/b.stride)
	for c := 0; c < x.c; c++ {
		dst := mid.ch(c)
		fill(dst, b.dw.b[c])
		acc3x3(dst, x.ch(c), x.h, x.w, b.dw.w[c*9:c*9+9], b.stride)
		relu(dst)
	}
	out := newPlane(b.cout, mid.h, mid.w)
	pointwise(out, mid, b.pw, true)
	return out
}

// upConcat returns [nearest 2× upsampling of a, skip] stacked by channel.
func upConcat(a, skip *plane) *plane {
	out := newPlane(a.c+skip.c, skip.h, skip.w)
	for c := 0; c < a.c; c++ {
		src, dst := a.ch(c), out.ch(c)
		for y := 0; y < skip.h; y++ {
			srow := src[(y/2)*a.w : (y/2+1)*a.w]
			drow := dst[y*skip.w : (y+1)*skip.w]
			for x := range drow {
				drow[x] = srow[x/2]
			}
		}
	}
	copy(out.d[a.c*skip.h*skip.w:], skip.d)
	return out
}

// acc3x3 adds a 3×3 convolution (zero padding 1, the given stride) of one input
// plane of h×w to one output plane of (h/stride)×(w/stride).
func acc3x3(dst, src []float32, h, w int, k []float32, stride int) {
	if stride == 1 {
		for y := 0; y < h; y++ {
			drow := dst[y*w : (y+1)*w]
			for ky := 0; ky < 3; ky++ {
				iy := y + ky - 1
				if iy < 0 || iy >= h {
					continue
				}
				srow := src[iy*w : (iy+1)*w]
				k0, k1, k2 := k[ky*3], k[ky*3+1], k[ky*3+2]
				// kx = 1: same column.
				for x, v := range srow {
					drow[x] += k1 * v
				}
				// kx = 0: the column to the left.
				d := drow[1:]
				for x, v := range srow[:w-1] {
					d[x] += k0 * v
				}
				// kx = 2: the column to the right.
				s := srow[1:]
				for x, v := range s {
					drow[x] += k2 * v
				}
			}
		}
		return
	}
	oh, ow := h/2, w/2
	for y := 0; y < oh; y++ {
		drow := dst[y*ow : (y+1)*ow]
		for ky := 0; ky < 3; ky++ {
			iy := 2*y + ky - 1
			if iy < 0 || iy >= h {
				continue
			}
			srow := src[iy*w : (iy+1)*w]
			k0, k1, k2 := k[ky*3], k[ky*3+1], k[ky*3+2]
			drow[0] += k1*srow[0] + k2*srow[1]
			for x := 1; x < ow; x++ {
				i := 2*x - 1
				drow[x] += k0*srow[i] + k1*srow[i+1] + k2*srow[i+2]
			}
		}
	}
}

// pointwise computes out = W·x + b over channels (a 1×1 convolution), with optional ReLU.
func pointwise(out, x *plane, c conv, withReLU bool) {
	cin := x.c
	hw := x.h * x.w
	o := 0
	for ; o+4 <= out.c; o += 4 {
		d0, d1, d2, d3 := out.ch(o), out.ch(o+1), out.ch(o+2), out.ch(o+3)
		fill(d0, c.b[o])
		fill(d1, c.b[o+1])
		fill(d2, c.b[o+2])
		fill(d3, c.b[o+3])
		for i := 0; i < cin; i++ {
			w0, w1, w2, w3 := c.w[o*cin+i], c.w[(o+1)*cin+i], c.w[(o+2)*cin+i], c.w[(o+3)*cin+i]
			s := x.d[i*hw : (i+1)*hw]
			d0, d1, d2, d3 := d0[:len(s)], d1[:len(s)], d2[:len(s)], d3[:len(s)]
			for p, v := range s {
				d0[p] += w0 * v
				d1[p] += w1 * v
				d2[p] += w2 * v
				d3[p] += w3 * v
			}
		}
	}
	for ; o < out.c; o++ {
		d := out.ch(o)
		fill(d, c.b[o])
		for i := 0; i < cin; i++ {
			w := c.w[o*cin+i]
			s := x.d[i*hw : (i+1)*hw]
			d = d[:len(s)]
			for p, v := range s {
				d[p] += w * v
			}
		}
	}
	if withReLU {
		relu(out.d)
	}
}

func fill(d []float32, v float32) {
	for i := range d {
		d[i] = v
	}
}

func relu(d []float32) {
	for i, v := range d {
		if v < 0 {
			d[i] = 0
		}
	}
}
