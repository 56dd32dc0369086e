package codec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"

	"carphoto"
	"carphoto/imageops/jpegblock"
)

// DefaultMaxPixels is the pixel cap (MAX_PIXELS) used when Limits.MaxPixels
// is zero: 60 megapixels, above any phone camera and far below what would
// exhaust a worker's memory.
const DefaultMaxPixels = 60_000_000

// DefaultMaxSide (MAX_IMAGE_SIDE) and DefaultMaxAspect (MAX_IMAGE_ASPECT)
// bound an image's shape when Limits leaves them zero: no camera or
// panorama comes near them, while a 59999999×1 strip, which passes the
// pixel cap, would make every step sized by its longer side (plate
// search, resampling, a design's warp) take seconds and gigabytes.
const (
	DefaultMaxSide   = 20_000
	DefaultMaxAspect = 20
)

// Limits bounds what Decode accepts, checked from the header before any
// pixel is decoded.
type Limits struct {
	MaxPixels int     // width × height cap; zero means DefaultMaxPixels
	MaxSide   int     // cap on the width and on the height; zero means DefaultMaxSide
	MaxAspect float64 // cap on longer side ÷ shorter side; zero means DefaultMaxAspect
	// MaxDecodeBytes caps what decoding a PNG or WebP may take; zero means
	// DefaultMaxDecodeBytes.
	MaxDecodeBytes int
}

func (l Limits) maxPixels() int {
	if l.MaxPixels <= 0 {
		return DefaultMaxPixels
	}
	return l.MaxPixels
}

func (l Limits) maxSide() int {
	if l.MaxSide <= 0 {
		return DefaultMaxSide
	}
	return l.MaxSide
}

func (l Limits) maxAspect() float64 {
	if l.MaxAspect <= 0 {
		return DefaultMaxAspect
	}
	return l.MaxAspect
}

// DefaultMaxDecodeBytes (Limits.MaxDecodeBytes) bounds what decoding one
// image may take, estimated from its header as pixels × the bytes a
// decoded pixel takes × the passes over the image: 192 MB admits a 48 MP
// 8-bit PNG, a 24 MP lossless WebP, a 60 MP lossy WebP, and refuses the
// 60 MP lossless file that a few kilobytes can hold (no compression ratio
// bounds lossless data: it is an honest file, and seconds of CPU and a
// gigabyte of memory to decode).
const DefaultMaxDecodeBytes = 192 << 20

func (l Limits) maxDecodeBytes() float64 {
	if l.MaxDecodeBytes <= 0 {
		return DefaultMaxDecodeBytes
	}
	return float64(l.MaxDecodeBytes)
}

// decodeBytes is what decoding h's pixels takes (see DefaultMaxDecodeBytes).
func (h *header) decodeBytes() float64 {
	return float64(h.width) * float64(h.height) * h.pixelBytes * float64(h.passes)
}

// checkDecode refuses an image whose decode would take more than l's
// MaxDecodeBytes, from its header, before any pixel is decoded, saying
// how many pixels of it would fit.
func (l Limits) checkDecode(h *header) error {
	need, most := h.decodeBytes(), l.maxDecodeBytes()
	if need <= most {
		return nil
	}
	kind := map[string]string{"png": "PNG", "webp": "WebP"}[h.format]
	if h.pixelBytes == 8 && h.format == "webp" {
		kind = "lossless WebP"
	}
	fits := int(most / (h.pixelBytes * float64(h.passes)))
	return carphoto.Errorf(carphoto.EInvalidParams,
		"image is a %d×%d %s: decoding it would take %d MB, over the %d MB one image may take; send it as a JPEG, or as a %s of at most %s",
		h.width, h.height, kind, int(need)>>20, int(most)>>20, kind, Megapixels(fits))
}

