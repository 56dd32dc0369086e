package imageops

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/datasets"
)

var studioPhotos = flag.Int("studio.photos", 4, "held-out web photos TestStudioHidesThePlatesBlurPlatesHides compares (0: all)")

// heldOutFiles are the held-out photos' file names of the shared set,
// sorted.
func heldOutFiles(t *testing.T, set string) []string {
	t.Helper()
	dir := datasets.Set(t, set)
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

// blurPlatesQuads are the quads blur-plates hides on photo, found as its
// answer finds them (plateOp): from a baseline JPEG's blocks, else from the
// decoded photo.
func blurPlatesQuads(t *testing.T, photo []byte) []Quad {
	t.Helper()
	ctx := context.Background()
	var found []plates.Plate
	var err error
	if src, oerr := paint.OpenBlockJPEG(ctx, photo, Limits{}); oerr == nil {
		found, err = plates.DetectIn(ctx, src)
	} else {
		ph, derr := codec.Decode(ctx, photo, Limits{})
		if derr != nil {
			t.Fatal(derr)
		}
		found, err = plates.Detect(ctx, ph.Image)
	}
	if err != nil {
		t.Fatal(err)
	}
	return quadsOf(found)
}

// car-cutout and car-shadow with plates hide the very quads blur-plates
// hides on the same photo (found as its default JPEG answer finds them),
// and say as many plates found; the plates are hidden on the car cut out
// of the photo.
func TestStudioHidesThePlatesBlurPlatesHides(t *testing.T) {
	t.Parallel() // beside the package's other long tests, on another core
	// The sample photo, and held-out web photos where the set is here.
	names, photos := []string{"docs/samples/car.jpg"}, [][]byte{studioSample(t, "car.jpg")}
	if _, err := os.Stat(filepath.Join(datasets.Dir(), "plates-web-cc0")); err == nil {
		held := heldOutFiles(t, "plates-web-cc0")
		if n := *studioPhotos; n > 0 && n < len(held) {
			held = held[:n]
		}
		for _, name := range held {
			names, photos = append(names, name), append(photos, datasets.ReadFile(t, "plates-web-cc0", name))
		}
	} else {
		t.Logf("plates-web-cc0 is not here: the sample photo alone")
	}
	ctx := context.Background()
	var same, withPlates int
	for i, name := range names {
		photo := photos[i]
		want := blurPlatesQuads(t, photo)
		p := Params{Op: CarCutout, Plates: Plates{Hide: StyleBlack}}
		ph, pl, err := studioPlates(ctx, Input{Photo: photo}, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := quadsOf(pl.found); !slices.Equal(got, want) {
			t.Errorf("%s: car-cutout plates=black hides %v, blur-plates %v", name, got, want)
			continue
		}
		same++
		if len(want) == 0 {
			continue
		}
		withPlates++
		// Hidden on the car cut out (the photo's size: none is over
		// MaxCanvasPixels): black at the centre of every quad the car
		// covers.
		car, _, err := studioCar(ctx, ph, p, pl)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, q := range want {
			var cx, cy float64
			for _, pt := range q {
				cx, cy = cx+pt.X/4, cy+pt.Y/4
			}
			if c := car.NRGBAAt(int(cx), int(cy)); c.A == 255 && max(c.R, c.G, c.B) > 8 {
				t.Errorf("%s: the plate at (%.0f, %.0f) is not black on the car cut out: %v", name, cx, cy, c)
			}
		}
	}
	// X-Plates-Found, through Process.
	photo := photos[0]
	blur, err := Process(ctx, Input{Photo: photo}, Params{Op: BlurPlates})
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Op: CarShadow, Plates: Plates{Hide: StyleBlur}}
	shadowed, err := Process(ctx, Input{Photo: photo}, p)
	if err != nil {
		t.Fatal(err)
	}
	if shadowed.PlatesFound != blur.PlatesFound || blur.PlatesFound == 0 {
		t.Errorf("%s: car-shadow plates=blur found %d plates, blur-plates %d; want the same, at least 1", names[0], shadowed.PlatesFound, blur.PlatesFound)
	}
	t.Logf("%d of %d photos: the same quads hidden as blur-plates hides (%d with plates found)", same, len(names), withPlates)
}

// The studio cuts the car out of the photo as sent and hides the plates on
// the car's own pixels: with plates=blur and plates=logo the cut-out's
// alpha is byte for byte the one with the plates kept, no pixel the matte
// leaves transparent is touched (no hide reaches past the outline), and
// the plate is hidden (most of its quad's car pixels changed). On the
// listing sample, whose plate ends at the outline of the car's nose (where
// a blur on the photo stuck out of the cut-out as a grey patch with a fleck
// of floor), in car-cutout and car-shadow; and on plates-web-cc0-0101 (a
// Suzuki's rear, 400×240), whose plate hangs at the bottom of the bumper,
// its hidden margin partly off the car.
func TestStudioPlatesKeepTheMatte(t *testing.T) {
	t.Parallel() // beside the package's other long tests, on another core
	for _, tc := range []struct {
		name  string
		photo func(t *testing.T) []byte
		ops   []Op
	}{
		{"docs/samples/listing.jpg", func(t *testing.T) []byte { return studioSample(t, "listing.jpg") }, []Op{CarCutout, CarShadow}},
		{"plates-web-cc0-0101.jpg", func(t *testing.T) []byte {
			return datasets.ReadFile(t, "plates-web-cc0", "images/plates-web-cc0-0101.jpg")
		}, []Op{CarCutout, CarShadow}},
	} {
		t.Run(filepath.Base(tc.name), func(t *testing.T) {
			studioKeepsTheMatte(t, tc.name, tc.photo(t), tc.ops)
		})
	}
}

// studioKeepsTheMatte is TestStudioPlatesKeepTheMatte on one photo.
func studioKeepsTheMatte(t *testing.T, name string, photo []byte, ops []Op) {
	ctx := context.Background()
	design := studioSample(t, "plate-design.png")
	_, pl, err := studioPlates(ctx, Input{Photo: photo}, Params{Op: CarCutout, Plates: Plates{Hide: StyleBlur}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.found) == 0 {
		t.Fatalf("%s: no plate found: nothing to hide", name)
	}
	for _, op := range ops {
		kept := studioNRGBA(t, ctx, Input{Photo: photo}, Params{Op: op})
		for _, plates := range []Plates{{Hide: StyleBlur}, PlatesLogo} {
			got := studioNRGBA(t, ctx, Input{Photo: photo, Design: design}, Params{Op: op, Plates: plates})
			what := fmt.Sprintf("%s %s plates=%s", name, op, plates)
			if got.Rect != kept.Rect {
				t.Errorf("%s: answer %v, with the plates kept %v", what, got.Rect, kept.Rect)
				continue
			}
			var alpha, outside int
			for i := 0; i < len(kept.Pix); i += 4 {
				if got.Pix[i+3] != kept.Pix[i+3] {
					alpha++
				} else if kept.Pix[i+3] == 0 && !bytes.Equal(got.Pix[i:i+4], kept.Pix[i:i+4]) {
					outside++
				}
			}
			if alpha > 0 || outside > 0 {
				t.Errorf("%s: %d pixels' alpha differs from the answer with the plates kept, %d transparent pixels painted; want none", what, alpha, outside)
			}
			if op != CarCutout {
				continue // the shadow's canvas is not the photo's: the plate is judged on the cut-out
			}
			var onCar, hidden int
			for _, f := range pl.found {
				for y := kept.Rect.Min.Y; y < kept.Rect.Max.Y; y++ {
					for x := kept.Rect.Min.X; x < kept.Rect.Max.X; x++ {
						o := kept.PixOffset(x, y)
						if kept.Pix[o+3] < 128 || !insideQuad(f.Quad, float64(x)+0.5, float64(y)+0.5) {
							continue
						}
						onCar++
						if !bytes.Equal(got.Pix[o:o+3], kept.Pix[o:o+3]) {
							hidden++
						}
					}
				}
			}
			t.Logf("%s: %d of the plates' %d pixels on the car changed", what, hidden, onCar)
			if onCar == 0 || hidden < onCar*3/4 {
				t.Errorf("%s: %d of the plates' %d pixels on the car changed, want at least 3/4 (the plate hidden)", what, hidden, onCar)
			}
		}
	}
}

// studioNRGBA is the answer of the studio call, decoded.
func studioNRGBA(t *testing.T, ctx context.Context, in Input, p Params) *image.NRGBA {
	t.Helper()
	res, err := Process(ctx, in, p)
	if err != nil {
		t.Fatalf("%s plates=%s: %v", p.Op, p.Plates, err)
	}
	img, err := codec.Decode(ctx, res.Body, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return codec.ToNRGBA(img.Image)
}

// insideQuad reports whether (x, y) lies inside the convex quad q, either
// way round.
func insideQuad(q Quad, x, y float64) bool {
	pos, neg := false, false
	for i := range q {
		a, b := q[i], q[(i+1)%len(q)]
		switch c := (b.X-a.X)*(y-a.Y) - (b.Y-a.Y)*(x-a.X); {
		case c > 0:
			pos = true
		case c < 0:
			neg = true
		}
	}
	return !pos || !neg
}

// A car the photo's edge cuts off is named; requireWholeCar refuses it,
// naming the sides; a car wholly in view passes.
func TestStudioWholeCar(t *testing.T) {
	ctx := context.Background()
	cut := croppedSample(t, image.Rect(0, 90, 380, 399)) // through the bonnet on the right, the roof at the top
	p := Params{Op: CarShadow}
	out, err := Process(ctx, Input{Photo: cut}, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(out.CarTruncated, "right") {
		t.Errorf("the cropped sample: truncated %v, want the right side named", out.CarTruncated)
	}
	p.RequireWholeCar = true
	_, err = Process(ctx, Input{Photo: cut}, p)
	if carphoto.ErrorCode(err) != carphoto.ECarTruncated || !bytes.Contains([]byte(carphoto.ErrorMessage(err)), []byte("right")) {
		t.Errorf("the cropped sample with requireWholeCar: %v, want car_truncated naming the right edge", err)
	}
	whole := studioSample(t, "car.jpg")
	out, err = Process(ctx, Input{Photo: whole}, p)
	if err != nil || len(out.CarTruncated) != 0 {
		t.Errorf("the sample car, wholly in view, with requireWholeCar: %v, truncated %v; want the answer", err, out.CarTruncated)
	}
}

// The small sample car (600×399) on the sample backdrop drawn at its own
// size (520×325) is not enlarged: the answer is that backdrop's size. On
// the sample backdrop itself (1600×1000, listing size) it would need 2.1×:
// it is enlarged 1.5× and the answer is the backdrop scaled down, the
// scale reported.
func TestStudioNoSoftEnlargement(t *testing.T) {
	ctx := context.Background()
	photo, backdrop := studioSample(t, "car.jpg"), studioSample(t, "backdrop.jpg")
	p := Params{Op: CarShadow, Format: "jpeg", Backdrop: &Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}
	bw, bh, err := CheckImage("backdrop", backdrop, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if bw < 1600 || bh < 1000 {
		t.Fatalf("the sample backdrop is %dx%d, want at least 1600x1000 (listing size)", bw, bh)
	}
	for _, tc := range []struct {
		name     string
		backdrop []byte
		w, h     int
		enlarged bool // the car needs more than 1.5× on it
	}{
		{"the sample backdrop at 520x325", scaledJPEG(t, backdrop, 520, 325), 520, 325, false},
		{"the sample backdrop", backdrop, bw, bh, true},
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
		case !tc.enlarged && (w != tc.w || h != tc.h):
			t.Errorf("%s: answer %dx%d, want the backdrop's %dx%d (the car not enlarged, %.2f×)", tc.name, w, h, tc.w, tc.h, enlarge)
		case !tc.enlarged && enlarge > 1.01:
			t.Errorf("%s: the sample car enlarged %.2f×, want not at all", tc.name, enlarge)
		case tc.enlarged && (w >= tc.w || enlarge < shadow.MaxEnlarge-0.05):
			t.Errorf("%s: answer %dx%d enlarging the car %.2f×, want the backdrop scaled down to enlarge it %g×", tc.name, w, h, enlarge, shadow.MaxEnlarge)
		}
	}
}

// carWidth is the width of the sample car's solid cut-out bounds.
func carWidth(t *testing.T, photo []byte) int {
	t.Helper()
	p := Params{Op: CarCutout, Canvas: Canvas{Crop: true}}
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

// croppedSample is docs/samples/car.jpg cut to r, as a JPEG.
func croppedSample(t *testing.T, r image.Rectangle) []byte {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(studioSample(t, "car.jpg")))
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Rect, img, r.Min, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, out, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
