package plates

import (
	"carphoto/imageops/internal/nn"
	"image"
	"math"
)

// The photo resampled to the size a network looks at, normalised as the
// training programs do (prepare, windowSamples).

// prepare resizes img so its long side is side pixels (box filter when
// shrinking, bilinear when enlarging), pads it to a multiple of 32 with
// mid-grey, and normalises it as the training program does. It returns the
// tensor and the scale from photo to working pixels.
func prepare(img image.Image, side int) (*nn.Tensor, float64) {
	b := img.Bounds()
	s := float64(side) / float64(max(b.Dx(), b.Dy()))
	nw := max(1, int(math.Round(float64(b.Dx())*s)))
	nh := max(1, int(math.Round(float64(b.Dy())*s)))
	t := nn.NewTensor(3, (nh+31)/32*32, (nw+31)/32*32)
	xs := windowSamples(0, float64(b.Dx()), nw, b.Dx(), b.Min.X, 2)
	ys := windowSamples(0, float64(b.Dy()), nh, b.Dy(), b.Min.Y, 2)
	r, g, bl := t.Plane(0), t.Plane(1), t.Plane(2)
	if m, ok := img.(*image.YCbCr); ok && s < 1 && len(xs[0]) == 2 && len(ys[0]) == 2 {
		shrinkYCbCr2(t, m, xs, ys, nw, nh)
		return t, s
	}
	if m, ok := img.(*image.YCbCr); ok {
		// Average luma and chroma, then convert once per working pixel.
		// Offsets are separable in x and y for every subsampling ratio.
		o := m.Rect.Min
		yx, cx := make([][2]int, 0, 3*nw), make([]int, nw+1)
		for ox := range nw {
			cx[ox] = len(yx)
			for _, p := range xs[ox] {
				yx = append(yx, [2]int{m.YOffset(p.at, o.Y) - m.YOffset(o.X, o.Y), m.COffset(p.at, o.Y) - m.COffset(o.X, o.Y)})
			}
		}
		cx[nw] = len(yx)
		type row struct {
			y, c   int
			weight float32
		}
		var rows []row
		for oy := range nh {
			rows = rows[:0]
			for _, py := range ys[oy] {
				rows = append(rows, row{m.YOffset(o.X, py.at), m.COffset(o.X, py.at), py.weight})
			}
			for ox := range nw {
				var sy, scb, scr, sw float32
				if s < 1 {
					// Shrinking: the samples weigh alike; sum in integers.
					var iy, icb, icr int
					for _, py := range rows {
						for _, off := range yx[cx[ox]:cx[ox+1]] {
							ci := py.c + off[1]
							iy += int(m.Y[py.y+off[0]])
							icb += int(m.Cb[ci])
							icr += int(m.Cr[ci])
						}
					}
					sy, scb, scr, sw = float32(iy), float32(icb), float32(icr), float32(len(rows)*(cx[ox+1]-cx[ox]))
				} else {
					for _, py := range rows {
						for k, off := range yx[cx[ox]:cx[ox+1]] {
							wt := xs[ox][k].weight * py.weight
							ci := py.c + off[1]
							sy += wt * float32(m.Y[py.y+off[0]])
							scb += wt * float32(m.Cb[ci])
							scr += wt * float32(m.Cr[ci])
							sw += wt
						}
					}
				}
				yy, cb, cr := sy/sw, scb/sw-128, scr/sw-128
				i := oy*t.W + ox
				r[i] = norm(yy + 1.402*cr)
				g[i] = norm(yy - 0.344136*cb - 0.714136*cr)
				bl[i] = norm(yy + 1.772*cb)
			}
		}
		return t, s
	}
	px := pixelReader(img)
	for oy := range nh {
		for ox := range nw {
			var sr, sg, sb, sw float32
			for _, sy := range ys[oy] {
				for _, sx := range xs[ox] {
					cr, cg, cb := px(sx.at, sy.at)
					wt := sx.weight * sy.weight
					sr += wt * cr
					sg += wt * cg
					sb += wt * cb
					sw += wt
				}
			}
			i := oy*t.W + ox
			r[i], g[i], bl[i] = norm(sr/sw), norm(sg/sw), norm(sb/sw)
		}
	}
	return t, s
}

