package cutout

import (
	"image"
	"image/draw"

	"carphoto/imageops/internal/nn"
)

// rows reads a photo one row at a time as 8-bit non-premultiplied RGBA, with
// bounds at (0,0): the same bytes a whole copy of it as an *image.NRGBA would hold,
// without that copy (48 MB for 12 megapixels). Opaque images (every JPEG) take
// draw's fast paths, straight into the caller's buffer.
type rows struct {
	img    image.Image
	b      image.Rectangle
	nrgba  *image.NRGBA // img, when it is one: rows are copied
	opaque bool
}

func newRows(img image.Image) *rows {
	r := &rows{img: img, b: img.Bounds()}
	r.nrgba, _ = img.(*image.NRGBA)
	if o, ok := img.(interface{ Opaque() bool }); ok && r.nrgba == nil {
		r.opaque = o.Opaque()
	}
	return r
}

// read writes pixels x0 to x1 of row y into dst, 4 bytes a pixel.
func (r *rows) read(y, x0, x1 int, dst []byte) {
	dst = dst[:4*(x1-x0)]
	if r.nrgba != nil {
		i := r.nrgba.PixOffset(r.b.Min.X+x0, r.b.Min.Y+y)
		copy(dst, r.nrgba.Pix[i:i+len(dst)])
		return
	}
	// Draw into an RGBA view of dst (premultiplied), then un-premultiply; for
	// opaque pixels the two layouts are identical.
	rgba := &image.RGBA{Pix: dst, Stride: len(dst), Rect: image.Rect(x0, 0, x1, 1)}
	draw.Draw(rgba, rgba.Rect, r.img, image.Pt(r.b.Min.X+x0, r.b.Min.Y+y), draw.Src)
	if r.opaque {
		return
	}
	for i := 0; i+3 < len(dst); i += 4 {
		a := uint32(dst[i+3])
		if a == 255 || a == 0 {
			continue
		}
		dst[i] = uint8(min(255, (uint32(dst[i])*255+a/2)/a))
		dst[i+1] = uint8(min(255, (uint32(dst[i+1])*255+a/2)/a))
		dst[i+2] = uint8(min(255, (uint32(dst[i+2])*255+a/2)/a))
	}
}

// add adds the colours of row y to acc, three sums a pixel: those of pixels
// xs[k] to xs[k+1] to pixel k's. row is scratch of 4 bytes a pixel. A decoded
// JPEG's planes are converted on the fly, as image/draw converts them
// (color.YCbCrToRGB), without writing the row out first.
func (r *rows) add(y int, xs []int, acc []uint32, row []byte) {
	w := len(xs) - 1
	if m, ok := r.img.(*image.YCbCr); ok && ycbcrDrawn(m.SubsampleRatio) && r.b.Min.X >= 0 {
		sy, sx := r.b.Min.Y+y, r.b.Min.X
		yrow := m.Y[m.YOffset(sx, sy):]
		c0 := m.COffset(sx, sy)
		cb, cr := m.Cb[c0:], m.Cr[c0:]
		cshift, odd := 0, 0 // chroma column = (pixel column + odd) >> cshift, as COffset
		if m.SubsampleRatio == image.YCbCrSubsampleRatio422 || m.SubsampleRatio == image.YCbCrSubsampleRatio420 {
			cshift, odd = 1, sx&1
		}
		if cshift == 1 && odd == 0 {
			addPairs(yrow, cb, cr, xs, acc)
			return
		}
		for k := range w {
			var sr, sg, sb uint32
			for x := xs[k]; x < xs[k+1]; x++ {
				ci := (x + odd) >> cshift
				yy1 := int32(yrow[x]) * 0x10101
				cb1 := int32(cb[ci]) - 128
				cr1 := int32(cr[ci]) - 128
				sr += clampShift(yy1 + 91881*cr1)
				sg += clampShift(yy1 - 22554*cb1 - 46802*cr1)
				sb += clampShift(yy1 + 116130*cb1)
			}
			a := acc[3*k : 3*k+3 : 3*k+3]
			a[0], a[1], a[2] = a[0]+sr, a[1]+sg, a[2]+sb
		}
		return
	}
	r.read(y, 0, xs[w], row)
	for k := range w {
		var sr, sg, sb uint32
		for x := xs[k]; x < xs[k+1]; x++ {
			sr += uint32(row[4*x])
			sg += uint32(row[4*x+1])
			sb += uint32(row[4*x+2])
		}
		a := acc[3*k : 3*k+3 : 3*k+3]
		a[0], a[1], a[2] = a[0]+sr, a[1]+sg, a[2]+sb
	}
}

