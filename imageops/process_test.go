package imageops

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"testing"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
)

// phoneJPEG is what a phone sends: a w×h JPEG stored sideways with EXIF
// orientation 6 (rotate 90° clockwise to display), a GPS position and an
// ICC profile.
func phoneJPEG(t *testing.T, w, h, quality int, icc []byte) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 120, 255})
		}
	}
	var enc bytes.Buffer
	if err := jpeg.Encode(&enc, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	// EXIF: IFD0 {Orientation=6, GPSInfo→IFD}, GPS IFD {GPSLatitudeRef="N"}.
	be := binary.BigEndian
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08")
	ifd0 := make([]byte, 2+2*12+4)
	be.PutUint16(ifd0, 2)
	be.PutUint16(ifd0[2:], 0x0112)
	be.PutUint16(ifd0[4:], 3)
	be.PutUint32(ifd0[6:], 1)
	be.PutUint16(ifd0[10:], 6)
	be.PutUint16(ifd0[14:], 0x8825)
	be.PutUint16(ifd0[16:], 4)
	be.PutUint32(ifd0[18:], 1)
	be.PutUint32(ifd0[22:], uint32(8+len(ifd0)))
	gps := make([]byte, 2+12+4)
	be.PutUint16(gps, 1)
	be.PutUint16(gps[2:], 0x0001)
	be.PutUint16(gps[4:], 2)
	be.PutUint32(gps[6:], 2)
	copy(gps[10:], "N\x00")
	exif := append(append(append([]byte("Exif\x00\x00"), tiff...), ifd0...), gps...)
	iccSeg := append([]byte("ICC_PROFILE\x00\x01\x01"), icc...)

	var out bytes.Buffer
	out.Write(enc.Bytes()[:2]) // SOI
	for _, seg := range []struct {
		marker byte
		data   []byte
	}{{0xe1, exif}, {0xe2, iccSeg}} {
		out.Write([]byte{0xff, seg.marker, byte((len(seg.data) + 2) >> 8), byte(len(seg.data) + 2)})
		out.Write(seg.data)
	}
	out.Write(enc.Bytes()[2:])
	return out.Bytes()
}

