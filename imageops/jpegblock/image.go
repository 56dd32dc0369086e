package jpegblock

import (
	"fmt"
	"image"

	"carphoto"
)

// DecodeImage decodes a whole baseline JPEG of a kind Parse reads to an
// *image.YCbCr (or *image.Gray) in its stored orientation, as image/jpeg
// does, with this package's Huffman decoder (about three times the
// standard library's speed on a 12 MP photo) and inverse DCT. A JPEG it
// does not read is ErrUnsupported; malformed data is a *carphoto.Error.
// It never panics on bad input.
func DecodeImage(data []byte) (img image.Image, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, carphoto.Wrap(fmt.Errorf("jpegblock panic: %v", r), carphoto.EInvalidParams,
				"image data is corrupt: the decoder could not read it")
		}
	}()
	f := &File{data: data, orientation: 1}
	at, err := f.readHeader()
	if err != nil {
		return nil, err
	}
	if err := f.unstuff(at); err != nil {
		return nil, err
	}
	p := &planes{n: 8, mw: f.mcusX, mh: f.mcusY}
	for _, c := range f.comps {
		s := f.mcusX * c.h * 8
		p.stride = append(p.stride, s)
		p.comp = append(p.comp, make([]uint8, s*f.mcusY*c.v*8))
	}
	img = f.planeImage(p, f.w, f.h)
	if img == nil {
		return nil, unsupported("a chroma subsampling image.YCbCr cannot hold")
	}
	if err := f.decodeFull(p); err != nil {
		return nil, err
	}
	return img, nil
}

// decodeFull decodes every block of the scan to full-resolution samples
// in p, one pass in scan order.
func (f *File) decodeFull(p *planes) error {
	type slot struct{ ci, off int } // a block's component and offset from its MCU's
	var slots []slot
	var spanX, spanY [4]int // an MCU's samples across and down, per component
	for ci, c := range f.comps {
		spanX[ci], spanY[ci] = c.h*8, c.v*8*p.stride[ci]
		for by := range c.v {
			for bx := range c.h {
				slots = append(slots, slot{ci, by*8*p.stride[ci] + bx*8})
			}
		}
	}
	var mult [4][64]float32 // each quantisation table as idctAAN's multipliers
	for i := range f.quant {
		mult[i] = aanQuant(&f.quant[i])
	}
	mcus := f.mcusX * f.mcusY
	r := bitReader{buf: f.scan}
	var blk [64]int16
	var coef [64]float32
	m := 0
	for k := range f.inter {
		iv := &f.inter[k]
		r.seek(int(iv.bitStart))
		var pred [4]int32
		last := mcus
		if f.restart > 0 {
			last = min(mcus, m+f.restart)
		}
		for ; m < last; m++ {
			mx, my := m%f.mcusX, m/f.mcusX
			for _, sl := range slots {
				c := &f.comps[sl.ci]
				clear(blk[:])
				if !r.decodeBlock(f.dc[c.td], f.ac[c.ta], &pred[sl.ci], blk[:]) {
					return corrupt("bad Huffman code in MCU %d", m)
				}
				stride := p.stride[sl.ci]
				out := p.comp[sl.ci][my*spanY[sl.ci]+mx*spanX[sl.ci]+sl.off:]
				q := &f.quant[c.tq]
				if last := lastNonzero(&blk); last == 0 {
					v := clamp8(float32(int32(blk[0])*q[0])/8 + 128)
					for y := range 8 {
						row := out[y*stride : y*stride+8]
						for i := range row {
							row[i] = v
						}
					}
				} else {
					clear(coef[:])
					mq := &mult[c.tq]
					for z := range last + 1 {
						n := unzig[z] & 63
						coef[n] = float32(blk[z]) * mq[n]
					}
					idctAAN(&coef, out, stride)
				}
			}
		}
		if r.bitPos() > int(iv.bitEnd) {
			return corrupt("restart interval %d ends before its MCUs do", k)
		}
	}
	return nil
}

// lastNonzero is the zigzag index of a block's last nonzero coefficient
// (0 for a block of its DC alone: every sample at the DC's level).
func lastNonzero(b *[64]int16) int {
	for z := 63; z > 0; z-- {
		if b[z] != 0 {
			return z
		}
	}
	return 0
}
