//go:build measure

package imageops

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"path/filepath"
	"testing"

	"carphoto/imageops/cutout"
	"carphoto/imageops/vehicles"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// TestMeasureBoxTruncation measures boxTruncated (X-Car-Truncated from the
// chosen vehicle's box) on cars-seg as train/cutout/tune's
// TestMeasureTruncation measured the matte's rule: a photo counts as
// touching the frame when its labelled main car (datasets.MainCar) has a
// pixel in the outermost row or column. Bands are swept on the photos
// outside the held-out split; the shipped band (truncationBand) is then
// scored on the held-out ones.
//
//	go test -tags measure -run TestMeasureBoxTruncation -v ./imageops/
func TestMeasureBoxTruncation(t *testing.T) {
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(datasets.ReadFile(t, "cars-seg", "labels.json"), &labels); err != nil {
		t.Fatal(err)
	}
	dir := datasets.Set(t, "cars-seg")
	type sample struct {
		name    string
		box     image.Rectangle // the chosen vehicle's; empty when none
		frame   image.Rectangle
		touch   bool
		heldOut bool
	}
	var all []sample
	for _, l := range labels {
		img := imgtest.DecodeFile(t, filepath.Join(dir, l.File))
		objs, err := vehicles.Detect(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		car, _ := vehicles.Main(objs, img.Bounds())
		m := datasets.MainCar(imgtest.DecodeFile(t, filepath.Join(dir, l.Mask)))
		all = append(all, sample{filepath.Base(l.File), car.Box, img.Bounds(), touches(m), datasets.HeldOut(l.File)})
	}
	flagged := func(s sample, band float64) bool {
		if s.box.Empty() {
			return false
		}
		bx, by := band*float64(s.frame.Dx()), band*float64(s.frame.Dy())
		return float64(s.box.Min.X) <= bx || float64(s.box.Min.Y) <= by ||
			float64(s.frame.Max.X-s.box.Max.X) <= bx || float64(s.frame.Max.Y-s.box.Max.Y) <= by
	}
	score := func(band float64, held bool) string {
		var tf, tn, ff, fn int
		for _, s := range all {
			if s.heldOut != held {
				continue
			}
			if s.touch {
				tn++
				if flagged(s, band) {
					tf++
				}
			} else {
				fn++
				if flagged(s, band) {
					ff++
				}
			}
		}
		return fmt.Sprintf("touching the frame %d/%d flagged; not touching %d/%d flagged", tf, tn, ff, fn)
	}
	for _, band := range []float64{0, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03} {
		t.Logf("outside held-out, band %.4f: %s", band, score(band, false))
	}
	t.Logf("shipped band %.4f on held-out: %s", truncationBand, score(truncationBand, true))
	for _, s := range all {
		if s.heldOut && flagged(s, truncationBand) != s.touch {
			t.Logf("held-out %s: flagged %v (box %v), labelled car touches the frame: %v", s.name, boxTruncated(s.box, s.frame), s.box, s.touch)
		}
	}
}

// touches reports whether the mask has a set pixel in its outermost row or
// column.
func touches(m *image.Gray) bool {
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if (y == b.Min.Y || y == b.Max.Y-1 || x == b.Min.X || x == b.Max.X-1) && m.GrayAt(x, y).Y >= 128 {
				return true
			}
		}
	}
	return false
}

// TestMeasureStudioCarIoU compares, on cars-seg's photos outside the
// held-out split, the studio's car (chosenCar: chosen, cropped, gated)
// with the cut-out of the whole photo (cutout.Cut, the studio's before
// issue 79) against the labelled main car (datasets.MainCar): mean IoU of
// the alpha ≥ 128 region, and the photos either refuses.
//
//	go test -tags measure -run TestMeasureStudioCarIoU -v ./imageops/
func TestMeasureStudioCarIoU(t *testing.T) {
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(datasets.ReadFile(t, "cars-seg", "labels.json"), &labels); err != nil {
		t.Fatal(err)
	}
	dir := datasets.Set(t, "cars-seg")
	ctx := context.Background()
	var n int
	var sumNew, sumOld float64
	for _, l := range labels {
		if datasets.HeldOut(l.File) {
			continue
		}
		img := imgtest.DecodeFile(t, filepath.Join(dir, l.File))
		m := datasets.MainCar(imgtest.DecodeFile(t, filepath.Join(dir, l.Mask)))
		old, err := cutout.Cut(ctx, img)
		if err != nil {
			t.Fatal(err)
		}
		iouOld := alphaIoU(old, m)
		iouNew := 0.0
		car, _, err := chosenCar(ctx, img)
		if err != nil {
			t.Logf("%s: refused (%s); whole-photo cut-out IoU %.3f", filepath.Base(l.File), RefusalReason(err), iouOld)
		} else {
			iouNew = alphaIoU(car, m)
		}
		if iouNew < iouOld-0.05 || iouNew > iouOld+0.05 {
			t.Logf("%s: IoU %.3f, whole-photo cut-out %.3f", filepath.Base(l.File), iouNew, iouOld)
		}
		n++
		sumNew += iouNew
		sumOld += iouOld
	}
	t.Logf("%d photos outside held-out: studio car mean IoU %.4f (refusals count 0), whole-photo cut-out %.4f", n, sumNew/float64(n), sumOld/float64(n))
}

// alphaIoU is the IoU of car's alpha ≥ 128 with the mask's gray ≥ 128.
func alphaIoU(car *image.NRGBA, m *image.Gray) float64 {
	b := m.Bounds()
	var in, un int
	for y := range b.Dy() {
		for x := range b.Dx() {
			a := car.Pix[y*car.Stride+4*x+3] >= 128
			l := m.Pix[y*m.Stride+x] >= 128
			if a && l {
				in++
			}
			if a || l {
				un++
			}
		}
	}
	if un == 0 {
		return 1
	}
	return float64(in) / float64(un)
}
