//go:build measure

package textdet

import (
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/internal/nn/calibration"
	"carphoto/internal/testenv/datasets"
	"context"
	"fmt"
	"testing"
)

// Measurements run on demand (go test -tags measure -run NAME -FLAG):
// they write or report figures and check nothing a change could break,
// so the suite leaves them out rather than skipping them.

// TestCalibrate, with -calibrate, runs the float network at the plate
// finder's side (960) on training photos of both plate sets, 40 each,
// records the largest and smallest input of each integer layer and writes
// them to calibration.go.
func TestCalibrate(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibrate to measure the integer layers' ranges")
	}
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	defer nn.SetIntegers(false)()
	ls := n.intLayers()
	seen := make([]nn.Sampler, len(ls))
	for i, l := range ls {
		*l.seen = &seen[i]
	}
	defer func() {
		for _, l := range ls {
			*l.seen = nil
		}
	}()
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		for _, img := range photos(t, set, datasets.Training, 40) {
			if _, err := Probabilities(context.Background(), img, 960); err != nil {
				t.Fatal(err)
			}
		}
	}
	names, rs := make([]string, len(ls)), make([]nn.Range, len(ls))
	for i, s := range seen {
		names[i], rs[i] = ls[i].name, s.Clip(*clip)
	}
	about := fmt.Sprintf(`calibrated is each integer layer's input range (intLayers's order) on 40
training photos of plates-web-cc0 and 40 of plates-dashcam-ro at side 960,
leaving out %g of the inputs at each end; zero: the layer stays in float.
Written by go test -tags measure -run TestCalibrate -calibrate.`, *clip)
	if err := calibration.Write("calibration.go", "textdet", about, names, rs, seen); err != nil {
		t.Fatal(err)
	}
	about = `calibratedChannels is the input range of each channel of the layers of
perChannel (intLayers's order), on the photos of calibrated.
Written by go test -tags measure -run TestCalibrate -calibrate.`
	if err := calibration.WriteChannels("calibration_channels.go", "textdet", about, names, perChannel, seen); err != nil {
		t.Fatal(err)
	}
}

// TestSensitivity, with -sensitivity, reports for each integer layer alone
// (the others in float) the largest and mean change of the probability
// map on 8 validation photos of plates-web-cc0 at side 960: the measure
// that chose which layers run on integers.
func TestSensitivity(t *testing.T) {
	if !*sensitivity {
		t.Skip("run with -sensitivity")
	}
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	imgs := photos(t, "plates-web-cc0", datasets.Validation, 8)
	var want []*Map
	restore := nn.SetIntegers(false)
	for _, img := range imgs {
		m, err := Probabilities(context.Background(), img, 960)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	restore()
	ls := n.intLayers()
	saved := make([][]nn.Range, len(ls))
	for i, l := range ls {
		saved[i], *l.in8 = *l.in8, nil
	}
	defer func() {
		for i, l := range ls {
			*l.in8 = saved[i]
		}
	}()
	measure := func() (worst, mean float64) {
		var sum float64
		var cnt int
		for i, img := range imgs {
			m, err := Probabilities(context.Background(), img, 960)
			if err != nil {
				t.Fatal(err)
			}
			for j, v := range m.P {
				d := float64(v - want[i].P[j])
				d = max(d, -d)
				worst = max(worst, d)
				sum += d
				cnt++
			}
		}
		return worst, sum / float64(cnt)
	}
	for i, l := range ls {
		*l.in8 = []nn.Range{calibrated[i]}
		w, m := measure()
		*l.in8 = nil
		t.Logf("layer %2d %-9s: largest %.3f mean %.2e", i, l.name, w, m)
	}
}

// TestFloatKernelsFloor, with -floatfloor, compares the float network
// with AVX-512 kernels against the portable float loops (a different
// order of rounding): the floor any change of arithmetic meets.
func TestFloatKernelsFloor(t *testing.T) {
	if !*floatFloor {
		t.Skip("run with -floatfloor")
	}
	defer nn.SetIntegers(false)()
	imgs := photos(t, "plates-web-cc0", datasets.HeldOut, 12)
	worst := 1.0
	var largest float64
	for i, img := range imgs {
		want, err := Probabilities(context.Background(), img, 960)
		if err != nil {
			t.Fatal(err)
		}
		restore := nn.SetFloatKernels("portable")
		got, err := Probabilities(context.Background(), img, 960)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range got.P {
			d := float64(v - want.P[j])
			largest = max(largest, d, -d)
		}
		wr, gr := want.Regions(), got.Regions()
		for _, r := range wr {
			best := 0.0
			for _, o := range gr {
				best = max(best, boxIoU(r, o))
			}
			worst = min(worst, best)
			if best < 0.9 {
				t.Logf("photo %d: region %v moves (IoU %.3f)", i, r.Quad.Bounds(), best)
			}
		}
	}
	t.Logf("float AVX-512 against portable: largest map change %.3f, worst region IoU %.3f", largest, worst)
}
