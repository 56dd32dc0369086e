package plates

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"carphoto/imageops/internal/nn"
)

// weightsBin is written by train/plates/train.py: the detector network with
// batch norm folded into each convolution.
//
//go:embed weights.bin
var weightsBin []byte

// block is a depthwise 3x3 then pointwise 1x1, residual when the shape is kept.
type block struct{ dw, pw *nn.Conv }

// net mirrors Net in train/plates/train.py layer for layer.
type net struct {
	stem                                       *nn.Conv
	b4a, b4b, b8a, b8b, b16a, b16b, b32a, b32b block
	l32, l16                                   *nn.Conv
	m16                                        block
	l8                                         *nn.Conv
	m8                                         block
	r8, l4                                     *nn.Conv
	m4                                         block
	head                                       *nn.Conv
}

func newBlock(cin, cout, stride int) block {
	return block{
		dw: &nn.Conv{Kind: nn.Depth3, Cin: cin, Cout: cin, Stride: stride, ReLU: true},
		pw: &nn.Conv{Kind: nn.Point, Cin: cin, Cout: cout, Stride: 1, ReLU: true},
	}
}

func point(cin, cout int, relu bool) *nn.Conv {
	return &nn.Conv{Kind: nn.Point, Cin: cin, Cout: cout, Stride: 1, ReLU: relu}
}

// layers returns the convolutions in the order the weights file stores them.
func (n *net) layers() []*nn.Conv {
	return []*nn.Conv{
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

// widths is the first stage's shape, as LAYOUTS in train/plates/train.py:
// the stem's channels, the backbone's at strides 4, 8, 16 and 32, the
// pyramid's at strides 8-32 and at stride 4, and the weights file's magic,
// which says which widths a file holds.
type widths struct {
	magic                         string
	stem, c4, c8, c16, c32, f, f4 int
}

var netWidths = []widths{
	{magic: "PLT1", stem: 8, c4: 24, c8: 48, c16: 64, c32: 96, f: 32, f4: 16},
	{magic: "PLT2", stem: 12, c4: 32, c8: 64, c16: 96, c32: 128, f: 48, f4: 24},
}

func newNet(w widths) *net {
	return &net{
		stem: &nn.Conv{Kind: nn.Full3, Cin: 3, Cout: w.stem, Stride: 2, ReLU: true},
		b4a:  newBlock(w.stem, w.c4, 2), b4b: newBlock(w.c4, w.c4, 1),
		b8a: newBlock(w.c4, w.c8, 2), b8b: newBlock(w.c8, w.c8, 1),
		b16a: newBlock(w.c8, w.c16, 2), b16b: newBlock(w.c16, w.c16, 1),
		b32a: newBlock(w.c16, w.c32, 2), b32b: newBlock(w.c32, w.c32, 1),
		l32: point(w.c32, w.f, true), l16: point(w.c16, w.f, true), m16: newBlock(w.f, w.f, 1),
		l8: point(w.c8, w.f, true), m8: newBlock(w.f, w.f, 1),
		r8: point(w.f, w.f4, true), l4: point(w.c4, w.f4, true), m4: newBlock(w.f4, w.f4, 1),
		head: point(w.f4, 5, false),
	}
}

// parseNet reads the weights file: the magic of one of netWidths, a tensor
// count, then each layer's weight and bias tensors (see nn.Reader).
func parseNet(data []byte) (*net, error) {
	for _, w := range netWidths {
		if len(data) >= 4 && string(data[:4]) == w.magic {
			n := newNet(w)
			if err := readLayers(data, w.magic, "plate weights", n.layers()); err != nil {
				return nil, err
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("plate weights: bad magic")
}

// readLayers fills layers from a weights file: the magic, a tensor count,
// then each layer's weight and bias tensors, and nothing after them.
func readLayers(data []byte, magic, what string, layers []*nn.Conv) error {
	r := nn.NewReader(data)
	if string(r.Bytes(4)) != magic {
		return fmt.Errorf("%s: bad magic", what)
	}
	if count := int(r.U32()); count != 2*len(layers) {
		return fmt.Errorf("%s: %d tensors, want %d", what, count, 2*len(layers))
	}
	for _, l := range layers {
		l.Read(r)
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if r.Remaining() != 0 {
		return fmt.Errorf("%s: trailing bytes", what)
	}
	return nil
}

var (
	loadOnce   sync.Once
	loadedNet  *net
	loadedJury jury
	loadErr    error
)

// embedded parses the embedded first stage and jury once and gives their
// integer layers their calibrated ranges (useInt).
func embedded() (*net, jury, error) {
	loadOnce.Do(func() {
		if loadedNet, loadErr = parseNet(weightsBin); loadErr != nil {
			return
		}
		if loadedJury, loadErr = parseJury([][]byte{verifierBin}); loadErr != nil {
			return
		}
		useInt(loadedNet, loadedJury)
	})
	return loadedNet, loadedJury, loadErr
}

// embeddedNet is the embedded first stage.
func embeddedNet() (*net, error) {
	n, _, err := embedded()
	return n, err
}

// forward runs the network on x (3 channels, sides multiples of 32) and
// returns the head: channel 0 the plate logit, 1..4 log distances (in
// strides) to the box's left, top, right and bottom edges. Each layer's
// output is freed for reuse (nn.Free) once nothing reads it; x is not.
func (n *net) forward(ctx context.Context, x *nn.Tensor) (*nn.Tensor, error) {
	// then applies a layer to a tensor read by nothing else.
	then := func(f func(*nn.Tensor) *nn.Tensor, x *nn.Tensor) *nn.Tensor {
		y := f(x)
		nn.Free(x)
		return y
	}
	// merge adds the coarser map p, upsampled, to the lateral l(f), frees
	// p and f, and returns the sum.
	merge := func(l *nn.Conv, f, p *nn.Tensor) *nn.Tensor {
		sum := nn.UpAdd(l.Apply(f), p)
		nn.Free(f, p)
		return sum
	}
	var f4, f8, f16, f32, p *nn.Tensor
	for _, step := range []func(){
		func() { f4 = then(n.b4b.apply, then(n.b4a.apply, n.stem.Apply(x))) },
		func() { f8 = then(n.b8b.apply, n.b8a.apply(f4)) },
		func() { f16 = then(n.b16b.apply, n.b16a.apply(f8)) },
		func() { f32 = then(n.b32b.apply, n.b32a.apply(f16)) },
		func() { p = then(n.m16.apply, merge(n.l16, f16, then(n.l32.Apply, f32))) },
		func() { p = then(n.r8.Apply, then(n.m8.apply, merge(n.l8, f8, p))) },
		func() { p = then(n.head.Apply, then(n.m4.apply, merge(n.l4, f4, p))) },
	} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		step()
	}
	return p, nil
}

func (b block) apply(x *nn.Tensor) *nn.Tensor {
	t := b.dw.Apply(x)
	y := b.pw.Apply(t)
	nn.Free(t)
	if b.dw.Stride == 1 && b.pw.Cin == b.pw.Cout {
		for i, v := range x.Data {
			y.Data[i] += v
		}
	}
	return y
}
