package jpegblock

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"os"
	"testing"

	"carphoto"
)

// FuzzParse feeds damaged JPEGs through the whole block path: Parse, a
// region, the preview and a write with an edit. Bad input must be a clear
// error (invalid_params, or ErrUnsupported for the full path), never a
// panic; what parses must write.
func FuzzParse(f *testing.F) {
	f.Add(encodeGo(f, photo(40, 24)))
	g := image.NewGray(image.Rect(0, 0, 19, 13))
	f.Add(encodeGo(f, g))
	for _, name := range []string{"quad.422.restart.jpg", "quad.444.jpg", "quad.progressive.icc.jpg"} {
		if data, err := os.ReadFile("../codec/testdata/" + name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		file, err := Parse(data, 6, 8)
		if err != nil {
			var ce *carphoto.Error
			if !errors.Is(err, ErrUnsupported) && !(errors.As(err, &ce) && ce.Code == carphoto.EInvalidParams) {
				t.Fatalf("got %v, want invalid_params or ErrUnsupported", err)
			}
			return
		}
		b := file.Bounds()
		if b.Dx()*b.Dy() > 1<<20 {
			return
		}
		// What Parse reads, DecodeImage decodes whole, to the same size.
		if img, err := DecodeImage(data); err != nil {
			t.Fatalf("DecodeImage of a file Parse read: %v", err)
		} else if ib := img.Bounds(); ib.Dx() != b.Dx() && ib.Dx() != b.Dy() {
			t.Fatalf("DecodeImage gave %v for a %v photo", ib, b)
		}
		file.Preview()
		r := image.Rect(b.Dx()/4, b.Dy()/4, b.Dx()/2+1, b.Dy()/2+1)
		before, err := file.Region(r)
		if err != nil {
			t.Fatalf("region of a parsed file: %v", err)
		}
		after := image.NewRGBA(before.Rect)
		for i := range after.Pix {
			after.Pix[i] = 255
		}
		after.SetRGBA(r.Min.X, r.Min.Y, color.RGBA{1, 2, 3, 255})
		var out bytes.Buffer
		if _, err := file.Write(&out, []Patch{{Before: before, After: after}}); err != nil && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("write: %v", err)
		}
	})
}
