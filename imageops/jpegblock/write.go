package jpegblock

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"io"
	"slices"
)

// Patch is an edit of the photo: After holds new pixels for Before's
// bounds (displayed coordinates), Before the pixels Region gave there.
// Only pixels that differ are written, and only within Changed when it is
// not empty (the caller knows where it painted: the rest is not compared).
type Patch struct {
	Before, After *image.RGBA
	Changed       image.Rectangle
}

// mcuEdit is the new pixels of one MCU, stored orientation.
type mcuEdit struct {
	ycc     [][3]uint8 // 8hmax × 8vmax, row-major: the new pixels in JFIF YCbCr
	changed []bool
}

// Write writes the JPEG with patches applied: the MCUs where a pixel
// changed are decoded, edited and coded again at the file's own tables;
// every other MCU's bits are copied, re-coding only the DC difference of
// the first block of each component after an edit when it changed. The
// header keeps the frame, tables, restart interval, JFIF, Adobe and ICC
// segments and drops every other (EXIF, XMP, IPTC, comments); an
// orientation other than 1 is written as an EXIF holding only it. It
// returns how many MCUs were coded again. A table lacking a code the edit
// needs is ErrUnsupported.
func (f *File) Write(w io.Writer, patches []Patch) (int, error) {
	edits := f.collect(patches)
	newBlocks := map[int][][64]int32{}
	for _, m := range slices.Sorted(mapKeys(edits)) {
		blocks, changed, err := f.editMCU(m, edits[m])
		if err != nil {
			return 0, err
		}
		if changed {
			newBlocks[m] = blocks
		}
	}

	order := slices.Sorted(mapKeys(newBlocks)) // the edited MCUs
	var bw bitWriter
	out := make([]byte, 0, len(f.data)+1024)
	out = f.writeHeader(out)
	nc := len(f.comps)
	mcus := f.mcusX * f.mcusY
	for k, iv := range f.inter {
		if k > 0 {
			out = append(out, 0xFF, 0xD0+byte((k-1)&7))
		}
		last := mcus
		if k+1 < len(f.inter) {
			last = f.inter[k+1].firstMCU
		}
		touched := false
		for m := range newBlocks {
			if m >= iv.firstMCU && m < last {
				touched = true
				break
			}
		}
		if !touched {
			out = append(out, f.data[iv.start:iv.end]...)
			continue
		}
		bw.out = out
		var pred [4]int32
		for m := iv.firstMCU; m < last; m++ {
			blocks, edited := newBlocks[m]
			if !edited && slices.Equal(pred[:nc], f.mcuPred[m*nc:(m+1)*nc]) {
				// Copied as they are, MCUs m to the next edited one
				// (or the interval's end) leave the predictors as the
				// input's: copy them at once.
				e := last
				if i, _ := slices.BinarySearch(order, m); i < len(order) && order[i] < last {
					e = order[i]
				}
				end := iv.bitEnd
				if e < last {
					end = f.mcuBit[e]
					copy(pred[:nc], f.mcuPred[e*nc:])
				}
				bw.copyBits(f.scan, int(f.mcuBit[m]), int(end))
				m = e - 1
				continue
			}
			if !edited {
				var err error
				if blocks, err = f.mcuCoefs(m); err != nil {
					return 0, err
				}
			}
			if err := f.encodeMCU(&bw, blocks, &pred, edited); err != nil {
				return 0, err
			}
		}
		bw.flush()
		out = bw.out
	}
	out = append(out, 0xFF, 0xD9)
	_, err := w.Write(out)
	return len(newBlocks), err
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// collect maps the changed pixels of every patch to the MCUs they fall in.
func (f *File) collect(patches []Patch) map[int]*mcuEdit {
	mw, mh := 8*f.hmax, 8*f.vmax
	edits := map[int]*mcuEdit{}
	for _, p := range patches {
		r := p.Before.Rect.Intersect(p.After.Rect).Intersect(f.Bounds())
		if !p.Changed.Empty() {
			r = r.Intersect(p.Changed)
		}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				a, b := p.After.PixOffset(x, y), p.Before.PixOffset(x, y)
				na, nb := p.After.Pix[a:a+3:a+3], p.Before.Pix[b:b+3:b+3]
				if na[0] == nb[0] && na[1] == nb[1] && na[2] == nb[2] {
					continue
				}
				sx, sy := ToStored(f.orientation, x, y, f.w, f.h)
				m := sy/mh*f.mcusX + sx/mw
				e := edits[m]
				if e == nil {
					e = &mcuEdit{ycc: make([][3]uint8, mw*mh), changed: make([]bool, mw*mh)}
					edits[m] = e
				}
				i := sy%mh*mw + sx%mw
				y, cb, cr := color.RGBToYCbCr(na[0], na[1], na[2])
				e.ycc[i] = [3]uint8{y, cb, cr}
				e.changed[i] = true
			}
		}
	}
	return edits
}

