// Package jpegblock edits a baseline JPEG in its own 8×8 blocks: it reads
// the entropy-coded data once, gives a reduced image built from the
// coefficients and full-resolution pixels of any region on demand, and
// writes a JPEG in which only the MCUs whose pixels changed are decoded and
// coded again (at the input's own quantisation and Huffman tables); every
// other MCU's bits are copied, so it decodes to the same pixels as before.
//
// Only sequential Huffman-coded 8-bit JPEGs with one scan holding every
// component (greyscale or YCbCr) are read; anything else is ErrUnsupported
// and belongs to a full decode.
//
// It also writes whole JPEGs (Encode, behind codec.EncodeJPEG) and holds
// the IJG quantisation tables: those Encode scales by quality, and those
// Quality measures a file's luminance table against, and the geometry of
// the EXIF orientations (ToStored, ToDisplayed) that codec turns images by.
package jpegblock

import (
	"bytes"
	"errors"
	"fmt"
	"image"

	"carphoto"
)

// ErrUnsupported marks a valid JPEG this package does not edit
// (progressive, arithmetic-coded, lossless, 12-bit, CMYK, several scans).
var ErrUnsupported = errors.New("jpegblock: unsupported JPEG")

func unsupported(what string) error { return fmt.Errorf("%w: %s", ErrUnsupported, what) }

// corrupt is a client's bad file, whole but inconsistent, and truncated
// one that ends before its structure does: invalid_params, as codec.Decode
// says.
func corrupt(format string, args ...any) error {
	return carphoto.Errorf(carphoto.EInvalidParams, "image data is corrupt: "+format, args...)
}

func truncated(format string, args ...any) error {
	return carphoto.Errorf(carphoto.EInvalidParams, "image data is truncated: "+format, args...)
}

// component is one colour component of the frame.
type component struct {
	id     byte
	h, v   int // sampling factors (1,1 for a lone component)
	tq     int // quantisation table
	td, ta int // DC and AC Huffman tables
	bw, bh int // blocks across and down, padded to whole MCUs
}

// segment is a marker segment of the header, kept or dropped on output.
type segment struct {
	marker byte
	data   []byte // the whole segment, marker and length included
}

// File is a parsed baseline JPEG whose entropy-coded data has been read
// once. Coordinates in its methods are in displayed orientation.
type File struct {
	data        []byte
	orientation int
	w, h        int // stored size
	comps       []component
	hmax, vmax  int
	mcusX       int
	mcusY       int
	restart     int // MCUs an interval, 0 for none
	quant       [4][64]int32
	haveQuant   [4]bool
	dc, ac      [4]*huffTable
	segments    []segment // header segments up to and including SOS

	scan     []byte     // unstuffed entropy-coded data of every interval, padded
	inter    []interval // restart intervals in order
	mcuBit   []uint32   // bit offset in scan where each MCU starts
	perMCU   int        // blocks an MCU
	mcuPred  []int32    // DC predictors at each MCU's start, len(comps) each
	preview  [][]uint8  // per component: reduced samples, pvW[c] a row
	pvW, pvH []int
	factor   int             // preview is 1/factor of the photo
	cache    map[int][]uint8 // full-resolution samples of the MCUs decoded so far, by MCU
}

// interval is one restart interval's entropy-coded data.
type interval struct {
	start, end int    // stuffed bytes in data (RST marker excluded)
	bitStart   uint32 // bit offset in scan of its first MCU
	bitEnd     uint32 // bit offset in scan just after its last MCU
	firstMCU   int
}

// Parse reads a JPEG: its header and, once, all its entropy-coded data.
// orientation is the photo's EXIF orientation (1..8), read by the caller;
// the reduced image (Preview) is the largest of 1/8, 1/4, 1/2 or full scale
// whose long side is at least previewSide. Malformed data is a
// *carphoto.Error (invalid_params); a JPEG of a kind it does not edit is
// ErrUnsupported. It never panics on bad input.
func Parse(data []byte, orientation, previewSide int) (f *File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, carphoto.Wrap(fmt.Errorf("jpegblock panic: %v", r), carphoto.EInvalidParams,
				"image data is corrupt: the decoder could not read it")
		}
	}()
	if orientation < 1 || orientation > 8 {
		orientation = 1
	}
	f = &File{data: data, orientation: orientation}
	scanAt, err := f.readHeader()
	if err != nil {
		return nil, err
	}
	long := max(f.w, f.h)
	f.factor = 1
	for _, k := range []int{8, 4, 2} {
		if long/k >= previewSide {
			f.factor = k
			break
		}
	}
	if err := f.readScan(scanAt); err != nil {
		return nil, err
	}
	return f, nil
}