// Check refuses a width × height that passes one of l's bounds, with an
// invalid_params error naming the bound: the pixel cap, the cap on each
// side, and the cap on the ratio of the longer side to the shorter.
func (l Limits) Check(width, height int) error {
	if width <= 0 || height <= 0 {
		return carphoto.Errorf(carphoto.EInvalidParams, "image is %d×%d: it has no pixels", width, height)
	}
	// In floating point: a header may claim sides whose product passes int.
	if max := l.maxPixels(); float64(width)*float64(height) > float64(max) {
		return carphoto.Errorf(carphoto.EInvalidParams, "image is too large: %d×%d = %s; the limit is %s",
			width, height, megapixels(float64(width)*float64(height)), Megapixels(max))
	}
	if side := l.maxSide(); width > side || height > side {
		return carphoto.Errorf(carphoto.EInvalidParams, "image is %d×%d; each side may be at most %d pixels", width, height, side)
	}
	long, short := max(width, height), min(width, height)
	if a := l.maxAspect(); float64(long) > a*float64(short) {
		return carphoto.Errorf(carphoto.EInvalidParams, "image is %d×%d: its longer side is %.0f times its shorter; the limit is %g times",
			width, height, float64(long)/float64(short), a)
	}
	return nil
}

// Photo is a decoded input in its displayed orientation.
type Photo struct {
	Image  image.Image // EXIF orientation already applied; bounds start at (0,0)
	Format string      // "jpeg", "png" or "webp"
	ICC    []byte      // embedded ICC profile, nil if none
	// ICCDropped says the file's profile was larger than an answer
	// carries (MaxKeptICC): ICC is nil, and the answer says so.
	// ICCConverted says Image was converted from it to sRGB (ToSRGB).
	ICCDropped, ICCConverted bool
	Quality                  int // JPEG input: the IJG quality (1..100) whose luminance table is nearest the file's; 0 otherwise
}

// header is what the container walk learns before any pixel is decoded.
type header struct {
	format        string
	width, height int // as stored, before orientation
	orientation   int // EXIF orientation 1..8
	icc           []byte
	quality       int

	pngRawBytes, pngIDATBytes uint64 // PNG: unfiltered pixel bytes claimed, compressed bytes present
	pngICCP                   []byte // PNG: the iCCP chunk's data, still compressed

	// pixelBytes and passes are what decoding costs a pixel, in memory
	// and in passes over the image (decodeBytes); zero for JPEG, whose
	// decode MAX_PIXELS bounds (4:2:0 at 1.5 bytes a pixel).
	pixelBytes float64
	passes     int

	jpegScanBytes                         uint64 // JPEG: entropy-coded bytes present
	jpegLeastScanBytes, jpegMostScanBytes uint64 // baseline JPEG: the bounds its size allows, see baselineScanBytes
}

// displaySize is the width and height once the orientation is applied.
func (h *header) displaySize() (int, int) {
	if h.orientation >= 5 {
		return h.height, h.width
	}
	return h.width, h.height
}

// DecodeConfig checks data the way Decode does, without decoding pixels: the
// format, the container structure (truncation is caught here), and the pixel
// cap. It is cheap (a walk over the markers or chunks, no allocation in
// proportion to the image) and is what the web process runs before queueing.
// width and height are in displayed orientation. Every error is a
// *carphoto.Error with code carphoto.EInvalidParams.
func DecodeConfig(data []byte, lim Limits) (format string, width, height int, err error) {
	defer recoverInvalid(&err)
	h, err := readHeader(data, lim)
	if err != nil {
		return "", 0, 0, err
	}
	w, ht := h.displaySize()
	return h.format, w, ht, nil
}

// Inspect checks data as DecodeConfig does and returns its format and its
// EXIF orientation (1..8) as stored: for a reader that decodes the stored
// pixels itself and applies the orientation (package jpegblock).
func Inspect(data []byte, lim Limits) (format string, orientation int, err error) {
	defer recoverInvalid(&err)
	h, err := readHeader(data, lim)
	if err != nil {
		return "", 0, err
	}
	return h.format, h.orientation, nil
}

