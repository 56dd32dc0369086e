package plates

import (
	"image"
	"image/draw"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCutReadsYCbCrLikeRGB checks the verifier's window reader: a decoded
// JPEG's planes, read directly, give the input the same photo gives as RGB,
// whether the window is enlarged or shrunk.
func TestCutReadsYCbCrLikeRGB(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ycc := image.NewYCbCr(image.Rect(10, 20, 410, 320), image.YCbCrSubsampleRatio420)
	for i := range ycc.Y {
		ycc.Y[i] = uint8(60 + rng.IntN(140))
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = uint8(110+rng.IntN(36)), uint8(110+rng.IntN(36))
	}
	rgb := image.NewRGBA(ycc.Bounds())
	draw.Draw(rgb, rgb.Bounds(), ycc, ycc.Bounds().Min, draw.Src)
	for _, w := range []win{{x: 100, y: 50, w: 60, h: 30}, {x: 5, y: 0, w: 390, h: 195}, {x: -20, y: 280, w: 80, h: 40}} {
		a := cut(ycc, pixelReader(ycc), w)
		b := cut(rgb, pixelReader(rgb), w)
		worst := 0.0
		for i := range a.Data {
			worst = max(worst, math.Abs(float64(a.Data[i]-b.Data[i])))
		}
		// One grey level is 1/(255·0.25) ≈ 0.016 of the input's scale;
		// RGBA rounds each converted pixel (the colours stay in gamut here).
		if worst > 0.05 {
			t.Errorf("window %+v: YCbCr and RGB inputs differ by up to %.3f", w, worst)
		}
	}
}
