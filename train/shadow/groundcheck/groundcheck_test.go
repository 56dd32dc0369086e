//go:build groundcheck

// Package groundcheck measures how far the floor shadow.FindFloor finds
// from a cut-out lies from the floor it finds from a hand-drawn mask.
package groundcheck

// How far the floor found from the cut-out lies from the floor found from the
// hand-drawn mask, on the cars-seg photos that are not held out:
//
//	GOMAXPROCS=1 go test -tags groundcheck -run TestGroundFromCutout -v ./train/shadow/groundcheck/

import (
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"image"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"carphoto/imageops/cutout"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/imgtest"
)

func TestGroundFromCutout(t *testing.T) {
	dir := datasets.Set(t, "cars-seg")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	var offs []float64
	for _, l := range labels {
		if datasets.HeldOut(filepath.Base(l.File)) {
			continue
		}
		img := imgtest.DecodeFile(t, filepath.Join(dir, l.File))
		mask := imgtest.DecodeFile(t, filepath.Join(dir, l.Mask))
		car, err := cutout.Cut(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		truth := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		for y := range b.Dy() {
			for x := range b.Dx() {
				r, _, _, _ := mask.At(mask.Bounds().Min.X+x, mask.Bounds().Min.Y+y).RGBA()
				if r >= 0x8000 {
					truth.Pix[y*truth.Stride+4*x+3] = 255
				}
			}
		}
		gt, ok1 := shadow.FindFloor(truth)
		gc, ok2 := shadow.FindFloor(car)
		if !ok1 || !ok2 {
			continue
		}
		// The floor under the true contacts, from the cut-out (positive: below).
		for _, x := range gt.Contacts() {
			offs = append(offs, gc.At(x)-gt.At(x))
		}
	}
	sort.Float64s(offs)
	var abs float64
	for _, o := range offs {
		abs += math.Abs(o)
	}
	t.Logf("%d contacts: floor offset median %+.1f px, mean |offset| %.1f px, 10%% %+.1f, 90%% %+.1f",
		len(offs), offs[len(offs)/2], abs/float64(len(offs)), offs[len(offs)/10], offs[len(offs)*9/10])
}