// Decode decodes a JPEG, PNG or WebP photo, after checking the pixel cap
// from its header, and returns it in displayed orientation with its ICC
// profile. Empty, truncated, non-image and inconsistent data are rejected
// with a *carphoto.Error of code carphoto.EInvalidParams whose message says
// what is wrong; a panic inside a decoder is turned into the same error.
// When ctx is done before or after the pixel decode, ctx.Err() is returned
// as it is. Decode does not keep data.
func Decode(ctx context.Context, data []byte, lim Limits) (p *Photo, err error) {
	defer recoverInvalid(&err)
	return decode(ctx, data, lim)
}

// decode is Decode without the recover, so that the fuzz test sees panics.
func decode(ctx context.Context, data []byte, lim Limits) (*Photo, error) {
	h, err := readHeader(data, lim)
	if err != nil {
		return nil, err
	}
	var iccDropped bool
	if h.pngICCP != nil {
		h.icc, iccDropped = inflateICC(h.pngICCP)
	}
	if len(h.icc) > MaxKeptICC {
		iccDropped = true // the pixels are converted from it once decoded
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var img image.Image
	r := bytes.NewReader(data)
	switch h.format {
	case "jpeg":
		// A baseline JPEG through the block decoder (its Huffman decoding
		// is about three times the standard library's); anything it does
		// not read, and any error, through image/jpeg, whose errors and
		// leniency stay the service's.
		if img, err = jpegblock.DecodeImage(data); err != nil {
			img, err = jpeg.Decode(r)
		}
	case "png":
		img, err = png.Decode(r)
	case "webp":
		img, err = webp.Decode(r)
	}
	if err != nil {
		return nil, undecodable(err)
	}
	if b := img.Bounds(); b.Dx() != h.width || b.Dy() != h.height {
		return nil, carphoto.Errorf(carphoto.EInvalidParams,
			"image data is corrupt: header says %d×%d, pixels are %d×%d",
			h.width, h.height, b.Dx(), b.Dy())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	converted := false
	if len(h.icc) > MaxKeptICC {
		img, converted = ToSRGB(img, h.icc)
		h.icc = nil
	}
	return &Photo{
		Image:        orient(img, h.orientation),
		Format:       h.format,
		ICC:          h.icc,
		ICCDropped:   iccDropped,
		ICCConverted: converted,
		Quality:      h.quality,
	}, nil
}

// readHeader sniffs the format, walks the container for metadata and
// structural damage, and checks the dimensions against lim.
func readHeader(data []byte, lim Limits) (*header, error) {
	if len(data) == 0 {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "image is empty")
	}
	h := &header{format: sniff(data), orientation: 1}
	var err error
	switch h.format {
	case "jpeg":
		err = readJPEGMeta(data, h)
	case "png":
		err = readPNGMeta(data, h)
	case "webp":
		err = readWebPMeta(data, h)
	default:
		if name := otherFormat(data); name != "" {
			return nil, carphoto.Errorf(carphoto.EInvalidParams, "image is a %s file, not a JPEG, PNG or WebP file", name)
		}
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "image is not a JPEG, PNG or WebP file")
	}
	if err != nil {
		return nil, corrupt(err)
	}

	var cfg image.Config
	r := bytes.NewReader(data)
	switch h.format {
	case "jpeg":
		cfg, err = jpeg.DecodeConfig(r)
	case "png":
		cfg, err = png.DecodeConfig(r)
	case "webp":
		cfg, err = webp.DecodeConfig(r)
	}
	if err != nil {
		return nil, corrupt(err)
	}
	h.width, h.height = cfg.Width, cfg.Height
	if err := lim.Check(h.width, h.height); err != nil {
		return nil, err
	}
	if err := lim.checkDecode(h); err != nil {
		return nil, err
	}
	// A header claiming far more pixels than the data can hold is a lie (or
	// a file cut short and patched): refuse it before allocating the claimed
	// image only to run out of data. Deflate cannot compress better than
	// 1032:1 (a 258-byte match coded in two bits); for JPEG see
	// baselineScanBytes.
	if h.pngRawBytes/1032 > h.pngIDATBytes+64 || h.jpegLeastScanBytes > h.jpegScanBytes {
		return nil, carphoto.Errorf(carphoto.EInvalidParams,
			"image data is corrupt: header says %d×%d but the file holds only %d bytes of pixel data",
			h.width, h.height, h.pngIDATBytes+h.jpegScanBytes)
	}
	// The other way round (the stdlib JPEG decoder would silently decode
	// the claimed corner and skip the rest).
	if h.jpegMostScanBytes > 0 && h.jpegScanBytes > h.jpegMostScanBytes {
		return nil, carphoto.Errorf(carphoto.EInvalidParams,
			"image data is corrupt: header says %d×%d but the file holds %d bytes of pixel data, more than that size can",
			h.width, h.height, h.jpegScanBytes)
	}
	return h, nil
}