// readHeader walks the markers from SOI to the first SOS and returns
// where the entropy-coded data starts.
func (f *File) readHeader() (int, error) {
	d := f.data
	if len(d) < 4 || d[0] != 0xFF || d[1] != 0xD8 {
		return 0, corrupt("no JPEG SOI marker")
	}
	p := 2
	sof, jfif := false, false
	for {
		for p < len(d) && d[p] == 0xFF && p+1 < len(d) && d[p+1] == 0xFF {
			p++ // fill bytes
		}
		if p+4 > len(d) {
			return 0, truncated("the header ends early")
		}
		if d[p] != 0xFF {
			return 0, corrupt("expected a marker at byte %d", p)
		}
		m := d[p+1]
		n := int(d[p+2])<<8 | int(d[p+3])
		if m == 0xD8 || m == 0xD9 || (m >= 0xD0 && m <= 0xD7) || m == 0x01 || m == 0x00 {
			return 0, corrupt("unexpected marker %#02x in the header", m)
		}
		if n < 2 || p+2+n > len(d) {
			return 0, truncated("marker segment %#02x runs past the end", m)
		}
		seg := d[p+4 : p+2+n]
		f.segments = append(f.segments, segment{marker: m, data: d[p : p+2+n]})
		p += 2 + n
		var err error
		switch {
		case m == 0xC0 || m == 0xC1:
			if sof {
				return 0, corrupt("two frame headers")
			}
			sof = true
			err = f.readSOF(seg)
		case m == 0xC2 || m == 0xC3 || (m >= 0xC5 && m <= 0xCF && m != 0xC8 && m != 0xCC):
			return 0, unsupported(fmt.Sprintf("frame type %#02x (progressive, lossless or arithmetic)", m))
		case m == 0xCC:
			return 0, unsupported("arithmetic coding conditioning")
		case m == 0xC4:
			err = f.readDHT(seg)
		case m == 0xDB:
			err = f.readDQT(seg)
		case m == 0xDD:
			if len(seg) != 2 {
				return 0, corrupt("bad DRI segment")
			}
			f.restart = int(seg[0])<<8 | int(seg[1])
		case m == 0xEE:
			// Adobe APP14 with transform 0 on three components is RGB, not YCbCr.
			if len(seg) >= 12 && bytes.HasPrefix(seg, []byte("Adobe")) && seg[11] == 0 && len(f.comps) != 1 {
				return 0, unsupported("Adobe RGB or CMYK colour transform")
			}
		case m == 0xE0 && bytes.HasPrefix(seg, []byte("JFIF\x00")):
			jfif = true
		case m == 0xDA:
			if !sof {
				return 0, corrupt("scan before the frame header")
			}
			// Without JFIF, components named R, G and B are RGB, as
			// decoders (image/jpeg among them) read them.
			if !jfif && len(f.comps) == 3 && f.comps[0].id == 'R' && f.comps[1].id == 'G' && f.comps[2].id == 'B' {
				return 0, unsupported("RGB components")
			}
			return p, f.readSOS(seg)
		}
		if err != nil {
			return 0, err
		}
	}
}

