package worker

import (
	"bytes"
	"carphoto/imageops"
	"carphoto/internal/testenv/datasets"
	"context"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
)

// photo12MP is a real car photo from the shared data set upscaled to
// 4000×3000 (a synthetic scene when the set is absent).
func photo12MP(b *testing.B) []byte {
	b.Helper()
	var src image.Image
	if data, err := os.ReadFile(filepath.Join(datasets.Dir(), "plates-web-cc0", "images", "plates-web-cc0-0415.jpg")); err == nil {
		p, err := codec.Decode(context.Background(), data, codec.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		src = p.Image
	} else {
		g := image.NewRGBA(image.Rect(0, 0, 400, 300))
		for y := range 300 {
			for x := range 400 {
				g.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
			}
		}
		src = g
	}
	dst := image.NewRGBA(image.Rect(0, 0, 4000, 3000))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Src, nil)
	var out bytes.Buffer
	if err := codec.EncodeJPEG(&out, dst, 90, nil); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// cutout12MP is the photo already cut out: a transparent PNG, as a client
// that cuts out itself sends it.
func cutout12MP(b *testing.B, photo []byte) []byte {
	b.Helper()
	p, err := codec.Decode(context.Background(), photo, codec.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	car, err := cutout.Cut(context.Background(), p.Image)
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	if err := codec.EncodePNG(&out, car, nil); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// BenchmarkProcess12MP runs each operation's whole worker pipeline (decode,
// find, render or cut out, encode) on a 12-megapixel JPEG and reports the
// CPU time per call beside the wall time, since the machine is shared.
func BenchmarkProcess12MP(b *testing.B) {
	photo := photo12MP(b)
	cut := cutout12MP(b, photo)
	// The same photo as an RGB PNG: plates found and hidden on the full path.
	p, err := codec.Decode(context.Background(), photo, codec.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	var pngPhoto bytes.Buffer
	if err := codec.EncodePNG(&pngPhoto, p.Image, nil); err != nil {
		b.Fatal(err)
	}
	for _, op := range []struct {
		name   string
		photo  []byte
		params imageops.Params
	}{
		{"blur-plates", photo, imageops.Params{Op: imageops.BlurPlates, Style: imageops.StyleBlur}},
		{"blur-plates-png", pngPhoto.Bytes(), imageops.Params{Op: imageops.BlurPlates, Style: imageops.StyleBlur}},
		{"car-shadow", photo, imageops.Params{Op: imageops.CarShadow}},
		{"car-shadow-of-cutout", cut, imageops.Params{Op: imageops.CarShadow}},
		{"car-shadow-reflection", photo, imageops.Params{Op: imageops.CarShadow, Reflection: true}},
	} {
		b.Run(op.name, func(b *testing.B) {
			u0 := usageNow()
			for b.Loop() {
				if _, err := process(context.Background(), imageops.Input{Photo: op.photo}, op.params); err != nil {
					b.Fatal(err)
				}
			}
			u1 := usageNow()
			n := float64(b.N)
			b.ReportMetric((u1.user-u0.user+u1.sys-u0.sys)/n, "cpu-ms/op")
			b.ReportMetric((u1.sys-u0.sys)/n, "sys-ms/op")
			b.ReportMetric((u1.faults-u0.faults)/n, "faults/op")
		})
	}
}