// Megapixels formats n pixels for a message: "1600 MP", "0.3 MP", "4096 pixels".
func Megapixels(n int) string {
	if n < 100_000 {
		return fmt.Sprintf("%d pixels", n)
	}
	if n >= 10_000_000 || n%1_000_000 == 0 {
		return fmt.Sprintf("%d MP", (n+500_000)/1_000_000)
	}
	return fmt.Sprintf("%.1f MP", float64(n)/1e6)
}

// sniff names the format from the magic bytes, or returns "".
func sniff(data []byte) string {
	switch {
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return "jpeg"
	case bytes.HasPrefix(data, []byte(pngSignature)):
		return "png"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

// otherFormat names the image formats people send by mistake (an iPhone's
// HEIC above all), so that the message says what was sent; "" otherwise.
func otherFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("GIF8")):
		return "GIF"
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return "TIFF"
	case bytes.HasPrefix(data, []byte("BM")) && len(data) >= 14:
		return "BMP"
	case bytes.HasPrefix(data, []byte("%PDF")):
		return "PDF"
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		switch string(data[8:12]) {
		case "heic", "heix", "hevc", "hevx", "heim", "heis":
			return "HEIC"
		case "mif1", "msf1": // HEIF, of HEVC or AV1 images
			return "HEIF"
		case "avif", "avis":
			return "AVIF"
		}
	}
	return ""
}

// errTruncated marks data that ends before its structure does.
var errTruncated = errors.New("data ends early")

// Bad data is named for what it is: "truncated" when the file ends before
// its own structure says it does (the container walk and the header
// decoders), "corrupt" when the file is whole but its data does not decode
// (undecodable) or contradicts its header. Damage that still decodes (a
// lossy WebP's or a JPEG's entropy-coded data overwritten in place, say)
// cannot be told from an image: it comes back as the decoder read it.

// corrupt wraps a container or header error as invalid_params.
func corrupt(err error) error {
	var e *carphoto.Error
	if errors.As(err, &e) {
		return e
	}
	var (
		jpegUnsupported jpeg.UnsupportedError
		pngUnsupported  png.UnsupportedError
	)
	msg := "image data is corrupt: " + err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, errTruncated):
		msg = "image data is truncated: the file ends before the image does"
	case errors.As(err, &jpegUnsupported), errors.As(err, &pngUnsupported):
		msg = "image uses a feature this service cannot read (" + err.Error() + "); save it as a standard JPEG or PNG"
	}
	return carphoto.Wrap(err, carphoto.EInvalidParams, msg)
}

// undecodable wraps the error of a pixel decoder, run once the container
// was walked whole, as invalid_params: data that runs out there (a WebP
// partition or a JPEG scan reading past its bytes, a PNG's compressed
// stream ending early) is damage inside a whole file, not a file cut short.
func undecodable(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return carphoto.Wrap(err, carphoto.EInvalidParams,
			"image data is corrupt: its compressed pixel data runs out before the image does, though the file itself is whole")
	}
	return corrupt(err)
}

// recoverInvalid turns a panic inside a decoder into invalid_params: a
// malformed file must never crash the worker.
func recoverInvalid(err *error) {
	if r := recover(); r != nil {
		*err = carphoto.Wrap(fmt.Errorf("decoder panic: %v", r), carphoto.EInvalidParams,
			"image data is corrupt: the decoder could not read it")
	}
}