// addPairs is rows.add for chroma halved across (4:2:0, 4:2:2), the row
// starting on a pair: pixels 2j and 2j+1 share chroma sample j, whose terms
// are worked out once for both.
func addPairs(yrow, cb, cr []byte, xs []int, acc []uint32) {
	for k := range len(xs) - 1 {
		x, hi := xs[k], xs[k+1]
		var sr, sg, sb uint32
		if x&1 == 1 && x < hi {
			sr, sg, sb = ycbcrRGB(yrow[x], cb[x>>1], cr[x>>1])
			x++
		}
		for ; x+1 < hi; x += 2 {
			cb1 := int32(cb[x>>1]) - 128
			cr1 := int32(cr[x>>1]) - 128
			tr, tg, tb := 91881*cr1, -22554*cb1-46802*cr1, 116130*cb1
			y0, y1 := int32(yrow[x])*0x10101, int32(yrow[x+1])*0x10101
			sr += clampShift(y0+tr) + clampShift(y1+tr)
			sg += clampShift(y0+tg) + clampShift(y1+tg)
			sb += clampShift(y0+tb) + clampShift(y1+tb)
		}
		if x < hi {
			r, g, b := ycbcrRGB(yrow[x], cb[x>>1], cr[x>>1])
			sr, sg, sb = sr+r, sg+g, sb+b
		}
		a := acc[3*k : 3*k+3 : 3*k+3]
		a[0], a[1], a[2] = a[0]+sr, a[1]+sg, a[2]+sb
	}
}

// ycbcrRGB is color.YCbCrToRGB.
func ycbcrRGB(y, cb, cr uint8) (r, g, b uint32) {
	yy1 := int32(y) * 0x10101
	cb1 := int32(cb) - 128
	cr1 := int32(cr) - 128
	return clampShift(yy1 + 91881*cr1), clampShift(yy1 - 22554*cb1 - 46802*cr1), clampShift(yy1 + 116130*cb1)
}

// ycbcrDrawn reports whether image/draw converts this subsampling with its
// own loop (color.YCbCrToRGB per pixel), which rows.add repeats.
func ycbcrDrawn(s image.YCbCrSubsampleRatio) bool {
	switch s {
	case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440:
		return true
	}
	return false
}

// clampShift is one channel of color.YCbCrToRGB from its 16.16 fixed-point
// sum: v >> 16 clamped to 0..255.
func clampShift(v int32) uint32 {
	if uint32(v)&0xff000000 == 0 {
		return uint32(v >> 16)
	}
	return uint32(uint8(^(v >> 31)))
}

// shrink averages the photo (opaque colours) into a w×h image of three float32
// planes in 0..1. Each output pixel is the mean of the source pixels whose index maps
// to it, so shrinking touches every source pixel once; enlarging repeats pixels.
func shrink(src *rows, w, h int) *plane {
	sw, sh := src.b.Dx(), src.b.Dy()
	out := newPlane(3, h, w)
	r, g, b := out.ch(0), out.ch(1), out.ch(2)
	row := make([]byte, 4*sw)
	if sw < w || sh < h {
		// Enlarging: nearest source pixel.
		for y := 0; y < h; y++ {
			src.read(y*sh/h, 0, sw, row)
			for x := 0; x < w; x++ {
				i := 4 * (x * sw / w)
				r[y*w+x] = float32(row[i]) / 255
				g[y*w+x] = float32(row[i+1]) / 255
				b[y*w+x] = float32(row[i+2]) / 255
			}
		}
		return out
	}
	// Output column k averages source columns xs[k] to xs[k+1] (those x with
	// x*w/sw == k).
	xs := make([]int, w+1)
	for x := sw - 1; x >= 0; x-- {
		xs[x*w/sw] = x
	}
	xs[w] = sw
	acc := make([]uint32, 3*w)
	cnt := make([]uint32, w)
	for y := 0; y < h; y++ {
		clear(acc)
		y0, y1 := y*sh/h, (y+1)*sh/h
		for sy := y0; sy < y1; sy++ {
			src.add(sy, xs, acc, row)
		}
		for k := range cnt {
			cnt[k] = uint32((xs[k+1] - xs[k]) * (y1 - y0))
		}
		for x := 0; x < w; x++ {
			n := float32(cnt[x]) * 255
			r[y*w+x] = float32(acc[3*x]) / n
			g[y*w+x] = float32(acc[3*x+1]) / n
			b[y*w+x] = float32(acc[3*x+2]) / n
		}
	}
	return out
}

