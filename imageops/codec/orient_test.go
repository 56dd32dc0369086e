package codec

import (
	"image"
	"image/color"
	"strings"
	"testing"
)

// naiveOrient turns img by EXIF orientation o one pixel at a time through
// At, spelling out where each displayed pixel comes from.
func naiveOrient(img image.Image, o int) (w, h int, at func(x, y int) color.Color) {
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	src := func(x, y int) color.Color { return img.At(b.Min.X+x, b.Min.Y+y) }
	switch o {
	case 2:
		return sw, sh, func(x, y int) color.Color { return src(sw-1-x, y) }
	case 3:
		return sw, sh, func(x, y int) color.Color { return src(sw-1-x, sh-1-y) }
	case 4:
		return sw, sh, func(x, y int) color.Color { return src(x, sh-1-y) }
	case 5:
		return sh, sw, func(x, y int) color.Color { return src(y, x) }
	case 6: // displayed (x, y) shows stored column y from the bottom up
		return sh, sw, func(x, y int) color.Color { return src(y, sh-1-x) }
	case 7:
		return sh, sw, func(x, y int) color.Color { return src(sw-1-y, sh-1-x) }
	case 8:
		return sh, sw, func(x, y int) color.Color { return src(sw-1-y, x) }
	}
	return sw, sh, src
}

// testPattern fills a w×h image of each type with values that differ at
// every pixel (chroma planes get their own pattern).
func testImages(w, h int) map[string]image.Image {
	r := image.Rect(0, 0, w, h)
	imgs := map[string]image.Image{}
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		m := image.NewYCbCr(r, ratio)
		fill(m.Y, 3)
		fill(m.Cb, 5)
		fill(m.Cr, 11)
		imgs["YCbCr "+ratio.String()] = m
	}
	a := image.NewNYCbCrA(r, image.YCbCrSubsampleRatio420)
	fill(a.Y, 3)
	fill(a.Cb, 5)
	fill(a.Cr, 7)
	fill(a.A, 13)
	imgs["NYCbCrA"] = a
	g := image.NewGray(r)
	fill(g.Pix, 3)
	imgs["Gray"] = g
	g16 := image.NewGray16(r)
	fill(g16.Pix, 3)
	imgs["Gray16"] = g16
	rgba := image.NewRGBA(r)
	fill(rgba.Pix, 1)
	for i := 3; i < len(rgba.Pix); i += 4 {
		rgba.Pix[i] = 255
	}
	imgs["RGBA"] = rgba
	n := image.NewNRGBA(r)
	fill(n.Pix, 1)
	imgs["NRGBA"] = n
	n64 := image.NewNRGBA64(r)
	fill(n64.Pix, 1)
	imgs["NRGBA64"] = n64
	c := image.NewCMYK(r)
	fill(c.Pix, 1)
	imgs["CMYK"] = c
	p := image.NewPaletted(r, color.Palette{color.Black, color.White, red, color.RGBA{0, 0, 255, 255}})
	for i := range p.Pix {
		p.Pix[i] = byte(i*7/3) % 4
	}
	imgs["Paletted"] = p
	sub := image.NewRGBA(image.Rect(0, 0, w+3, h+5))
	fill(sub.Pix, 1)
	imgs["RGBA sub-image off origin"] = sub.SubImage(image.Rect(3, 5, w+3, h+5))
	return imgs
}

var red = color.RGBA{255, 0, 0, 255}

func fill(b []byte, k int) {
	for i := range b {
		b[i] = byte(i*k + i/7)
	}
}

func TestOrientMatchesEXIFDefinition(t *testing.T) {
	// Sizes are multiples of the chroma subsampling (4×2) so every chroma
	// sample covers whole pixels, plus a size spanning several tiles.
	for _, size := range []image.Point{{8, 4}, {12, 20}, {136, 72}} {
		for name, img := range testImages(size.X, size.Y) {
			for o := 1; o <= 8; o++ {
				got := orient(img, o)
				w, h, want := naiveOrient(img, o)
				// 4:1:1 and 4:1:0 turned a quarter go through RGBA, whose
				// 8-bit conversion rounds differently from YCbCr.RGBA.
				tol := uint32(0)
				if strings.Contains(name, "41") && o >= 5 {
					tol = 2 * 0x101
				}
				within := func(a, b uint32) bool { return a-b <= tol || b-a <= tol }
				if got.Bounds() != image.Rect(0, 0, w, h) {
					t.Errorf("%s %v, orientation %d: bounds %v, want %dx%d", name, size, o, got.Bounds(), w, h)
					continue
				}
			pixels:
				for y := 0; y < h; y++ {
					for x := 0; x < w; x++ {
						gr, gg, gb, ga := got.At(x, y).RGBA()
						wr, wg, wb, wa := want(x, y).RGBA()
						if !within(gr, wr) || !within(gg, wg) || !within(gb, wb) || !within(ga, wa) {
							t.Errorf("%s %v, orientation %d: pixel (%d,%d) = %v, want %v", name, size, o, x, y, got.At(x, y), want(x, y))
							break pixels
						}
					}
				}
			}
		}
	}
}

func TestOrientKeepsYCbCr(t *testing.T) {
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio444} {
		m := image.NewYCbCr(image.Rect(0, 0, 16, 8), ratio)
		for o := 1; o <= 8; o++ {
			if _, ok := orient(m, o).(*image.YCbCr); !ok {
				t.Errorf("%v orientation %d: got %T, want *image.YCbCr", ratio, o, orient(m, o))
			}
		}
	}
}
