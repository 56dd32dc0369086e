//go:build measure

package carseg

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// Measurements run on demand (go test -tags measure -run NAME -FLAG): they
// report figures and check nothing a change could break.

var (
	weights = flag.String("weights", "", "a CSG1 weights file to measure instead of the embedded one")
	side    = flag.Int("side", Side, "the input side")
)

// TestWeightsIoU reports the car+bus region's mean IoU on cars-seg's 159
// photos outside the held-out split, as TestCarBusIoU measures it, for the
// weights file -weights (the dm0.5 file: train/carseg/convert.py --tflite
// ../shared/models/deeplabv3_mnv2_dm05_pascal_quant.tflite --out FILE) at
// -side.
func TestWeightsIoU(t *testing.T) {
	if *weights == "" {
		t.Skip("run with -weights FILE")
	}
	b, err := os.ReadFile(*weights)
	if err != nil {
		t.Fatal(err)
	}
	n, err := parseNet(b)
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(datasets.ReadFile(t, "cars-seg", "labels.json"), &labels); err != nil {
		t.Fatal(err)
	}
	var sum float64
	count := 0
	for _, l := range labels {
		if datasets.HeldOut(l.File) {
			continue
		}
		img := imgtest.DecodeFile(t, datasets.File(t, "cars-seg", l.File))
		mask := imgtest.DecodeFile(t, datasets.File(t, "cars-seg", l.Mask))
		scores, err := n.forward(context.Background(), prepare(img, *side))
		if err != nil {
			t.Fatal(err)
		}
		bb := img.Bounds()
		m := &Map{W: *side, H: *side, Sx: float64(bb.Dx()) / float64(*side), Sy: float64(bb.Dy()) / float64(*side),
			Origin: bb.Min, Class: classes(scores, *side)}
		sum += datasets.IoU(m.Mask(bb, IsVehicle), mask)
		count++
	}
	t.Logf("%s at %d: %d photos, car+bus IoU mean %.4f", *weights, *side, count, sum/float64(count))
}