// shrinkYCbCr2 is prepare's shrink of a YCbCr image read at 2×2 samples a
// working pixel (every photo whose long side is 1–2 times side, as a JPEG's
// coefficient preview of a 12-megapixel photo is): the same sums as the
// general loop, with the samples' plane offsets laid out flat.
func shrinkYCbCr2(t *nn.Tensor, m *image.YCbCr, xs, ys [][]sample, nw, nh int) {
	o := m.Rect.Min
	y0, c0 := m.YOffset(o.X, o.Y), m.COffset(o.X, o.Y)
	xy, xc := make([]int, 2*nw), make([]int, 2*nw)
	for ox, ss := range xs {
		for j, p := range ss {
			xy[2*ox+j], xc[2*ox+j] = m.YOffset(p.at, o.Y)-y0, m.COffset(p.at, o.Y)-c0
		}
	}
	r, g, bl := t.Plane(0), t.Plane(1), t.Plane(2)
	for oy, ss := range ys {
		ya, yb := m.YOffset(o.X, ss[0].at), m.YOffset(o.X, ss[1].at)
		ca, cb := m.COffset(o.X, ss[0].at), m.COffset(o.X, ss[1].at)
		yRowA, yRowB := m.Y[ya:], m.Y[yb:]
		cbA, cbB, crA, crB := m.Cb[ca:], m.Cb[cb:], m.Cr[ca:], m.Cr[cb:]
		out := oy * t.W
		for ox := range nw {
			x0, x1, k0, k1 := xy[2*ox], xy[2*ox+1], xc[2*ox], xc[2*ox+1]
			iy := int(yRowA[x0]) + int(yRowA[x1]) + int(yRowB[x0]) + int(yRowB[x1])
			icb := int(cbA[k0]) + int(cbA[k1]) + int(cbB[k0]) + int(cbB[k1])
			icr := int(crA[k0]) + int(crA[k1]) + int(crB[k0]) + int(crB[k1])
			yy, u, v := float32(iy)/4, float32(icb)/4-128, float32(icr)/4-128
			i := out + ox
			r[i] = norm(yy + 1.402*v)
			g[i] = norm(yy - 0.344136*u - 0.714136*v)
			bl[i] = norm(yy + 1.772*u)
		}
	}
}

// norm maps 0..255 to the network's input range; mid-grey is 0.
func norm(v float32) float32 { return (v/255 - 0.5) / 0.25 }

type sample struct {
	at     int
	weight float32
}

// windowSamples lists, for each of n outputs covering [o, o+length) of an
// axis of src pixels, the source positions and weights: the two bilinear
// neighbours when enlarging, or up to most evenly spread samples inside
// the output pixel's footprint when shrinking (a sparse box filter). The
// first stage takes 2 (exact enough for proposals, which the verifier checks
// at full resolution; a 12-megapixel photo is read at about a tenth of its
// pixels, 8 ms less than 3), the verifier 3. Positions are
// clamped to the photo.
func windowSamples(o, length float64, n, src, origin, most int) [][]sample {
	out := make([][]sample, n)
	scale := length / float64(n)
	k := 2 // samples an output: two bilinear neighbours, or up to most
	if scale > 1 {
		k = min(most, int(math.Ceil(scale-1e-9)))
	}
	all := make([]sample, n*k) // one allocation for every output's samples
	for i := range out {
		out[i] = all[i*k : (i+1)*k : (i+1)*k]
		if scale <= 1 {
			f := clamp(o+(float64(i)+0.5)*scale-0.5, 0, float64(src-1))
			j := int(f)
			fr := float32(f - float64(j))
			out[i][0], out[i][1] = sample{origin + j, 1 - fr}, sample{origin + min(j+1, src-1), fr}
			continue
		}
		for s := range k {
			f := o + (float64(i)+(float64(s)+0.5)/float64(k))*scale
			j := max(0, min(src-1, int(math.Floor(f))))
			out[i][s] = sample{origin + j, 1 / float32(k)}
		}
	}
	return out
}

// pixelReader returns a fast reader of a pixel's 8-bit RGB for the common
// decoded image types, falling back to image.Image.At.
func pixelReader(img image.Image) func(x, y int) (r, g, b float32) {
	switch m := img.(type) {
	case *image.RGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			return float32(m.Pix[i]), float32(m.Pix[i+1]), float32(m.Pix[i+2])
		}
	case *image.NRGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			a := float32(m.Pix[i+3]) / 255
			// Transparent areas read as mid-grey, as padding does.
			return float32(m.Pix[i])*a + 128*(1-a), float32(m.Pix[i+1])*a + 128*(1-a), float32(m.Pix[i+2])*a + 128*(1-a)
		}
	case *image.Gray:
		return func(x, y int) (float32, float32, float32) {
			v := float32(m.Pix[m.PixOffset(x, y)])
			return v, v, v
		}
	case *image.YCbCr:
		return func(x, y int) (float32, float32, float32) {
			yy := float32(m.Y[m.YOffset(x, y)])
			ci := m.COffset(x, y)
			cb, cr := float32(m.Cb[ci])-128, float32(m.Cr[ci])-128
			return yy + 1.402*cr, yy - 0.344136*cb - 0.714136*cr, yy + 1.772*cb
		}
	}
	return func(x, y int) (float32, float32, float32) {
		r, g, b, _ := img.At(x, y).RGBA()
		return float32(r >> 8), float32(g >> 8), float32(b >> 8)
	}
}
