package codec

import (
	"encoding/binary"
	"image"
	"image/draw"

	"carphoto/imageops/jpegblock"
)

// orient returns img turned from its stored orientation o (the EXIF
// Orientation value, 1..8) into displayed orientation, with bounds starting
// at (0,0). Orientation 1 returns img itself. The decoders' types keep
// their type (a JPEG stays *image.YCbCr, its planes moved one by one);
// anything else is converted to *image.RGBA first.
//
// For YCbCr with odd dimensions, flipping moves the half-covered last
// chroma sample to the other edge: colour shifts by at most one pixel at
// that edge and nowhere else.
func orient(img image.Image, o int) image.Image {
	if o < 1 || o > 8 {
		o = 1
	}
	if img.Bounds().Min != (image.Point{}) {
		img = toRGBA(img)
	}
	if o == 1 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dr := image.Rect(0, 0, dw, dh)

	switch m := img.(type) {
	case *image.YCbCr:
		if d := orientYCbCr(m, o); d != nil {
			return d
		}
	case *image.NYCbCrA:
		if d := orientYCbCr(&m.YCbCr, o); d != nil {
			a := &image.NYCbCrA{YCbCr: *d, A: make([]byte, dw*dh), AStride: dw}
			transformPlane(a.A, a.AStride, m.A, m.AStride, w, h, 1, o)
			return a
		}
	case *image.Gray:
		d := image.NewGray(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 1, o)
		return d
	case *image.Gray16:
		d := image.NewGray16(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 2, o)
		return d
	case *image.RGBA:
		d := image.NewRGBA(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 4, o)
		return d
	case *image.NRGBA:
		d := image.NewNRGBA(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 4, o)
		return d
	case *image.CMYK:
		d := image.NewCMYK(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 4, o)
		return d
	case *image.RGBA64:
		d := image.NewRGBA64(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 8, o)
		return d
	case *image.NRGBA64:
		d := image.NewNRGBA64(dr)
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 8, o)
		return d
	case *image.Paletted:
		d := image.NewPaletted(dr, append(m.Palette[:0:0], m.Palette...))
		transformPlane(d.Pix, d.Stride, m.Pix, m.Stride, w, h, 1, o)
		return d
	}
	return orient(toRGBA(img), o)
}

// toRGBA copies img into a new *image.RGBA whose bounds start at (0,0).
func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	d := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(d, d.Bounds(), img, b.Min, draw.Src)
	return d
}

// orientYCbCr moves the three planes of m, or returns nil for the
// subsampling ratios that have no rotated counterpart in image.YCbCr
// (4:1:1 and 4:1:0 turned a quarter).
func orientYCbCr(m *image.YCbCr, o int) *image.YCbCr {
	ratio := m.SubsampleRatio
	if o >= 5 {
		switch ratio {
		case image.YCbCrSubsampleRatio422:
			ratio = image.YCbCrSubsampleRatio440
		case image.YCbCrSubsampleRatio440:
			ratio = image.YCbCrSubsampleRatio422
		case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio420:
		default:
			return nil
		}
	}
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	d := image.NewYCbCr(image.Rect(0, 0, dw, dh), ratio)
	transformPlane(d.Y, d.YStride, m.Y, m.YStride, w, h, 1, o)
	cw, ch := chromaSize(w, h, m.SubsampleRatio)
	transformPlane(d.Cb, d.CStride, m.Cb, m.CStride, cw, ch, 1, o)
	transformPlane(d.Cr, d.CStride, m.Cr, m.CStride, cw, ch, 1, o)
	return d
}

// chromaSize is the size of a chroma plane of a w×h YCbCr image at (0,0).
func chromaSize(w, h int, r image.YCbCrSubsampleRatio) (int, int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	case image.YCbCrSubsampleRatio411:
		return (w + 3) / 4, h
	case image.YCbCrSubsampleRatio410:
		return (w + 3) / 4, (h + 1) / 2
	}
	return w, h
}

// orientTile is the side of the square blocks transformPlane copies at a
// time, so that a quarter turn reads and writes within a few cache-resident
// rows instead of striding across the whole image for every pixel.
const orientTile = 64

// transformPlane copies the w×h plane src (bpp bytes a pixel, rows stride
// apart) into dst turned by EXIF orientation o. dst must hold the turned
// plane (h×w for o ≥ 5).
//
// Every orientation maps source (x, y) to a destination offset that is
// affine in x and y: off0 + x·sx + y·sy, with sx and sy each ±bpp or
// ±dstStride, read off jpegblock.ToDisplayed (the one owner of the
// orientations' geometry) at (0,0), (1,0) and (0,1). For o = 6 (turn
// clockwise), for example, (x, y) lands at column h−1−y, row x.
func transformPlane(dst []byte, dstStride int, src []byte, srcStride, w, h, bpp, o int) {
	if w == 0 || h == 0 {
		return
	}
	at := func(x, y int) int {
		dx, dy := jpegblock.ToDisplayed(o, x, y, w, h)
		return dy*dstStride + dx*bpp
	}
	off0 := at(0, 0)
	sx, sy := at(1, 0)-off0, at(0, 1)-off0
	for ty := 0; ty < h; ty += orientTile {
		yEnd := min(ty+orientTile, h)
		for tx := 0; tx < w; tx += orientTile {
			xEnd := min(tx+orientTile, w)
			for y := ty; y < yEnd; y++ {
				row := src[y*srcStride+tx*bpp : y*srcStride+xEnd*bpp]
				d := off0 + tx*sx + y*sy
				switch bpp {
				case 1:
					for _, v := range row {
						dst[d] = v
						d += sx
					}
				case 4: // one 32-bit load and store, not a copy call
					for i := 0; i+3 < len(row); i += 4 {
						binary.LittleEndian.PutUint32(dst[d:], binary.LittleEndian.Uint32(row[i:]))
						d += sx
					}
				default:
					for i := 0; i+bpp <= len(row); i += bpp {
						copy(dst[d:d+bpp], row[i:i+bpp])
						d += sx
					}
				}
			}
		}
	}
}
