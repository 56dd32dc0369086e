package shadow_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
)

// FlattenInPlace gives Flatten's pixels, in the image's own memory.
func TestFlattenInPlaceMatchesFlatten(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	img := image.NewNRGBA(image.Rect(0, 0, 67, 41))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	for i := 3; i < len(img.Pix); i += 16 {
		img.Pix[i] = []byte{0, 255}[i/16%2] // fully clear and fully opaque pixels too
	}
	for _, bg := range []color.Color{color.White, color.NRGBA{0x33, 0x66, 0x99, 255}, color.Black} {
		want := codec.Flatten(img, bg)
		mine := image.NewNRGBA(img.Rect)
		copy(mine.Pix, img.Pix)
		got := codec.FlattenInPlace(mine, bg)
		if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("background %v: FlattenInPlace differs from Flatten", bg)
		}
		if &got.Pix[0] != &mine.Pix[0] {
			t.Errorf("background %v: FlattenInPlace made a copy", bg)
		}
	}
}

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

// Paintable draws on the photo's own pixels where they are RGBA or NRGBA,
// holding what a copy for rendering would hold (premultiplied).
func TestPaintableIsTheCopyInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n := image.NewNRGBA(image.Rect(0, 0, 53, 29))
	for i := range n.Pix {
		n.Pix[i] = byte(r.Uint32())
	}
	want := image.NewRGBA(n.Rect)
	draw.Draw(want, want.Rect, n, image.Point{}, draw.Src)
	got := paint.Paintable(n)
	if !bytes.Equal(got.Pix, want.Pix) || got.Rect != want.Rect {
		t.Error("an NRGBA photo made paintable differs from its RGBA copy")
	}
	if &got.Pix[0] != &n.Pix[0] {
		t.Error("an NRGBA photo was copied")
	}
	if rgba := image.NewRGBA(image.Rect(0, 0, 4, 4)); &paint.Paintable(rgba).Pix[0] != &rgba.Pix[0] {
		t.Error("an RGBA photo was copied")
	}
	ycc := image.NewYCbCr(image.Rect(0, 0, 8, 8), image.YCbCrSubsampleRatio420)
	if p := paint.Paintable(ycc); p.Rect != ycc.Rect || p.Pix[3] != 255 {
		t.Errorf("a YCbCr photo made paintable: %v, alpha %d", p.Rect, p.Pix[3])
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
