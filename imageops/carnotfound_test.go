package imageops

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
)

// noCarJPEG is a photo with no car in it: a sky-like gradient.
func noCarJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 480, 320))
	for y := range 320 {
		for x := range 480 {
			img.Set(x, y, color.RGBA{uint8(100 + y/4), uint8(140 + y/5), uint8(200 - y/3 + x/40), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// car-cutout and car-shadow refuse a photo whose cut-out holds no car with
// car_not_found: an empty cut-out, a car under 1% of the frame
// (cutout.MinCarShare; cars-seg-0137, a distant car at 0.65%) and a cut-out
// that is scenery (cutout.Scenery; dash-cam frame 0000, where the network
// takes the night sky and the buildings from the top edge down the right
// side); they answer a real car photo and a small car (cars-seg-0124, 3%).
func TestCarNotFound(t *testing.T) {
	photos, _ := cutoutSet(t, 1)
	photos = append(photos, datasets.ReadFile(t, "cars-seg", "images/cars-seg-0124.jpg"))
	ctx := context.Background()
	lim := codec.Limits{}
	refused := []struct {
		name, why string
		photo     []byte
	}{
		{"a photo with no car", "no car was found", noCarJPEG(t)},
		{"a car at 0.65% of the frame", "no car was found", datasets.ReadFile(t, "cars-seg", "images/cars-seg-0137.jpg")},
		{"a street at night whose cut-out is sky and buildings", "the cut-out took the scenery",
			datasets.ReadFile(t, "plates-dashcam-ro", "images/plates-dashcam-ro-0000.jpg")},
	}
	for _, op := range []Op{CarCutout, CarShadow} {
		for i, photo := range photos {
			res, err := Process(ctx, Input{Photo: photo, Limits: lim}, Params{Op: op})
			if err != nil || len(res.Body) == 0 {
				t.Errorf("%s of car photo %d: %v; want the answer", op, i, err)
			}
		}
		for _, r := range refused {
			_, err := Process(ctx, Input{Photo: r.photo, Limits: lim}, Params{Op: op})
			if code := carphoto.ErrorCode(err); code != carphoto.ECarNotFound || !strings.Contains(err.Error(), r.why) {
				t.Errorf("%s of %s: error %v; want code %q saying %q", op, r.name, err, carphoto.ECarNotFound, r.why)
			}
		}
	}
}

// The refusals cost real car photos at most 1%: car_not_found (by the cut-out
// and carFound, as carOf runs them) on every held-out photo of cars-seg and
// the web plate set, and of the extra plate sets where they are built
// (../shared/datasets/extra). A photo on which the cut-out finds nothing at
// all (alpha under 128 everywhere) is not counted against the rules: it was
// refused before issue 70 too, and answering it could only give an empty
// image; on the plate sets these are street scenes, roads and squares with
// no car near (14 of the 938 on 28 Nov, 20 of the 22 refused being street
// scenes; docs/research/cutout.md, "Scenery"). Both figures are logged. The
// dash-cam set is not counted: the network finds nothing on about 40% of
// its night frames and takes the street for the car on others.
func TestCarNotFoundRareOnCarPhotos(t *testing.T) {
	if testing.Short() {
		t.Skip("cuts out every held-out car photo (minutes)")
	}
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
	var refused, empty []string
	for _, p := range all {
		raw, err := os.ReadFile(filepath.Join(p.set, p.file))
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		car, err := cutout.Cut(ctx, img)
		if err != nil {
			t.Fatal(err)
		}
		if err := carFound(car); err != nil {
			if cutout.CarShare(car) == 0 {
				empty = append(empty, filepath.Base(p.file))
			} else {
				refused = append(refused, filepath.Base(p.file))
			}
		}
	}
	t.Logf("car_not_found on %d of %d held-out car photos: %d with an empty cut-out %v, %d with a cut-out %v",
		len(empty)+len(refused), len(all), len(empty), empty, len(refused), refused)
	if len(all) == 0 || float64(len(refused)) > 0.01*float64(len(all)) {
		t.Errorf("car_not_found on %d of %d held-out car photos whose cut-out is not empty (%v); want at most 1%%", len(refused), len(all), refused)
	}
}
