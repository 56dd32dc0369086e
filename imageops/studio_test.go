package imageops

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/datasets"
)

var studioPhotos = flag.Int("studio.photos", 4, "held-out web photos TestStudioHidesThePlatesBlurPlatesHides compares (0: all)")

// webHeldOut are the held-out plates-web-cc0 photos' file names, sorted.
func webHeldOut(t *testing.T) []string {
	t.Helper()
	dir := datasets.Set(t, "plates-web-cc0")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct{ File string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range labels {
		if datasets.HeldOut(filepath.Base(l.File)) {
			names = append(names, l.File)
		}
	}
	sort.Strings(names)
	return names
}

// hidden marks the pixels that got painted black (style black): near
// black in got, and more than 24 from orig in a channel, where keep says
// the pixel counts.
func hidden(orig, got image.Image, keep func(x, y int) bool) []bool {
	b := orig.Bounds()
	out := make([]bool, b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if !keep(x, y) {
				continue
			}
			o := color.NRGBAModel.Convert(orig.At(x, y)).(color.NRGBA)
			g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
			d := max(absDiff(uint32(o.R), uint32(g.R)), absDiff(uint32(o.G), uint32(g.G)), absDiff(uint32(o.B), uint32(g.B)))
			out[(y-b.Min.Y)*b.Dx()+x-b.Min.X] = d > 24 && max(g.R, g.G, g.B) < 48
		}
	}
	return out
}

