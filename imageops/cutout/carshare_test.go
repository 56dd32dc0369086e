package cutout

import (
	"image"
	"testing"
)

// The scenery rule's geometry on drawn mattes (320×240, opaque inside the
// rectangles): a flood down a whole side and along another is scenery; a car
// close up, cut off by the top and both sides but clear above or below at
// the sides, is not, nor is a car in the middle.
func TestSceneryRuleGeometry(t *testing.T) {
	matte := func(rects ...image.Rectangle) *image.NRGBA {
		m := image.NewNRGBA(image.Rect(0, 0, 320, 240))
		for _, r := range rects {
			for y := r.Min.Y; y < r.Max.Y; y++ {
				for x := r.Min.X; x < r.Max.X; x++ {
					m.Pix[m.PixOffset(x, y)+3] = 255
				}
			}
		}
		return m
	}
	for _, c := range []struct {
		name    string
		car     *image.NRGBA
		scenery bool
	}{
		{"sky and buildings down the right side", matte(image.Rect(0, 0, 320, 60), image.Rect(200, 0, 320, 240)), true},
		{"a road across the bottom, up the left side", matte(image.Rect(0, 150, 320, 240), image.Rect(0, 0, 40, 240)), true},
		{"a car close up, cut off at the top and sides", matte(image.Rect(0, 0, 320, 170)), false},
		{"a car in the middle", matte(image.Rect(60, 80, 260, 200)), false},
		{"a car cut off by the left side", matte(image.Rect(0, 90, 200, 200)), false},
	} {
		if got := Scenery(c.car); got != c.scenery {
			t.Errorf("%s: Scenery %v, want %v", c.name, got, c.scenery)
		}
	}
}