func (f *File) readSOF(seg []byte) error {
	if len(seg) < 6 {
		return corrupt("short frame header")
	}
	if seg[0] != 8 {
		return unsupported(fmt.Sprintf("%d-bit samples", seg[0]))
	}
	f.h, f.w = int(seg[1])<<8|int(seg[2]), int(seg[3])<<8|int(seg[4])
	nf := int(seg[5])
	if f.w == 0 || f.h == 0 {
		return unsupported("height defined by DNL or empty frame")
	}
	if nf != 1 && nf != 3 {
		return unsupported(fmt.Sprintf("%d components", nf))
	}
	if len(seg) < 6+3*nf {
		return corrupt("short frame header")
	}
	for i := range nf {
		c := component{id: seg[6+3*i], h: int(seg[7+3*i] >> 4), v: int(seg[7+3*i] & 15), tq: int(seg[8+3*i])}
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return corrupt("bad component %d in the frame header", i)
		}
		for _, o := range f.comps {
			if o.id == c.id {
				return corrupt("two components with id %d", c.id)
			}
		}
		f.comps = append(f.comps, c)
	}
	if nf == 1 {
		f.comps[0].h, f.comps[0].v = 1, 1
	}
	for _, c := range f.comps {
		f.hmax, f.vmax = max(f.hmax, c.h), max(f.vmax, c.v)
	}
	blocks := 0
	for _, c := range f.comps {
		if f.hmax%c.h != 0 || f.vmax%c.v != 0 {
			return unsupported("fractional chroma subsampling")
		}
		blocks += c.h * c.v
	}
	if blocks > 10 {
		return corrupt("more than 10 blocks an MCU")
	}
	f.mcusX = (f.w + 8*f.hmax - 1) / (8 * f.hmax)
	f.mcusY = (f.h + 8*f.vmax - 1) / (8 * f.vmax)
	for i := range f.comps {
		c := &f.comps[i]
		c.bw, c.bh = f.mcusX*c.h, f.mcusY*c.v
	}
	return nil
}

func (f *File) readDQT(seg []byte) error {
	return ReadDQT(seg, func(tq, _ int, q *[64]uint16) error {
		for i, v := range q {
			if v == 0 {
				return corrupt("quantisation table %d has a zero entry", tq)
			}
			f.quant[tq][i] = int32(v)
		}
		f.haveQuant[tq] = true
		return nil
	})
}

func (f *File) readDHT(seg []byte) error {
	for len(seg) > 0 {
		if len(seg) < 17 {
			return corrupt("short DHT segment")
		}
		tc, th := seg[0]>>4, int(seg[0]&15)
		if tc > 1 || th > 3 {
			return corrupt("bad DHT table %#02x", seg[0])
		}
		var counts [16]int
		total := 0
		for i := range 16 {
			counts[i] = int(seg[1+i])
			total += counts[i]
		}
		if total > 256 || len(seg) < 17+total {
			return corrupt("bad DHT segment")
		}
		t, err := newHuffTable(counts, seg[17:17+total])
		if err != nil {
			return err
		}
		if tc == 0 {
			f.dc[th] = t
		} else {
			f.ac[th] = t
		}
		seg = seg[17+total:]
	}
	return nil
}

func (f *File) readSOS(seg []byte) error {
	if len(seg) < 1 {
		return corrupt("short scan header")
	}
	ns := int(seg[0])
	if len(seg) < 1+2*ns+3 {
		return corrupt("short scan header")
	}
	if ns != len(f.comps) {
		return unsupported("a scan without every component (several scans)")
	}
	for i := range ns {
		id, tables := seg[1+2*i], seg[2+2*i]
		c := &f.comps[i]
		if c.id != id {
			return unsupported("scan components in another order than the frame's")
		}
		c.td, c.ta = int(tables>>4), int(tables&15)
		if c.td > 3 || c.ta > 3 || f.dc[c.td] == nil || f.ac[c.ta] == nil {
			return corrupt("scan names a Huffman table that is not defined")
		}
		if !f.haveQuant[c.tq] {
			return corrupt("frame names a quantisation table that is not defined")
		}
	}
	ss, se, a := seg[1+2*ns], seg[2+2*ns], seg[3+2*ns]
	if ss != 0 || se != 63 || a != 0 {
		return corrupt("baseline scan with spectral selection %d..%d", ss, se)
	}
	return nil
}

// Bounds is the photo in displayed orientation.
func (f *File) Bounds() image.Rectangle {
	if f.orientation >= 5 {
		return image.Rect(0, 0, f.h, f.w)
	}
	return image.Rect(0, 0, f.w, f.h)
}

// Gray reports whether the JPEG has a single (luma) component.
func (f *File) Gray() bool { return len(f.comps) == 1 }
