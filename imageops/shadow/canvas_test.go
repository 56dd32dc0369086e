package shadow_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"testing"

	"carphoto/imageops/shadow"
)

// A crop inside the canvas is a view of its pixels; a frame reaching past
// the canvas is a new image. Both hold what the frame shows.
func TestFrameCropsInPlace(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 100, 80))
	for y := 30; y < 50; y++ {
		for x := 20; x < 70; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 7, 255})
		}
	}
	for _, c := range []struct {
		canvas shadow.Canvas
		view   bool
	}{
		{shadow.Canvas{Crop: true, Padding: 5}, true},
		{shadow.Canvas{Crop: true, Padding: 25}, false},
		{shadow.Canvas{Crop: true, Padding: 2, Aspect: [2]int{1, 1}}, false},
	} {
		got := shadow.Frame(img, c.canvas)
		if got.Rect.Min != (image.Point{}) {
			t.Errorf("%+v: bounds %v, want them at (0,0)", c.canvas, got.Rect)
		}
		shared := &got.Pix[0] == &img.Pix[img.PixOffset(20-int(c.canvas.Padding), 30-int(c.canvas.Padding))]
		if shared != c.view {
			t.Errorf("%+v: a view of the canvas %v, want %v", c.canvas, shared, c.view)
		}
		car := shadow.OpaqueBounds(got)
		if car.Dx() != 50 || car.Dy() != 20 || got.NRGBAAt(car.Min.X, car.Min.Y) != (color.NRGBA{20, 30, 7, 255}) {
			t.Errorf("%+v: the car at %v in the frame, want 50×20 starting with (20,30,7)", c.canvas, car)
		}
	}
}

// A canvas that padding and aspect would make far larger than the limit
// comes out within it, the car scaled down with its padding, never
// allocated at the size asked for; a canvas within the limit is Frame's.
func TestFrameFitHoldsTheCanvasToItsLimit(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 400, 300))
	for y := 100; y < 200; y++ {
		for x := 100; x < 300; x++ {
			img.SetNRGBA(x, y, color.NRGBA{200, 10, 10, 255})
		}
	}
	const maxPixels, maxSide = 1_000_000, 4000
	for _, c := range []shadow.Canvas{
		{Crop: true, Padding: 10000, Aspect: [2]int{100, 1}}, // 2 000 200 × 20 100 asked for
		{Crop: true, Padding: 10000},
		{Crop: true, Padding: 1, PaddingShare: true, Aspect: [2]int{1, 100}},
		{Aspect: [2]int{100, 1}},
	} {
		w, h := c.Size(200, 100)
		got, err := shadow.FrameFit(context.Background(), img, c, maxPixels, maxSide)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		gw, gh := got.Rect.Dx(), got.Rect.Dy()
		if gw*gh > maxPixels || gw > maxSide || gh > maxSide {
			t.Errorf("%+v: canvas %d×%d (asked for %d×%d), want at most %d pixels and %d a side", c, gw, gh, w, h, maxPixels, maxSide)
		}
		if car := shadow.OpaqueBounds(got); car.Empty() {
			t.Errorf("%+v: the car is gone from the %d×%d canvas", c, gw, gh)
		}
	}
	small := shadow.Canvas{Crop: true, Padding: 10, Aspect: [2]int{4, 3}}
	got, err := shadow.FrameFit(context.Background(), img, small, maxPixels, maxSide)
	if want := shadow.Frame(img, small); err != nil || got.Rect != want.Rect || !bytes.Equal(got.Pix[:4*got.Rect.Dx()], want.Pix[:4*want.Rect.Dx()]) {
		t.Errorf("a canvas within the limit: %v %v, want Frame's %v", got.Rect, err, want.Rect)
	}
}