// The output shows upright, keeps the colour profile, carries no EXIF but
// the orientation (so no GPS), and is encoded at a quality close to the
// input's.
func TestProcessKeepsProfileDropsGPSAppliesOrientation(t *testing.T) {
	icc := rgbProfile(680)
	in := phoneJPEG(t, 320, 200, 82, icc)
	lim := codec.Limits{MaxPixels: 1e7}
	res, err := Process(context.Background(), Input{Photo: in, Limits: lim}, Params{Op: BlurPlates, Style: "blur"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ContentType != "image/jpeg" {
		t.Errorf("content type %q", res.ContentType)
	}
	out, err := codec.Decode(context.Background(), res.Body, lim)
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Image.Bounds(); b.Dx() != 200 || b.Dy() != 320 {
		t.Errorf("output is %d×%d, want 200×320 (EXIF orientation 6 applied)", b.Dx(), b.Dy())
	}
	if !bytes.Equal(out.ICC, icc) {
		t.Errorf("ICC profile not kept: got %d bytes, want %d", len(out.ICC), len(icc))
	}
	// A JPEG is answered in its own blocks, still turned, with an EXIF
	// that holds the orientation alone.
	header := res.Body[:bytes.Index(res.Body, []byte{0xFF, 0xDA})]
	if bytes.Contains(header, []byte{0x88, 0x25}) {
		t.Errorf("output still carries the GPS position")
	}
	if i := bytes.Index(res.Body, []byte("Exif\x00\x00")); i >= 0 && int(res.Body[i-2])<<8|int(res.Body[i-1]) > 64 {
		t.Errorf("output carries more EXIF than the orientation")
	}
	if out.Quality < 77 || out.Quality > 87 {
		t.Errorf("output quality %d, want close to the input's 82", out.Quality)
	}
}

// rgbProfile is an ICC profile of n bytes with a real header: a display
// ("mntr") profile for RGB data, as phones embed (Display P3, say).
func rgbProfile(n int) []byte {
	icc := bytes.Repeat([]byte{0x5a}, n)
	binary.BigEndian.PutUint32(icc, uint32(n))
	copy(icc[4:], "appl\x04\x00\x00\x00mntrRGB XYZ ")
	copy(icc[36:], "acsp")
	return icc
}

// A transparent PNG cut-out keeps its colour profile through car-shadow.
func TestShadowKeepsProfile(t *testing.T) {
	icc := rgbProfile(400)
	car := image.NewNRGBA(image.Rect(0, 0, 240, 120))
	for y := 30; y < 110; y++ {
		for x := 20; x < 220; x++ {
			car.SetNRGBA(x, y, color.NRGBA{200, 30, 40, 255})
		}
	}
	var in bytes.Buffer
	if err := codec.EncodePNG(&in, car, icc); err != nil {
		t.Fatal(err)
	}
	lim := codec.Limits{MaxPixels: 1e7}
	res, err := Process(context.Background(), Input{Photo: in.Bytes(), Limits: lim}, Params{Op: CarShadow})
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.Decode(context.Background(), res.Body, lim)
	if err != nil {
		t.Fatal(err)
	}
	if res.ContentType != "image/png" || out.Format != "png" {
		t.Errorf("content type %q, format %q: want a PNG", res.ContentType, out.Format)
	}
	if !bytes.Equal(out.ICC, icc) {
		t.Errorf("ICC profile not kept through car-shadow: got %d bytes", len(out.ICC))
	}
}

// A baseline JPEG with no plate comes back with every pixel as it was
// (answered in its own blocks); a progressive one is decoded and encoded
// again, as before.
func TestPlateOpBlockPath(t *testing.T) {
	lim := codec.Limits{MaxPixels: 1e7}
	in := phoneJPEG(t, 320, 200, 82, nil)
	res, err := Process(context.Background(), Input{Photo: in, Limits: lim}, Params{Op: BlurPlates, Style: "blur"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := jpeg.Decode(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := jpeg.Decode(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	ya, yb := a.(*image.YCbCr), b.(*image.YCbCr)
	if res.PlatesFound != 0 || !bytes.Equal(ya.Y, yb.Y) || !bytes.Equal(ya.Cb, yb.Cb) || !bytes.Equal(ya.Cr, yb.Cr) {
		t.Errorf("no plate (found %d): the photo's pixels changed", res.PlatesFound)
	}

	prog, err := os.ReadFile("codec/testdata/quad.progressive.icc.jpg")
	if err != nil {
		t.Fatal(err)
	}
	res, err = Process(context.Background(), Input{Photo: prog, Limits: lim}, Params{Op: BlurPlates, Style: "blur"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(res.Body[len(res.Body)-16:], prog[len(prog)-16:]) || res.ContentType != "image/jpeg" {
		t.Errorf("progressive JPEG: want the full path's new encoding")
	}
}

// plateLogoPhoto is a 400×300 grey photo with two white plates, the quads
// of both, and a dark-blue design.
func plateLogoPhoto() (*codec.Photo, [2]plates.Quad, image.Image) {
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []uint8{90, 90, 90, 255})
	}
	q := [2]plates.Quad{
		{{X: 40, Y: 40}, {X: 200, Y: 40}, {X: 200, Y: 90}, {X: 40, Y: 90}},
		{{X: 220, Y: 200}, {X: 380, Y: 200}, {X: 380, Y: 250}, {X: 220, Y: 250}},
	}
	for _, r := range []image.Rectangle{image.Rect(40, 40, 200, 90), image.Rect(220, 200, 380, 250)} {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.Set(x, y, color.RGBA{235, 235, 235, 255})
			}
		}
	}
	design := image.NewRGBA(image.Rect(0, 0, 160, 50))
	for i := 0; i < len(design.Pix); i += 4 {
		copy(design.Pix[i:], []uint8{16, 40, 110, 255})
	}
	return &codec.Photo{Image: img, Format: "png"}, q, design
}

// TestPlateLogoDesignOnlyOnSurePlates: a detection scoring below
// plates.DesignConfidence that reads as no plate (a grille badge, say) is
// blurred, not given the design, and still counts in X-Plates-Found; only
// a plate that gets the design satisfies requirePlate.
func TestPlateLogoDesignOnlyOnSurePlates(t *testing.T) {
	ctx := context.Background()
	lim := codec.Limits{MaxPixels: 1e7}
	in, q, design := plateLogoPhoto()
	found := []plates.Plate{
		{Quad: q[0], Hide: plates.HideOf(q[0]), Score: plates.DesignConfidence + 0.01, TextHeight: 45, Reads: true},
		{Quad: q[1], Hide: plates.HideOf(q[1]), Score: plates.DesignConfidence - 0.1, TextHeight: 45, Printed: plates.Printed{Letters: 1, Mean: 0.4}},
	}
	res, err := paintPlates(ctx, Input{Limits: lim}, Params{Op: PlateLogo, RequirePlate: true}, nil, in, design, found)
	if err != nil {
		t.Fatal(err)
	}
	if res.PlatesFound != 2 || res.PlatesDesigned != 1 {
		t.Errorf("X-Plates-Found %d, X-Plates-Designed %d; want 2 (the doubtful detection counts) and 1", res.PlatesFound, res.PlatesDesigned)
	}
	out, err := jpeg.Decode(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	blue := func(x, y int) bool {
		r, g, b, _ := out.At(x, y).RGBA()
		return b>>8 > 80 && b>>8 > r>>8+50 && b>>8 > g>>8+30
	}
	if !blue(120, 65) {
		t.Errorf("sure plate: centre %v; want the design's blue", out.At(120, 65))
	}
	for _, p := range []image.Point{{300, 225}, {240, 210}, {370, 240}} {
		if blue(p.X, p.Y) {
			t.Errorf("doubtful detection: %v is %v, the design's blue; want it blurred", p, out.At(p.X, p.Y))
		}
	}
	if r, _, _, _ := out.At(300, 225).RGBA(); r>>8 > 225 || r>>8 < 100 {
		t.Errorf("doubtful detection: centre grey %d; want the plate blurred into the grey around it", r>>8)
	}

	for _, tc := range []struct {
		name  string
		op    Op
		score float64
		want  string
	}{
		{"plate-logo, only a doubtful detection", PlateLogo, plates.DesignConfidence - 0.1, carphoto.EPlateNotFound},
		{"plate-logo, a sure plate", PlateLogo, plates.DesignConfidence, ""},
		{"blur-plates, a doubtful detection", BlurPlates, plates.DesignConfidence - 0.1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, q, design := plateLogoPhoto()
			found := []plates.Plate{{Quad: q[1], Hide: plates.HideOf(q[1]), Score: tc.score, TextHeight: 45, Reads: true}}
			_, err := paintPlates(ctx, Input{Limits: lim}, Params{Op: tc.op, Style: "blur", RequirePlate: true}, nil, in, design, found)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("requirePlate=true: error %v; want the photo", err)
			case tc.want != "" && carphoto.ErrorCode(err) != tc.want:
				t.Errorf("requirePlate=true: error %v; want code %q", err, tc.want)
			}
		})
	}
}