// editMCU returns MCU m's blocks with e applied: a block none of whose
// samples changed keeps its coefficients exactly; the others are
// transformed and quantised again. changed is false when no block changed.
func (f *File) editMCU(m int, e *mcuEdit) ([][64]int32, bool, error) {
	mx, my := m%f.mcusX, m/f.mcusX
	blocks, err := f.mcuCoefs(m)
	if err != nil {
		return nil, false, err
	}
	p, err := f.decodeMCUs(mx, my, mx+1, my+1, 8)
	if err != nil {
		return nil, false, err
	}
	mw := 8 * f.hmax
	any := false
	k := 0
	for ci, c := range f.comps {
		fx, fy := f.hmax/c.h, f.vmax/c.v // pixels a sample spans
		plane, stride := p.comp[ci], p.stride[ci]
		for by := range c.v {
			for bx := range c.h {
				dirty := false
				for y := by * 8; y < by*8+8; y++ {
					for x := bx * 8; x < bx*8+8; x++ {
						var sum, n, hit int
						for py := y * fy; py < (y+1)*fy; py++ {
							for px := x * fx; px < (x+1)*fx; px++ {
								i := py*mw + px
								n++
								if e.changed[i] {
									hit++
									sum += int(e.ycc[i][ci]) // luma alone: ci is 0
								} else {
									sum += int(plane[y*stride+x])
								}
							}
						}
						if hit == 0 {
							continue
						}
						v := uint8((sum + n/2) / n)
						if v != plane[y*stride+x] {
							plane[y*stride+x] = v
							dirty = true
						}
					}
				}
				if dirty {
					blocks[k] = fdct(plane[by*8*stride+bx*8:], stride, &f.quant[c.tq])
					any = true
				}
				k++
			}
		}
	}
	return blocks, any, nil
}

// encodeMCU codes blocks (scan order) with the file's Huffman tables.
func (f *File) encodeMCU(w *bitWriter, blocks [][64]int32, pred *[4]int32, fit bool) error {
	k := 0
	for ci, c := range f.comps {
		for range c.v * c.h {
			if err := encodeBlock(w, f.dc[c.td], f.ac[c.ta], &blocks[k], &pred[ci], fit); err != nil {
				return err
			}
			k++
		}
	}
	return nil
}

func missing(sym byte) error {
	return fmt.Errorf("%w: the file's Huffman table has no code for symbol %#02x", ErrUnsupported, sym)
}

// encodeBlock codes blk after the component's DC predictor pred. With fit
// (a block of an edited MCU) a coefficient whose symbol the file's tables
// lack is brought to the nearest one they code, as the tables of an
// optimising encoder hold only the symbols its photo used; without it,
// such a block is ErrUnsupported.
func encodeBlock(w *bitWriter, dc, ac *huffTable, blk *[64]int32, pred *int32, fit bool) error {
	diff := blk[0] - *pred
	s := uint(bitLen(diff))
	if fit && (s > 11 || dc.size[s] == 0) {
		diff, s = nearestDC(dc, diff)
		blk[0] = *pred + diff
	}
	if s > 11 || dc.size[s] == 0 {
		return missing(byte(s))
	}
	*pred = blk[0]
	w.put(uint32(dc.code[s]), uint(dc.size[s]))
	w.put(valueBits(diff, uint32(s)), s)
	run := 0
	for k := 1; k < 64; k++ {
		v := blk[k]
		if v == 0 {
			run++
			continue
		}
		s := uint(bitLen(v))
		if fit {
			for s > 0 && (s > 10 || ac.size[byte(min(run, 15)<<4)|byte(s)] == 0) {
				s--
				v = sign(v) * (1<<s - 1)
			}
			blk[k] = v
			if s == 0 {
				run++
				continue
			}
		}
		for run >= 16 {
			if ac.size[0xF0] == 0 {
				return missing(0xF0)
			}
			w.put(uint32(ac.code[0xF0]), uint(ac.size[0xF0]))
			run -= 16
		}
		sym := byte(run<<4) | byte(s)
		if s > 10 || ac.size[sym] == 0 {
			return missing(sym)
		}
		w.put(uint32(ac.code[sym]), uint(ac.size[sym]))
		w.put(valueBits(v, uint32(s)), s)
		run = 0
	}
	if run > 0 {
		if ac.size[0] == 0 {
			return missing(0)
		}
		w.put(uint32(ac.code[0]), uint(ac.size[0]))
	}
	return nil
}

func sign(v int32) int32 {
	if v < 0 {
		return -1
	}
	return 1
}

