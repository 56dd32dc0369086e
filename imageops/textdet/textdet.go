// Package textdet finds lines of text in a photo with PP-OCRv4's text
// detector (DBNet on PP-LCNetV3, PaddleOCR's weights), run in Go on the
// project's inference kit: a text-probability map at the working resolution,
// then regions of it as rotated boxes in the photo's pixels. The plate finder
// may use its regions as plate proposals; the detector reads any text, not
// plates only.
package textdet

import (
	"context"
	"fmt"
	"image"
	"math"

	"carphoto/imageops/internal/nn"
)

// The region rule, DB's post-processing with PaddleOCR's defaults except the
// score: pixels above Threshold form regions (8-connected), a region is kept
// when its mean probability is at least MinScore, and its minimum-area
// rectangle is grown on every side by area × Unclip / perimeter (DB's
// "unclip", which undoes the shrinking of the text its training targets
// had). Regions whose rectangle is narrower than MinSide working pixels
// before growing are dropped as noise.
const (
	Threshold = 0.3
	MinScore  = 0.5
	Unclip    = 1.5
	MinSide   = 3
)

// Point is a position in pixels of the photo given to Find.
type Point struct{ X, Y float64 }

// Quad is a region's four corners, clockwise from the top-left one.
type Quad [4]Point

// Bounds returns the smallest integer rectangle that holds the quad.
func (q Quad) Bounds() image.Rectangle {
	lo, hi := q[0], q[0]
	for _, p := range q[1:] {
		lo = Point{min(lo.X, p.X), min(lo.Y, p.Y)}
		hi = Point{max(hi.X, p.X), max(hi.Y, p.Y)}
	}
	return image.Rect(int(math.Floor(lo.X)), int(math.Floor(lo.Y)), int(math.Ceil(hi.X)), int(math.Ceil(hi.Y)))
}

// Region is one line (or block) of text.
type Region struct {
	// Quad is the text's rotated box, grown by the unclip rule, in photo
	// pixels and clipped to the photo.
	Quad Quad
	// Score is the mean text probability over the region's pixels.
	Score float64
}

// Map is the network's text probability at each pixel of its working
// image: the photo resized to W×H, each a multiple of 32. Working pixel
// (x, y) covers the photo from Origin + (x·Sx, y·Sy) to Origin + ((x+1)·Sx,
// (y+1)·Sy).
type Map struct {
	W, H   int
	P      []float32 // P[y·W+x]
	Sx, Sy float64
	Origin image.Point
}

// Find returns the text regions of img, run at a working size whose long
// side is about side pixels (640 to 960 suit photos; the text must be some
// 8 working pixels tall to be found), strongest first.
func Find(ctx context.Context, img image.Image, side int) ([]Region, error) {
	m, err := Probabilities(ctx, img, side)
	if err != nil {
		return nil, err
	}
	return m.Regions(), nil
}

// Probabilities runs the network on img resized so its long side is about
// side pixels (each side rounded to a multiple of 32) and returns its
// text-probability map. It checks ctx between layers.
func Probabilities(ctx context.Context, img image.Image, side int) (*Map, error) {
	b := img.Bounds()
	if b.Empty() {
		return nil, fmt.Errorf("text detection: empty image")
	}
	if side < 32 {
		return nil, fmt.Errorf("text detection: side %d, want at least 32", side)
	}
	n, err := embeddedNet()
	if err != nil {
		return nil, err
	}
	w, h := inputSize(b.Dx(), b.Dy(), side)
	x := prepare(img, w, h)
	out, err := n.forward(ctx, x)
	nn.Free(x)
	if err != nil {
		return nil, err
	}
	m := &Map{W: w, H: h, P: make([]float32, w*h), Sx: float64(b.Dx()) / float64(w), Sy: float64(b.Dy()) / float64(h), Origin: b.Min}
	copy(m.P, out.Data)
	nn.Free(out)
	return m, nil
}

