package bench

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// The contact band is the rows from 20% of the labelled car's height above
// its lowest row to 10% below it: a slab of ground under the car lowers its
// IoU, a change above the band does not, and a car touching the frame is
// named.
func TestContactBandIoU(t *testing.T) {
	const w, h = 100, 100
	label := image.NewGray(image.Rect(0, 0, w, h))
	for y := 20; y < 70; y++ { // a car 50 rows high: band rows 59 to 74
		for x := 10; x < 90; x++ {
			label.SetGray(x, y, color.Gray{255})
		}
	}
	matte := func(bottom, top int) *image.Alpha {
		m := image.NewAlpha(label.Rect)
		for y := top; y < bottom; y++ {
			for x := 10; x < 90; x++ {
				m.SetAlpha(x, y, color.Alpha{255})
			}
		}
		return m
	}
	for _, tc := range []struct {
		name       string
		m          *image.Alpha
		iou, extra float64
	}{
		{"exact", matte(70, 20), 1, 0},
		{"roof lost, band exact", matte(70, 40), 1, 0},
		{"a slab of 5 rows of ground", matte(75, 20), 11.0 / 16, 5.0 / 16},
	} {
		got := contactBandIoU(tc.m, label)
		if math.Abs(got.IoU-tc.iou) > 1e-9 || math.Abs(got.Extra-tc.extra) > 1e-9 || got.FrameCut {
			t.Errorf("%s: got IoU %.4f extra %.4f frame cut %v, want %.4f, %.4f, false", tc.name, got.IoU, got.Extra, got.FrameCut, tc.iou, tc.extra)
		}
	}
	for x := 0; x < 10; x++ {
		label.SetGray(x, 50, color.Gray{255})
	}
	if !contactBandIoU(matte(70, 20), label).FrameCut {
		t.Error("a car touching the left edge is not named as cut by the frame")
	}
}
