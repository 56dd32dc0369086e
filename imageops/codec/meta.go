package codec

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"carphoto"
	"carphoto/imageops/jpegblock"
)

// This file reads and writes the metadata carphoto keeps: the EXIF
// orientation (applied, then dropped with the rest of EXIF, GPS included)
// and the ICC colour profile (kept: phone photos are often Display P3 and
// lose their colours without it). It walks each container's structure
// itself, bounded by the data, which also catches truncated files that the
// pixel decoders would accept.

const (
	pngSignature = "\x89PNG\r\n\x1a\n"

	// jpegICCChunk is the most profile data one APP2 segment holds: 65535
	// minus the 2-byte length and the 14-byte "ICC_PROFILE\0" seq count header.
	jpegICCChunk = 65519
	// maxICCBytes bounds a profile: the most JPEG can carry (255 segments),
	// so any profile Decode returns can be written back by EncodeJPEG.
	maxICCBytes = 255 * jpegICCChunk

	// maxJPEGScans bounds the scans of a progressive JPEG. Each scan costs a
	// pass over the image, so a small file with thousands of scans would
	// hold a worker for minutes; libjpeg and mozjpeg write about ten.
	maxJPEGScans = 100
)

var jpegICCHeader = []byte("ICC_PROFILE\x00")

// readJPEGMeta walks the marker segments of a JPEG from SOI to EOI: it
// reads the EXIF orientation (APP1), the ICC profile (APP2, reassembled
// from its chunks) and the quantisation tables (DQT), counts the scans, and
// fails when the data ends before the EOI marker. Entropy-coded data is
// skipped by looking for the next marker, which is how decoders find it.
func readJPEGMeta(data []byte, h *header) error {
	var (
		seenEXIF  bool
		iccChunks [256][]byte
		iccCount  int
		tables    [4]*quantTable
		lumaTable = 0 // the table of the first component, from SOF
		scans     int
		sof       []byte // baseline frame header, for the data-size check
		inScan    bool
		scanStart int
	)
	p := 2 // after SOI
	for {
		i := bytes.IndexByte(data[p:], 0xFF)
		if i < 0 {
			return fmt.Errorf("no EOI marker: %w", errTruncated)
		}
		p += i
		for p+1 < len(data) && data[p+1] == 0xFF { // fill bytes
			p++
		}
		if p+1 >= len(data) {
			return fmt.Errorf("no EOI marker: %w", errTruncated)
		}
		m := data[p+1]
		p += 2
		switch {
		case m == 0x00, m == 0x01, m >= 0xD0 && m <= 0xD7:
			continue // stuffed zero, TEM or RSTn: no length, part of scan data
		case inScan:
			h.jpegScanBytes += uint64(p - 2 - scanStart)
			inScan = false
		}
		switch {
		case m == 0xD8:
			return errors.New("second SOI marker before EOI")
		case m == 0xD9: // EOI
			if scans == 0 {
				return errors.New("no image scan before EOI")
			}
			if t := tables[lumaTable]; t != nil {
				h.quality = jpegblock.Quality(t.q, t.precision)
			}
			h.icc = joinICC(iccChunks[:], iccCount)
			h.jpegLeastScanBytes, h.jpegMostScanBytes = baselineScanBytes(sof)
			return nil
		}
		if p+2 > len(data) {
			return fmt.Errorf("marker segment header: %w", errTruncated)
		}
		n := int(data[p])<<8 | int(data[p+1])
		if n < 2 {
			return fmt.Errorf("marker %#02x has length %d", m, n)
		}
		if p+n > len(data) {
			return fmt.Errorf("marker segment %#02x: %w", m, errTruncated)
		}
		seg := data[p+2 : p+n]
		p += n
		switch m {
		case 0xE1: // APP1: EXIF (or XMP, which we drop)
			if !seenEXIF && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
				seenEXIF = true
				h.orientation = exifOrientation(seg[6:])
			}
		case 0xE2: // APP2: ICC_PROFILE chunk
			if bytes.HasPrefix(seg, jpegICCHeader) && len(seg) > len(jpegICCHeader)+2 {
				seq, count := int(seg[12]), int(seg[13])
				if seq >= 1 && seq <= count && iccChunks[seq-1] == nil && (iccCount == 0 || iccCount == count) {
					iccCount = count
					iccChunks[seq-1] = seg[14:]
				}
			}
		case 0xDB: // DQT
			err := jpegblock.ReadDQT(seg, func(id, precision int, q *[64]uint16) error {
				tables[id] = &quantTable{q: *q, precision: precision}
				return nil
			})
			if err != nil {
				return err
			}
		case 0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF: // SOFn
			if len(seg) >= 9 && seg[8] < 4 {
				lumaTable = int(seg[8])
			}
			if m == 0xC0 || m == 0xC1 {
				sof = seg
			}
		case 0xDA: // SOS
			scans++
			if scans > maxJPEGScans {
				return fmt.Errorf("more than %d progressive scans", maxJPEGScans)
			}
			inScan, scanStart = true, p
		}
	}
}

