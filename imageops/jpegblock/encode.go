package jpegblock

import (
	"encoding/binary"
	"image"
	"io"
	"math/bits"
)

// This file is the JPEG writer behind codec.EncodeJPEG for the two types the
// service writes, *image.RGBA (rendered photos) and 4:2:0 *image.YCbCr
// (decoded ones). It writes what image/jpeg writes, a baseline 4:2:0 JPEG
// with the IJG quantisation tables scaled by quality and the Huffman tables
// of the JPEG standard (Annex K.3), at about half the CPU: a float AAN
// DCT with the quantisation folded into one multiplication a coefficient
// (libjpeg's "float" method), the chroma of 2×2 pixels converted once from
// their mean colour, the planes of a YCbCr read as they are, and the bits
// packed 32 at a time. Figures: docs/research/measurements.md, "Codec".

// jpegHuffSpec is a Huffman table as a JPEG DHT segment stores it: how
// many codes of each length 1..16, then the symbols in code order.
type jpegHuffSpec struct {
	counts  [16]byte
	symbols []byte
}

// jpegHuffSpecs are the tables of the JPEG standard, Annex K.3: luminance
// DC, luminance AC, chrominance DC, chrominance AC.
var jpegHuffSpecs = [4]jpegHuffSpec{
	{[16]byte{0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
	{[16]byte{0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 125}, []byte{
		0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06,
		0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08,
		0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72,
		0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
		0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45,
		0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
		0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
		0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
		0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3,
		0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
		0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9,
		0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
		0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4,
		0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
	}},
	{[16]byte{0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
	{[16]byte{0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 119}, []byte{
		0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41,
		0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91,
		0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1,
		0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
		0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44,
		0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
		0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74,
		0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
		0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a,
		0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4,
		0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
		0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
		0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4,
		0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
	}},
}

// jpegHuffCode is a symbol's code, right-aligned, and its length.
type jpegHuffCode struct {
	code uint32
	size uint32
}

// jpegHuffCodes are jpegHuffSpecs as symbol → code tables.
var jpegHuffCodes = func() (t [4][256]jpegHuffCode) {
	for i, s := range jpegHuffSpecs {
		code, k := uint32(0), 0
		for n, count := range s.counts {
			for range count {
				t[i][s.symbols[k]] = jpegHuffCode{code, uint32(n + 1)}
				code++
				k++
			}
			code <<= 1
		}
	}
	return t
}()

// jpegWriter writes one baseline JPEG.
type jpegWriter struct {
	w       io.Writer
	out     []byte
	acc     uint64 // pending bits, the last nacc of them
	nacc    uint32
	quant   [2][64]byte    // zigzag order, as DQT stores them
	divisor [2][64]float32 // natural order: 1 / (quant × AAN scale × 8)
	err     error
}

// Encodes reports whether Encode writes img: an *image.RGBA, or a 4:2:0
// *image.YCbCr that starts on a chroma sample (codec.EncodeJPEG leaves
// the others to image/jpeg).
func Encodes(img image.Image) bool {
	switch m := img.(type) {
	case *image.RGBA:
		return true
	case *image.YCbCr:
		// A sub-image from an odd pixel starts mid chroma sample; leave it
		// to image/jpeg, which converts pixel by pixel.
		return m.SubsampleRatio == image.YCbCrSubsampleRatio420 && m.Rect.Min.X%2 == 0 && m.Rect.Min.Y%2 == 0
	}
	return false
}

// Encode writes img, which Encodes, as a baseline 4:2:0 JPEG at quality
// 1..100 (the IJG tables scaled by quality, the standard's Huffman tables).
func Encode(w io.Writer, img image.Image, quality int) error {
	e := &jpegWriter{w: w, out: make([]byte, 0, 64<<10)}
	for t, std := range [2]*[64]uint16{&stdLuminanceQuant, &stdChrominanceQuant} {
		for z, q := range ijgTable(std, quality, 255) {
			e.quant[t][z] = byte(q)
			n := unzig[z]
			e.divisor[t][n] = 1 / (float32(q) * aanScale[n/8] * aanScale[n%8] * 8)
		}
	}
	b := img.Bounds()
	e.writeHeader(b.Dx(), b.Dy())
	switch m := img.(type) {
	case *image.RGBA:
		e.encodeRGBA(m)
	case *image.YCbCr:
		e.encodeYCbCr(m)
	}
	e.flushBits()
	e.out = append(e.out, 0xFF, 0xD9)
	e.flush()
	return e.err
}

func (e *jpegWriter) writeHeader(width, height int) {
	e.out = append(e.out, 0xFF, 0xD8)
	// DQT: both tables in one segment.
	e.out = append(e.out, 0xFF, 0xDB, 0, 2+2*65, 0)
	e.out = append(e.out, e.quant[0][:]...)
	e.out = append(e.out, 1)
	e.out = append(e.out, e.quant[1][:]...)
	// SOF0: 8 bits, three components; Y 2×2 on table 0, Cb and Cr 1×1 on table 1.
	e.out = append(e.out, 0xFF, 0xC0, 0, 17, 8, byte(height>>8), byte(height), byte(width>>8), byte(width), 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1)
	// DHT: the four standard tables.
	n := 2
	for _, s := range jpegHuffSpecs {
		n += 17 + len(s.symbols)
	}
	e.out = append(e.out, 0xFF, 0xC4, byte(n>>8), byte(n))
	for i, s := range jpegHuffSpecs {
		e.out = append(e.out, byte(i&1)<<4|byte(i>>1)) // class (0 DC, 1 AC) and id
		e.out = append(e.out, s.counts[:]...)
		e.out = append(e.out, s.symbols...)
	}
	// SOS: all three components, DC/AC tables 0 for Y, 1 for chroma.
	e.out = append(e.out, 0xFF, 0xDA, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0)
}

// encodeRGBA encodes m MCU by MCU: 16×16 pixels, four Y blocks and one
// block each of Cb and Cr from the 2×2 means. Pixels past the right and
// bottom edges repeat the edge.
func (e *jpegWriter) encodeRGBA(m *image.RGBA) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	var (
		y          [4][64]float32
		cb, cr     [64]float32
		dcY        int32
		dcCb, dcCr int32
	)
	for my := 0; my < h; my += 16 {
		for mx := 0; mx < w; mx += 16 {
			for j := 0; j < 16; j += 2 {
				r0 := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+min(my+j, h-1)):]
				r1 := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+min(my+j+1, h-1)):]
				yt, yb := &y[j/8*2], &y[j/8*2+1] // the Y blocks left and right of this row pair
				for i := 0; i < 16; i += 2 {
					x0, x1 := 4*min(mx+i, w-1), 4*min(mx+i+1, w-1)
					r00, g00, b00 := float32(r0[x0]), float32(r0[x0+1]), float32(r0[x0+2])
					r01, g01, b01 := float32(r0[x1]), float32(r0[x1+1]), float32(r0[x1+2])
					r10, g10, b10 := float32(r1[x0]), float32(r1[x0+1]), float32(r1[x0+2])
					r11, g11, b11 := float32(r1[x1]), float32(r1[x1+1]), float32(r1[x1+2])
					blk := yt
					if i >= 8 {
						blk = yb
					}
					o := j%8*8 + i%8
					blk[o] = 0.299*r00 + 0.587*g00 + 0.114*b00 - 128
					blk[o+1] = 0.299*r01 + 0.587*g01 + 0.114*b01 - 128
					blk[o+8] = 0.299*r10 + 0.587*g10 + 0.114*b10 - 128
					blk[o+9] = 0.299*r11 + 0.587*g11 + 0.114*b11 - 128
					sr, sg, sb := r00+r01+r10+r11, g00+g01+g10+g11, b00+b01+b10+b11
					c := j/2*8 + i/2
					cb[c] = (-0.168736*sr - 0.331264*sg + 0.5*sb) / 4
					cr[c] = (0.5*sr - 0.418688*sg - 0.081312*sb) / 4
				}
			}
			for k := range y {
				dcY = e.block(&y[k], 0, dcY)
			}
			dcCb = e.block(&cb, 1, dcCb)
			dcCr = e.block(&cr, 1, dcCr)
			if e.err != nil {
				return
			}
		}
	}
}

