package carseg

import (
	"image"
	"image/color"

	"carphoto/imageops/internal/nn"
)

// prepare stretches img to side×side and scales it as the quantised
// graph's input reads it: planes red, green, blue, each (v − 128)/128. An
// output pixel is the mean of a grid of up to 4×4 samples of the pixels it
// covers when shrinking, bilinear (pixel centres aligned) when enlarging;
// at the photo's own size, the photo.
func prepare(img image.Image, side int) *nn.Tensor {
	b := img.Bounds()
	xs := nn.Samples(b.Dx(), side, b.Min.X)
	ys := nn.Samples(b.Dy(), side, b.Min.Y)
	t := nn.Scratch(3, side, side)
	acc := make([]float32, 3*side)
	at := pixelReader(img)
	for oy := range side {
		clear(acc)
		for _, sy := range ys[oy] {
			for ox, ss := range xs {
				for _, sx := range ss {
					r, g, bl := at(sx.At, sy.At)
					w := sx.Weight * sy.Weight
					acc[3*ox] += w * r
					acc[3*ox+1] += w * g
					acc[3*ox+2] += w * bl
				}
			}
		}
		for c := range 3 {
			row := t.Data[(c*side+oy)*side : (c*side+oy+1)*side]
			for ox := range row {
				row[ox] = (acc[3*ox+c] - 128) / 128
			}
		}
	}
	return t
}

// pixelReader returns a function giving the colour of pixel (x, y) of img,
// 0–255 a channel, reading the decoders' image types directly.
func pixelReader(img image.Image) func(x, y int) (r, g, b float32) {
	switch m := img.(type) {
	case *image.YCbCr:
		return func(x, y int) (float32, float32, float32) {
			yi, ci := m.YOffset(x, y), m.COffset(x, y)
			r, g, b := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
			return float32(r), float32(g), float32(b)
		}
	case *image.RGBA:
		return func(x, y int) (float32, float32, float32) {
			p := m.Pix[m.PixOffset(x, y):]
			return float32(p[0]), float32(p[1]), float32(p[2])
		}
	case *image.NRGBA:
		return func(x, y int) (float32, float32, float32) {
			p := m.Pix[m.PixOffset(x, y):]
			return float32(p[0]), float32(p[1]), float32(p[2])
		}
	}
	return func(x, y int) (float32, float32, float32) {
		c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
		return float32(c.R), float32(c.G), float32(c.B)
	}
}