// EncodeJPEG writes img as a baseline 4:2:0 JPEG at quality (clamped to
// 1..100, IJG scaling, so Decode reads the same quality back) with icc
// embedded as APP2 ICC_PROFILE segments of at most 65519 bytes each. An
// *image.RGBA or 4:2:0 *image.YCbCr goes through jpegblock.Encode, at half the
// CPU of image/jpeg, which writes the other types. A profile whose colour space is not the one written (RGB, or
// gray for an *image.Gray) is left out: a CMYK input's profile on RGB
// pixels would make viewers misread every colour, which is worse than none.
// It writes no EXIF, so location and camera data from the input are
// dropped; the pixels are already in displayed orientation. Alpha is
// ignored (transparent pixels come out black); flatten first if it matters.
func EncodeJPEG(w io.Writer, img image.Image, quality int, icc []byte) error {
	if b := img.Bounds(); b.Empty() || b.Dx() > 65535 || b.Dy() > 65535 {
		return fmt.Errorf("encode jpeg: a %d×%d image cannot be written as JPEG", b.Dx(), b.Dy())
	}
	quality = min(max(quality, 1), 100)
	_, gray := img.(*image.Gray)
	if !iccFits(icc, gray) {
		icc = nil
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	iw := &afterPrefix{w: bw, prefixLen: 2, insert: jpegICCSegments(icc)} // after SOI
	var err error
	if jpegblock.Encodes(img) {
		err = jpegblock.Encode(iw, img, quality)
	} else {
		err = jpeg.Encode(iw, img, &jpeg.Options{Quality: quality})
	}
	if err != nil {
		return fmt.Errorf("encode jpeg: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode jpeg: %w", err)
	}
	return nil
}

// EncodePNG writes img as an 8-bit PNG with icc embedded as an iCCP
// chunk, unless its colour space is not the one written (see EncodeJPEG).
// An opaque image is written without an alpha channel, a gray one as gray.
// It favours speed over size: one row filter and fast deflate (see
// writePNG), about a quarter of a second for 12 megapixels on one core.
func EncodePNG(w io.Writer, img image.Image, icc []byte) error {
	if b := img.Bounds(); b.Empty() || b.Dx() > 1<<31-1 || b.Dy() > 1<<31-1 {
		return fmt.Errorf("encode png: a %d×%d image cannot be written as PNG", b.Dx(), b.Dy())
	}
	_, gray := img.(*image.Gray)
	if !iccFits(icc, gray) {
		icc = nil
	}
	iccChunk, err := pngICCChunk(icc)
	if err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := writePNG(bw, img, iccChunk); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	return nil
}

// HasTransparency reports whether some pixel of img has alpha below 255, as
// in a transparent PNG cut-out. Types that cannot hold alpha (YCbCr, Gray,
// CMYK) answer at once; the others stop at the first transparent pixel.
func HasTransparency(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return !o.Opaque()
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0xFFFF {
				return true
			}
		}
	}
	return false
}

// afterPrefix passes the first prefixLen bytes written to w, then writes
// insert once, then passes everything else: it splices a segment or chunk
// into an encoder's output just after the signature or first header.
type afterPrefix struct {
	w         io.Writer
	prefixLen int
	insert    []byte
	n         int // bytes passed so far
}

func (a *afterPrefix) Write(p []byte) (int, error) {
	if a.insert == nil || a.n >= a.prefixLen {
		n, err := a.w.Write(p)
		a.n += n
		return n, err
	}
	head := min(len(p), a.prefixLen-a.n)
	n, err := a.w.Write(p[:head])
	a.n += n
	if err != nil {
		return n, err
	}
	if a.n == a.prefixLen {
		if _, err := a.w.Write(a.insert); err != nil {
			return n, err
		}
		a.insert = nil
	}
	if head == len(p) {
		return n, nil
	}
	m, err := a.w.Write(p[head:])
	a.n += m
	return n + m, err
}

// megapixels is Megapixels for a count that may pass int (a header's claim).
func megapixels(n float64) string {
	if n < 1e15 {
		return Megapixels(int(n))
	}
	return fmt.Sprintf("%.0f MP", n/1e6)
}