// encodeYCbCr encodes a 4:2:0 m from its planes.
func (e *jpegWriter) encodeYCbCr(m *image.YCbCr) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	cw, ch := (w+1)/2, (h+1)/2
	var (
		y               [64]float32
		cb, cr          [64]float32
		dcY, dcCb, dcCr int32
	)
	yOff := m.YOffset(b.Min.X, b.Min.Y)
	cOff := m.COffset(b.Min.X, b.Min.Y)
	for my := 0; my < h; my += 16 {
		for mx := 0; mx < w; mx += 16 {
			for k := range 4 {
				bx, by := mx+k%2*8, my+k/2*8
				for j := range 8 {
					row := m.Y[yOff+min(by+j, h-1)*m.YStride:]
					for i := range 8 {
						y[j*8+i] = float32(row[min(bx+i, w-1)]) - 128
					}
				}
				dcY = e.block(&y, 0, dcY)
			}
			for j := range 8 {
				o := cOff + min(my/2+j, ch-1)*m.CStride
				for i := range 8 {
					x := min(mx/2+i, cw-1)
					cb[j*8+i] = float32(m.Cb[o+x]) - 128
					cr[j*8+i] = float32(m.Cr[o+x]) - 128
				}
			}
			dcCb = e.block(&cb, 1, dcCb)
			dcCr = e.block(&cr, 1, dcCr)
			if e.err != nil {
				return
			}
		}
	}
}