// inputSize is the working size for a w×h photo: the long side side, each
// side rounded to the nearest multiple of 32, at least 32 (as PaddleOCR's
// DetResizeForTest does with limit_type "max").
func inputSize(w, h, side int) (int, int) {
	s := float64(side) / float64(max(w, h))
	round := func(v int) int { return max(32, int(math.Round(float64(v)*s/32))*32) }
	return round(w), round(h)
}

// The network's normalisation. PaddleOCR feeds photos in OpenCV's order,
// blue first, normalised by ImageNet's statistics in the order listed: the
// weights were trained so.
var (
	mean = [3]float32{0.485, 0.456, 0.406}
	std  = [3]float32{0.229, 0.224, 0.225}
)

// prepare resamples img to w×h (bilinear when enlarging, the mean of a grid
// of up to 4×4 samples a pixel when shrinking) and normalises it: planes
// blue, green, red.
func prepare(img image.Image, w, h int) *nn.Tensor {
	b := img.Bounds()
	t := nn.NewTensor(3, h, w)
	xs := samples(b.Dx(), w, b.Min.X)
	ys := samples(b.Dy(), h, b.Min.Y)
	px := pixels(img)
	for oy := range h {
		for ox := range w {
			var s [3]float32
			for _, sy := range ys[oy] {
				for _, sx := range xs[ox] {
					r, g, bl := px(sx.at, sy.at)
					wt := sx.weight * sy.weight
					s[0] += wt * bl
					s[1] += wt * g
					s[2] += wt * r
				}
			}
			for c := range 3 {
				t.Data[(c*h+oy)*w+ox] = (s[c]/255 - mean[c]) / std[c]
			}
		}
	}
	return t
}

type sample struct {
	at     int
	weight float32
}

// samples lists, for each of n output pixels along an axis of src input
// pixels starting at origin, the input positions it reads and their
// weights (summing to 1).
func samples(src, n, origin int) [][]sample {
	out := make([][]sample, n)
	scale := float64(src) / float64(n)
	for i := range out {
		if scale <= 1 {
			f := min(max((float64(i)+0.5)*scale-0.5, 0), float64(src-1))
			j := int(f)
			fr := float32(f - float64(j))
			out[i] = []sample{{origin + j, 1 - fr}, {origin + min(j+1, src-1), fr}}
			continue
		}
		k := min(4, int(math.Ceil(scale-1e-9)))
		for s := range k {
			f := (float64(i) + (float64(s)+0.5)/float64(k)) * scale
			out[i] = append(out[i], sample{origin + min(src-1, int(f)), 1 / float32(k)})
		}
	}
	return out
}

// pixels returns a reader of a pixel's 8-bit RGB, fast for the decoders'
// image types.
func pixels(img image.Image) func(x, y int) (r, g, b float32) {
	switch m := img.(type) {
	case *image.YCbCr:
		return func(x, y int) (float32, float32, float32) {
			yy := float32(m.Y[m.YOffset(x, y)])
			ci := m.COffset(x, y)
			cb, cr := float32(m.Cb[ci])-128, float32(m.Cr[ci])-128
			clamp := func(v float32) float32 { return min(max(v, 0), 255) }
			return clamp(yy + 1.402*cr), clamp(yy - 0.344136*cb - 0.714136*cr), clamp(yy + 1.772*cb)
		}
	case *image.RGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			return float32(m.Pix[i]), float32(m.Pix[i+1]), float32(m.Pix[i+2])
		}
	case *image.NRGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			return float32(m.Pix[i]), float32(m.Pix[i+1]), float32(m.Pix[i+2])
		}
	case *image.Gray:
		return func(x, y int) (float32, float32, float32) {
			v := float32(m.Pix[m.PixOffset(x, y)])
			return v, v, v
		}
	}
	return func(x, y int) (float32, float32, float32) {
		r, g, b, _ := img.At(x, y).RGBA()
		return float32(r >> 8), float32(g >> 8), float32(b >> 8)
	}
}
