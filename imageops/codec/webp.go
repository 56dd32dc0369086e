package codec

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"io"

	"github.com/gen2brain/webp"
)

// EncodeWebP writes img as a lossy WebP at quality (clamped to 1..99), its
// alpha, if any, kept losslessly, through libwebp compiled to WebAssembly
// (github.com/gen2brain/webp: no cgo, no library on the machine). Like
// EncodeJPEG it writes no EXIF; libwebp's simple encoder writes no ICC
// profile either, so a photo in another colour space than sRGB is shown as
// if it were sRGB.
func EncodeWebP(w io.Writer, img image.Image, quality int) error {
	if b := img.Bounds(); b.Empty() || b.Dx() > 16383 || b.Dy() > 16383 {
		return fmt.Errorf("encode webp: a %d×%d image cannot be written as WebP", b.Dx(), b.Dy())
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	// The library reads an *image.RGBA's bytes as if they were not
	// premultiplied and assumes a stride of four bytes a pixel: hand it
	// un-premultiplied pixels starting at 0,0.
	err := webp.Encode(bw, ToNRGBA(img), webp.Options{Quality: min(max(quality, 1), 99)})
	if err != nil {
		return fmt.Errorf("encode webp: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode webp: %w", err)
	}
	return nil
}

// ToNRGBA returns img as an *image.NRGBA whose bounds start at 0,0 and
// whose rows are packed, copying only when it is not one already.
func ToNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) && n.Stride == 4*n.Rect.Dx() {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Rect, img, b.Min, draw.Src)
	return n
}

// Flatten returns img composited over an opaque background colour, for an
// answer in a format without alpha (JPEG): transparent pixels take the
// background instead of coming out black.
func Flatten(img image.Image, bg color.Color) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Rect, image.NewUniform(bg), image.Point{}, draw.Src)
	draw.Draw(out, out.Rect, img, b.Min, draw.Over)
	return out
}

// FlattenInPlace is Flatten for an image the caller hands over: img is
// composited over bg in its own pixels, exactly as Flatten composites it,
// and they are returned as an opaque *image.RGBA with img's bounds, with no
// second copy of the picture.
func FlattenInPlace(img *image.NRGBA, bg color.Color) *image.RGBA {
	// Flatten's two steps, image/draw's Src fill and its drawNRGBAOver, a
	// pixel at a time: the 8-bit background, and the premultiplied source
	// over it on 16 bits.
	const m = 1<<16 - 1
	r16, g16, b16, a16 := bg.RGBA()
	back := [4]uint32{r16 >> 8, g16 >> 8, b16 >> 8, a16 >> 8}
	w := img.Rect.Dx()
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		row := img.Pix[img.PixOffset(img.Rect.Min.X, y):][:4*w]
		for i := 0; i < len(row); i += 4 {
			p := row[i : i+4 : i+4]
			sa := uint32(p[3]) * 0x101
			a := (m - sa) * 0x101
			for c := range 3 {
				p[c] = uint8((back[c]*a/m + uint32(p[c])*sa/0xff) >> 8)
			}
			p[3] = uint8((back[3]*a/m + sa) >> 8)
		}
	}
	return &image.RGBA{Pix: img.Pix, Stride: img.Stride, Rect: img.Rect}
}
