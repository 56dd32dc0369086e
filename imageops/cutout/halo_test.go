package cutout

import (
	"context"
	"image"
	"image/color"
	"math"
	"testing"
)

// syntheticCar draws a car-like shape (dark blue body, light roof, black tyres with
// grey rims) on a saturated magenta backdrop, anti-aliased by 4×4 supersampling, and
// returns the photo with its true coverage (0..1 a pixel).
func syntheticCar(w, h int) (*image.NRGBA, []float32) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cover := make([]float32, w*h)
	fw, fh := float64(w), float64(h)
	shade := func(x, y float64) (color.NRGBA, bool) {
		for _, cx := range []float64{0.3 * fw, 0.72 * fw} { // wheels
			d := math.Hypot(x-cx, y-0.7*fh)
			if d < 0.06*fw {
				return color.NRGBA{150, 150, 155, 255}, true
			}
			if d < 0.1*fw {
				return color.NRGBA{20, 20, 22, 255}, true
			}
		}
		if x > 0.15*fw && x < 0.88*fw && y > 0.45*fh && y < 0.68*fh { // body
			return color.NRGBA{25, 45, 120, 255}, true
		}
		// Cabin: a trapezoid on the body.
		if y > 0.28*fh && y <= 0.45*fh {
			t := (0.45*fh - y) / (0.17 * fh)
			if x > 0.3*fw+0.08*fw*t && x < 0.75*fw-0.1*fw*t {
				return color.NRGBA{180, 190, 200, 255}, true
			}
		}
		return color.NRGBA{255, 0, 255, 255}, false
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var r, g, b, n float64
			for sy := 0; sy < 4; sy++ {
				for sx := 0; sx < 4; sx++ {
					c, in := shade(float64(x)+(float64(sx)+0.5)/4, float64(y)+(float64(sy)+0.5)/4)
					r, g, b = r+float64(c.R), g+float64(c.G), b+float64(c.B)
					if in {
						n++
					}
				}
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(r/16 + 0.5), uint8(g/16 + 0.5), uint8(b/16 + 0.5), 255})
			cover[y*w+x] = float32(n / 16)
		}
	}
	return img, cover
}

// TestRefineLeavesNoHalo gives the refinement a coarse matte as the network might: on
// a grid a third of the photo's size, one cell too fat and soft. The refined cut-out
// must follow the car's real outline (wheels included) and show no magenta.
func TestRefineLeavesNoHalo(t *testing.T) {
	const w, h, lw, lh = 480, 360, 160, 120
	pix, cover := syntheticCar(w, h)
	prob := make([]float32, lw*lh)
	for y := 0; y < lh; y++ {
		for x := 0; x < lw; x++ {
			// Any car in the 3×3 cell and its neighbours (one cell too fat).
			for yy := max(0, 3*y-3); yy < min(h, 3*y+6); yy++ {
				for xx := max(0, 3*x-3); xx < min(w, 3*x+6); xx++ {
					if cover[yy*w+xx] > 0 {
						prob[y*lw+x] = 1
					}
				}
			}
		}
	}
	prob = boxMean(prob, lw, lh, 1) // soft, as the network's edges are
	c := &coarseMatte{mid: shrink(newRows(pix), w, h), prob: prob, lw: lw, lh: lh}
	cut := image.NewNRGBA(pix.Rect)
	if err := refine(context.Background(), newRows(pix), c, DefaultSettings().params(), cut); err != nil {
		t.Fatal(err)
	}
	var inter, union, outline, fringe, soft int
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			a := cut.Pix[y*cut.Stride+4*x+3]
			car, got := cover[i] >= 0.5, a >= 128
			if car && got {
				inter++
			}
			if car || got {
				union++
			}
			if car && (x == 0 || cover[i-1] < 0.5 || x == w-1 || cover[i+1] < 0.5 || cover[i-w] < 0.5 || cover[i+w] < 0.5) {
				outline++
			}
			if a > 0 && a < 255 {
				soft++
			}
			p := cut.NRGBAAt(x, y)
			if a >= 32 && math.Min(float64(p.R), float64(p.B))-float64(p.G) > 60 {
				fringe++
			}
		}
	}
	iou := float64(inter) / float64(union)
	t.Logf("IoU %.4f, %d semi-transparent pixels, %d visible magenta pixels, outline %d pixels", iou, soft, fringe, outline)
	if iou < 0.97 {
		t.Errorf("refined matte IoU %.3f with the true shape, want >= 0.97 (edges not following the photo)", iou)
	}
	if fringe*50 > outline {
		t.Errorf("%d visible magenta pixels along an outline of %d, want at most 2%%", fringe, outline)
	}
	if soft == 0 {
		t.Error("no semi-transparent pixels: edges are jagged")
	}
}
