package codec

import (
	"encoding/binary"
	"hash/crc32"
	"image"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// This file is the PNG writer behind EncodePNG. The standard library's
// encoder tries all five row filters on every row and then deflates at its
// best speed; on a 12-megapixel photo that took 2.5–3× as long as this
// writer, which filters every row with Sub (the difference from the pixel
// to the left: one subtraction a byte, and as small a file as the
// standard encoder's adaptive choice on photos) and compresses with
// klauspost/compress's zlib at level 1. Figures: docs/research/measurements.md, "Codec".

// pngIDATSize is the most compressed data one IDAT chunk carries.
const pngIDATSize = 256 << 10

var pngDeflaters = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	return fw
}}

// writePNG writes img as an 8-bit PNG: gray for *image.Gray, RGB when every
// pixel is opaque, RGBA (straight alpha) otherwise; iccChunk (a complete
// iCCP chunk, or nil) goes right after IHDR.
func writePNG(w io.Writer, img image.Image, iccChunk []byte) error {
	var (
		rows      func(y int, dst []byte) []byte // row y (from 0) unfiltered: dst, or the image's own bytes
		channels  int
		colorType byte
	)
	switch m := img.(type) {
	case *image.Gray:
		channels, colorType = 1, 0
		rows = func(y int, dst []byte) []byte {
			i := m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y+y)
			return m.Pix[i : i+len(dst)]
		}
	case *image.NRGBA:
		channels, colorType, rows = nrgbaRows(m.Pix, m.Stride, m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y), !m.Opaque(), false)
	default:
		rgba, ok := img.(*image.RGBA)
		if !ok {
			rgba = toRGBA(img)
		}
		channels, colorType, rows = nrgbaRows(rgba.Pix, rgba.Stride, rgba.PixOffset(rgba.Rect.Min.X, rgba.Rect.Min.Y), !rgba.Opaque(), true)
	}
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()

	cw := &pngChunkWriter{w: w}
	cw.raw([]byte(pngSignature))
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, colorType // 8 bits a sample; compression, filter, interlace 0
	cw.chunk("IHDR", ihdr[:])
	if iccChunk != nil {
		cw.raw(iccChunk)
	}

	// A zlib stream (RFC 1950) as zlib.NewWriterLevel(cw, BestSpeed) writes it:
	// its header, the deflated rows, and their Adler-32.
	fw := pngDeflaters.Get().(*flate.Writer)
	defer pngDeflaters.Put(fw)
	fw.Reset(cw)
	cw.Write([]byte{0x78, 0x01})
	rowLen := width * channels
	cur := make([]byte, rowLen)
	out := make([]byte, 1+rowLen)
	out[0] = 1 // filter type Sub
	sum := uint32(1)
	for y := 0; y < height && cw.err == nil; y++ {
		subFilter(out[1:], rows(y, cur), channels)
		sum = adler32(sum, out)
		if _, err := fw.Write(out); err != nil {
			return err
		}
	}
	if err := fw.Close(); err != nil {
		return err
	}
	cw.Write(binary.BigEndian.AppendUint32(nil, sum))
	cw.flushIDAT()
	cw.chunk("IEND", nil)
	return cw.err
}

// subFilter writes row filtered with Sub (each byte less the byte of the
// pixel to its left) to f, eight bytes at a time: a byte-wise subtraction in
// a 64-bit word, the borrow kept from crossing bytes (Hacker's Delight 2-18).
func subFilter(f, row []byte, channels int) {
	n := len(row)
	f = f[:n]
	copy(f, row[:min(channels, n)])
	const h = 0x8080808080808080
	i := channels
	for ; i+8 <= n; i += 8 {
		a := binary.LittleEndian.Uint64(row[i:])
		b := binary.LittleEndian.Uint64(row[i-channels:])
		binary.LittleEndian.PutUint64(f[i:], ((a|h)-(b&^h))^((a^^b)&h))
	}
	for ; i < n; i++ {
		f[i] = row[i] - row[i-channels]
	}
}