// baselineScanBytes bounds the entropy-coded data of a baseline JPEG with
// frame header sof. Every 8×8 block of every component codes at least a
// DC symbol and an AC symbol (EOB), one bit each at best: a quarter byte a
// block. At most it codes a DC symbol and 63 coefficients of at most 16
// bits of code and 15 of value, plus EOB, every byte stuffed with a zero:
// under 512 bytes a block, plus a restart marker and padding an MCU. Both
// are 0 when sof is nil (progressive files can cover thousands of blocks
// with one end-of-band run, and refine them over many scans) or unreadable.
func baselineScanBytes(sof []byte) (least, most uint64) {
	if len(sof) < 6 {
		return 0, 0
	}
	y, x := uint64(binary.BigEndian.Uint16(sof[1:])), uint64(binary.BigEndian.Uint16(sof[3:]))
	nf := int(sof[5])
	if len(sof) < 6+3*nf || x == 0 || y == 0 {
		return 0, 0
	}
	var hmax, vmax, perMCU uint64
	for i := range nf {
		hi, vi := uint64(sof[7+3*i]>>4), uint64(sof[7+3*i]&0x0F)
		hmax, vmax = max(hmax, hi), max(vmax, vi)
		perMCU += hi * vi
	}
	if hmax == 0 || vmax == 0 {
		return 0, 0
	}
	var blocks uint64 // without the padding to whole MCUs
	for i := range nf {
		hi, vi := uint64(sof[7+3*i]>>4), uint64(sof[7+3*i]&0x0F)
		cw, ch := (x*hi+hmax-1)/hmax, (y*vi+vmax-1)/vmax
		blocks += (cw + 7) / 8 * ((ch + 7) / 8)
	}
	mcus := (x + 8*hmax - 1) / (8 * hmax) * ((y + 8*vmax - 1) / (8 * vmax))
	return blocks / 4, mcus*perMCU*512 + mcus*4 + 4096
}

// quantTable is a JPEG quantisation table in zigzag order, as stored.
type quantTable struct {
	q         [64]uint16
	precision int // 0: 8-bit entries, 1: 16-bit
}

// joinICC reassembles an ICC profile from its APP2 chunks (chunks[i] is
// sequence number i+1). A profile with a missing chunk is dropped: a
// partial profile is worse than none.
func joinICC(chunks [][]byte, count int) []byte {
	if count == 0 {
		return nil
	}
	size := 0
	for _, c := range chunks[:count] {
		if c == nil {
			return nil
		}
		size += len(c)
	}
	if size == 0 || size > maxICCBytes {
		return nil
	}
	icc := make([]byte, 0, size)
	for _, c := range chunks[:count] {
		icc = append(icc, c...)
	}
	return icc
}

