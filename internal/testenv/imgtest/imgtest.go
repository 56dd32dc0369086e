// Package imgtest holds the photo manipulations that the vision packages'
// tests and measuring tools share: reading a labelled photo, framing a
// close-up around a region, turning a photo as a camera held askew would,
// and running work side by side as a worker does. Only tests import it.
package imgtest

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"  // the labelled sets' photos, and round trips
	_ "image/png" // and masks
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// DecodeFile reads the JPEG or PNG image at path, failing tb if it cannot.
func DecodeFile(tb testing.TB, path string) image.Image {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return img
}

// JPEGRoundTrip returns img encoded as a JPEG at quality q and decoded
// back, failing tb if either step fails.
func JPEGRoundTrip(tb testing.TB, img image.Image, q int) image.Image {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		tb.Fatal(err)
	}
	out, err := jpeg.Decode(&buf)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// CloseUp crops img to a 4:3 frame centred on the region (x, y, w, h) in
// which the region spans frac of the frame's width, at img's resolution;
// ok is false when img cannot hold most (80%) of that frame.
func CloseUp(img image.Image, x, y, w, h, frac float64) (crop image.Image, ok bool) {
	cw := w / frac
	ch := cw * 3 / 4
	cx, cy := x+w/2, y+h/2
	r := image.Rect(int(cx-cw/2), int(cy-ch/2), int(cx+cw/2), int(cy+ch/2)).Intersect(img.Bounds())
	if float64(r.Dx()) < 0.8*cw || float64(r.Dy()) < 0.8*ch {
		return nil, false
	}
	return img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(r), true
}

// Rotated returns img turned by deg degrees (clockwise on screen) about
// its centre, bilinear, the same size, mid-grey where nothing was, and the
// map from img's pixel coordinates to the result's.
func Rotated(img image.Image, deg float64) (image.Image, func(x, y float64) (float64, float64)) {
	b := img.Bounds()
	cx, cy := float64(b.Min.X+b.Dx()/2), float64(b.Min.Y+b.Dy()/2)
	sin, cos := math.Sincos(deg * math.Pi / 180)
	turn := func(x, y float64) (float64, float64) {
		dx, dy := x-cx, y-cy
		return cx + cos*dx - sin*dy, cy + sin*dx + cos*dy
	}
	dst := image.NewRGBA(b)
	draw.Draw(dst, b, image.NewUniform(color.Gray{128}), image.Point{}, draw.Src)
	m := f64.Aff3{cos, -sin, cx - cos*cx + sin*cy, sin, cos, cy - sin*cx - cos*cy}
	xdraw.BiLinear.Transform(dst, m, img, b, xdraw.Over, nil)
	return dst, turn
}

// Inside reports whether the point (x, y) lies within b (edges included).
func Inside(b image.Rectangle, x, y float64) bool {
	return x >= float64(b.Min.X) && y >= float64(b.Min.Y) && x <= float64(b.Max.X) && y <= float64(b.Max.Y)
}

// SideBySide calls run for each of the n items, rounds times each, from
// four goroutines at once, each going through the items in its own order
// (every item beside every other), and returns when all calls have
// returned.
func SideBySide(n, rounds int, run func(i int)) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range rounds {
				for k := range n {
					run((k + g + round) % n)
				}
			}
		})
	}
	wg.Wait()
}

// Mosaic lays imgs out row by row, n to a row, at their own resolution, in
// cells as large as the largest (the rest mid-grey), and returns where each
// one's top-left corner went: photos as a small part of a large one.
func Mosaic(imgs []image.Image, n int) (image.Image, []image.Point) {
	cw, ch := 0, 0
	for _, img := range imgs {
		cw, ch = max(cw, img.Bounds().Dx()), max(ch, img.Bounds().Dy())
	}
	rows := (len(imgs) + n - 1) / n
	dst := image.NewRGBA(image.Rect(0, 0, n*cw, rows*ch))
	draw.Draw(dst, dst.Rect, image.NewUniform(color.Gray{128}), image.Point{}, draw.Src)
	at := make([]image.Point, len(imgs))
	for k, img := range imgs {
		at[k] = image.Pt(k%n*cw, k/n*ch)
		b := img.Bounds()
		draw.Draw(dst, b.Sub(b.Min).Add(at[k]), img, b.Min, draw.Src)
	}
	return dst, at
}

// SamplePath is the path of docs/samples/name, the files the repository
// ships for the docs and the tests (car.jpg: a 600×399 CC0 car photo with
// one plate; plate-design.png; backdrop.jpg), found from this file's place
// so a test of any package gets the same one.
func SamplePath(name string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("docs", "samples", name)
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "samples", name)
}

// Sample returns the bytes of docs/samples/name.
func Sample(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(SamplePath(name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// SamplePlate is the plate of docs/samples/car.jpg, as its set labels it.
var SamplePlate = image.Rect(293, 205, 373, 226)