// adler32 returns the Adler-32 of p continuing from sum, as hash/adler32 does,
// eight bytes a step: the bytes' sum and their sum weighted 8, 7, … 1 each come
// from one multiplication of 16-bit lanes.
func adler32(sum uint32, p []byte) uint32 {
	const mod, nmax = 65521, 5552 // nmax: the most bytes before s2 could overflow
	s1, s2 := sum&0xffff, sum>>16
	for len(p) > 0 {
		n := min(len(p), nmax)
		q := p[:n]
		p = p[n:]
		for ; len(q) >= 8; q = q[8:] {
			x := binary.LittleEndian.Uint64(q)
			even := x & 0x00ff00ff00ff00ff // bytes 0, 2, 4, 6
			odd := x >> 8 & 0x00ff00ff00ff00ff
			s2 += 8*s1 + uint32(even*0x0008000600040002>>48) + uint32(odd*0x0007000500030001>>48)
			s1 += uint32((even + odd) * 0x0001000100010001 >> 48)
		}
		for _, b := range q {
			s1 += uint32(b)
			s2 += s1
		}
		s1 %= mod
		s2 %= mod
	}
	return s2<<16 | s1
}

// nrgbaRows returns a row reader over 4-byte pixels starting at offset
// start: RGB when !alpha, RGBA otherwise, un-premultiplying when
// premultiplied (an *image.RGBA).
func nrgbaRows(pix []byte, stride, start int, alpha, premultiplied bool) (channels int, colorType byte, rows func(int, []byte) []byte) {
	if !alpha {
		return 3, 2, func(y int, dst []byte) []byte {
			src := pix[start+y*stride:]
			for i, j := 0, 0; j+2 < len(dst); i, j = i+4, j+3 {
				dst[j], dst[j+1], dst[j+2] = src[i], src[i+1], src[i+2]
			}
			return dst
		}
	}
	return 4, 6, func(y int, dst []byte) []byte {
		src := pix[start+y*stride : start+y*stride+len(dst)]
		if !premultiplied {
			return src
		}
		for i := 0; i+3 < len(dst); i += 4 {
			switch a := src[i+3]; a {
			case 0xFF:
				copy(dst[i:i+4], src[i:i+4])
			case 0:
				dst[i], dst[i+1], dst[i+2], dst[i+3] = 0, 0, 0, 0
			default:
				// As color.NRGBAModel converts: (c·0xFFFF/a) on 16 bits.
				a16 := uint32(a) * 0x101
				// min guards against colour above alpha, which a valid
				// premultiplied image never holds.
				dst[i] = uint8(min(uint32(src[i])*0x101*0xFFFF/a16>>8, 0xFF))
				dst[i+1] = uint8(min(uint32(src[i+1])*0x101*0xFFFF/a16>>8, 0xFF))
				dst[i+2] = uint8(min(uint32(src[i+2])*0x101*0xFFFF/a16>>8, 0xFF))
				dst[i+3] = a
			}
		}
		return dst
	}
}

// pngChunkWriter writes PNG chunks to w, keeping the first error. As an
// io.Writer it collects compressed image data into IDAT chunks.
type pngChunkWriter struct {
	w    io.Writer
	idat []byte
	err  error
}

func (c *pngChunkWriter) raw(p []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(p)
	}
}

func (c *pngChunkWriter) chunk(typ string, data []byte) {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], typ)
	crc := crc32.Update(crc32.ChecksumIEEE(head[4:]), crc32.IEEETable, data)
	c.raw(head[:])
	c.raw(data)
	c.raw(binary.BigEndian.AppendUint32(nil, crc))
}

func (c *pngChunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.err == nil {
		if c.idat == nil {
			c.idat = make([]byte, 0, pngIDATSize)
		}
		k := min(len(p), pngIDATSize-len(c.idat))
		c.idat = append(c.idat, p[:k]...)
		p = p[k:]
		if len(c.idat) == pngIDATSize {
			c.flushIDAT()
		}
	}
	return n, c.err
}

func (c *pngChunkWriter) flushIDAT() {
	if len(c.idat) > 0 {
		c.chunk("IDAT", c.idat)
		c.idat = c.idat[:0]
	}
}
