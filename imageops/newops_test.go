package imageops

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
)

// cutoutSet returns the first n held-out cars-seg photos (file bytes) with
// their masks, or skips where the shared data set is not beside the
// repository.
func cutoutSet(t *testing.T, n int) (photos [][]byte, masks []image.Image) {
	t.Helper()
	dir := datasets.Set(t, "cars-seg")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	sort.Slice(labels, func(i, j int) bool { return labels[i].File < labels[j].File })
	for _, l := range labels {
		if !datasets.HeldOut(filepath.Base(l.File)) {
			continue
		}
		photo, err := os.ReadFile(filepath.Join(dir, l.File))
		if err != nil {
			t.Fatal(err)
		}
		m, err := os.ReadFile(filepath.Join(dir, l.Mask))
		if err != nil {
			t.Fatal(err)
		}
		mask, _, err := image.Decode(bytes.NewReader(m))
		if err != nil {
			t.Fatal(err)
		}
		photos, masks = append(photos, photo), append(masks, mask)
		if len(photos) == n {
			break
		}
	}
	return photos, masks
}

// alphaOf returns the alpha channel of an answer.
func alphaOf(t *testing.T, res *Output) *image.Alpha {
	t.Helper()
	img, err := codec.Decode(context.Background(), res.Body, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	n := codec.ToNRGBA(img.Image)
	a := image.NewAlpha(n.Rect)
	for i := range a.Pix {
		a.Pix[i] = n.Pix[4*i+3]
	}
	return a
}

// car-cutout answers the studio's cut-out of its chosen car: on the sample
// photo its alpha covers the car that cut-out covers (IoU at least 0.998; what `carphoto-lab
// bench cutout` measures against labels is the matte), and crop gives a
// canvas of exactly the car's bounds plus the padding asked for, the car's
// pixels unchanged.
func TestCarCutout(t *testing.T) {
	photos := [][]byte{imgtest.Sample(t, "car.jpg")}
	lim := codec.Limits{MaxPixels: 1e7}
	ctx := context.Background()
	for i, photo := range photos {
		res, err := Process(ctx, Input{Photo: photo, Limits: lim}, Params{Op: CarCutout})
		if err != nil {
			t.Fatal(err)
		}
		if res.ContentType != "image/png" {
			t.Errorf("content type %q, want image/png", res.ContentType)
		}
		got := alphaOf(t, res)
		in, _ := codec.Decode(ctx, photo, lim)
		cut, _, err := chosenCar(ctx, in.Image)
		if err != nil {
			t.Fatal(err)
		}
		m := image.NewAlpha(cut.Rect)
		for j := range m.Pix {
			m.Pix[j] = cut.Pix[4*j+3]
		}
		if iou := datasets.IoU(got, m); iou < 0.998 {
			t.Errorf("photo %d: the answer's alpha and the matte: IoU %.4f, want the same car", i, iou)
		}

		n := image.NewNRGBA(got.Rect)
		for j, v := range got.Pix {
			n.Pix[4*j+3] = v
		}
		car := shadow.OpaqueBounds(n)
		for _, tc := range []struct {
			p   Params
			pad int
		}{
			{Params{Op: CarCutout, Canvas: shadow.Canvas{Crop: true, Padding: 12}}, 12},
			{Params{Op: CarCutout, Canvas: shadow.Canvas{Crop: true, Padding: 0.05, PaddingShare: true}}, int(0.05*float64(max(car.Dx(), car.Dy())) + 0.5)},
		} {
			res, err := Process(ctx, Input{Photo: photo, Limits: lim}, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			cropped := alphaOf(t, res)
			want := car.Inset(-tc.pad)
			if cropped.Rect.Dx() != want.Dx() || cropped.Rect.Dy() != want.Dy() {
				t.Errorf("photo %d, %+v: canvas %v, want the car's %v plus %d px = %dx%d", i, tc.p, cropped.Rect.Size(), car.Size(), tc.pad, want.Dx(), want.Dy())
				continue
			}
			diff := 0
			for y := want.Min.Y; y < want.Max.Y; y++ {
				for x := want.Min.X; x < want.Max.X; x++ {
					var a uint8
					if (image.Point{x, y}).In(got.Rect) {
						a = got.AlphaAt(x, y).A
					}
					if cropped.AlphaAt(x-want.Min.X, y-want.Min.Y).A != a {
						diff++
					}
				}
			}
			if diff > 0 {
				t.Errorf("photo %d, %+v: %d pixels' alpha differ from the uncropped cut-out", i, tc.p, diff)
			}
		}
	}
}

// An aspect ratio grows the canvas around the car, never cuts it, and a
// background colour flattens it into a JPEG.
func TestCarCutoutAspectAndBackground(t *testing.T) {
	photos := [][]byte{imgtest.Sample(t, "car.jpg")}
	lim := codec.Limits{MaxPixels: 1e7}
	res, err := Process(context.Background(), Input{Photo: photos[0], Limits: lim}, Params{Op: CarCutout, Background: &Colour{R: 0x10, G: 0x20, B: 0x30, A: 255}, Canvas: shadow.Canvas{Crop: true, Aspect: [2]int{16, 9}}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := codec.Decode(context.Background(), res.Body, lim)
	if err != nil || res.ContentType != "image/jpeg" {
		t.Fatalf("answer %q (%v), want a JPEG", res.ContentType, err)
	}
	b := img.Image.Bounds()
	if r := float64(b.Dx()) / float64(b.Dy()); r < 16.0/9-0.01 || r > 16.0/9+0.01 {
		t.Errorf("canvas %v: aspect %.3f, want 16:9", b.Size(), r)
	}
	r, g, bl, _ := img.Image.At(0, 0).RGBA()
	if d := absDiff(r>>8, 0x10) + absDiff(g>>8, 0x20) + absDiff(bl>>8, 0x30); d > 12 {
		t.Errorf("corner (%d,%d,%d), want the background #102030", r>>8, g>>8, bl>>8)
	}
}

func absDiff(a uint32, b uint32) uint32 { return max(a, b) - min(a, b) }

// logo-overlay changes the logo's rectangle only: a PNG comes back
// identical elsewhere, a JPEG within the codec's noise.
func TestLogoOverlayTouchesOnlyTheLogo(t *testing.T) {
	photo := image.NewNRGBA(image.Rect(0, 0, 400, 300)) // gradients with a fine texture
	r := rand.New(rand.NewPCG(3, 4))
	for y := range 300 {
		for x := range 400 {
			n := uint8(r.IntN(9))
			photo.SetNRGBA(x, y, color.NRGBA{uint8(x*200/400) + n, uint8(y*200/300) + n, 90 + n, 255})
		}
	}
	logo := image.NewNRGBA(image.Rect(0, 0, 200, 100)) // 2:1, half transparent
	for y := range 100 {
		for x := range 200 {
			logo.SetNRGBA(x, y, color.NRGBA{250, 210, 0, uint8(128 + 127*(x/100))})
		}
	}
	var in, lg bytes.Buffer
	if err := codec.EncodePNG(&in, photo, nil); err != nil {
		t.Fatal(err)
	}
	if err := codec.EncodePNG(&lg, logo, nil); err != nil {
		t.Fatal(err)
	}
	// 20% of 400 px wide is 80 × 40; the margin 3% of 300 is 9 px.
	want := image.Rect(400-9-80, 300-9-40, 400-9, 300-9)
	lim := codec.Limits{MaxPixels: 1e7}
	p := Params{Op: LogoOverlay, Overlay: paint.OverlayOptions{Position: "bottom-right", Scale: 0.2, Opacity: 1, Margin: 0.03}}
	for _, format := range []string{"png", "jpeg"} {
		p.Format = format
		res, err := Process(context.Background(), Input{Photo: in.Bytes(), Design: lg.Bytes(), Limits: lim}, p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := codec.Decode(context.Background(), res.Body, lim)
		if err != nil {
			t.Fatal(err)
		}
		out := codec.ToNRGBA(img.Image)
		var outside, outsideN, inside, insideN float64
		for y := range 300 {
			for x := range 400 {
				i := photo.PixOffset(x, y)
				d := 0.0
				for c := range 3 {
					d += float64(absDiff(uint32(photo.Pix[i+c]), uint32(out.Pix[i+c])))
				}
				if (image.Point{x, y}).In(want) {
					inside, insideN = inside+d, insideN+1
				} else {
					outside, outsideN = outside+d, outsideN+1
				}
			}
		}
		outside, inside = outside/outsideN/3, inside/insideN/3
		limit := 0.0
		if format == "jpeg" {
			limit = 3 // the codec's noise
		}
		if outside > limit {
			t.Errorf("%s: pixels outside the logo's rectangle %v moved by %.2f levels on average, want ≤ %g", format, want, outside, limit)
		}
		if inside < 40 {
			t.Errorf("%s: the logo's rectangle changed by only %.1f levels: no logo drawn there", format, inside)
		}
	}
}
