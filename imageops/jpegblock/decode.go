package jpegblock

import (
	"image"
	"image/color"
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
	f.preview = make([][]uint8, nc)
	f.pvW = make([]int, nc)
	f.pvH = make([]int, nc)
	for i, c := range f.comps {
		f.pvW[i], f.pvH[i] = c.bw*n, c.bh*n
		f.preview[i] = make([]uint8, f.pvW[i]*f.pvH[i])
	}
	r := bitReader{buf: f.scan}
	var blk [64]int32
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
			for ci := range f.comps {
				c := &f.comps[ci]
				q := &f.quant[c.tq]
				for by := range c.v {
					for bx := range c.h {
						clear(blk[:keep])
						if !r.decodeBlock(f.dc[c.td], f.ac[c.ta], &pred[ci], &blk, keep) {
							return corrupt("bad Huffman code in MCU %d", m)
						}
						px, py := (mx*c.h+bx)*n, (my*c.v+by)*n
						at := f.preview[ci][py*f.pvW[ci]+px:]
						if n == 1 {
							at[0] = clamp8(float32(blk[0]*q[0])/8 + 128)
							continue
						}
						clear(coef[:])
						for z := range keep {
							coef[unzig[z]] = float32(blk[z] * q[z])
						}
						idct(&coef, n, at, f.pvW[ci])
					}
				}
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
func (f *File) Preview() *image.RGBA {
	sw, sh := (f.w+f.factor-1)/f.factor, (f.h+f.factor-1)/f.factor
	dw, dh := sw, sh
	if f.orientation >= 5 {
		dw, dh = sh, sw
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range dh {
		row := out.Pix[y*out.Stride:]
		for x := range dw {
			sx, sy := toStored(f.orientation, x, y, sw, sh)
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

// toStored maps displayed pixel (x, y) to stored pixel coordinates for
// EXIF orientation o, the stored image being w×h.
func toStored(o, x, y, w, h int) (int, int) {
	switch o {
	case 2:
		return w - 1 - x, y
	case 3:
		return w - 1 - x, h - 1 - y
	case 4:
		return x, h - 1 - y
	case 5:
		return y, x
	case 6:
		return y, h - 1 - x
	case 7:
		return w - 1 - y, h - 1 - x
	case 8:
		return w - 1 - y, x
	}
	return x, y
}

// storedRect maps a displayed rectangle to the stored one it covers.
func (f *File) storedRect(r image.Rectangle) image.Rectangle {
	r = r.Intersect(f.Bounds())
	if r.Empty() {
		return image.Rectangle{}
	}
	x0, y0 := toStored(f.orientation, r.Min.X, r.Min.Y, f.w, f.h)
	x1, y1 := toStored(f.orientation, r.Max.X-1, r.Max.Y-1, f.w, f.h)
	return image.Rect(min(x0, x1), min(y0, y1), max(x0, x1)+1, max(y0, y1)+1)
}

// mcuSpan is the range of MCU columns and rows that stored rectangle r touches.
func (f *File) mcuSpan(r image.Rectangle) (x0, y0, x1, y1 int) {
	mw, mh := 8*f.hmax, 8*f.vmax
	return r.Min.X / mw, r.Min.Y / mh, (r.Max.X + mw - 1) / mw, (r.Max.Y + mh - 1) / mh
}

// planes holds full-resolution samples of a stored rectangle of whole MCUs:
// each component at its own resolution.
type planes struct {
	mx0, my0 int // first MCU column and row
	mw, mh   int // MCUs across and down
	comp     [][]uint8
	stride   []int
}

// decodeMCUs decodes MCU columns x0..x1 and rows y0..y1 to samples. coefs,
// when not nil, receives every block's quantised coefficients by MCU.
func (f *File) decodeMCUs(x0, y0, x1, y1 int) (*planes, error) {
	p := &planes{mx0: x0, my0: y0, mw: x1 - x0, mh: y1 - y0}
	for _, c := range f.comps {
		s := p.mw * c.h * 8
		p.stride = append(p.stride, s)
		p.comp = append(p.comp, make([]uint8, s*p.mh*c.v*8))
	}
	var coef [64]float32
	for my := y0; my < y1; my++ {
		for mx := x0; mx < x1; mx++ {
			blocks, err := f.mcuCoefs(my*f.mcusX + mx)
			if err != nil {
				return nil, err
			}
			k := 0
			for ci, c := range f.comps {
				q := &f.quant[c.tq]
				for by := range c.v {
					for bx := range c.h {
						for z := range 64 {
							coef[unzig[z]] = float32(blocks[k][z] * q[z])
						}
						k++
						px, py := ((mx-x0)*c.h+bx)*8, ((my-y0)*c.v+by)*8
						idct(&coef, 8, p.comp[ci][py*p.stride[ci]+px:], p.stride[ci])
					}
				}
			}
		}
	}
	return p, nil
}

// mcuCoefs decodes MCU m again from where the first pass found it: its
// blocks' quantised coefficients, in scan order, zigzag.
func (f *File) mcuCoefs(m int) ([][64]int32, error) {
	nc := len(f.comps)
	r := bitReader{buf: f.scan}
	r.seek(int(f.mcuBit[m]))
	var pred [4]int32
	copy(pred[:], f.mcuPred[m*nc:(m+1)*nc])
	var out [][64]int32
	for ci, c := range f.comps {
		for range c.v * c.h {
			var blk [64]int32
			if !r.decodeBlock(f.dc[c.td], f.ac[c.ta], &pred[ci], &blk, 64) {
				return nil, corrupt("bad Huffman code in MCU %d", m)
			}
			out = append(out, blk)
		}
	}
	return out, nil
}

// Region returns full-resolution pixels covering r (displayed coordinates,
// clipped to the photo), decoded only from the MCUs it touches. Its
// bounds are r clipped, in photo coordinates.
func (f *File) Region(r image.Rectangle) (*image.RGBA, error) {
	r = r.Intersect(f.Bounds())
	if r.Empty() {
		return image.NewRGBA(r), nil
	}
	sr := f.storedRect(r)
	x0, y0, x1, y1 := f.mcuSpan(sr)
	p, err := f.decodeMCUs(x0, y0, x1, y1)
	if err != nil {
		return nil, err
	}
	out := image.NewRGBA(r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := out.Pix[out.PixOffset(r.Min.X, y):]
		for x := r.Min.X; x < r.Max.X; x++ {
			sx, sy := toStored(f.orientation, x, y, f.w, f.h)
			rr, g, b := f.pixel(p, sx, sy)
			i := (x - r.Min.X) * 4
			row[i], row[i+1], row[i+2], row[i+3] = rr, g, b, 255
		}
	}
	return out, nil
}

// sample is component ci's sample at stored pixel (x, y) in p (nearest,
// as image.YCbCr reads subsampled chroma).
func (f *File) sample(p *planes, ci, x, y int) uint8 {
	c := f.comps[ci]
	lx := x - p.mx0*8*f.hmax
	ly := y - p.my0*8*f.vmax
	return p.comp[ci][ly*c.v/f.vmax*p.stride[ci]+lx*c.h/f.hmax]
}

func (f *File) pixel(p *planes, x, y int) (uint8, uint8, uint8) {
	yy := f.sample(p, 0, x, y)
	if len(f.comps) == 1 {
		return yy, yy, yy
	}
	return color.YCbCrToRGB(yy, f.sample(p, 1, x, y), f.sample(p, 2, x, y))
}
