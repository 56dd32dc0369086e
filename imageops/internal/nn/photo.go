package nn

import (
	"image"
	"math"
	"slices"
)

// Photo resamples img to a 3×h×w tensor (bilinear when enlarging, the mean
// of a grid of up to 4×4 samples a pixel when shrinking), planes blue,
// green, red (the order OpenCV reads photos in, which Paddle's networks
// were trained on), plane c holding v·gain[c] + offset[c] for the pixel's
// value v in 0–255.
func Photo(img image.Image, w, h int, gain, offset [3]float32) *Tensor {
	b := img.Bounds()
	t := NewTensor(3, h, w)
	xs := Samples(b.Dx(), w, b.Min.X)
	ys := Samples(b.Dy(), h, b.Min.Y)
	read, ycc := rowReader(img, xs)
	acc := make([]float32, 3*w) // one output row's weighted sums, r, g, b by column
	for oy := range h {
		clear(acc)
		for _, sy := range ys[oy] {
			read(sy.At, sy.Weight, acc)
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
			k, a, b := 2-c, gain[c], offset[c] // plane 0 is blue
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
func rowReader(img image.Image, xs [][]Sample) (read func(y int, wt float32, acc []float32), ycc bool) {
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
				offs[i] = append(offs[i], off{s.At - x0, m.COffset(s.At, m.Rect.Min.Y) - m.COffset(x0, m.Rect.Min.Y), s.Weight})
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
					p := row[4*(s.At-m.Rect.Min.X):]
					r += s.Weight * float32(p[0])
					g += s.Weight * float32(p[1])
					b += s.Weight * float32(p[2])
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
				r, g, b, _ := img.At(s.At, y).RGBA()
				acc[3*i] += wt * s.Weight * float32(r>>8)
				acc[3*i+1] += wt * s.Weight * float32(g>>8)
				acc[3*i+2] += wt * s.Weight * float32(b>>8)
			}
		}
	}, false
}

// Sample is one input position an output pixel reads, and its weight.
type Sample struct {
	At     int
	Weight float32
}

// Samples lists, for each of n output pixels along an axis of src input
// pixels starting at origin, the input positions it reads and their
// weights (summing to 1).
func Samples(src, n, origin int) [][]Sample {
	out := make([][]Sample, n)
	scale := float64(src) / float64(n)
	for i := range out {
		if scale <= 1 {
			f := min(max((float64(i)+0.5)*scale-0.5, 0), float64(src-1))
			j := int(f)
			fr := float32(f - float64(j))
			out[i] = []Sample{{origin + j, 1 - fr}, {origin + min(j+1, src-1), fr}}
			continue
		}
		k := min(4, int(math.Ceil(scale-1e-9)))
		for s := range k {
			f := (float64(i) + (float64(s)+0.5)/float64(k)) * scale
			out[i] = append(out[i], Sample{origin + min(src-1, int(f)), 1 / float32(k)})
		}
	}
	return out
}
