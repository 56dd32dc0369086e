package cutout_test

import (
	"image"
	"slices"
	"testing"

	"carphoto/imageops/cutout"
)

// matteWith is a w×h cut-out whose matte is solid over car, with a soft
// edge of alpha 100 a pixel wide around it.
func matteWith(w, h int, car image.Rectangle) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			p := image.Pt(x, y)
			switch {
			case p.In(car):
				img.Pix[img.PixOffset(x, y)+3] = 255
			case p.In(car.Inset(-1)):
				img.Pix[img.PixOffset(x, y)+3] = 100
			}
		}
	}
	return img
}

func TestTruncatedNamesTheSidesThatCutTheCar(t *testing.T) {
	const w, h = 640, 480 // 2 pixels a network pixel: the band is 4 pixels deep
	for _, tc := range []struct {
		name string
		car  image.Rectangle
		want []string
	}{
		{"whole, well inside", image.Rect(100, 100, 540, 400), nil},
		{"whole, 6 pixels from every side", image.Rect(6, 6, w-6, h-6), nil},
		{"cut by the left and the bottom", image.Rect(0, 150, 400, h), []string{"left", "bottom"}},
		{"stops 2 pixels short of the right (the refined edge)", image.Rect(200, 100, w-2, 400), []string{"right"}},
		{"cut by the top", image.Rect(100, 0, 540, 300), []string{"top"}},
		{"a wing mirror's 5 pixels on the left: under 2% of the side", image.Rect(0, 200, 300, 205), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cutout.Truncated(matteWith(w, h, tc.car)); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	// Bounds not at (0,0): the sides are the image's own.
	sub := matteWith(w, h, image.Rect(300, 150, w, h)).SubImage(image.Rect(100, 0, w-100, h)).(*image.NRGBA)
	if got := cutout.Truncated(sub); !slices.Equal(got, []string{"right", "bottom"}) {
		t.Errorf("a sub-image that cuts the car on its right: got %v, want [right bottom]", got)
	}
}
