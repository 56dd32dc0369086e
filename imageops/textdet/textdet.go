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

// MaxSide is the largest working side Find takes: on a square photo at
// 4096 px the test process peaks at about 2 GB resident (at 960 px, 128 MB).
const MaxSide = 4096

// Point is a position in pixels of the photo given to Find.
type Point struct{ X, Y float64 }

// Quad is a region's four corners, clockwise from the top-left one.
type Quad [4]Point

// Extent returns the quad's smallest and largest coordinates: the corners of
// the axis-aligned box that holds it.
func (q Quad) Extent() (lo, hi Point) {
	lo, hi = q[0], q[0]
	for _, p := range q[1:] {
		lo = Point{min(lo.X, p.X), min(lo.Y, p.Y)}
		hi = Point{max(hi.X, p.X), max(hi.Y, p.Y)}
	}
	return lo, hi
}

// Bounds returns the smallest integer rectangle that holds the quad.
func (q Quad) Bounds() image.Rectangle {
	lo, hi := q.Extent()
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

// Find returns the text regions of img, strongest first, found at a
// working size whose long side is about side pixels: 640 to 960 suit
// photos (PaddleOCR's default is 960); the smaller the side, the larger
// text must be in the photo to be found, and the time grows with the
// side's square (BenchmarkFind).
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
	if side < 32 || side > MaxSide {
		return nil, fmt.Errorf("text detection: side %d, want 32 to %d", side, MaxSide)
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
	// The map keeps the output's storage.
	return &Map{W: w, H: h, P: out.Data, Sx: float64(b.Dx()) / float64(w), Sy: float64(b.Dy()) / float64(h), Origin: b.Min}, nil
}

// inputSize is the working size for a w×h photo: the long side side, each
// side rounded to the nearest multiple of 32, at least 32. PaddleOCR's
// DetResizeForTest (limit_type "max") does the same to a photo larger than
// side but leaves a smaller one at its size; here it is enlarged too.
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

// prepare resamples img to w×h and normalises it (nn.Photo): planes blue,
// green, red.
func prepare(img image.Image, w, h int) *nn.Tensor {
	var gain, offset [3]float32
	for c := range 3 { // plane c, blue first, by mean[c] and std[c]
		// (v/255 − mean)/std as one multiply-add.
		gain[c], offset[c] = 1/(255*std[c]), -mean[c]/std[c]
	}
	return nn.Photo(img, w, h, gain, offset)
}
