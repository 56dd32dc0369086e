package jpegblock

import (
	"image"
	"image/color"
	"image/draw"
)

// decodeAll decodes every MCU once, recording where each starts and its
// DC predictors, and writes the reduced preview from the coefficients.
func (f *File) decodeAll() error {
	n := 8 / f.factor // preview samples a block side
	keep := keepFor[n]
	nc := len(f.comps)
	mcus := f.mcusX * f.mcusY
	f.mcuBit = make([]uint32, mcus)
	f.mcuPred = make([]int32, mcus*nc)
	f.cache = map[int][]uint8{}
	f.preview = make([][]uint8, nc)
	f.pvW = make([]int, nc)
	f.pvH = make([]int, nc)
	for i, c := range f.comps {
		f.pvW[i], f.pvH[i] = c.bw*n, c.bh*n
		f.preview[i] = make([]uint8, f.pvW[i]*f.pvH[i])
	}
	r := bitReader{buf: f.scan}
	perMCU := 0
	for _, c := range f.comps {
		perMCU += c.h * c.v
	}
	f.perMCU = perMCU
	// Each block's preview offset from its MCU's, in MCU scan order, and
	// each component's preview samples an MCU spans across and down.
	type slot struct{ ci, off int }
	var slots []slot
	var spanX, spanY [4]int
	for ci, c := range f.comps {
		spanX[ci], spanY[ci] = c.h*n, c.v*n*f.pvW[ci]
		for by := range c.v {
			for bx := range c.h {
				slots = append(slots, slot{ci, by*n*f.pvW[ci] + bx*n})
			}
		}
	}
	var blk [64]int16
	var coef [64]float32
	m := 0
	for k := range f.inter {
		iv := &f.inter[k]
		iv.firstMCU = m
		r.seek(int(iv.bitStart))
		var pred [4]int32
		last := mcus
		if f.restart > 0 {
			last = min(mcus, m+f.restart)
		}
		for ; m < last; m++ {
			f.mcuBit[m] = uint32(r.bitPos())
			copy(f.mcuPred[m*nc:], pred[:nc])
			mx, my := m%f.mcusX, m/f.mcusX
			for _, sl := range slots {
				ci := sl.ci
				c := &f.comps[ci]
				q := &f.quant[c.tq]
				clear(blk[:keep])
				if !r.decodeBlock(f.dc[c.td], f.ac[c.ta], &pred[ci], blk[:]) {
					return corrupt("bad Huffman code in MCU %d", m)
				}
				at := f.preview[ci][my*spanY[ci]+mx*spanX[ci]+sl.off:]
				switch n {
				case 1:
					at[0] = clamp8(float32(int32(blk[0])*q[0])/8 + 128)
					continue
				case 2:
					// The 2-point basis is ±1/(2√2) throughout: each
					// output is (F00 ± F01 ± F10 ± F11) / 8.
					a, b := float32(int32(blk[0])*q[0]), float32(int32(blk[1])*q[1])
					c, e := float32(int32(blk[2])*q[2]), float32(int32(blk[4])*q[4])
					s := f.pvW[ci]
					at[0] = clamp8((a+b+c+e)/8 + 128)
					at[1] = clamp8((a-b+c-e)/8 + 128)
					at[s] = clamp8((a+b-c-e)/8 + 128)
					at[s+1] = clamp8((a-b-c+e)/8 + 128)
					continue
				}
				for z := range keep {
					coef[unzig[z]] = float32(int32(blk[z]) * q[z])
				}
				idct(&coef, n, at, f.pvW[ci])
			}
		}
		if r.bitPos() > int(iv.bitEnd) {
			return corrupt("restart interval %d ends before its MCUs do", k)
		}
		iv.bitEnd = uint32(r.bitPos())
	}
	return nil
}