// car-cutout with plates hides, on the car it cuts out, the very pixels
// blur-plates hides on the same photo: the same plates found
// (X-Plates-Found), the same quads hidden. Compared in style black, whose
// hide is crisp, where the cut-out is solid (alpha 255: the photo's own
// pixels).
func TestStudioHidesThePlatesBlurPlatesHides(t *testing.T) {
	names := webHeldOut(t)
	if n := *studioPhotos; n > 0 && n < len(names) {
		names = names[:n]
	}
	ctx := context.Background()
	var same, compared, platesSame, withPlates int
	worst := 1.0
	for _, name := range names {
		photo := datasets.ReadFile(t, "plates-web-cc0", name)
		blur, err := Process(ctx, Input{Photo: photo}, Params{Op: BlurPlates, Style: paint.StyleBlack})
		if err != nil {
			t.Fatalf("%s: blur-plates: %v", name, err)
		}
		p, err := ParseParams(CarCutout, map[string]string{"plates": "black"}, false)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := Process(ctx, Input{Photo: photo}, p)
		if carphoto.ErrorCode(err) == carphoto.ECarNotFound {
			continue
		}
		if err != nil {
			t.Fatalf("%s: car-cutout plates=blur: %v", name, err)
		}
		compared++
		if cut.PlatesFound > 0 {
			withPlates++
		}
		if cut.PlatesFound != blur.PlatesFound {
			t.Errorf("%s: car-cutout found %d plates, blur-plates %d", name, cut.PlatesFound, blur.PlatesFound)
			continue
		}
		orig, err := codec.Decode(ctx, photo, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		bi, _, err := image.Decode(bytes.NewReader(blur.Body))
		if err != nil {
			t.Fatal(err)
		}
		ci, _, err := image.Decode(bytes.NewReader(cut.Body))
		if err != nil {
			t.Fatal(err)
		}
		if ci.Bounds() != orig.Image.Bounds() {
			t.Fatalf("%s: cut-out %v, photo %v", name, ci.Bounds(), orig.Image.Bounds())
		}
		solid := func(x, y int) bool { _, _, _, a := ci.At(x, y).RGBA(); return a == 0xffff }
		hb, hc := hidden(orig.Image, bi, solid), hidden(orig.Image, ci, solid)
		var both, either int
		for i := range hb {
			if hb[i] && hc[i] {
				both++
			}
			if hb[i] || hc[i] {
				either++
			}
		}
		platesSame++
		if either > 0 {
			worst = min(worst, float64(both)/float64(either))
		}
		// The block path codes the plates' blocks again (JPEG), the cut-out
		// is lossless: a few pixels near the threshold differ.
		if either == 0 || float64(both) >= 0.95*float64(either) {
			same++
		} else {
			t.Errorf("%s: %d plates; of %d pixels on the car hidden by either, %d hidden by both blur-plates and car-cutout plates=black",
				name, cut.PlatesFound, either, both)
		}
	}
	t.Logf("%d of %d held-out web photos with a car (%d with plates found): the same number of plates on %d, the same pixels hidden on %d (the least share of hidden pixels in common %.3f)",
		compared, len(names), withPlates, platesSame, same, worst)
}

// A car the photo's edge cuts off is named; requireWholeCar refuses it,
// naming the sides; a car wholly in view passes.
func TestStudioWholeCar(t *testing.T) {
	ctx := context.Background()
	cut := datasets.ReadFile(t, "plates-web-cc0", "images/plates-web-cc0-0164.jpg") // cut by the right edge and the top
	p, err := ParseParams(CarShadow, map[string]string{}, false)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Process(ctx, Input{Photo: cut}, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(out.CarTruncated, "right") {
		t.Errorf("web 0164: truncated %v, want the right side named", out.CarTruncated)
	}
	p.RequireWholeCar = true
	_, err = Process(ctx, Input{Photo: cut}, p)
	if carphoto.ErrorCode(err) != carphoto.ECarTruncated || !bytes.Contains([]byte(carphoto.ErrorMessage(err)), []byte("right")) {
		t.Errorf("web 0164 with requireWholeCar: %v, want car_truncated naming the right edge", err)
	}
	whole := studioSample(t, "car.jpg")
	out, err = Process(ctx, Input{Photo: whole}, p)
	if err != nil || len(out.CarTruncated) != 0 {
		t.Errorf("the sample car, wholly in view, with requireWholeCar: %v, truncated %v; want the answer", err, out.CarTruncated)
	}
}

// On the sample backdrop the sample car is not enlarged: the answer is the
// backdrop's size; on a backdrop three times as large the car is enlarged
// 1.5× and the answer is the backdrop scaled down, the scale reported.
func TestStudioNoSoftEnlargement(t *testing.T) {
	ctx := context.Background()
	photo, backdrop := studioSample(t, "car.jpg"), studioSample(t, "backdrop.jpg")
	p, err := ParseParams(CarShadow, map[string]string{"format": "jpeg"}, true)
	if err != nil {
		t.Fatal(err)
	}
	bw, bh, err := CheckImage("backdrop", backdrop, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		backdrop []byte
		w, h     int
	}{
		{"the sample backdrop", backdrop, bw, bh},
		{"three times as large", scaledJPEG(t, backdrop, 3*bw, 3*bh), 3 * bw, 3 * bh},
	} {
		out, err := Process(ctx, Input{Photo: photo, Backdrop: tc.backdrop}, p)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(bytes.NewReader(out.Body))
		if err != nil {
			t.Fatal(err)
		}
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		if out.CarScale <= 0 || out.CarScale > 0.8+1e-9 {
			t.Errorf("%s: CarScale %.3f, want the scale used, at most the default 0.8", tc.name, out.CarScale)
		}
		// The car's width in the photo (solid bounds) × its enlargement is
		// CarScale × the answer's width: the enlargement from the answer.
		car := carWidth(t, photo)
		enlarge := out.CarScale * float64(w) / float64(car)
		if enlarge > shadow.MaxEnlarge+0.02 {
			t.Errorf("%s: the car enlarged %.2f× (answer %dx%d), want at most %g×", tc.name, enlarge, w, h, shadow.MaxEnlarge)
		}
		switch {
		case tc.w == bw && (w != bw || h != bh):
			t.Errorf("%s: answer %dx%d, want the backdrop's %dx%d (the car not enlarged, %.2f×)", tc.name, w, h, bw, bh, enlarge)
		case tc.w == bw && enlarge > 1.01:
			t.Errorf("%s: the sample car enlarged %.2f×, want not at all", tc.name, enlarge)
		case tc.w != bw && (w >= tc.w || enlarge < shadow.MaxEnlarge-0.05):
			t.Errorf("%s: answer %dx%d enlarging the car %.2f×, want the backdrop scaled down to enlarge it %g×", tc.name, w, h, enlarge, shadow.MaxEnlarge)
		}
	}
}

// carWidth is the width of the sample car's solid cut-out bounds.
func carWidth(t *testing.T, photo []byte) int {
	t.Helper()
	p, _ := ParseParams(CarCutout, map[string]string{"crop": "true"}, false)
	out, err := Process(context.Background(), Input{Photo: photo}, p)
	if err != nil {
		t.Fatal(err)
	}
	a := alphaOf(t, out)
	var r image.Rectangle
	for y := a.Rect.Min.Y; y < a.Rect.Max.Y; y++ {
		for x := a.Rect.Min.X; x < a.Rect.Max.X; x++ {
			if a.AlphaAt(x, y).A >= 128 {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r.Dx()
}

// scaledJPEG is data decoded and scaled to w×h, as a JPEG.
func scaledJPEG(t *testing.T, data []byte, w, h int) []byte {
	t.Helper()
	ph, err := codec.Decode(context.Background(), data, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.ApproxBiLinear.Scale(dst, dst.Rect, ph.Image, ph.Image.Bounds(), xdraw.Src, nil)
	var b bytes.Buffer
	if err := codec.EncodeJPEG(&b, dst, 90, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// studioSample is docs/samples/name.
func studioSample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
