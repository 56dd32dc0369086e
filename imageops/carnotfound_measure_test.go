//go:build measure

package imageops

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"carphoto/internal/testenv/datasets"
)

// The refusals cost real car photos at most 1%: car_not_found (chosenCar:
// the detector, the chosen vehicle's cut-out and carFound, as carOf runs
// them) on every held-out photo of cars-seg and the web plate set, and of
// the extra plate sets where they are built (../shared/datasets/extra),
// counted plainly and logged by reason (RefusalReason) with the photos'
// names. Issue 79 counts the plate close-ups with no vehicle in view apart,
// chosen by eye from that list. The dash-cam set is not counted: the
// network finds nothing on about 40% of its night frames and takes the
// street for the car on others.
func TestCarNotFoundRareOnCarPhotos(t *testing.T) {
	ctx := context.Background()
	type photo struct{ set, file string }
	var all []photo
	for _, set := range []string{"cars-seg", "plates-web-cc0"} {
		datasets.Set(t, set)
		for _, l := range datasets.Labels(t, set, datasets.HeldOut, -1) {
			all = append(all, photo{filepath.Join(datasets.Dir(), set), l.File})
		}
	}
	for _, set := range []string{"plates-openimages", "plates-openlpr"} {
		dir := filepath.Join(datasets.ExtraDir(), set)
		raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
		if err != nil {
			t.Logf("%s not built: not counted", set)
			continue
		}
		var labels []datasets.Labelled
		if err := json.Unmarshal(raw, &labels); err != nil {
			t.Fatal(err)
		}
		for _, l := range labels {
			if datasets.HeldOut(l.File) {
				all = append(all, photo{dir, l.File})
			}
		}
	}
	byReason := map[string][]string{}
	n := 0
	for _, p := range all {
		raw, err := os.ReadFile(filepath.Join(p.set, p.file))
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := chosenCar(ctx, img); err != nil {
			r := RefusalReason(err)
			if r == "" {
				t.Fatal(err)
			}
			byReason[r] = append(byReason[r], filepath.Base(p.file))
			n++
		}
	}
	for r, names := range byReason {
		t.Logf("%s: %d %v", r, len(names), names)
	}
	t.Logf("car_not_found on %d of %d held-out car photos", n, len(all))
	if len(all) == 0 || float64(n) > 0.01*float64(len(all)) {
		t.Errorf("car_not_found on %d of %d held-out car photos; want at most 1%%", n, len(all))
	}
}

// Scenery is refused: the strips of held-out cars-seg photos above their
// labelled car (where that is at least 35% of the photo's height) and
// beside it (at least 35% of its width), each run through car-cutout as
// a client's photo, want car_not_found on at least 90%. Held-out cars-seg
// has 14 such strips (its side views fill the width); SCENERY_SHARE (0.25,
// say) measures with a lower share, for more strips. The strips are
// written to SCENERY_STRIPS_OUT when set, named by photo and side, so that
// each can be looked at for a vehicle the labels do not cover (a strip
// with one is not scenery: it is listed apart by hand, not here).
func TestSceneryStripsRefused(t *testing.T) {
	ctx := context.Background()
	photos, masks := cutoutSet(t, -1)
	names := heldOutFiles(t, "cars-seg") // cutoutSet's order
	out := os.Getenv("SCENERY_STRIPS_OUT")
	share := 0.35
	if v, err := strconv.ParseFloat(os.Getenv("SCENERY_SHARE"), 64); err == nil {
		share = v
	}
	refused, n := 0, 0
	var kept []string
	for i, raw := range photos {
		img, err := jpeg.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		car := maskBounds(masks[i])
		b := img.Bounds()
		type strip struct {
			side string
			r    image.Rectangle
		}
		var strips []strip
		if float64(car.Min.Y) >= share*float64(b.Dy()) {
			strips = append(strips, strip{"above", image.Rect(0, 0, b.Dx(), car.Min.Y)})
		}
		if float64(car.Min.X) >= share*float64(b.Dx()) {
			strips = append(strips, strip{"left", image.Rect(0, 0, car.Min.X, b.Dy())})
		}
		if float64(b.Dx()-car.Max.X) >= share*float64(b.Dx()) {
			strips = append(strips, strip{"right", image.Rect(car.Max.X, 0, b.Dx(), b.Dy())})
		}
		for _, s := range strips {
			crop := image.NewRGBA(image.Rect(0, 0, s.r.Dx(), s.r.Dy()))
			draw.Draw(crop, crop.Rect, img, s.r.Min, draw.Src)
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, crop, &jpeg.Options{Quality: 92}); err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(names[i]), ".jpg") + "-" + s.side
			if out != "" {
				os.WriteFile(filepath.Join(out, name+".jpg"), buf.Bytes(), 0o644)
			}
			n++
			_, err := Process(ctx, Input{Photo: buf.Bytes()}, Params{Op: CarCutout})
			if RefusalReason(err) != "" {
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			kept = append(kept, name)
		}
	}
	t.Logf("scenery strips (%.0f%% of the photo or more) refused: %d of %d; cut out: %v", 100*share, refused, n, kept)
	if n == 0 || refused*10 < n*9 {
		t.Errorf("%d of %d scenery strips refused, want at least 90%%", refused, n)
	}
}

// maskBounds is the box of a mask's car pixels (over half white).
func maskBounds(m image.Image) image.Rectangle {
	b := m.Bounds()
	r := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if g, _, _, _ := m.At(x, y).RGBA(); g > 0x8000 {
				r.Min.X, r.Min.Y = min(r.Min.X, x), min(r.Min.Y, y)
				r.Max.X, r.Max.Y = max(r.Max.X, x+1), max(r.Max.Y, y+1)
			}
		}
	}
	return r
}
