package carseg

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"carphoto/imageops/internal/nn"
)

// weightsBin is DeepLabv3-MobileNetV2 (PASCAL VOC) converted from its
// quantised TFLite file by train/carseg/convert.py: uint8 weights with their
// scale and zero point, float32 biases.
//
//go:embed deeplabv3_mnv2.bin
var weightsBin []byte

// block is one of MobileNetV2's inverted residuals: a 1×1 expansion with
// ReLU6 (none in the first block), a 3×3 depthwise convolution with ReLU6
// (at stride 2, or dilation 2 as a 5×5 kernel), a linear 1×1 projection,
// and the block's input added where the shapes are equal.
type block struct {
	expand, dw, project *nn.Conv
	residual            bool
}

// net is the whole network: the stem (3×3 at stride 2, ReLU6), the blocks,
// and DeepLabv3's head: a 1×1 branch with ReLU, an image-pooling branch
// (the global mean through a 1×1 with ReLU, broadcast), the two
// concatenated and projected by a 1×1 with ReLU, then a 1×1 to the class
// scores. Since the pooled branch is the same at every pixel, its part of
// the projection is worked out once, as a bias: proj holds the projection's
// weights on the 1×1 branch, projPool those on the pooled one.
type net struct {
	stem           *nn.Conv
	blocks         []block
	branch, pool   *nn.Conv
	proj           *nn.Conv
	projPool       []float32 // head×head, output-major
	logits         *nn.Conv
	head, nclasses int
}

var (
	loadOnce sync.Once
	loaded   *net
	loadErr  error
)

// embeddedNet parses the embedded weights once.
func embeddedNet() (*net, error) {
	loadOnce.Do(func() { loaded, loadErr = parseNet(weightsBin) })
	return loaded, loadErr
}

// parseNet reads a "CSG1" weights file (train/carseg/convert.py).
func parseNet(b []byte) (*net, error) {
	r := nn.NewReader(b)
	if string(r.Bytes(4)) != "CSG1" {
		return nil, fmt.Errorf("car segmenter weights: not a CSG1 file")
	}
	n := &net{}
	stemC, nblocks := int(r.U32()), int(r.U32())
	if nblocks < 1 || nblocks > 64 || stemC < 1 || stemC > 1024 {
		return nil, fmt.Errorf("car segmenter weights: %d blocks, stem %d", nblocks, stemC)
	}
	type shape struct{ cin, hidden, cout, expands, stride, dilation int }
	shapes := make([]shape, nblocks)
	for i := range shapes {
		s := &shapes[i]
		s.cin, s.hidden, s.cout = int(r.U32()), int(r.U32()), int(r.U32())
		s.expands, s.stride, s.dilation = int(r.U32()), int(r.U32()), int(r.U32())
		if s.stride < 1 || s.stride > 2 || s.dilation < 1 || s.dilation > 2 || s.stride*s.dilation > 2 {
			return nil, fmt.Errorf("car segmenter weights: block %d stride %d dilation %d", i, s.stride, s.dilation)
		}
	}
	n.head, n.nclasses = int(r.U32()), int(r.U32())
	if n.nclasses != len(voc) {
		return nil, fmt.Errorf("car segmenter weights: %d classes, want %d", n.nclasses, len(voc))
	}
	relu6 := nn.Act{Kind: nn.ReLU6}
	read := func(c *nn.Conv) *nn.Conv {
		c.Weights = r.Quantised(c.WeightShape()...)
		c.Biases = r.Floats(c.Cout)
		// The input's range as TFLite quantised it: the pointwise layers
		// run on integers over it (nn.SetIntegers).
		lo, hi := r.F32(), r.F32()
		if c.Kind == nn.Point && hi > lo {
			c.InRange = []nn.Range{{Lo: lo, Hi: hi}}
		}
		return c
	}
	n.stem = read(&nn.Conv{Kind: nn.Full3, Cin: 3, Cout: stemC, Stride: 2, Act: relu6})
	cin := stemC
	for i, s := range shapes {
		if s.cin != cin {
			return nil, fmt.Errorf("car segmenter weights: block %d takes %d channels, given %d", i, s.cin, cin)
		}
		var blk block
		if s.expands == 1 {
			blk.expand = read(&nn.Conv{Kind: nn.Point, Cin: s.cin, Cout: s.hidden, Stride: 1, Act: relu6})
		} else if s.hidden != s.cin {
			return nil, fmt.Errorf("car segmenter weights: block %d widens without expanding", i)
		}
		blk.dw = read(&nn.Conv{Kind: nn.Depth3, Cin: s.hidden, Cout: s.hidden, Stride: s.stride, Act: relu6})
		if s.dilation == 2 {
			blk.dw.Kind, blk.dw.Weights = nn.Depth5, nn.Dilated2As5(blk.dw.Weights, s.hidden)
		}
		blk.project = read(&nn.Conv{Kind: nn.Point, Cin: s.hidden, Cout: s.cout, Stride: 1})
		blk.residual = s.stride == 1 && s.cin == s.cout
		n.blocks = append(n.blocks, blk)
		cin = s.cout
	}
	n.branch = read(&nn.Conv{Kind: nn.Point, Cin: cin, Cout: n.head, Stride: 1, ReLU: true})
	n.pool = read(&nn.Conv{Kind: nn.Point, Cin: cin, Cout: n.head, Stride: 1, ReLU: true})
	whole := read(&nn.Conv{Kind: nn.Point, Cin: 2 * n.head, Cout: n.head, Stride: 1})
	n.logits = read(&nn.Conv{Kind: nn.Point, Cin: n.head, Cout: n.nclasses, Stride: 1})
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("car segmenter weights: %w", err)
	}
	if r.Remaining() != 0 {
		return nil, fmt.Errorf("car segmenter weights: %d bytes left over", r.Remaining())
	}
	// The concatenation is the pooled branch first, then the 1×1 branch.
	h := n.head
	n.proj = &nn.Conv{Kind: nn.Point, Cin: h, Cout: h, Stride: 1, Biases: whole.Biases, Weights: make([]float32, h*h)}
	n.projPool = make([]float32, h*h)
	for co := range h {
		copy(n.projPool[co*h:(co+1)*h], whole.Weights[co*2*h:co*2*h+h])
		copy(n.proj.Weights[co*h:(co+1)*h], whole.Weights[co*2*h+h:(co+1)*2*h])
	}
	return n, nil
}