// jpegICCSegments returns icc as APP2 ICC_PROFILE marker segments, split
// into chunks of at most jpegICCChunk bytes; nil for no profile.
func jpegICCSegments(icc []byte) []byte {
	if len(icc) == 0 || len(icc) > maxICCBytes {
		return nil
	}
	count := (len(icc) + jpegICCChunk - 1) / jpegICCChunk
	out := make([]byte, 0, len(icc)+count*18)
	for seq := 1; len(icc) > 0; seq++ {
		n := min(len(icc), jpegICCChunk)
		segLen := 2 + len(jpegICCHeader) + 2 + n
		out = append(out, 0xFF, 0xE2, byte(segLen>>8), byte(segLen))
		out = append(out, jpegICCHeader...)
		out = append(out, byte(seq), byte(count))
		out = append(out, icc[:n]...)
		icc = icc[n:]
	}
	return out
}

// iccFits reports whether icc is a profile (at least its 128-byte header)
// for the colour space the encoders write: gray for a gray image, RGB
// otherwise.
func iccFits(icc []byte, gray bool) bool {
	if len(icc) < 128 {
		return false
	}
	if gray {
		return string(icc[16:20]) == "GRAY"
	}
	return string(icc[16:20]) == "RGB "
}

// exifOrientation returns the Orientation tag (0x0112) of IFD0 in a TIFF
// structure (the body of an EXIF block, with or without its "Exif\0\0"
// prefix), or 1 when it is absent or unreadable. Every offset is checked
// against the data; only IFD0's entries are read.
func exifOrientation(tiff []byte) int {
	tiff = bytes.TrimPrefix(tiff, []byte("Exif\x00\x00"))
	if len(tiff) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(tiff[2:]) != 42 {
		return 1
	}
	off := uint64(bo.Uint32(tiff[4:]))
	if off+2 > uint64(len(tiff)) {
		return 1
	}
	n := int(bo.Uint16(tiff[off:]))
	entries := tiff[off+2:]
	for i := 0; i < n && 12*(i+1) <= len(entries); i++ {
		e := entries[12*i : 12*(i+1)]
		if bo.Uint16(e) != 0x0112 {
			continue
		}
		var v int
		switch typ := bo.Uint16(e[2:]); typ {
		case 3: // SHORT
			v = int(bo.Uint16(e[8:]))
		case 4: // LONG
			v = int(bo.Uint32(e[8:]))
		}
		if v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// readPNGMeta walks the chunks of a PNG up to IEND: it reads the ICC
// profile (iCCP), the EXIF orientation (eXIf) and the sizes the
// lying-header check needs, and fails when a chunk runs past the data.
// pngPixelBytes is what one pixel of a PNG of colorType and depth takes
// once image/png decoded it: Gray or Gray16, Paletted, or (N)RGBA or
// (N)RGBA64 for colour and for gray with alpha.
func pngPixelBytes(colorType byte, depth uint64) float64 {
	wide := float64(1)
	if depth == 16 {
		wide = 2
	}
	switch colorType {
	case 0:
		return wide
	case 3:
		return 1
	}
	return 4 * wide
}

func readPNGMeta(data []byte, h *header) error {
	p := len(pngSignature)
	for {
		if p+8 > len(data) {
			return fmt.Errorf("no IEND chunk: %w", errTruncated)
		}
		n := uint64(binary.BigEndian.Uint32(data[p:]))
		typ := string(data[p+4 : p+8])
		if n > 1<<31-1 {
			return fmt.Errorf("chunk %q has length %d", typ, n)
		}
		if uint64(p)+12+n > uint64(len(data)) {
			return fmt.Errorf("chunk %q: %w", typ, errTruncated)
		}
		chunk := data[p+8 : p+8+int(n)]
		p += 12 + int(n)
		switch typ {
		case "IHDR":
			if len(chunk) != 13 {
				return errors.New("bad IHDR chunk")
			}
			w := uint64(binary.BigEndian.Uint32(chunk[0:]))
			ht := uint64(binary.BigEndian.Uint32(chunk[4:]))
			if w == 0 || ht == 0 {
				return carphoto.Errorf(carphoto.EInvalidParams, "image is %d×%d: it has no pixels", w, ht)
			}
			depth, colorType := uint64(chunk[8]), chunk[9]
			channels := map[byte]uint64{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colorType]
			h.pngRawBytes = ht * (1 + (w*channels*depth+7)/8)
			h.pixelBytes, h.passes = pngPixelBytes(colorType, depth), 1
			if chunk[12] == 1 { // Adam7: each pass decoded apart, then merged
				h.passes = 2
			}
		case "IDAT":
			h.pngIDATBytes += n
		case "iCCP": // inflated by Decode only: DecodeConfig has no use for it
			if h.pngICCP == nil {
				h.pngICCP = chunk
			}
		case "eXIf":
			h.orientation = exifOrientation(chunk)
		case "IEND":
			return nil
		}
	}
}

// inflateICC returns the profile of an iCCP chunk (name, 0, method 0,
// zlib data), or nil when it is unreadable or larger than maxICCBytes.
func inflateICC(chunk []byte) (icc []byte, tooLarge bool) {
	i := bytes.IndexByte(chunk, 0)
	if i < 1 || i+2 > len(chunk) || chunk[i+1] != 0 {
		return nil, false
	}
	zr, err := zlib.NewReader(bytes.NewReader(chunk[i+2:]))
	if err != nil {
		return nil, false
	}
	// Inflated no further than the largest profile an answer could carry
	// (maxICCBytes, 16 MB: 16 KB of zlib may hold that much): one over
	// MaxKeptICC is left out of the answer, its pixels converted from it
	// (Decode).
	icc, err = io.ReadAll(io.LimitReader(zr, maxICCBytes+1))
	switch {
	case len(icc) > maxICCBytes:
		return nil, true
	case err != nil || len(icc) == 0:
		return nil, false
	}
	return icc, false
}

// pngICCChunk returns icc as a complete iCCP chunk; nil for no profile.
func pngICCChunk(icc []byte) ([]byte, error) {
	if len(icc) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0})
	b.WriteString("iCCPICC Profile\x00\x00")
	zw := zlib.NewWriter(&b)
	if _, err := zw.Write(icc); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := b.Bytes()
	binary.BigEndian.PutUint32(out, uint32(len(out)-8))
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:])), nil
}

