package codec_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"carphoto"
	"carphoto/imageops/codec"
)

// The four quadrant colours of the test image, as stored.
var (
	red    = color.RGBA{255, 0, 0, 255}
	green  = color.RGBA{0, 255, 0, 255}
	blue   = color.RGBA{0, 0, 255, 255}
	yellow = color.RGBA{255, 255, 0, 255}
)

// quadImage returns a w×h image whose quadrants are, as stored, red
// (top-left), green (top-right), blue (bottom-left) and yellow
// (bottom-right): every one of the eight orientations shows it differently.
func quadImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := red
			switch {
			case x >= w/2 && y < h/2:
				c = green
			case x < w/2 && y >= h/2:
				c = blue
			case x >= w/2 && y >= h/2:
				c = yellow
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// orientations lists, for each EXIF value, the colours a viewer shows at the
// top-left, top-right, bottom-left and bottom-right of the 32×16 quadImage,
// and whether the displayed image is upright (16×32).
var orientations = []struct {
	o       int
	name    string
	corners [4]color.RGBA
	turned  bool
}{
	{1, "normal", [4]color.RGBA{red, green, blue, yellow}, false},
	{2, "mirrored", [4]color.RGBA{green, red, yellow, blue}, false},
	{3, "upside down", [4]color.RGBA{yellow, blue, green, red}, false},
	{4, "flipped", [4]color.RGBA{blue, yellow, red, green}, false},
	{5, "transposed", [4]color.RGBA{red, blue, green, yellow}, true},
	{6, "turned clockwise", [4]color.RGBA{blue, red, yellow, green}, true},
	{7, "transversed", [4]color.RGBA{yellow, green, blue, red}, true},
	{8, "turned anticlockwise", [4]color.RGBA{green, yellow, red, blue}, true},
}

// checkCorners fails unless the quadrant centres of img show want.
func checkCorners(tb testing.TB, img image.Image, want [4]color.RGBA) {
	tb.Helper()
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	pts := [4]image.Point{{w / 4, h / 4}, {3 * w / 4, h / 4}, {w / 4, 3 * h / 4}, {3 * w / 4, 3 * h / 4}}
	names := [4]string{"top-left", "top-right", "bottom-left", "bottom-right"}
	for i, p := range pts {
		got := color.RGBAModel.Convert(img.At(b.Min.X+p.X, b.Min.Y+p.Y)).(color.RGBA)
		if !near(got, want[i], 40) {
			tb.Errorf("%s pixel is %v, want %v", names[i], got, want[i])
		}
	}
}

func near(a, b color.RGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// exifTIFF returns an EXIF TIFF block (big-endian) whose IFD0 holds the
// orientation, and, with gps, a GPS IFD with a latitude.
func exifTIFF(orientation int, gps bool) []byte {
	n := 1
	if gps {
		n = 2
	}
	b := []byte("MM\x00\x2a\x00\x00\x00\x08")
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = append(b, 0x01, 0x12, 0, 3, 0, 0, 0, 1, byte(orientation>>8), byte(orientation), 0, 0)
	gpsIFD := 8 + 2 + 12*n + 4
	if gps {
		b = append(b, 0x88, 0x25, 0, 4, 0, 0, 0, 1)
		b = binary.BigEndian.AppendUint32(b, uint32(gpsIFD))
	}
	b = binary.BigEndian.AppendUint32(b, 0)
	if gps {
		data := gpsIFD + 2 + 2*12 + 4
		b = binary.BigEndian.AppendUint16(b, 2)
		b = append(b, 0x00, 0x01, 0, 2, 0, 0, 0, 2, 'N', 0, 0, 0) // GPSLatitudeRef "N"
		b = append(b, 0x00, 0x02, 0, 5, 0, 0, 0, 3)               // GPSLatitude, 3 rationals
		b = binary.BigEndian.AppendUint32(b, uint32(data))
		b = binary.BigEndian.AppendUint32(b, 0)
		for _, v := range []uint32{52, 1, 31, 1, 1234, 100} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
	}
	return b
}

// jpegSegment returns a marker segment with its length.
func jpegSegment(marker byte, body []byte) []byte {
	n := len(body) + 2
	return append([]byte{0xFF, marker, byte(n >> 8), byte(n)}, body...)
}

// withSegments inserts segments just after a JPEG's SOI marker.
func withSegments(jpg []byte, segs ...[]byte) []byte {
	out := append([]byte{}, jpg[:2]...)
	for _, s := range segs {
		out = append(out, s...)
	}
	return append(out, jpg[2:]...)
}

func encodeJPEG(tb testing.TB, img image.Image, quality int) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// pngChunk returns a PNG chunk with its length and CRC.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// withPNGChunk inserts a chunk just after a PNG's IHDR.
func withPNGChunk(p []byte, chunk []byte) []byte {
	const afterIHDR = 8 + 25
	out := append([]byte{}, p[:afterIHDR]...)
	out = append(out, chunk...)
	return append(out, p[afterIHDR:]...)
}

// pngHeader returns a PNG of an IHDR claiming w×h RGBA, one IDAT of idat
// zero bytes, and IEND.
func pngHeader(w, h uint32, idat int) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	b := []byte("\x89PNG\r\n\x1a\n")
	b = append(b, pngChunk("IHDR", ihdr)...)
	b = append(b, pngChunk("IDAT", make([]byte, idat))...)
	return append(b, pngChunk("IEND", nil)...)
}

// webpWith rewraps the bitstream of a testdata WebP in an extended (VP8X)
// container with the given ICCP and EXIF chunks (nil for none).
func webpWith(tb testing.TB, file string, icc, exif []byte) []byte {
	tb.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		tb.Fatal(err)
	}
	img, err := codec.Decode(context.Background(), data, codec.Limits{})
	if err != nil {
		tb.Fatal(err)
	}
	w, h := img.Image.Bounds().Dx(), img.Image.Bounds().Dy()
	bitstream := data[12:] // the single VP8 or VP8L chunk of a simple file
	chunk := func(id string, body []byte) []byte {
		b := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
		b = append(b, body...)
		if len(body)%2 == 1 {
			b = append(b, 0)
		}
		return b
	}
	var flags byte
	if icc != nil {
		flags |= 0x20
	}
	if exif != nil {
		flags |= 0x08
	}
	vp8x := []byte{flags, 0, 0, 0, byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)}
	body := []byte("WEBP")
	body = append(body, chunk("VP8X", vp8x)...)
	if icc != nil {
		body = append(body, chunk("ICCP", icc)...)
	}
	body = append(body, bitstream...)
	if exif != nil {
		body = append(body, chunk("EXIF", exif)...)
	}
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

