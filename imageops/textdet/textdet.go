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
	"slices"

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

// prepare resamples img to w×h (bilinear when enlarging, the mean of a grid
// of up to 4×4 samples a pixel when shrinking) and normalises it: planes
// blue, green, red.
func prepare(img image.Image, w, h int) *nn.Tensor {
	b := img.Bounds()
	t := nn.NewTensor(3, h, w)
	xs := samples(b.Dx(), w, b.Min.X)
	ys := samples(b.Dy(), h, b.Min.Y)
	read, ycc := rowReader(img, xs)
	acc := make([]float32, 3*w) // one output row's weighted sums, r, g, b by column
	for oy := range h {
		clear(acc)
		for _, sy := range ys[oy] {
			read(sy.at, sy.weight, acc)
		}
		if ycc {
			for i := 0; i < len(acc); i += 3 {
				y, u, v := acc[i], acc[i+1], acc[i+2]
				acc[i] = min(max(y+1.402*v, 0), 255)
				acc[i+1] = min(max(y-0.344136*u-0.714136*v, 0), 255)
				acc[i+2] = min(max(y+1.772*u, 0), 255)
			}
		}
		for c := range 3 {
			row := t.Data[(c*h+oy)*w : (c*h+oy+1)*w]
			// (v/255 − mean)/std as one multiply-add.
			k, a, b := 2-c, 1/(255*std[c]), -mean[c]/std[c] // plane 0 is blue
			for ox := range row {
				row[ox] = acc[3*ox+k]*a + b
			}
		}
	}
	return t
}

// unrollFour lets rowReader take its unrolled path; off, tests compare it
// with the general loop.
var unrollFour = true

// rowReader returns a function that adds to acc, weighted by wt, source row
// y sampled at xs (one output column's samples each): r, g, b by column, or
// when ycc is true luma and the two chroma differences (Cb−128, Cr−128),
// which convert to RGB once summed. It reads the decoders' image types
// directly.
func rowReader(img image.Image, xs [][]sample) (read func(y int, wt float32, acc []float32), ycc bool) {
	switch m := img.(type) {
	case *image.YCbCr:
		x0 := m.Rect.Min.X
		type off struct {
			y, c int
			w    float32
		}
		offs := make([][]off, len(xs))
		four := unrollFour // every column reads 4 samples: then flat, unrolled
		for i, ss := range xs {
			for _, s := range ss {
				offs[i] = append(offs[i], off{s.at - x0, m.COffset(s.at, m.Rect.Min.Y) - m.COffset(x0, m.Rect.Min.Y), s.weight})
			}
			four = four && len(ss) == 4
		}
		if four {
			// The same sums in the same order as the general loop below
			// (the first product is 0 plus itself), without its slice of
			// slices: a 12 MP photo's preparation at 960 is mostly this.
			flat := slices.Concat(offs...)
			return func(y int, wt float32, acc []float32) {
				yrow, crow := m.Y[m.YOffset(x0, y):], m.COffset(x0, y)
				cb, cr := m.Cb[crow:], m.Cr[crow:]
				for i := range len(flat) / 4 {
					o := flat[4*i : 4*i+4 : 4*i+4]
					yy := o[0].w * float32(yrow[o[0].y])
					u := o[0].w * (float32(cb[o[0].c]) - 128)
					v := o[0].w * (float32(cr[o[0].c]) - 128)
					yy += o[1].w * float32(yrow[o[1].y])
					u += o[1].w * (float32(cb[o[1].c]) - 128)
					v += o[1].w * (float32(cr[o[1].c]) - 128)
					yy += o[2].w * float32(yrow[o[2].y])
					u += o[2].w * (float32(cb[o[2].c]) - 128)
					v += o[2].w * (float32(cr[o[2].c]) - 128)
					yy += o[3].w * float32(yrow[o[3].y])
					u += o[3].w * (float32(cb[o[3].c]) - 128)
					v += o[3].w * (float32(cr[o[3].c]) - 128)
					a := acc[3*i : 3*i+3 : 3*i+3]
					a[0] += wt * yy
					a[1] += wt * u
					a[2] += wt * v
				}
			}, true
		}
		return func(y int, wt float32, acc []float32) {
			yrow, crow := m.Y[m.YOffset(x0, y):], m.COffset(x0, y)
			cb, cr := m.Cb[crow:], m.Cr[crow:]
			for i, os := range offs {
				var yy, u, v float32
				for _, o := range os {
					yy += o.w * float32(yrow[o.y])
					u += o.w * (float32(cb[o.c]) - 128)
					v += o.w * (float32(cr[o.c]) - 128)
				}
				acc[3*i] += wt * yy
				acc[3*i+1] += wt * u
				acc[3*i+2] += wt * v
			}
		}, true
	case *image.RGBA:
		return func(y int, wt float32, acc []float32) {
			row := m.Pix[m.PixOffset(m.Rect.Min.X, y):]
			for i, ss := range xs {
				var r, g, b float32
				for _, s := range ss {
					p := row[4*(s.at-m.Rect.Min.X):]
					r += s.weight * float32(p[0])
					g += s.weight * float32(p[1])
					b += s.weight * float32(p[2])
				}
				acc[3*i] += wt * r
				acc[3*i+1] += wt * g
				acc[3*i+2] += wt * b
			}
		}, false
	}
	return func(y int, wt float32, acc []float32) {
		for i, ss := range xs {
			for _, s := range ss {
				r, g, b, _ := img.At(s.at, y).RGBA()
				acc[3*i] += wt * s.weight * float32(r>>8)
				acc[3*i+1] += wt * s.weight * float32(g>>8)
				acc[3*i+2] += wt * s.weight * float32(b>>8)
			}
		}
	}, false
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