// block transforms, quantises and Huffman-codes one 8×8 block (level
// shifted, natural order) with table t (0 luminance, 1 chrominance), and
// returns its DC value for the next block's prediction.
func (e *jpegWriter) block(d *[64]float32, t int, prevDC int32) int32 {
	fdctAAN(d)
	var q [64]int32
	div := &e.divisor[t]
	for i := range q {
		// Round half away from zero, as libjpeg's float method does, and
		// keep within the ±1023 baseline coefficients are coded in.
		q[i] = min(max(int32(d[i]*div[i]+16384.5)-16384, -1023), 1023)
	}
	dc := &jpegHuffCodes[2*t]
	ac := &jpegHuffCodes[2*t+1]
	diff := q[0] - prevDC
	n := bitLen(diff)
	e.bits(dc[n].code<<n|valueBits(diff, n), dc[n].size+n)
	run := uint32(0)
	for z := 1; z < 64; z++ {
		v := q[unzig[z]]
		if v == 0 {
			run++
			continue
		}
		for run > 15 {
			e.bits(ac[0xF0].code, ac[0xF0].size)
			run -= 16
		}
		n := bitLen(v)
		c := ac[run<<4|n]
		e.bits(c.code<<n|valueBits(v, n), c.size+n)
		run = 0
	}
	if run > 0 {
		e.bits(ac[0].code, ac[0].size)
	}
	return q[0]
}

// bitLen is the JPEG size category of v: the bits of |v| (F.1.2.1). Both
// writers (Encode, and Write's edited MCUs) code coefficients with it and
// valueBits.
func bitLen(v int32) uint32 {
	if v < 0 {
		v = -v
	}
	return uint32(bits.Len32(uint32(v)))
}

// valueBits is v's n-bit code: v itself if positive, v−1's low bits if not.
func valueBits(v int32, n uint32) uint32 {
	if v < 0 {
		v--
	}
	return uint32(v) & (1<<n - 1)
}