// bilinear resamples one plane of sw×sh to w×h, pixel centres aligned
// (align_corners=false in PyTorch's terms).
func bilinear(src []float32, sw, sh, w, h int) []float32 {
	out := make([]float32, w*h)
	x0s, x1s, fxs := axisMap(sw, w)
	for y := 0; y < h; y++ {
		y0, y1, fy := axisWeight(sh, h, y)
		r0, r1 := src[y0*sw:(y0+1)*sw], src[y1*sw:(y1+1)*sw]
		drow := out[y*w : (y+1)*w]
		for x := range drow {
			a := r0[x0s[x]] + (r0[x1s[x]]-r0[x0s[x]])*fxs[x]
			b := r1[x0s[x]] + (r1[x1s[x]]-r1[x0s[x]])*fxs[x]
			drow[x] = a + (b-a)*fy
		}
	}
	return out
}

// axisWeight maps output index i of an axis of n samples onto a source axis of sn
// samples: the two neighbours and the weight of the second.
func axisWeight(sn, n, i int) (int, int, float32) {
	s := (float32(i)+0.5)*float32(sn)/float32(n) - 0.5
	if s <= 0 {
		return 0, 0, 0
	}
	i0 := int(s)
	if i0 >= sn-1 {
		return sn - 1, sn - 1, 0
	}
	return i0, i0 + 1, s - float32(i0)
}

func axisMap(sn, n int) (i0s, i1s []int, fs []float32) {
	i0s, i1s, fs = make([]int, n), make([]int, n), make([]float32, n)
	for i := range n {
		i0s[i], i1s[i], fs[i] = axisWeight(sn, n, i)
	}
	return i0s, i1s, fs
}

// areaPlane resamples each channel of p to w×h (no larger than p) by area
// averaging with fractional coverage: each output pixel is the mean of the source
// area it covers, edge pixels counted by the share they overlap (OpenCV's
// INTER_AREA). Whole-pixel cells, as shrink's, would alternate in width for ratios
// such as 3:2, which shifts edges by up to half a pixel.
func areaPlane(p *plane, w, h int) *plane {
	out := newPlane(p.c, h, w)
	xs := areaWeights(p.w, w)
	ys := areaWeights(p.h, h)
	tmp := make([]float32, p.h*w)
	for c := range p.c {
		src, dst := p.ch(c), out.ch(c)
		for y := range p.h {
			row := src[y*p.w : (y+1)*p.w]
			for x, ws := range xs {
				var s float32
				for _, t := range ws {
					s += row[t.i] * t.w
				}
				tmp[y*w+x] = s
			}
		}
		for y, ws := range ys {
			drow := dst[y*w : (y+1)*w]
			clear(drow)
			for _, t := range ws {
				for x, v := range tmp[t.i*w : (t.i+1)*w] {
					drow[x] += v * t.w
				}
			}
		}
	}
	return out
}

// tap is one source sample and its weight.
type tap struct {
	i int
	w float32
}

// areaWeights returns, for each of n output samples over sn source samples
// (n <= sn), the source samples it covers and their shares (summing to 1).
func areaWeights(sn, n int) [][]tap {
	out := make([][]tap, n)
	scale := float64(sn) / float64(n)
	for i := range n {
		lo, hi := float64(i)*scale, float64(i+1)*scale
		for j := int(lo); j < sn && float64(j) < hi; j++ {
			cover := min(hi, float64(j+1)) - max(lo, float64(j))
			if cover > 1e-9 {
				out[i] = append(out[i], tap{j, float32(cover / scale)})
			}
		}
	}
	return out
}

// plane is a stack of c float32 planes of h×w, channel-major.
type plane struct {
	c, h, w int
	d       []float32
}

func newPlane(c, h, w int) *plane {
	return &plane{c: c, h: h, w: w, d: make([]float32, c*h*w)}
}

func (p *plane) ch(i int) []float32 { return p.d[i*p.h*p.w : (i+1)*p.h*p.w] }

// tensor is p seen as the network's tensor type, sharing its data.
func (p *plane) tensor() *nn.Tensor { return &nn.Tensor{C: p.c, H: p.h, W: p.w, Data: p.d} }
