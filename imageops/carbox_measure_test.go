//go:build measure

package imageops

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"path/filepath"
	"testing"

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
