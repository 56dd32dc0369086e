package carseg

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"path"
	"sort"
	"testing"

	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// TestCarBusIoU measures the car+bus region against cars-seg's masks
// (every car labelled, grey ≥ 128) on its 159 photos outside the held-out
// split, which nothing here was chosen on either: the network is used as
// published. The photo is stretched to the side, the map read back at the
// photo's pixels by nearest neighbour (Map.Mask). At the graph's 513 the
// mean IoU was 0.944 when the network was chosen (../shared/models) and is
// 0.940 with the float interpreter of the TFLite file
// (train/carseg/measure.py, OpenCV's resampling); the engine must give
// 0.944 within 0.005 there, and at Side no less than 0.005 under its own
// figure measured in float (README).
// It skips where the set is missing, and with -short.
func TestCarBusIoU(t *testing.T) {
	if testing.Short() {
		t.Skip("segments 159 photos twice")
	}
	if !datasets.Present(t, "cars-seg") {
		t.Skip("cars-seg not here")
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(datasets.ReadFile(t, "cars-seg", "labels.json"), &labels); err != nil {
		t.Fatal(err)
	}
	type photo struct {
		name      string
		img, mask image.Image
	}
	var photos []photo
	for _, l := range labels {
		if datasets.HeldOut(l.File) {
			continue
		}
		photos = append(photos, photo{path.Base(l.File),
			imgtest.DecodeFile(t, datasets.File(t, "cars-seg", l.File)),
			imgtest.DecodeFile(t, datasets.File(t, "cars-seg", l.Mask))})
	}
	if len(photos) != 159 {
		t.Fatalf("%d photos outside the held-out split, want 159", len(photos))
	}
	for _, c := range []struct {
		side     int
		lo, want float64
	}{{513, 0.939, 0.944}, {Side, sideIoU - 0.005, sideIoU}} {
		t.Run(fmt.Sprint(c.side), func(t *testing.T) {
			scores := make([]float64, len(photos))
			var sum float64
			for i, p := range photos {
				m, err := SegmentAt(context.Background(), p.img, c.side)
				if err != nil {
					t.Fatal(err)
				}
				region := m.Mask(p.img.Bounds(), IsVehicle)
				scores[i] = datasets.IoU(region, p.mask)
				sum += scores[i]
			}
			mean := sum / float64(len(scores))
			sorted := append([]float64(nil), scores...)
			sort.Float64s(sorted)
			t.Logf("side %d: car+bus IoU mean %.4f, median %.4f, lowest %.3f %.3f %.3f", c.side, mean,
				sorted[len(sorted)/2], sorted[0], sorted[1], sorted[2])
			if mean < c.lo || (c.side == 513 && mean > c.want+0.005) {
				t.Errorf("side %d: mean IoU %.4f, want %.3f ± 0.005", c.side, mean, c.want)
			}
		})
	}
}

// sideIoU is the engine's mean car+bus IoU at Side on the 159 photos
// (TestCarBusIoU's in float, measured when Side was chosen).
const sideIoU = 0.938
