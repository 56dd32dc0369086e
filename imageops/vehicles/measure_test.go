//go:build measure

package vehicles

import (
	"context"
	"encoding/json"
	"image"
	"path/filepath"
	"testing"

	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// Measurements run on demand (go test -tags measure -run NAME): they report
// figures and check nothing a change could break, so the suite leaves them
// out rather than skipping them.

// rectIoU is the intersection over union of two rectangles.
func rectIoU(a, b image.Rectangle) float64 {
	in := a.Intersect(b)
	i := float64(in.Dx() * in.Dy())
	u := float64(a.Dx()*a.Dy()+b.Dx()*b.Dy()) - i
	if u <= 0 {
		return 0
	}
	return i / u
}

// maskBox is the bounding box of a mask's set pixels (gray ≥ 128).
func maskBox(m *image.Gray) image.Rectangle {
	var r image.Rectangle
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if m.GrayAt(x, y).Y >= 128 {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}

// TestMainCarFound reports, on cars-seg's photos outside the held-out split
// (159), on how many the car Main chooses among Detect's vehicles has a box
// within IoU 0.7 of the labelled main car's (datasets.MainCar: the largest
// part by size times centrality), and the mean IoU; then on plates-web-cc0's
// photos outside the held-out split, on how many Detect finds a vehicle.
func TestMainCarFound(t *testing.T) {
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(datasets.ReadFile(t, "cars-seg", "labels.json"), &labels); err != nil {
		t.Fatal(err)
	}
	dir := datasets.Set(t, "cars-seg")
	n, found, sum := 0, 0, 0.0
	for _, l := range labels {
		if datasets.HeldOut(l.File) {
			continue
		}
		img := imgtest.DecodeFile(t, filepath.Join(dir, l.File))
		want := maskBox(datasets.MainCar(imgtest.DecodeFile(t, filepath.Join(dir, l.Mask))))
		objs, err := Detect(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		n++
		car, ok := Main(objs, img.Bounds())
		v := 0.0
		if ok {
			v = rectIoU(car.Box, want)
		}
		sum += v
		if v >= 0.7 {
			found++
		} else {
			t.Logf("%s: main car %v, chosen %v %v (IoU %.2f)", filepath.Base(l.File), want, car.Class, car.Box, v)
		}
	}
	t.Logf("cars-seg outside held-out: main car found on %d of %d (box IoU ≥ 0.7), mean box IoU %.3f", found, n, sum/float64(n))
	web := datasets.Labels(t, "plates-web-cc0", func(name string) bool { return !datasets.HeldOut(name) }, -1)
	wdir := datasets.Set(t, "plates-web-cc0")
	none := 0
	for _, l := range web {
		img := imgtest.DecodeFile(t, filepath.Join(wdir, l.File))
		objs, err := Detect(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := Main(objs, img.Bounds()); !ok {
			none++
			t.Logf("%s: no vehicle", filepath.Base(l.File))
		}
	}
	t.Logf("plates-web-cc0 outside held-out: no vehicle on %d of %d", none, len(web))
}
