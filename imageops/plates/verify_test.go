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
		a := cut(wholeView(ycc), w)
		b := cut(wholeView(rgb), w)
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

// TestPlateOfCorners checks how the jury's corners become a plate: a
// tilted quad is kept as it is, corners that cross (a confused network)
// give way to their bounding rectangle, and the hidden region holds the
// quad.
func TestPlateOfCorners(t *testing.T) {
	b := image.Rect(10, 20, 810, 620)
	tilted := Quad{{100, 200}, {300, 240}, {295, 290}, {95, 250}}
	p := plateOf(tilted, 0.9, b)
	want := Quad{{110, 220}, {310, 260}, {305, 310}, {105, 270}}
	if p.Quad != want {
		t.Errorf("tilted quad became %v, want %v", p.Quad, want)
	}
	for _, c := range p.Quad {
		if !p.Hide.Contains(c) {
			t.Errorf("corner %v outside the hidden region %v", c, p.Hide)
		}
	}
	crossed := Quad{{100, 200}, {300, 290}, {300, 200}, {100, 290}}
	if got, want := plateOf(crossed, 0.9, b).Quad, (Quad{{110, 220}, {310, 220}, {310, 310}, {110, 310}}); got != want {
		t.Errorf("crossed corners became %v, want their bounds %v", got, want)
	}
}
