package cutout

import (
	"image"
	"image/draw"
	"math/rand/v2"
	"slices"
	"testing"
)

// The cut-out reads a decoded JPEG's planes itself when it shrinks the photo
// for the network: the grid must be the one the same photo converted by
// image/draw gives, for every subsampling and odd bounds.
func TestShrinkReadsYCbCrAsDrawDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		for _, r := range []image.Rectangle{image.Rect(0, 0, 97, 61), image.Rect(3, 5, 3+400, 5+301), image.Rect(0, 0, 2000, 1500)} {
			m := image.NewYCbCr(r, ratio)
			for _, p := range [][]byte{m.Y, m.Cb, m.Cr} {
				for i := range p {
					p[i] = uint8(rng.IntN(256))
				}
			}
			rgba := image.NewRGBA(r)
			draw.Draw(rgba, r, m, r.Min, draw.Src)
			w, h := fitLong(r.Dx(), r.Dy(), midLong)
			got, want := shrink(newRows(m), w, h), shrink(newRows(rgba), w, h)
			if !slices.Equal(got.d, want.d) {
				t.Errorf("%v %v: shrunk planes differ from image/draw's conversion", ratio, r)
			}
		}
	}
}

// boxMeanTo's three loops (window clipped left, whole, clipped right) give
// the textbook clipped mean, for radii wider than the image too.
func TestBoxMeanMatchesWindowMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range [][2]int{{1, 1}, {5, 3}, {9, 9}, {40, 17}} {
		w, h := sz[0], sz[1]
		src := make([]float32, w*h)
		for i := range src {
			src[i] = float32(rng.IntN(256)) / 255
		}
		for r := 1; r <= 6; r++ {
			got := boxMean(src, w, h, r)
			for y := range h {
				for x := range w {
					var s float64
					n := 0
					for yy := max(y-r, 0); yy <= min(y+r, h-1); yy++ {
						for xx := max(x-r, 0); xx <= min(x+r, w-1); xx++ {
							s += float64(src[yy*w+xx])
							n++
						}
					}
					if d := float64(got[y*w+x]) - s/float64(n); d > 1e-5 || d < -1e-5 {
						t.Fatalf("%d×%d r %d: (%d,%d) = %v, want %v", w, h, r, x, y, got[y*w+x], s/float64(n))
					}
				}
			}
		}
	}
}
