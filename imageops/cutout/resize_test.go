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