// Preview returns the photo reduced by Factor in displayed orientation,
// built from the coefficients without decoding the full image.
//
// In the stored orientation and a subsampling image.YCbCr knows, it is an
// *image.YCbCr (or *image.Gray) over the preview's planes; otherwise an
// *image.RGBA.
func (f *File) Preview() image.Image {
	sw, sh := (f.w+f.factor-1)/f.factor, (f.h+f.factor-1)/f.factor
	if f.orientation == 1 {
		p := &planes{n: 8 / f.factor, mw: f.mcusX, mh: f.mcusY, comp: f.preview, stride: f.pvW}
		if img := f.planeImage(p, sw, sh); img != nil {
			return img
		}
	}
	dw, dh := sw, sh
	if f.orientation >= 5 {
		dw, dh = sh, sw
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range dh {
		row := out.Pix[y*out.Stride:]
		for x := range dw {
			sx, sy := ToStored(f.orientation, x, y, sw, sh)
			r, g, b := f.previewAt(sx, sy)
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = r, g, b, 255
		}
	}
	return out
}

// Factor is how many photo pixels one preview pixel spans on a side.
func (f *File) Factor() int { return f.factor }

func (f *File) previewAt(x, y int) (uint8, uint8, uint8) {
	yy := f.preview[0][y*f.pvW[0]+x]
	if len(f.comps) == 1 {
		return yy, yy, yy
	}
	cb := f.preview[1][y*f.comps[1].v/f.vmax*f.pvW[1]+x*f.comps[1].h/f.hmax]
	cr := f.preview[2][y*f.comps[2].v/f.vmax*f.pvW[2]+x*f.comps[2].h/f.hmax]
	return color.YCbCrToRGB(yy, cb, cr)
}

// mcuSpan is the range of MCU columns and rows that stored rectangle r touches.
func (f *File) mcuSpan(r image.Rectangle) (x0, y0, x1, y1 int) {
	mw, mh := 8*f.hmax, 8*f.vmax
	return r.Min.X / mw, r.Min.Y / mh, (r.Max.X + mw - 1) / mw, (r.Max.Y + mh - 1) / mh
}

// planes holds full-resolution samples of a stored rectangle of whole MCUs:
// each component at its own resolution.
type planes struct {
	n        int // samples a block side: 8 at full resolution
	mx0, my0 int // first MCU column and row
	mw, mh   int // MCUs across and down
	comp     [][]uint8
	stride   []int
}

// decodeMCUs decodes MCU columns x0..x1 and rows y0..y1 to samples, n a
// block side (8: full resolution; 4, 2: reduced).
func (f *File) decodeMCUs(x0, y0, x1, y1, n int) (*planes, error) {
	p := &planes{n: n, mx0: x0, my0: y0, mw: x1 - x0, mh: y1 - y0}
	for _, c := range f.comps {
		s := p.mw * c.h * n
		p.stride = append(p.stride, s)
		p.comp = append(p.comp, make([]uint8, s*p.mh*c.v*n))
	}
	for my := y0; my < y1; my++ {
		for mx := x0; mx < x1; mx++ {
			samples, err := f.mcuSamples(my*f.mcusX+mx, n)
			if err != nil {
				return nil, err
			}
			for ci, c := range f.comps {
				w, h := c.h*n, c.v*n
				src := samples[:w*h]
				samples = samples[w*h:]
				dst := p.comp[ci][(my-y0)*h*p.stride[ci]+(mx-x0)*w:]
				for y := range h {
					copy(dst[y*p.stride[ci]:y*p.stride[ci]+w], src[y*w:])
				}
			}
		}
	}
	return p, nil
}

// mcuSamples decodes MCU m to samples, n a block side: each component's
// c.h·n × c.v·n samples in turn. Full-resolution MCUs are kept, as the
// verifiers' windows overlap (a second look is around the same plate).
// Not safe for concurrent use.
func (f *File) mcuSamples(m, n int) ([]uint8, error) {
	if c, ok := f.cache[m]; ok && n == 8 {
		return c, nil
	}
	blocks, err := f.mcuCoefs(m)
	if err != nil {
		return nil, err
	}
	size := 0
	for _, c := range f.comps {
		size += c.h * c.v * n * n
	}
	out := make([]uint8, size)
	var coef [64]float32
	k, at := 0, 0
	for _, c := range f.comps {
		q := &f.quant[c.tq]
		w := c.h * n
		for by := range c.v {
			for bx := range c.h {
				clear(coef[:])
				for z := range keepFor[n] {
					coef[unzig[z]] = float32(blocks[k][z] * q[z])
				}
				k++
				idct(&coef, n, out[at+by*n*w+bx*n:], w)
			}
		}
		at += w * c.v * n
	}
	if n == 8 {
		f.cache[m] = out
	}
	return out, nil
}

// mcuCoefs decodes MCU m again from where the first pass found it: its
// blocks' quantised coefficients, in scan order, zigzag.
func (f *File) mcuCoefs(m int) ([][64]int32, error) {
	nc := len(f.comps)
	r := bitReader{buf: f.scan}
	r.seek(int(f.mcuBit[m]))
	var pred [4]int32
	copy(pred[:], f.mcuPred[m*nc:(m+1)*nc])
	out := make([][64]int32, 0, f.perMCU)
	var blk [64]int16
	for ci, c := range f.comps {
		for range c.v * c.h {
			clear(blk[:])
			if !r.decodeBlock(f.dc[c.td], f.ac[c.ta], &pred[ci], blk[:]) {
				return nil, corrupt("bad Huffman code in MCU %d", m)
			}
			var b [64]int32
			for z, v := range blk {
				b[z] = int32(v)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// Region returns full-resolution pixels covering r (displayed coordinates,
// clipped to the photo), decoded only from the MCUs it touches. Its
// bounds are r clipped, in photo coordinates.
func (f *File) Region(r image.Rectangle) (*image.RGBA, error) {
	img, _, err := f.regionRGBA(r, 1, false)
	if err != nil {
		return nil, err
	}
	return img.(*image.RGBA), nil
}

// RegionAt is Region reduced by a power of two g of at most most (and at
// most 8): pixel (x, y) of the result covers photo pixels (g·x, g·y) to
// (g·x+g, g·y+g), read from a g-times reduced inverse DCT of each block, or
// from the preview when g is its factor or more. Its bounds are r's
// divided by g.
//
// In the stored orientation and a subsampling image.YCbCr knows, it is an
// *image.YCbCr (or *image.Gray) over the decoded planes, as large as the
// MCUs under r (within the photo): no colour conversion. Otherwise it is
// an *image.RGBA of r.
func (f *File) RegionAt(r image.Rectangle, most int) (image.Image, int, error) {
	return f.regionRGBA(r, most, true)
}

func (f *File) regionRGBA(r image.Rectangle, most int, planar bool) (image.Image, int, error) {
	g := 1
	for g < 8 && g*2 <= most {
		g *= 2
	}
	r = r.Intersect(f.Bounds())
	if r.Empty() {
		return image.NewRGBA(image.Rectangle{}), g, nil
	}
	var p *planes
	if g >= f.factor {
		g = f.factor
		p = &planes{n: 8 / g, mw: f.mcusX, mh: f.mcusY, comp: f.preview, stride: f.pvW}
	}
	sw, sh := (f.w+g-1)/g, (f.h+g-1)/g
	dw, dh := sw, sh
	if f.orientation >= 5 {
		dw, dh = sh, sw
	}
	rr := image.Rect(r.Min.X/g, r.Min.Y/g, (r.Max.X+g-1)/g, (r.Max.Y+g-1)/g).Intersect(image.Rect(0, 0, dw, dh))
	if p == nil {
		x0, y0 := ToStored(f.orientation, rr.Min.X, rr.Min.Y, sw, sh)
		x1, y1 := ToStored(f.orientation, rr.Max.X-1, rr.Max.Y-1, sw, sh)
		sr := image.Rect(min(x0, x1)*g, min(y0, y1)*g, (max(x0, x1)+1)*g, (max(y0, y1)+1)*g)
		mx0, my0, mx1, my1 := f.mcuSpan(sr)
		var err error
		if p, err = f.decodeMCUs(mx0, my0, min(mx1, f.mcusX), min(my1, f.mcusY), 8/g); err != nil {
			return nil, g, err
		}
	}
	if f.orientation == 1 {
		if img := f.planeImage(p, sw, sh); img != nil {
			if planar {
				return img, g, nil
			}
			out := image.NewRGBA(rr)
			draw.Draw(out, rr, img, rr.Min, draw.Src) // the standard library's fast conversion
			return out, g, nil
		}
	}
	out := image.NewRGBA(rr)
	nc := len(f.comps)
	var fx, fy [3]int
	for ci, c := range f.comps {
		fx[ci], fy[ci] = f.hmax/c.h, f.vmax/c.v
	}
	ox, oy := p.mx0*p.n*f.hmax, p.my0*p.n*f.vmax
	for y := rr.Min.Y; y < rr.Max.Y; y++ {
		row := out.Pix[out.PixOffset(rr.Min.X, y):]
		for x := rr.Min.X; x < rr.Max.X; x++ {
			sx, sy := ToStored(f.orientation, x, y, sw, sh)
			lx, ly := sx-ox, sy-oy
			i := (x - rr.Min.X) * 4
			yy := p.comp[0][ly/fy[0]*p.stride[0]+lx/fx[0]]
			if nc == 1 {
				row[i], row[i+1], row[i+2], row[i+3] = yy, yy, yy, 255
				continue
			}
			cb := p.comp[1][ly/fy[1]*p.stride[1]+lx/fx[1]]
			cr := p.comp[2][ly/fy[2]*p.stride[2]+lx/fx[2]]
			row[i], row[i+1], row[i+2] = color.YCbCrToRGB(yy, cb, cr)
			row[i+3] = 255
		}
	}
	return out, g, nil
}

// ratios are the subsamplings image.YCbCr knows, by the luma samples a
// chroma sample spans across and down.
var ratios = map[[2]int]image.YCbCrSubsampleRatio{
	{1, 1}: image.YCbCrSubsampleRatio444, {2, 1}: image.YCbCrSubsampleRatio422,
	{2, 2}: image.YCbCrSubsampleRatio420, {1, 2}: image.YCbCrSubsampleRatio440,
	{4, 1}: image.YCbCrSubsampleRatio411, {4, 2}: image.YCbCrSubsampleRatio410,
}

// planeImage wraps decoded planes (stored orientation, a sw×sh image at
// their scale) as an image, or returns nil for a subsampling image.YCbCr
// cannot hold.
func (f *File) planeImage(p *planes, sw, sh int) image.Image {
	mw, mh := p.n*f.hmax, p.n*f.vmax
	rect := image.Rect(p.mx0*mw, p.my0*mh, min((p.mx0+p.mw)*mw, sw), min((p.my0+p.mh)*mh, sh))
	if len(f.comps) == 1 {
		return &image.Gray{Pix: p.comp[0], Stride: p.stride[0], Rect: rect}
	}
	cb, cr := f.comps[1], f.comps[2]
	if cb.h != cr.h || cb.v != cr.v {
		return nil
	}
	ratio, ok := ratios[[2]int{f.hmax / cb.h, f.vmax / cb.v}]
	if !ok {
		return nil
	}
	return &image.YCbCr{Y: p.comp[0], Cb: p.comp[1], Cr: p.comp[2], YStride: p.stride[0], CStride: p.stride[1],
		SubsampleRatio: ratio, Rect: rect}
}
