package cutout

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"carphoto/imageops/internal/nn"
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

// block is a depthwise 3×3 convolution then a pointwise 1×1 one, each followed by ReLU.
type block struct{ dw, pw *nn.Conv }

func newBlock(cin, cout, stride int) block {
	return block{
		dw: &nn.Conv{Kind: nn.Depth3, Cin: cin, Cout: cin, Stride: stride, ReLU: true},
		pw: &nn.Conv{Kind: nn.Point, Cin: cin, Cout: cout, Stride: 1, ReLU: true},
	}
}

func (b block) run(x *nn.Tensor) *nn.Tensor { return b.pw.Apply(b.dw.Apply(x)) }

// network is the small U-Net of train/cutout/train.py. It maps an image whose sides
// are multiples of 32 to car logits at half its resolution.
type network struct {
	widths [5]int
	stem   *nn.Conv
	enc    []block // e1, e2a, e2b, e3a, e3b, e4a, e4b, e5a, e5b, e5c
	dec    []block // d4, d3, d2, d1
	head   *nn.Conv
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
// a tensor count, then each layer's weight and bias tensors in forward order.
func parseNetwork(b []byte) (*network, error) {
	r := nn.NewReader(b)
	if string(r.Bytes(4)) != "CUT1" {
		return nil, errors.New("cutout weights: bad magic")
	}
	if n := r.U32(); n != 5 {
		return nil, fmt.Errorf("cutout weights: %d widths, want 5", n)
	}
	n := &network{}
	for i := range n.widths {
		n.widths[i] = int(r.U32())
	}
	count := int(r.U32())
	w := n.widths
	n.stem = &nn.Conv{Kind: nn.Full3, Cin: 3, Cout: w[0], Stride: 2, ReLU: true}
	n.enc = []block{
		newBlock(w[0], w[0], 1),
		newBlock(w[0], w[1], 2), newBlock(w[1], w[1], 1),
		newBlock(w[1], w[2], 2), newBlock(w[2], w[2], 1),
		newBlock(w[2], w[3], 2), newBlock(w[3], w[3], 1),
		newBlock(w[3], w[4], 2), newBlock(w[4], w[4], 1), newBlock(w[4], w[4], 1),
	}
	n.dec = []block{
		newBlock(w[4]+w[3], w[3], 1),
		newBlock(w[3]+w[2], w[2], 1),
		newBlock(w[2]+w[1], w[1], 1),
		newBlock(w[1]+w[0], w[0], 1),
	}
	n.head = &nn.Conv{Kind: nn.Point, Cin: w[0], Cout: 1, Stride: 1}
	n.stem.Read(r)
	for _, bl := range append(append([]block{}, n.enc...), n.dec...) {
		bl.dw.Read(r)
		bl.pw.Read(r)
	}
	n.head.Read(r)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("cutout weights: %w", err)
	}
	if want := 2 + 2*2*(len(n.enc)+len(n.dec)) + 2; count != want {
		return nil, fmt.Errorf("cutout weights: %d tensors, want %d", count, want)
	}
	if r.Remaining() != 0 {
		return nil, fmt.Errorf("cutout weights: %d trailing bytes", r.Remaining())
	}
	return n, nil
}

// forward runs the network on x (3 normalised channels, sides multiples of 32) and
// returns the logits, one channel at half of x's resolution.
func (n *network) forward(x *plane) *plane {
	s1 := n.enc[0].run(n.stem.Apply(x.tensor()))
	s2 := n.enc[2].run(n.enc[1].run(s1))
	s3 := n.enc[4].run(n.enc[3].run(s2))
	s4 := n.enc[6].run(n.enc[5].run(s3))
	s5 := n.enc[9].run(n.enc[8].run(n.enc[7].run(s4)))
	y := n.dec[0].run(nn.UpConcat(s5, s4))
	y = n.dec[1].run(nn.UpConcat(y, s3))
	y = n.dec[2].run(nn.UpConcat(y, s2))
	y = n.dec[3].run(nn.UpConcat(y, s1))
	out := n.head.Apply(y)
	return &plane{c: out.C, h: out.H, w: out.W, d: out.Data}
}

// tensor is p seen as the network's tensor type, sharing its data.
func (p *plane) tensor() *nn.Tensor { return &nn.Tensor{C: p.c, H: p.h, W: p.w, Data: p.d} }
