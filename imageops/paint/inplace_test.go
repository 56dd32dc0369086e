package paint

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math/rand/v2"
	"testing"

	"carphoto/imageops/plates"
)

// TestPaintInPlace checks that painting a decoded photo in place gives what
// HidePlates and PlaceLogo give on a copy, for a JPEG's YCbCr (every
// subsampling the standard library writes or reads, odd bounds) and for
// RGBA and translucent NRGBA: outside the region the plates may change the photo keeps every
// sample; inside, the picture matches the copy's up to chroma subsampling.
func TestPaintInPlace(t *testing.T) {
	ctx := context.Background()
	scene := renderScene().SubImage(image.Rect(0, 0, 597, 391)).(*image.RGBA)
	quads := []plates.Quad{
		{{X: 150, Y: 150}, {X: 450, Y: 110}, {X: 440, Y: 200}, {X: 160, Y: 222}},
		renderRect(40, 300, 90, 24),
		{{X: 560, Y: 10}, {X: 640, Y: 12}, {X: 638, Y: 40}, {X: 558, Y: 38}}, // past the right edge
	}
	for i, q := range quads {
		renderPlate(scene, q, uint64(i+1))
	}
	photos := map[string]func() image.Image{
		"rgba": func() image.Image {
			c := image.NewRGBA(scene.Rect)
			draw.Draw(c, c.Rect, scene, c.Rect.Min, draw.Src)
			return c
		},
		"nrgba-translucent": func() image.Image {
			c := image.NewNRGBA(scene.Rect)
			draw.Draw(c, c.Rect, scene, c.Rect.Min, draw.Src)
			for i := 3; i < len(c.Pix); i += 4 {
				c.Pix[i] = uint8(128 + i%128) // alpha 128–255
			}
			return c
		},
		"ycbcr420": func() image.Image {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, scene, &jpeg.Options{Quality: 90}); err != nil {
				t.Fatal(err)
			}
			m, err := jpeg.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	}
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio440} {
		photos["ycbcr"+ratio.String()] = func() image.Image {
			m := image.NewYCbCr(scene.Rect, ratio)
			for y := range scene.Rect.Dy() {
				for x := range scene.Rect.Dx() {
					c := scene.RGBAAt(x, y)
					yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
					m.Y[m.YOffset(x, y)] = yy
					m.Cb[m.COffset(x, y)], m.Cr[m.COffset(x, y)] = cb, cr
				}
			}
			return m
		}
	}
	var writes image.Rectangle
	for _, q := range quads {
		_, w := plateReach(q)
		writes = writes.Union(w)
	}
	// A chroma sample spans up to 2 pixels: one more around the writes.
	near := writes.Inset(-2)
	for name, photo := range photos {
		for _, op := range []string{"blur", "pixelate", "logo"} {
			t.Run(name+"/"+op, func(t *testing.T) {
				orig, img := photo(), photo()
				var want *image.RGBA
				var got image.Image
				var err error
				if op == "logo" {
					want, err = PlaceLogo(ctx, orig, quads, nil, logoTwoColour())
					if err == nil {
						got, err = PlaceLogoInPlace(ctx, img, quads, nil, logoTwoColour())
					}
				} else {
					want, err = HidePlates(ctx, orig, quads, Style(op))
					if err == nil {
						got, err = HidePlatesInPlace(ctx, img, quads, Style(op))
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.Bounds() != orig.Bounds() {
					t.Fatalf("bounds %v, want %v", got.Bounds(), orig.Bounds())
				}
				var far, inside, sum, most int
				b := orig.Bounds()
				for y := b.Min.Y; y < b.Max.Y; y++ {
					for x := b.Min.X; x < b.Max.X; x++ {
						r0, g0, b0, _ := orig.At(x, y).RGBA()
						r1, g1, b1, _ := got.At(x, y).RGBA()
						if !(image.Point{x, y}).In(near) {
							if r0>>8 != r1>>8 || g0>>8 != g1>>8 || b0>>8 != b1>>8 {
								far++
							}
							continue
						}
						w := want.RGBAAt(x-b.Min.X, y-b.Min.Y)
						for _, d := range []int{int(r1>>8) - int(w.R), int(g1>>8) - int(w.G), int(b1>>8) - int(w.B)} {
							d = max(d, -d)
							sum += d
							most = max(most, d)
						}
						inside++
					}
				}
				if far > 0 {
					t.Errorf("%d pixels changed outside the plates' reach", far)
				}
				mean := float64(sum) / float64(3*inside)
				t.Logf("near the plates: mean difference from the copy %.2f levels, most %d", mean, most)
				if mean > 2 {
					t.Errorf("near the plates the picture differs from HidePlates' by %.2f levels on average, want ≤ 2", mean)
				}
			})
		}
	}
}

// paintable draws on the photo's own pixels where they are RGBA or NRGBA,
// holding what a copy for rendering would hold (premultiplied).
func TestPaintableIsTheCopyInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n := image.NewNRGBA(image.Rect(0, 0, 53, 29))
	for i := range n.Pix {
		n.Pix[i] = byte(r.Uint32())
	}
	want := image.NewRGBA(n.Rect)
	draw.Draw(want, want.Rect, n, image.Point{}, draw.Src)
	got := paintable(n)
	if !bytes.Equal(got.Pix, want.Pix) || got.Rect != want.Rect {
		t.Error("an NRGBA photo made paintable differs from its RGBA copy")
	}
	if &got.Pix[0] != &n.Pix[0] {
		t.Error("an NRGBA photo was copied")
	}
	if rgba := image.NewRGBA(image.Rect(0, 0, 4, 4)); &paintable(rgba).Pix[0] != &rgba.Pix[0] {
		t.Error("an RGBA photo was copied")
	}
	ycc := image.NewYCbCr(image.Rect(0, 0, 8, 8), image.YCbCrSubsampleRatio420)
	if p := paintable(ycc); p.Rect != ycc.Rect || p.Pix[3] != 255 {
		t.Errorf("a YCbCr photo made paintable: %v, alpha %d", p.Rect, p.Pix[3])
	}
}
