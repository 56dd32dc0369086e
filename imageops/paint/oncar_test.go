package paint

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"testing"

	"carphoto/imageops/plates"
)

// TestPaintOnCarKeepsTheMatte: hiding a plate on a cut-out, in every style
// and with a design, leaves the matte as it was, touches no transparent
// pixel, and takes nothing from what lies under the transparent pixels
// (the background the cut-out dropped): the same car over a yellow floor
// and over a blue one comes out the same. The car's outline runs through
// the plate at a slant, with a soft edge, so the plate's right part and its
// hidden margin lie off the car; the plate's pixels on the car all change.
func TestPaintOnCarKeepsTheMatte(t *testing.T) {
	ctx := context.Background()
	scene := renderScene()
	quad := plates.Quad{{X: 200, Y: 170}, {X: 420, Y: 160}, {X: 422, Y: 218}, {X: 202, Y: 228}}
	renderPlate(scene, quad, 3)
	// The car: left of a slanted outline 6 px soft, crossing the plate at
	// about 3/4 of its width.
	alpha := func(x, y int) uint8 {
		d := float64(x) + 0.25*float64(y) - 410 // 0 on the outline
		return uint8(min(255, max(0, 127.5-d*255/6)))
	}
	carOver := func(floor color.NRGBA) *image.NRGBA {
		c := image.NewNRGBA(scene.Rect)
		draw.Draw(c, c.Rect, scene, image.Point{}, draw.Src)
		for y := range c.Rect.Dy() {
			for x := range c.Rect.Dx() {
				o := c.PixOffset(x, y)
				if a := alpha(x, y); a == 0 {
					copy(c.Pix[o:o+4], []uint8{floor.R, floor.G, floor.B, 0})
				} else {
					c.Pix[o+3] = a
				}
			}
		}
		return c
	}
	logo := image.NewRGBA(image.Rect(0, 0, 52, 11))
	draw.Draw(logo, logo.Rect, image.NewUniform(color.RGBA{20, 40, 160, 255}), image.Point{}, draw.Src)
	for _, style := range []string{"blur", "pixelate", "white", "black", "logo"} {
		paintOn := func(car *image.NRGBA) {
			var err error
			if style == "logo" {
				err = PlaceLogoOnCar(ctx, car, []plates.Quad{quad}, nil, logo)
			} else {
				err = HidePlatesOnCar(ctx, car, []plates.Quad{quad}, Style(style))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		yellow := color.NRGBA{255, 220, 0, 0}
		before, onYellow, onBlue := carOver(yellow), carOver(yellow), carOver(color.NRGBA{0, 0, 255, 0})
		paintOn(onYellow)
		paintOn(onBlue)
		var matte, outside, unlike, onCar, changed int
		for i := 0; i < len(before.Pix); i += 4 {
			switch b, g := before.Pix[i:i+4], onYellow.Pix[i:i+4]; {
			case g[3] != b[3]:
				matte++
			case b[3] == 0 && !bytes.Equal(g, b):
				outside++
			case b[3] > 0 && !bytes.Equal(g, onBlue.Pix[i:i+4]):
				unlike++
			}
		}
		for y := 150; y < 240; y++ {
			for x := 190; x < 430; x++ {
				o := before.PixOffset(x, y)
				if before.Pix[o+3] < 255 || !insideConvex(quad, float64(x)+0.5, float64(y)+0.5) {
					continue
				}
				onCar++
				if !bytes.Equal(before.Pix[o:o+3], onYellow.Pix[o:o+3]) {
					changed++
				}
			}
		}
		if matte > 0 || outside > 0 || unlike > 0 {
			t.Errorf("%s: %d pixels' alpha changed, %d transparent pixels painted, %d car pixels differ between a yellow and a blue floor; want none", style, matte, outside, unlike)
		}
		if onCar < 5000 || changed < onCar*95/100 {
			t.Errorf("%s: %d of the plate's %d pixels on the car changed, want 95%% at least", style, changed, onCar)
		}
	}
}

// TestPaintOnCarThinStrip: where the car is only a thin strip across the
// plate (a bar of a grille, the background all round it), a blur or a
// pixelate cell has little of the car to average (the strip's pixels are
// painted with a few percent of their alpha, and take their neighbours'
// colour, writeOnCar): still the characters under the strip are gone, and
// the strip keeps its alpha.
func TestPaintOnCarThinStrip(t *testing.T) {
	ctx := context.Background()
	scene := renderScene()
	quad := renderRect(200, 170, 220, 60)
	renderPlate(scene, quad, 5)
	strip := func(x, y int) bool { return x >= 300 && x < 303 } // 3 px across the plate, top to bottom
	logo := image.NewRGBA(image.Rect(0, 0, 52, 11))
	draw.Draw(logo, logo.Rect, image.NewUniform(color.RGBA{20, 40, 160, 255}), image.Point{}, draw.Src)
	for _, style := range []string{"blur", "pixelate", "logo"} {
		car := image.NewNRGBA(scene.Rect)
		draw.Draw(car, car.Rect, scene, image.Point{}, draw.Src)
		for y := range car.Rect.Dy() {
			for x := range car.Rect.Dx() {
				if !strip(x, y) {
					copy(car.Pix[car.PixOffset(x, y):][:4], []uint8{0, 0, 0, 0})
				}
			}
		}
		before := image.NewNRGBA(car.Rect)
		copy(before.Pix, car.Pix)
		var err error
		if style == "logo" {
			err = PlaceLogoOnCar(ctx, car, nil, []plates.Quad{quad}, logo) // a doubtful plate: blurred
		} else {
			err = HidePlatesOnCar(ctx, car, []plates.Quad{quad}, Style(style))
		}
		if err != nil {
			t.Fatal(err)
		}
		lumaRange := func(img *image.NRGBA) (lo, hi float64) {
			lo, hi = 255, 0
			for y := 172; y < 228; y++ {
				for x := 300; x < 303; x++ {
					c := img.NRGBAAt(x, y)
					l := plateLuma(float64(c.R), float64(c.G), float64(c.B))
					lo, hi = min(lo, l), max(hi, l)
				}
			}
			return lo, hi
		}
		if !bytes.Equal(alphaPlane(car), alphaPlane(before)) {
			t.Errorf("%s: the strip's alpha changed", style)
		}
		l0, h0 := lumaRange(before)
		l1, h1 := lumaRange(car)
		t.Logf("%s: the strip across the plate in luma %.0f–%.0f, hidden %.0f–%.0f", style, l0, h0, l1, h1)
		if h0-l0 < 100 || h1-l1 > 30 {
			t.Errorf("%s: the strip across the plate spans luma %.0f–%.0f, hidden %.0f–%.0f; want the characters (a span of 100 at least) gone (a span of 30 at most)", style, l0, h0, l1, h1)
		}
	}
}

// alphaPlane is img's alpha, a byte a pixel.
func alphaPlane(img *image.NRGBA) []byte {
	a := make([]byte, 0, len(img.Pix)/4)
	for i := 3; i < len(img.Pix); i += 4 {
		a = append(a, img.Pix[i])
	}
	return a
}

// insideConvex reports whether (x, y) lies inside the convex quad q.
func insideConvex(q plates.Quad, x, y float64) bool {
	pos, neg := false, false
	for i := range q {
		a, b := q[i], q[(i+1)%len(q)]
		switch c := (b.X-a.X)*(y-a.Y) - (b.Y-a.Y)*(x-a.X); {
		case c > 0:
			pos = true
		case c < 0:
			neg = true
		}
	}
	return !pos || !neg
}
