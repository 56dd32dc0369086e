//go:build measure

package imageops

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"carphoto/imageops/cutout"
	"carphoto/internal/testenv/datasets"
)

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
