package imgtest

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"testing"
)

// WriteJPEG writes img as a JPEG file of quality q at path, failing tb if
// it cannot.
func WriteJPEG(tb testing.TB, path string, img image.Image, q int) {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Grey is a w×h picture of nearly flat grey: a photo with no plate and no car.
func Grey(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(100 + i%7)
	}
	return img
}

// BoxScene is a w×h picture of a dark box standing on a light floor
// before a light wall: the simplest thing a cut-out takes for a car.
func BoxScene(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{220, 220, 225, 255}
			if y > h*2/3 {
				c = color.RGBA{180, 180, 180, 255}
			}
			if x > w/5 && x < w*4/5 && y > h/3 && y < h*3/4 {
				c = color.RGBA{30, 40, 90, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}