func TestDecodeOrientation(t *testing.T) {
	stored := quadImage(32, 16)
	gray := image.NewGray(stored.Bounds())
	for y := 0; y < 16; y++ {
		for x := 0; x < 32; x++ {
			gray.Set(x, y, stored.At(x, y))
		}
	}
	inputs := []struct {
		name string
		make func(tb testing.TB, o int) []byte
		gray bool
	}{
		{"jpeg APP1", func(tb testing.TB, o int) []byte {
			return withSegments(encodeJPEG(tb, stored, 95), jpegSegment(0xE1, append([]byte("Exif\x00\x00"), exifTIFF(o, false)...)))
		}, false},
		{"gray jpeg APP1", func(tb testing.TB, o int) []byte {
			return withSegments(encodeJPEG(tb, gray, 95), jpegSegment(0xE1, append([]byte("Exif\x00\x00"), exifTIFF(o, false)...)))
		}, true},
		{"png eXIf", func(tb testing.TB, o int) []byte {
			return withPNGChunk(encodePNG(tb, stored), pngChunk("eXIf", exifTIFF(o, false)))
		}, false},
		{"lossless webp EXIF", func(tb testing.TB, o int) []byte {
			return webpWith(tb, "quad.lossless.webp", nil, exifTIFF(o, false))
		}, false},
		{"lossy webp EXIF", func(tb testing.TB, o int) []byte {
			return webpWith(tb, "quad.lossy.webp", nil, exifTIFF(o, false))
		}, false},
	}
	for _, in := range inputs {
		for _, tc := range orientations {
			t.Run(in.name+"/"+tc.name, func(t *testing.T) {
				data := in.make(t, tc.o)
				wantW, wantH := 32, 16
				if tc.turned {
					wantW, wantH = 16, 32
				}
				_, w, h, err := codec.DecodeConfig(data, codec.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if w != wantW || h != wantH {
					t.Errorf("DecodeConfig says %d×%d, want %d×%d", w, h, wantW, wantH)
				}
				p, err := codec.Decode(context.Background(), data, codec.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				b := p.Image.Bounds()
				if b != image.Rect(0, 0, wantW, wantH) {
					t.Fatalf("decoded bounds %v, want (0,0)-(%d,%d)", b, wantW, wantH)
				}
				want := tc.corners
				if in.gray {
					for i, c := range want {
						g := color.GrayModel.Convert(c).(color.Gray).Y
						want[i] = color.RGBA{g, g, g, 255}
					}
				}
				checkCorners(t, p.Image, want)
			})
		}
	}
}

func TestDecodeKeepsJPEGTypeWhenUpright(t *testing.T) {
	p, err := codec.Decode(context.Background(), encodeJPEG(t, quadImage(32, 16), 90), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Image.(*image.YCbCr); !ok {
		t.Errorf("decoded JPEG is %T, want *image.YCbCr (no needless conversion)", p.Image)
	}
	if p.Format != "jpeg" {
		t.Errorf("Format = %q, want jpeg", p.Format)
	}
}

func TestDecodeAcceptsCameraExtras(t *testing.T) {
	photo := encodeJPEG(t, quadImage(32, 16), 90)
	thumb := encodeJPEG(t, quadImage(8, 4), 50)
	exifWithThumb := append(append([]byte("Exif\x00\x00"), exifTIFF(6, true)...), thumb...)
	xmp := []byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta/>")
	tests := []struct {
		name string
		data []byte
	}{
		{"EXIF with an embedded thumbnail JPEG", withSegments(photo, jpegSegment(0xE1, exifWithThumb))},
		{"XMP before EXIF", withSegments(photo, jpegSegment(0xE1, xmp), jpegSegment(0xE1, exifWithThumb))},
		{"fill bytes before a marker", append([]byte{0xFF, 0xD8, 0xFF, 0xFF, 0xFF}, append(jpegSegment(0xE1, exifWithThumb), photo[2:]...)...)},
		{"data after EOI (a phone's trailer)", append(withSegments(photo, jpegSegment(0xE1, exifWithThumb)), append([]byte("SEFH"), thumb...)...)},
	}
	for _, tc := range tests {
		p, err := codec.Decode(context.Background(), tc.data, codec.Limits{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if b := p.Image.Bounds(); b.Dx() != 16 || b.Dy() != 32 {
			t.Errorf("%s: decoded %v, want the 32×16 photo turned to 16×32 (not the thumbnail)", tc.name, b)
		}
		checkCorners(t, p.Image, orientations[5].corners)
	}
}

// patternedICC is the profile cjpeg embedded in quad.progressive.icc.jpg
// (see testdata/README.md).
func patternedICC() []byte {
	const n = 70000
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	binary.BigEndian.PutUint32(b, n)
	copy(b[16:], "RGB ")
	copy(b[36:], "acsp")
	return b
}

func TestDecodeLibjpegFiles(t *testing.T) {
	tests := []struct {
		file string
		icc  []byte
	}{
		{"quad.progressive.icc.jpg", patternedICC()},
		{"quad.422.restart.jpg", nil},
		{"quad.444.jpg", nil},
	}
	for _, tc := range tests {
		data, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []int{1, 6, 7} {
			in := withSegments(data, jpegSegment(0xE1, append([]byte("Exif\x00\x00"), exifTIFF(o, false)...)))
			p, err := codec.Decode(context.Background(), in, codec.Limits{})
			if err != nil {
				t.Errorf("%s, orientation %d: %v", tc.file, o, err)
				continue
			}
			checkCorners(t, p.Image, orientations[o-1].corners)
			if !bytes.Equal(p.ICC, tc.icc) {
				t.Errorf("%s: decoded a %d-byte profile, want the %d bytes cjpeg embedded", tc.file, len(p.ICC), len(tc.icc))
			}
			if p.Quality != 90 {
				t.Errorf("%s: quality %d, want 90 (cjpeg -quality 90)", tc.file, p.Quality)
			}
		}
		// Cut halfway through the last scan's data.
		sos := bytes.LastIndex(data, []byte{0xFF, 0xDA})
		if _, err := codec.Decode(context.Background(), data[:(sos+len(data))/2], codec.Limits{}); err == nil {
			t.Errorf("%s cut inside its last scan: decoded without error", tc.file)
		}
	}
}

// randomICC returns n bytes (n ≥ 128) standing in for an RGB profile: an
// ICC header naming the "RGB " colour space, then noise that the codec must
// carry byte for byte.
func randomICC(n int) []byte {
	return fakeICC(n, "RGB ")
}

func fakeICC(n int, space string) []byte {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	copy(b[16:], space)
	copy(b[36:], "acsp")
	return b
}

func TestICCRoundTrip(t *testing.T) {
	img := quadImage(32, 16)
	for _, size := range []int{560, 3144, 65519, 65520, 200_000} { // 200 KB spans four APP2 segments
		icc := randomICC(size)
		encoders := []struct {
			name   string
			encode func(*bytes.Buffer) error
			std    func([]byte) error // the standard decoder must still read the output
		}{
			{"jpeg", func(b *bytes.Buffer) error { return codec.EncodeJPEG(b, img, 90, icc) },
				func(d []byte) error { _, err := jpeg.Decode(bytes.NewReader(d)); return err }},
			{"png", func(b *bytes.Buffer) error { return codec.EncodePNG(b, img, icc) },
				func(d []byte) error { _, err := png.Decode(bytes.NewReader(d)); return err }},
		}
		for _, enc := range encoders {
			var b bytes.Buffer
			if err := enc.encode(&b); err != nil {
				t.Fatalf("%s, %d-byte profile: %v", enc.name, size, err)
			}
			if err := enc.std(b.Bytes()); err != nil {
				t.Errorf("%s, %d-byte profile: standard decoder rejects the output: %v", enc.name, size, err)
			}
			p, err := codec.Decode(context.Background(), b.Bytes(), codec.Limits{})
			if err != nil {
				t.Fatalf("%s, %d-byte profile: %v", enc.name, size, err)
			}
			if !bytes.Equal(p.ICC, icc) {
				t.Errorf("%s, %d-byte profile: decoded a %d-byte profile that differs", enc.name, size, len(p.ICC))
			}
			checkCorners(t, p.Image, orientations[0].corners)
		}
	}
	t.Run("webp ICCP", func(t *testing.T) {
		icc := randomICC(3144)
		p, err := codec.Decode(context.Background(), webpWith(t, "quad.lossless.webp", icc, nil), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.ICC, icc) {
			t.Errorf("decoded a %d-byte profile that differs", len(p.ICC))
		}
	})
	t.Run("none", func(t *testing.T) {
		var b bytes.Buffer
		if err := codec.EncodeJPEG(&b, img, 90, nil); err != nil {
			t.Fatal(err)
		}
		p, err := codec.Decode(context.Background(), b.Bytes(), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if p.ICC != nil {
			t.Errorf("decoded a %d-byte profile from a file without one", len(p.ICC))
		}
	})
}

// jpegMarkers lists the markers of a JPEG up to its first SOS.
func jpegMarkers(tb testing.TB, d []byte) []byte {
	tb.Helper()
	var ms []byte
	for p := 2; p+4 <= len(d); {
		if d[p] != 0xFF {
			tb.Fatalf("no marker at %d", p)
		}
		ms = append(ms, d[p+1])
		if d[p+1] == 0xDA {
			break
		}
		p += 2 + int(d[p+2])<<8 + int(d[p+3])
	}
	return ms
}

func TestEncodersLeaveOutMismatchedProfile(t *testing.T) {
	rgb := quadImage(16, 8)
	gray := image.NewGray(rgb.Bounds())
	tests := []struct {
		name  string
		img   image.Image
		space string
		kept  bool
	}{
		{"CMYK profile on RGB pixels", rgb, "CMYK", false},
		{"gray profile on RGB pixels", rgb, "GRAY", false},
		{"gray profile on gray pixels", gray, "GRAY", true},
		{"RGB profile on gray pixels", gray, "RGB ", false},
	}
	for _, tc := range tests {
		icc := fakeICC(600, tc.space)
		for _, enc := range []struct {
			name   string
			encode func(io.Writer, image.Image, []byte) error
		}{
			{"jpeg", func(w io.Writer, m image.Image, icc []byte) error { return codec.EncodeJPEG(w, m, 90, icc) }},
			{"png", codec.EncodePNG},
		} {
			var b bytes.Buffer
			if err := enc.encode(&b, tc.img, icc); err != nil {
				t.Fatal(err)
			}
			p, err := codec.Decode(context.Background(), b.Bytes(), codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if kept := bytes.Equal(p.ICC, icc); kept != tc.kept {
				t.Errorf("%s, %s: profile kept = %v, want %v", tc.name, enc.name, kept, tc.kept)
			}
		}
	}
}

func TestEncodeJPEGDropsEXIFAndGPS(t *testing.T) {
	exif := append([]byte("Exif\x00\x00"), exifTIFF(6, true)...)
	in := withSegments(encodeJPEG(t, quadImage(32, 16), 90), jpegSegment(0xE1, exif))
	p, err := codec.Decode(context.Background(), in, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := codec.EncodeJPEG(&out, p.Image, p.Quality, p.ICC); err != nil {
		t.Fatal(err)
	}
	if ms := jpegMarkers(t, out.Bytes()); bytes.IndexByte(ms, 0xE1) >= 0 {
		t.Errorf("output has an APP1 (EXIF) segment; markers % X", ms)
	}
	if bytes.Contains(out.Bytes(), []byte("Exif")) || bytes.Contains(out.Bytes(), exifTIFF(6, true)[8:]) {
		t.Error("output still holds the input's EXIF/GPS bytes")
	}
	// The orientation went into the pixels, so dropping the tag loses nothing.
	q, err := codec.Decode(context.Background(), out.Bytes(), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkCorners(t, q.Image, orientations[5].corners)
}

func TestDecodeQuality(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	img := image.NewRGBA(image.Rect(0, 0, 128, 96))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	for _, q := range []int{30, 50, 75, 90, 95} {
		p, err := codec.Decode(context.Background(), encodeJPEG(t, img, q), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Quality < q-5 || p.Quality > q+5 {
			t.Errorf("quality of a JPEG written at %d estimated as %d", q, p.Quality)
		}
	}
	p, err := codec.Decode(context.Background(), encodePNG(t, img), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Quality != 0 {
		t.Errorf("quality of a PNG = %d, want 0", p.Quality)
	}
}

// patchSOF returns a copy of a JPEG whose frame header claims w×h.
func patchSOF(tb testing.TB, jpg []byte, w, h int) []byte {
	tb.Helper()
	out := append([]byte{}, jpg...)
	i := bytes.Index(out, []byte{0xFF, 0xC0})
	if i < 0 {
		tb.Fatal("no SOF0")
	}
	binary.BigEndian.PutUint16(out[i+5:], uint16(h))
	binary.BigEndian.PutUint16(out[i+7:], uint16(w))
	return out
}

// manyScans returns a JPEG with n−1 empty scans added before EOI: cheap to
// send, and a pass over the whole image each to decode.
func manyScans(jpg []byte, n int) []byte {
	out := append([]byte{}, jpg[:len(jpg)-2]...)
	for range n - 1 {
		out = append(out, jpegSegment(0xDA, []byte{1, 1, 0, 1, 63, 0})...)
	}
	return append(out, 0xFF, 0xD9)
}

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// sofType returns a copy of a JPEG with its SOF0 marker changed to m.
func sofType(jpg []byte, m byte) []byte {
	out := append([]byte{}, jpg...)
	out[bytes.Index(out, []byte{0xFF, 0xC0})+1] = m
	return out
}

func TestDecodeRejectsBadInput(t *testing.T) {
	photo := encodeJPEG(t, quadImage(64, 64), 90)
	noisy := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range noisy.Pix {
		noisy.Pix[i] = byte(i * 7919 >> 3)
	}
	pngFile := encodePNG(t, noisy)
	random := image.NewRGBA(image.Rect(0, 0, 128, 128))
	rand.NewChaCha8([32]byte{5}).Read(random.Pix)
	noisyJPEG := encodeJPEG(t, random, 100)
	bigPNG := encodePNG(t, image.NewNRGBA(image.Rect(0, 0, 400, 400)))
	small := pngHeader(4, 4, 0)
	lossless, err := os.ReadFile("testdata/quad.lossless.webp")
	if err != nil {
		t.Fatal(err)
	}
	lyingWebP := webpWith(t, "quad.lossless.webp", nil, nil)
	lyingWebP[24] = 99 // VP8X canvas width 100, bitstream 32

	tests := []struct {
		name   string
		data   []byte
		want   string // in the message
		header bool   // DecodeConfig catches it too
	}{
		{"empty", nil, "image is empty", true},
		{"text named .jpg", []byte("this is not a photo\n"), "not a JPEG, PNG or WebP", true},
		{"GIF", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "image is a GIF file, not a JPEG, PNG or WebP", true},
		{"iPhone HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), "image is a HEIC file, not a JPEG, PNG or WebP", true},
		{"JPEG signature only", []byte{0xFF, 0xD8, 0xFF}, "truncated", true},
		{"JPEG cut at a third", photo[:len(photo)/3], "truncated", true},
		{"JPEG without its EOI", photo[:len(photo)-2], "truncated", true},
		{"JPEG claiming 10000×10000", patchSOF(t, photo, 10000, 10000), "10000×10000 = 100 MP; the limit is 60 MP", true},
		{"JPEG claiming 6000×6000 with 2 KB of data", patchSOF(t, photo, 6000, 6000), "header says 6000×6000", true},
		{"JPEG claiming 8×8 with 70 KB of data", patchSOF(t, noisyJPEG, 8, 8), "more than that size can", true},
		{"JPEG claiming 0 wide", patchSOF(t, photo, 0, 64), "", true},
		{"JPEG with 101 scans", manyScans(photo, 101), "more than 100 progressive scans", true},
		{"arithmetic-coded JPEG", sofType(photo, 0xC9), "cannot read", true},
		{"arithmetic-coded JPEG from cjpeg", readTestdata(t, "quad.arithmetic.jpg"), "cannot read", true},
		{"PNG claiming 40000×40000", pngHeader(40000, 40000, 100), "40000×40000 = 1600 MP; the limit is 60 MP", true},
		{"PNG claiming 100000×100000", pngHeader(100000, 100000, 100), "image is too large: 100000×100000 = 10000 MP; the limit is 60 MP", true},
		{"PNG claiming 5000×5000 with 100 bytes", pngHeader(5000, 5000, 100), "header says 5000×5000", true},
		{"PNG 0×0", pngHeader(0, 0, 10), "no pixels", true},
		{"PNG strip 59999999×1 under the pixel cap", pngHeader(59999999, 1, 100), "59999999×1; each side may be at most 20000 pixels", true},
		{"PNG 20000×100, 200 times longer than wide", pngHeader(20000, 100, 100), "its longer side is 200 times its shorter; the limit is 20 times", true},
		{"PNG cut at a third", pngFile[:len(pngFile)/3], "truncated", true},
		{"PNG without IEND", pngFile[:len(pngFile)-12], "truncated", true},
		{"PNG header on 400×400 data", append(append(append([]byte{}, small[:33]...), bigPNG[33:len(bigPNG)-12]...), small[len(small)-12:]...), "corrupt", false},
		{"PNG with garbage IDAT", pngHeader(4, 4, 40), "corrupt", false},
		{"WebP cut at a third", lossless[:len(lossless)/3], "truncated", true},
		{"WebP canvas 100 wide, bitstream 32", lyingWebP, "corrupt", false},
		{"over a custom limit", encodePNG(t, quadImage(64, 64)), "64×64 = 4096 pixels; the limit is 1000 pixels", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := codec.Limits{}
			if strings.HasPrefix(tc.name, "over a custom limit") {
				lim.MaxPixels = 1000
			}
			_, err := codec.Decode(context.Background(), tc.data, lim)
			checkInvalid(t, "Decode", err, tc.want)
			_, _, _, err = codec.DecodeConfig(tc.data, lim)
			if tc.header {
				checkInvalid(t, "DecodeConfig", err, tc.want)
			} else if err != nil {
				checkInvalid(t, "DecodeConfig", err, tc.want)
			}
		})
	}
}

func checkInvalid(tb testing.TB, op string, err error, want string) {
	tb.Helper()
	var e *carphoto.Error
	switch {
	case err == nil:
		tb.Errorf("%s succeeded, want an invalid_params error", op)
	case !errors.As(err, &e) || e.Code != carphoto.EInvalidParams:
		tb.Errorf("%s error %v has code %s, want %s", op, err, carphoto.ErrorCode(err), carphoto.EInvalidParams)
	case !strings.Contains(e.Message, want):
		tb.Errorf("%s message %q does not say %q", op, e.Message, want)
	}
}

func TestDecodeStopsOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := codec.Decode(ctx, encodePNG(t, quadImage(8, 8)), codec.Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Decode with a cancelled context returned %v, want context.Canceled", err)
	}
}

// opaqueless is an image type without an Opaque method.
type opaqueless struct{ image.Image }

func TestHasTransparency(t *testing.T) {
	oneClear := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for i := range oneClear.Pix {
		oneClear.Pix[i] = 255
	}
	opaqueNRGBA := image.NewNRGBA(oneClear.Bounds())
	copy(opaqueNRGBA.Pix, oneClear.Pix)
	oneClear.SetNRGBA(7, 7, color.NRGBA{1, 2, 3, 128})

	tests := []struct {
		name string
		img  image.Image
		want bool
	}{
		{"YCbCr", image.NewYCbCr(image.Rect(0, 0, 8, 8), image.YCbCrSubsampleRatio420), false},
		{"Gray", image.NewGray(image.Rect(0, 0, 8, 8)), false},
		{"opaque RGBA", quadImage(8, 8), false},
		{"opaque NRGBA", opaqueNRGBA, false},
		{"NRGBA with one half-clear pixel", oneClear, true},
		{"fresh RGBA (all clear)", image.NewRGBA(image.Rect(0, 0, 8, 8)), true},
		{"other type, opaque", opaqueless{quadImage(8, 8)}, false},
		{"other type, half-clear", opaqueless{oneClear}, true},
	}
	for _, tc := range tests {
		if got := codec.HasTransparency(tc.img); got != tc.want {
			t.Errorf("%s: HasTransparency = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEncodePNGKeepsTransparency(t *testing.T) {
	// A premultiplied RGBA cut-out: half-clear red must come back as
	// straight (non-premultiplied) red at half alpha.
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	img.SetRGBA(0, 0, color.RGBA{128, 0, 0, 128})
	img.SetRGBA(1, 0, color.RGBA{0, 0, 255, 255})
	var b bytes.Buffer
	if err := codec.EncodePNG(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	p, err := codec.Decode(context.Background(), b.Bytes(), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !codec.HasTransparency(p.Image) {
		t.Fatal("transparent cut-out came back opaque")
	}
	for _, c := range []struct {
		x, y int
		want color.NRGBA
	}{{0, 0, color.NRGBA{255, 0, 0, 128}}, {1, 0, color.NRGBA{0, 0, 255, 255}}, {2, 1, color.NRGBA{0, 0, 0, 0}}} {
		got := color.NRGBAModel.Convert(p.Image.At(c.x, c.y)).(color.NRGBA)
		if got != c.want && !(c.want.A == 0 && got.A == 0) {
			t.Errorf("pixel (%d,%d) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

func TestEncodePNGPixels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	noise := func(b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	rect := image.Rect(0, 0, 37, 23) // odd sizes: no row or block is a round number
	nrgba := image.NewNRGBA(rect)
	noise(nrgba.Pix)
	rgba := image.NewRGBA(rect)
	for i := 0; i < len(rgba.Pix); i += 4 { // valid premultiplied: colour ≤ alpha
		a := byte(r.Uint32())
		if i%12 == 0 {
			a = 255
		}
		rgba.Pix[i+3] = a
		for c := i; c < i+3; c++ {
			rgba.Pix[c] = byte(r.Uint32() % (uint32(a) + 1))
		}
	}
	gray := image.NewGray(rect)
	noise(gray.Pix)
	ycc := image.NewYCbCr(rect, image.YCbCrSubsampleRatio420)
	noise(ycc.Y)
	noise(ycc.Cb)
	noise(ycc.Cr)
	big := image.NewRGBA(image.Rect(0, 0, 60, 50))
	noise(big.Pix)
	for i := 3; i < len(big.Pix); i += 4 {
		big.Pix[i] = 255
	}
	tests := []struct {
		name        string
		img         image.Image
		wantOpaque  bool
		tolerance   int
		wantDecoded string // the standard decoder's type: the colour type written
	}{
		{"opaque RGBA photo", quadImage(37, 23), true, 0, "*image.RGBA"},
		{"NRGBA with alpha", nrgba, false, 0, "*image.NRGBA"},
		{"premultiplied RGBA with alpha", rgba, false, 0, "*image.NRGBA"},
		{"Gray", gray, true, 0, "*image.Gray"},
		{"YCbCr", ycc, true, 1, "*image.RGBA"},
		{"RGBA sub-image off origin", big.SubImage(image.Rect(11, 7, 48, 30)), true, 0, "*image.RGBA"},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := codec.EncodePNG(&b, tc.img, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := png.Decode(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%s: the standard decoder rejects the output: %v", tc.name, err)
		}
		if typ := fmt.Sprintf("%T", got); typ != tc.wantDecoded {
			t.Errorf("%s: decodes as %s, want %s", tc.name, typ, tc.wantDecoded)
		}
		ob, gb := tc.img.Bounds(), got.Bounds()
		if gb != image.Rect(0, 0, ob.Dx(), ob.Dy()) {
			t.Fatalf("%s: bounds %v, want %dx%d from (0,0)", tc.name, gb, ob.Dx(), ob.Dy())
		}
	pixels:
		for y := 0; y < ob.Dy(); y++ {
			for x := 0; x < ob.Dx(); x++ {
				want := color.NRGBAModel.Convert(tc.img.At(ob.Min.X+x, ob.Min.Y+y)).(color.NRGBA)
				g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
				if !near(color.RGBA(g), color.RGBA(want), tc.tolerance) {
					t.Errorf("%s: pixel (%d,%d) = %v, want %v", tc.name, x, y, g, want)
					break pixels
				}
			}
		}
	}
}

// testPhoto is a w×h stand-in for a photo: smooth gradients, hard edges
// (the quadrants) and noise, deterministic.
func testPhoto(w, h int) *image.RGBA {
	img := quadImage(w, h)
	r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := img.PixOffset(x, y)
			for c := range 3 {
				v := int(img.Pix[i+c])/2 + 64*x/max(w, 1) + 64*y/max(h, 1) + int(r.Uint32()%21) - 10
				img.Pix[i+c] = uint8(min(max(v, 0), 255))
			}
		}
	}
	return img
}

// psnr is the peak signal-to-noise ratio of got against want, in dB, over
// R, G and B; the same size is assumed.
func psnr(want, got image.Image) float64 {
	b := want.Bounds()
	var se float64
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r1, g1, b1, _ := want.At(b.Min.X+x, b.Min.Y+y).RGBA()
			r2, g2, b2, _ := got.At(x, y).RGBA()
			for _, d := range [3]float64{float64(r1>>8) - float64(r2>>8), float64(g1>>8) - float64(g2>>8), float64(b1>>8) - float64(b2>>8)} {
				se += d * d
			}
		}
	}
	if se == 0 {
		return 99
	}
	return 10 * math.Log10(255*255*3*float64(b.Dx()*b.Dy())/se)
}

// TestEncodeJPEGAsGoodAsImageJPEG holds EncodeJPEG's own writer (RGBA and
// 4:2:0 YCbCr) to image/jpeg: the standard decoder reads it, it is as
// faithful to the input, no larger, and reports the quality it was written at.
func TestEncodeJPEGAsGoodAsImageJPEG(t *testing.T) {
	for _, size := range []image.Point{{1, 1}, {17, 33}, {123, 77}} {
		rgba := testPhoto(size.X, size.Y)
		ycc, err := jpeg.Decode(bytes.NewReader(encodeJPEG(t, rgba, 100)))
		if err != nil {
			t.Fatal(err)
		}
		inputs := []image.Image{rgba, ycc}
		if size.X > 4 {
			sub := image.Rect(1, 1, size.X-1, size.Y-2)
			inputs = append(inputs,
				rgba.SubImage(sub),
				ycc.(*image.YCbCr).SubImage(sub),
				ycc.(*image.YCbCr).SubImage(sub.Add(image.Pt(1, 1)).Intersect(ycc.Bounds())))
		}
		for _, in := range inputs {
			for _, q := range []int{10, 50, 75, 90, 100} {
				name := fmt.Sprintf("%T %v q%d", in, in.Bounds(), q)
				var ours bytes.Buffer
				if err := codec.EncodeJPEG(&ours, in, q, nil); err != nil {
					t.Fatal(err)
				}
				std := encodeJPEG(t, in, q)
				got, err := jpeg.Decode(bytes.NewReader(ours.Bytes()))
				if err != nil {
					t.Fatalf("%s: the standard decoder rejects the output: %v", name, err)
				}
				ref, _ := jpeg.Decode(bytes.NewReader(std))
				// Above 50 dB a difference is invisible; at quality 100 the
				// float and integer DCTs' rounding trade tenths of a dB.
				if p, pStd := psnr(in, got), psnr(in, ref); p < pStd-0.3 && p < 50 {
					t.Errorf("%s: %.2f dB from the input, image/jpeg %.2f dB", name, p, pStd)
				}
				if n, nStd := ours.Len(), len(std); n > nStd+nStd/50+16 {
					t.Errorf("%s: %d bytes, image/jpeg %d", name, n, nStd)
				}
				p, err := codec.Decode(context.Background(), ours.Bytes(), codec.Limits{})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if p.Quality != q {
					t.Errorf("%s: quality read back as %d", name, p.Quality)
				}
			}
		}
	}
}

func TestEncodersRefuseEmptyImages(t *testing.T) {
	empty := image.NewRGBA(image.Rect(0, 0, 0, 10))
	if err := codec.EncodeJPEG(io.Discard, empty, 90, nil); err == nil {
		t.Error("EncodeJPEG wrote a 0×10 image")
	}
	if err := codec.EncodePNG(io.Discard, empty, nil); err == nil {
		t.Error("EncodePNG wrote a 0×10 image")
	}
}

// FuzzEncodeJPEG feeds EncodeJPEG arbitrary pixels at any quality: the
// standard decoder must read every output back at the same size.
func FuzzEncodeJPEG(f *testing.F) {
	f.Add(uint8(16), uint8(90), []byte("\x00\xff\x00\xff\x80"))
	f.Add(uint8(1), uint8(100), []byte{255, 255, 255, 255})
	f.Add(uint8(33), uint8(1), []byte{0, 255})
	f.Fuzz(func(t *testing.T, width, quality uint8, pix []byte) {
		w := int(width)%64 + 1
		h := len(pix)/(4*w) + 1
		rgba := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range rgba.Pix {
			if len(pix) > 0 {
				rgba.Pix[i] = pix[i%len(pix)] ^ byte(i*int(quality))
			}
		}
		ycc, err := jpeg.Decode(bytes.NewReader(encodeJPEG(t, rgba, 100)))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []image.Image{rgba, ycc} {
			var b bytes.Buffer
			if err := codec.EncodeJPEG(&b, in, int(quality), nil); err != nil {
				t.Fatal(err)
			}
			got, err := jpeg.Decode(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("%T %dx%d quality %d: the standard decoder rejects the output: %v", in, w, h, quality, err)
			}
			if got.Bounds().Size() != in.Bounds().Size() {
				t.Fatalf("decoded %v, want %v", got.Bounds(), in.Bounds())
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	img := quadImage(16, 8)
	jpg := encodeJPEG(f, img, 80)
	f.Add(jpg)
	f.Add(withSegments(jpg, jpegSegment(0xE1, append([]byte("Exif\x00\x00"), exifTIFF(6, true)...)), jpegSegment(0xE2, append([]byte("ICC_PROFILE\x00\x01\x01"), "abc"...))))
	var withICC bytes.Buffer
	f.Add(jpg[:len(jpg)/2])
	f.Add(withPNGChunk(encodePNG(f, img), pngChunk("eXIf", exifTIFF(8, false))))
	if err := codec.EncodePNG(&withICC, img, randomICC(300)); err != nil {
		f.Fatal(err)
	}
	f.Add(withICC.Bytes())
	f.Add(pngHeader(40000, 40000, 10))
	for _, name := range []string{"quad.lossless.webp", "quad.lossy.webp"} {
		f.Add(webpWith(f, name, []byte("icc"), exifTIFF(3, false)))
	}
	for _, name := range []string{"quad.422.restart.jpg", "quad.444.jpg", "quad.arithmetic.jpg"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := codec.Limits{MaxPixels: 1 << 20}
		_, _, _, cerr := codec.DecodeConfig(data, lim)
		p, err := codec.DecodeNoRecover(context.Background(), data, lim)
		if err != nil {
			checkInvalid(t, "Decode", err, "")
			return
		}
		if cerr != nil {
			t.Errorf("Decode accepted what DecodeConfig rejected: %v", cerr)
		}
		if b := p.Image.Bounds(); b.Min != (image.Point{}) || b.Empty() {
			t.Errorf("decoded bounds %v", b)
		}
	})
}

// FlattenInPlace gives Flatten's pixels, in the image's own memory.
func TestFlattenInPlaceMatchesFlatten(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	img := image.NewNRGBA(image.Rect(0, 0, 67, 41))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	for i := 3; i < len(img.Pix); i += 16 {
		img.Pix[i] = []byte{0, 255}[i/16%2] // fully clear and fully opaque pixels too
	}
	for _, bg := range []color.Color{color.White, color.NRGBA{0x33, 0x66, 0x99, 255}, color.Black} {
		want := codec.Flatten(img, bg)
		mine := image.NewNRGBA(img.Rect)
		copy(mine.Pix, img.Pix)
		got := codec.FlattenInPlace(mine, bg)
		if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("background %v: FlattenInPlace differs from Flatten", bg)
		}
		if &got.Pix[0] != &mine.Pix[0] {
			t.Errorf("background %v: FlattenInPlace made a copy", bg)
		}
	}
}
