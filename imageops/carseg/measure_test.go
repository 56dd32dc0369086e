//go:build measure

package carseg

import (
	"context"
	"encoding/json"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
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

var tint = flag.String("tint", "", "write the class maps of docs/samples' photos over them into this folder")

// TestOverlay, with -tint DIR, writes docs/samples/car.jpg and
// listing.jpg with their vehicle region tinted red and their person region
// blue (800 px wide), to look at.
func TestOverlay(t *testing.T) {
	if *tint == "" {
		t.Skip("run with -tint DIR")
	}
	for _, name := range []string{"car", "listing"} {
		img := imgtest.DecodeFile(t, "../../docs/samples/"+name+".jpg")
		m, err := Segment(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		w := 800
		h := w * b.Dy() / b.Dx()
		out := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				px, py := b.Min.X+x*b.Dx()/w, b.Min.Y+y*b.Dy()/h
				r, g, bl, _ := img.At(px, py).RGBA()
				c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}
				switch cl := m.At(px, py); {
				case IsVehicle(cl):
					c.R, c.G, c.B = c.R/2+127, c.G/2, c.B/2
				case cl == Person:
					c.R, c.G, c.B = c.R/2, c.G/2, c.B/2+127
				}
				out.SetRGBA(x, y, c)
			}
		}
		f, err := os.Create(filepath.Join(*tint, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, out); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