// bits appends the low n (≤ 32) bits of code, writing out whole 32-bit
// words with a zero stuffed after every 0xFF byte.
func (e *jpegWriter) bits(code, n uint32) {
	e.acc = e.acc<<n | uint64(code)
	e.nacc += n
	if e.nacc < 32 {
		return
	}
	e.nacc -= 32
	word := uint32(e.acc >> e.nacc)
	if x := ^word; (x-0x01010101)&^x&0x80808080 == 0 { // no 0xFF byte
		e.out = binary.BigEndian.AppendUint32(e.out, word)
	} else {
		for s := 24; s >= 0; s -= 8 {
			c := byte(word >> s)
			e.out = append(e.out, c)
			if c == 0xFF {
				e.out = append(e.out, 0)
			}
		}
	}
	if len(e.out) >= 60<<10 {
		e.flush()
	}
}

// flushBits writes the last bits, padded with ones as the standard asks.
func (e *jpegWriter) flushBits() {
	for e.nacc%8 != 0 {
		e.acc = e.acc<<1 | 1
		e.nacc++
	}
	for e.nacc > 0 {
		e.nacc -= 8
		c := byte(e.acc >> e.nacc)
		e.out = append(e.out, c)
		if c == 0xFF {
			e.out = append(e.out, 0)
		}
	}
}

func (e *jpegWriter) flush() {
	if e.err == nil && len(e.out) > 0 {
		_, e.err = e.w.Write(e.out)
	}
	e.out = e.out[:0]
}

// fdctAAN is the forward DCT of an 8×8 block in place, by Arai, Agui and
// Nakajima's factorisation as in libjpeg's jfdctflt.c; outputs are scaled
// by aanScale[row]·aanScale[col]·8, which the quantisation divisors undo.
func fdctAAN(d *[64]float32) {
	for p := 0; p < 64; p += 8 {
		r := d[p : p+8 : p+8]
		tmp0, tmp7 := r[0]+r[7], r[0]-r[7]
		tmp1, tmp6 := r[1]+r[6], r[1]-r[6]
		tmp2, tmp5 := r[2]+r[5], r[2]-r[5]
		tmp3, tmp4 := r[3]+r[4], r[3]-r[4]

		tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
		tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2
		r[0], r[4] = tmp10+tmp11, tmp10-tmp11
		z1 := (tmp12 + tmp13) * 0.707106781
		r[2], r[6] = tmp13+z1, tmp13-z1

		tmp10, tmp11, tmp12 = tmp4+tmp5, tmp5+tmp6, tmp6+tmp7
		z5 := (tmp10 - tmp12) * 0.382683433
		z2 := 0.541196100*tmp10 + z5
		z4 := 1.306562965*tmp12 + z5
		z3 := tmp11 * 0.707106781
		z11, z13 := tmp7+z3, tmp7-z3
		r[5], r[3] = z13+z2, z13-z2
		r[1], r[7] = z11+z4, z11-z4
	}
	for c := range 8 {
		tmp0, tmp7 := d[c]+d[56+c], d[c]-d[56+c]
		tmp1, tmp6 := d[8+c]+d[48+c], d[8+c]-d[48+c]
		tmp2, tmp5 := d[16+c]+d[40+c], d[16+c]-d[40+c]
		tmp3, tmp4 := d[24+c]+d[32+c], d[24+c]-d[32+c]

		tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
		tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2
		d[c], d[32+c] = tmp10+tmp11, tmp10-tmp11
		z1 := (tmp12 + tmp13) * 0.707106781
		d[16+c], d[48+c] = tmp13+z1, tmp13-z1

		tmp10, tmp11, tmp12 = tmp4+tmp5, tmp5+tmp6, tmp6+tmp7
		z5 := (tmp10 - tmp12) * 0.382683433
		z2 := 0.541196100*tmp10 + z5
		z4 := 1.306562965*tmp12 + z5
		z3 := tmp11 * 0.707106781
		z11, z13 := tmp7+z3, tmp7-z3
		d[40+c], d[24+c] = z13+z2, z13-z2
		d[8+c], d[56+c] = z11+z4, z11-z4
	}
}
