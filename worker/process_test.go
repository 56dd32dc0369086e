package worker

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"carphoto/imageops"
	"carphoto/jobs"
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

// The output is upright, keeps the colour profile, carries no EXIF (so no
// GPS), and is encoded at a quality close to the input's.
func TestProcessKeepsProfileDropsGPSAppliesOrientation(t *testing.T) {
	icc := rgbProfile(680)
	in := phoneJPEG(t, 320, 200, 82, icc)
	lim := imageops.Limits{MaxPixels: 1e7}
	res, err := Process(context.Background(), jobs.OpBlurPlates, in, nil, jobs.Params{Style: "blur"}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if res.ContentType != "image/jpeg" {
		t.Errorf("content type %q", res.ContentType)
	}
	out, err := imageops.Decode(context.Background(), res.Body, lim)
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Image.Bounds(); b.Dx() != 200 || b.Dy() != 320 {
		t.Errorf("output is %d×%d, want 200×320 (EXIF orientation 6 applied)", b.Dx(), b.Dy())
	}
	if !bytes.Equal(out.ICC, icc) {
		t.Errorf("ICC profile not kept: got %d bytes, want %d", len(out.ICC), len(icc))
	}
	if bytes.Contains(res.Body, []byte("Exif\x00\x00")) {
		t.Errorf("output still carries EXIF (and with it the GPS position)")
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
	if err := imageops.EncodePNG(&in, car, icc); err != nil {
		t.Fatal(err)
	}
	lim := imageops.Limits{MaxPixels: 1e7}
	res, err := Process(context.Background(), jobs.OpCarShadow, in.Bytes(), nil, jobs.Params{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	out, err := imageops.Decode(context.Background(), res.Body, lim)
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
