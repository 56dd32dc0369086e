package codec

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/kovidgoyal/imaging/prism/meta/icc"
)

// A photo whose profile is left out of the answer (EmbedICC, Decode) has
// its pixels converted from that profile's colour space to sRGB, which is
// what viewers take an image without a profile to be: a Display P3 or
// Adobe RGB photo keeps its colours instead of coming out duller. The
// profile is read by a colour-management engine in pure Go (kovidgoyal's
// imaging, prism/meta/icc: matrix/TRC and LUT profiles, ICC v2 and v4),
// clipped to sRGB's gamut (relative colorimetric), sampled once on a lutPoints³ grid of the photo's RGB values, and the
// pixels are interpolated in that grid, as colour-management engines do
// for 8-bit pixels. Only RGB profiles on colour pixels are converted; a
// profile the engine cannot read leaves the pixels as they are.

// lutPoints is the grid's points along each axis: 33, as lcms uses for 8-bit
// transforms; the interpolation then differs from the transform itself by
// under one level of 255 on smooth profiles.
const lutPoints = 33

// srgbLUT is a profile's transform to sRGB sampled on the grid: for each
// grid point (r, g, b) the sRGB values, 0..255.
type srgbLUT []float32

// newSRGBLUT reads profile and samples its transform to sRGB (relative
// colorimetric). It fails for a profile that is not RGB, or that the
// engine does not read; a panic in the engine on a hostile profile is an
// error too.
func newSRGBLUT(profile []byte) (lut srgbLUT, err error) {
	defer func() {
		if r := recover(); r != nil {
			lut, err = nil, fmt.Errorf("colour profile: %v", r)
		}
	}()
	p, err := icc.DecodeProfile(bytes.NewReader(profile))
	if err != nil {
		return nil, fmt.Errorf("colour profile: %w", err)
	}
	if p.Header.DataColorSpace != icc.ColorSpaceRGB {
		return nil, fmt.Errorf("colour profile: %s data, not RGB", p.Header.DataColorSpace)
	}
	tr, err := p.CreateTransformerToSRGB(icc.RelativeColorimetricRenderingIntent, false, 3, true, false, true)
	if err != nil {
		return nil, fmt.Errorf("colour profile: %w", err)
	}
	lut = make(srgbLUT, lutPoints*lutPoints*lutPoints*3)
	const step = 1.0 / (lutPoints - 1)
	i := 0
	for r := range lutPoints {
		for g := range lutPoints {
			for b := range lutPoints {
				sr, sg, sb := tr.Transform(float64(r)*step, float64(g)*step, float64(b)*step)
				for _, v := range [3]float64{sr, sg, sb} {
					if math.IsNaN(v) {
						v = 0
					}
					lut[i] = float32(min(max(v, 0), 1) * 255)
					i++
				}
			}
		}
	}
	return lut, nil
}

// at is the sRGB value of the colour (r, g, b), trilinear in the grid.
func (l srgbLUT) at(r, g, b uint8) (uint8, uint8, uint8) {
	const scale = float32(lutPoints-1) / 255
	fr, fg, fb := float32(r)*scale, float32(g)*scale, float32(b)*scale
	ir, ig, ib := min(int(fr), lutPoints-2), min(int(fg), lutPoints-2), min(int(fb), lutPoints-2)
	dr, dg, db := fr-float32(ir), fg-float32(ig), fb-float32(ib)
	const sr, sg = lutPoints * lutPoints * 3, lutPoints * 3
	base := ir*sr + ig*sg + ib*3
	var out [3]uint8
	for c := range 3 {
		p := base + c
		c00 := l[p]*(1-db) + l[p+3]*db
		c01 := l[p+sg]*(1-db) + l[p+sg+3]*db
		c10 := l[p+sr]*(1-db) + l[p+sr+3]*db
		c11 := l[p+sr+sg]*(1-db) + l[p+sr+sg+3]*db
		v := (c00*(1-dg)+c01*dg)*(1-dr) + (c10*(1-dg)+c11*dg)*dr
		out[c] = uint8(min(max(v+0.5, 0), 255))
	}
	return out[0], out[1], out[2]
}

// ToSRGB returns img's pixels taken from the colour space of profile to
// sRGB, as a new image (*image.NRGBA where img has transparency, else
// *image.RGBA), and whether they were: a profile that is not RGB, one the
// engine does not read, or grey pixels leave img as it is (false).
func ToSRGB(img image.Image, profile []byte) (image.Image, bool) {
	switch img.(type) {
	case *image.Gray, *image.Gray16, *image.CMYK:
		return img, false
	}
	lut, err := newSRGBLUT(profile)
	if err != nil {
		return img, false
	}
	b := img.Bounds()
	switch src := img.(type) {
	case *image.YCbCr:
		dst := image.NewRGBA(b)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := dst.Pix[(y-b.Min.Y)*dst.Stride:]
			for x := b.Min.X; x < b.Max.X; x++ {
				yi, ci := src.YOffset(x, y), src.COffset(x, y)
				r, g, bl := color.YCbCrToRGB(src.Y[yi], src.Cb[ci], src.Cr[ci])
				o := row[(x-b.Min.X)*4:]
				o[0], o[1], o[2] = lut.at(r, g, bl)
				o[3] = 0xff
			}
		}
		return dst, true
	case *image.NRGBA:
		dst := image.NewNRGBA(b)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			in := src.Pix[src.PixOffset(b.Min.X, y):]
			out := dst.Pix[(y-b.Min.Y)*dst.Stride:]
			for x := 0; x < b.Dx(); x++ {
				s, o := in[x*4:x*4+4], out[x*4:x*4+4]
				o[0], o[1], o[2] = lut.at(s[0], s[1], s[2])
				o[3] = s[3]
			}
		}
		return dst, true
	case *image.RGBA:
		dst := image.NewNRGBA(b)
		opaque := true
		for y := b.Min.Y; y < b.Max.Y; y++ {
			in := src.Pix[src.PixOffset(b.Min.X, y):]
			out := dst.Pix[(y-b.Min.Y)*dst.Stride:]
			for x := 0; x < b.Dx(); x++ {
				s, o := in[x*4:x*4+4], out[x*4:x*4+4]
				r, g, bl, a := s[0], s[1], s[2], s[3]
				if a != 0xff {
					opaque = false
					if a == 0 {
						continue
					}
					c := color.NRGBAModel.Convert(color.RGBA{r, g, bl, a}).(color.NRGBA)
					r, g, bl = c.R, c.G, c.B
				}
				o[0], o[1], o[2] = lut.at(r, g, bl)
				o[3] = a
			}
		}
		if opaque {
			return &image.RGBA{Pix: dst.Pix, Stride: dst.Stride, Rect: dst.Rect}, true
		}
		return dst, true
	}
	// Anything else through its colour model: transparency kept
	// un-premultiplied.
	dst := image.NewNRGBA(b)
	opaque := true
	for y := b.Min.Y; y < b.Max.Y; y++ {
		out := dst.Pix[(y-b.Min.Y)*dst.Stride:]
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			o := out[(x-b.Min.X)*4:]
			o[0], o[1], o[2] = lut.at(c.R, c.G, c.B)
			o[3] = c.A
			opaque = opaque && c.A == 0xff
		}
	}
	if opaque {
		return &image.RGBA{Pix: dst.Pix, Stride: dst.Stride, Rect: dst.Rect}, true
	}
	return dst, true
}