// nearestDC is the DC difference nearest diff whose category the table codes.
func nearestDC(dc *huffTable, diff int32) (int32, uint) {
	best, bestS, bestD := diff, uint(99), int64(1)<<40
	for s := uint(0); s <= 11; s++ {
		if dc.size[s] == 0 {
			continue
		}
		var c int32
		if s > 0 {
			mag := min(max(diff*sign(diff), 1<<(s-1)), 1<<s-1)
			c = sign(diff) * mag
		}
		if d := int64(c - diff); d*d < bestD {
			best, bestS, bestD = c, s, d*d
		}
	}
	return best, bestS
}

// bitWriter appends entropy-coded bits to out, stuffing a zero after 0xFF.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
	tmp []byte // copyBits' shifted bytes
}

func (w *bitWriter) put(v uint32, n uint) {
	w.acc = w.acc<<n | uint64(v)
	w.n += n
	for w.n >= 8 {
		w.n -= 8
		b := byte(w.acc >> w.n)
		w.out = append(w.out, b)
		if b == 0xFF {
			w.out = append(w.out, 0)
		}
	}
}

// copyBits appends bits [from, to) of the unstuffed src (padded with 8
// bytes): the bits that top up the pending byte, then whole bytes shifted
// eight at a time and stuffed where a 0xFF falls, then the rest.
func (w *bitWriter) copyBits(src []byte, from, to int) {
	if k := min((8-w.n)%8, uint(to-from)); k > 0 {
		w.put(uint32(binary.BigEndian.Uint64(src[from/8:])<<uint(from%8)>>(64-k)), k)
		from += int(k)
	}
	nb := (to - from) / 8
	i0, s := from/8, uint(from%8)
	run := src[i0 : i0+nb]
	if s != 0 {
		w.tmp = slices.Grow(w.tmp[:0], nb)[:nb]
		run = w.tmp
		j := 0
		for ; j+8 <= nb; j += 8 {
			// src[i0+j+8] is within the data or its padding.
			v := binary.BigEndian.Uint64(src[i0+j:])<<s | uint64(src[i0+j+8])>>(8-s)
			binary.BigEndian.PutUint64(run[j:], v)
		}
		for ; j < nb; j++ {
			run[j] = src[i0+j]<<s | src[i0+j+1]>>(8-s)
		}
	}
	for len(run) > 0 {
		i := bytes.IndexByte(run, 0xFF)
		if i < 0 {
			w.out = append(w.out, run...)
			break
		}
		w.out = append(w.out, run[:i+1]...)
		w.out = append(w.out, 0)
		run = run[i+1:]
	}
	from += 8 * nb
	if r := uint(to - from); r > 0 {
		w.put(uint32(binary.BigEndian.Uint64(src[from/8:])<<uint(from%8)>>(64-r)), r)
	}
}

// flush pads the last byte with ones (F.1.2.3).
func (w *bitWriter) flush() {
	if pad := (8 - w.n%8) % 8; pad > 0 {
		w.put(1<<pad-1, pad)
	}
}

// writeHeader writes SOI and the kept header segments, with an
// orientation-only EXIF after JFIF when the photo is turned.
func (f *File) writeHeader(out []byte) []byte {
	out = append(out, 0xFF, 0xD8)
	exif := f.orientation != 1
	for i, s := range f.segments {
		if exif && !(i == 0 && s.marker == 0xE0) {
			out = append(out, orientationEXIF(f.orientation)...)
			exif = false
		}
		if keepSegment(s) {
			out = append(out, s.data...)
		}
	}
	return out
}

// ICCBytes is the size of the ICC profile segments the file's answers
// carry (keepSegment).
func (f *File) ICCBytes() int {
	n := 0
	for _, s := range f.segments {
		if s.marker == 0xE2 && keepSegment(s) {
			n += len(s.data)
		}
	}
	return n
}

// keepSegment says which header segments the output carries: what decodes
// the pixels and what says how to show them (JFIF, Adobe, ICC).
func keepSegment(s segment) bool {
	body := s.data[4:]
	switch s.marker {
	case 0xE0:
		return bytes.HasPrefix(body, []byte("JFIF\x00"))
	case 0xE2:
		return bytes.HasPrefix(body, []byte("ICC_PROFILE\x00"))
	case 0xEE:
		return bytes.HasPrefix(body, []byte("Adobe"))
	case 0xC0, 0xC1, 0xC4, 0xDB, 0xDD, 0xDA:
		return true
	}
	return false
}

// orientationEXIF is an APP1 segment whose EXIF holds only Orientation.
func orientationEXIF(o int) []byte {
	tiff := []byte{
		'M', 'M', 0, 42, 0, 0, 0, 8, // big-endian, IFD0 at 8
		0, 1, // one entry
		0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o), 0, 0, // Orientation, SHORT, 1, value
		0, 0, 0, 0, // no next IFD
	}
	seg := append([]byte("Exif\x00\x00"), tiff...)
	n := len(seg) + 2
	return append([]byte{0xFF, 0xE1, byte(n >> 8), byte(n)}, seg...)
}