// readWebPMeta walks the RIFF chunks of a WebP file: it reads the ICC
// profile (ICCP) and the EXIF orientation (EXIF), refuses animations, and
// fails when a chunk runs past the data.
func readWebPMeta(data []byte, h *header) error {
	size := uint64(binary.LittleEndian.Uint32(data[4:]))
	if size < 4 {
		return errors.New("bad RIFF size")
	}
	if size+8 > uint64(len(data)) {
		return fmt.Errorf("RIFF says %d bytes, file has %d: %w", size+8, len(data), errTruncated)
	}
	body := data[12 : 8+size]
	for p := uint64(0); p < uint64(len(body)); {
		if p+8 > uint64(len(body)) {
			return fmt.Errorf("chunk header: %w", errTruncated)
		}
		id := string(body[p : p+4])
		n := uint64(binary.LittleEndian.Uint32(body[p+4:]))
		if p+8+n > uint64(len(body)) {
			return fmt.Errorf("chunk %q: %w", id, errTruncated)
		}
		chunk := body[p+8 : p+8+n]
		p += 8 + n + n&1
		switch id {
		case "ICCP":
			if h.icc == nil && len(chunk) > 0 && len(chunk) <= maxICCBytes {
				h.icc = bytes.Clone(chunk)
			}
		case "VP8L":
			// Lossless: ARGB words, then NRGBA pixels.
			h.pixelBytes, h.passes = 8, 1
		case "VP8 ":
			if h.pixelBytes == 0 {
				h.pixelBytes, h.passes = 1.5, 1 // YCbCr 4:2:0
			}
		case "ALPH":
			h.pixelBytes, h.passes = 2.5, 1 // YCbCr 4:2:0 and alpha
		case "EXIF":
			h.orientation = exifOrientation(chunk)
		case "ANIM", "ANMF":
			return errors.New("animated WebP is not supported")
		}
	}
	return nil
}
