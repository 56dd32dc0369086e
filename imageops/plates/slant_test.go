package plates

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// slantedPlate draws a white plate 200×44 px with seven dark characters on
// a grey photo, its rows tilted by slope t, and returns the photo and the
// plate's axis-aligned box (what the detector regresses).
func slantedPlate(t float64) (*image.RGBA, box) {
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	const cx, cy, w, h = 200.0, 150.0, 200.0, 44.0
	for y := range 300 {
		for x := range 400 {
			c := color.RGBA{110, 120, 115, 255}
			dy := float64(y) - (cy + t*(float64(x)-cx))
			dx := float64(x) - (cx - w/2)
			if dx >= 0 && dx < w && math.Abs(dy) < h/2 {
				c = color.RGBA{235, 235, 230, 255}
				if k := math.Mod(dx-12, 26); dx > 12 && dx < w-12 && k < 14 && math.Abs(dy) < 15 && !(k > 4 && k < 10 && math.Abs(dy) < 9) {
					c = color.RGBA{25, 25, 30, 255}
				}
			}
			img.SetRGBA(x, y, c)
		}
	}
	e := math.Abs(t) * w / 2
	return img, box{x0: cx - w/2, y0: cy - h/2 - e, x1: cx + w/2, y1: cy + h/2 + e}
}

func TestSlantFollowsTheTilt(t *testing.T) {
	for _, want := range []float64{-0.2, -0.1, 0, 0.06, 0.15} {
		img, d := slantedPlate(want)
		got := slant(pixelReader(img), img.Bounds(), d)
		if math.Abs(got-want) > 0.025 {
			t.Errorf("plate tilted %.2f: slant %.3f", want, got)
		}
		// The quad follows the plate's edges.
		p := tuned.plate(d, 1, got, img.Bounds())
		for i, q := range p.Quad {
			top := i < 2
			edge := 150 + want*(q.X-200)
			if top {
				edge -= 22
			} else {
				edge += 22
			}
			if math.Abs(q.Y-edge) > 4 {
				t.Errorf("plate tilted %.2f: corner %d at y %.1f, the plate's edge at %.1f", want, i, q.Y, edge)
			}
		}
	}
}

func TestSlantLevelOnFlatTexture(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	if got := slant(pixelReader(img), img.Bounds(), box{x0: 20, y0: 20, x1: 180, y1: 80}); got != 0 {
		t.Errorf("slant of a flat grey area %.2f, want 0", got)
	}
}