// forward runs the network on x (3×s×s, s − 1 a multiple of 16) and
// returns the class scores at the features' side, (s − 1)/16 + 1. It
// checks ctx between blocks.
func (n *net) forward(ctx context.Context, x *nn.Tensor) (*nn.Tensor, error) {
	y := n.stem.Apply(x)
	nn.Free(x)
	for _, b := range n.blocks {
		if err := ctx.Err(); err != nil {
			nn.Free(y)
			return nil, err
		}
		in := y
		if b.expand != nil {
			y = b.expand.Apply(in)
		}
		d := b.dw.Apply(y)
		if y != in {
			nn.Free(y)
		}
		y = b.project.Apply(d)
		nn.Free(d)
		if b.residual {
			nn.Add(y, in)
		}
		nn.Free(in)
	}
	if err := ctx.Err(); err != nil {
		nn.Free(y)
		return nil, err
	}
	means := nn.Mean(y)
	pooled := n.pool.Apply(means)
	nn.Free(means)
	branch := n.branch.Apply(y)
	nn.Free(y)
	p := n.proj.Apply(branch)
	nn.Free(branch)
	// The pooled branch's share of the projection, then its ReLU.
	h, px := n.head, p.H*p.W
	for co := range h {
		var s float32
		for ci, v := range pooled.Data {
			s += n.projPool[co*h+ci] * v
		}
		plane := p.Data[co*px : (co+1)*px]
		for i, v := range plane {
			plane[i] = max(v+s, 0)
		}
	}
	nn.Free(pooled)
	out := n.logits.Apply(p)
	nn.Free(p)
	return out, nil
}

// classes upsamples the class scores to side×side (bilinear, corners
// aligned, as the graph does) and returns each pixel's most likely class.
// The scores' storage is given back.
func classes(scores *nn.Tensor, side int) []Class {
	up := nn.ResizeAligned(scores, side, side)
	nn.Free(scores)
	defer nn.Free(up)
	n := side * side
	best := make([]float32, n)
	arg := make([]uint8, n)
	copy(best, up.Plane(0))
	for c := 1; c < up.C; c++ {
		for i, v := range up.Plane(c) {
			if v > best[i] {
				best[i], arg[i] = v, uint8(c)
			}
		}
	}
	out := make([]Class, n)
	for i, a := range arg {
		out[i] = voc[a]
	}
	return out
}
