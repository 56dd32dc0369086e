package codec

import (
	"context"
	"image"
	"image/draw"
	"math"
)

// FitSize is the size FitPixels scales a width × height image to: itself
// when it holds at most maxPixels (or maxPixels is not positive), else
// the same shape scaled down to about maxPixels.
func FitSize(width, height, maxPixels int) (int, int) {
	if width*height <= maxPixels || maxPixels <= 0 {
		return width, height
	}
	f := math.Sqrt(float64(maxPixels) / float64(width*height))
	return max(1, int(float64(width)*f)), max(1, int(float64(height)*f))
}

// FitPixels returns img scaled down, keeping its aspect ratio, so that it
// holds at most maxPixels pixels, or img itself when it already does. Each
// output pixel is the mean of the source area it covers, edge pixels by the
// share they overlap (an area filter: no aliasing however large the
// ratio), averaged with premultiplied alpha. It reads img one row at a
// time, so it needs memory only for the output; ctx is checked every few
// rows.
func FitPixels(ctx context.Context, img image.Image, maxPixels int) (image.Image, error) {
	b := img.Bounds()
	if b.Dx()*b.Dy() <= maxPixels || maxPixels <= 0 {
		return img, nil
	}
	w, h := FitSize(b.Dx(), b.Dy(), maxPixels)
	xs, ys := areaSpills(b.Dx(), w), areaSpills(b.Dy(), h)
	row := image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
	lines := [2][]float32{make([]float32, 4*w), make([]float32, 4*w)} // output rows oy, oy+1
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	xw, yw := float32(w)/float32(b.Dx()), float32(h)/float32(b.Dy()) // 1 ÷ the source pixels an output pixel covers
	next := 0                                                        // the output row lines[0] holds
	for sy := range b.Dy() {
		if sy%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		draw.Draw(row, row.Rect, img, image.Pt(b.Min.X, b.Min.Y+sy), draw.Src)
		s := ys[sy]
		for s.o > next {
			emit(out, next, lines[0], xw*yw)
			lines[0], lines[1] = lines[1], lines[0]
			clear(lines[1])
			next++
		}
		for sx, t := range xs {
			p := row.Pix[4*sx : 4*sx+4]
			for c := range 4 {
				v := float32(p[c])
				lines[0][4*t.o+c] += v * t.w * s.w
				if t.w < 1 {
					lines[0][4*t.o+4+c] += v * (1 - t.w) * s.w
				}
				if s.w < 1 {
					lines[1][4*t.o+c] += v * t.w * (1 - s.w)
					if t.w < 1 {
						lines[1][4*t.o+4+c] += v * (1 - t.w) * (1 - s.w)
					}
				}
			}
		}
	}
	for ; next < h; next++ {
		emit(out, next, lines[0], xw*yw)
		lines[0], lines[1] = lines[1], lines[0]
		clear(lines[1])
	}
	return out, nil
}

// spill says where a source pixel goes: a share w of it into output o and
// the rest into o+1.
type spill struct {
	o int
	w float32
}

// areaSpills maps each of n source pixels onto m ≤ n output pixels, each
// output covering n/m source pixels. The last output takes no spill.
func areaSpills(n, m int) []spill {
	out := make([]spill, n)
	r := float64(n) / float64(m)
	for x := range n {
		o := min(int(float64(x)/r), m-1)
		end := float64(o+1) * r
		w := 1.0
		if o < m-1 && float64(x+1) > end {
			w = end - float64(x)
		}
		out[x] = spill{o, float32(w)}
	}
	return out
}

// emit writes the accumulated premultiplied row acc, scaled by norm, into
// row y of out, un-premultiplied.
func emit(out *image.NRGBA, y int, acc []float32, norm float32) {
	p := out.Pix[y*out.Stride : y*out.Stride+len(acc)]
	for i := 0; i < len(acc); i += 4 {
		a := acc[i+3] * norm
		if a < 0.5 {
			p[i], p[i+1], p[i+2], p[i+3] = 0, 0, 0, 0
			continue
		}
		k := 255 / a
		for c := range 3 {
			p[i+c] = uint8(min(255, acc[i+c]*norm*k+0.5))
		}
		p[i+3] = uint8(min(255, a+0.5))
	}
}

// UnitByte maps a sample in [0, 1] (a probability, an alpha, a shade) to
// 0…255, rounding and clamping: what the cut-out's matte and the shadow
// write.
func UnitByte(v float32) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 1:
		return 255
	}
	return uint8(v*255 + 0.5)
}
