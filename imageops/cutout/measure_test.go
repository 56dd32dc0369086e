//go:build measure

package cutout

import (
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/internal/nn/calibration"
	"carphoto/internal/testenv/datasets"
	"context"
	"fmt"
	"image"
	"strings"
	"testing"
)

// Measurements run on demand (go test -tags measure -run NAME -FLAG):
// they write or report figures and check nothing a change could break,
// so the suite leaves them out rather than skipping them.

// TestCalibrate, with -calibrate, runs the float network on 40 training
// photos of cars-seg, records the inputs of each convolution and writes
// their ranges (leaving out the share -clip at each end) to calibration.go.
func TestCalibrate(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibrate to measure the integer layers' ranges")
	}
	n, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	defer nn.SetIntegers(false)()
	ls := n.intLayers()
	seen := make([]nn.Sampler, len(ls))
	for i, l := range ls {
		l.c.Seen = &seen[i]
	}
	defer func() {
		for _, l := range ls {
			l.c.Seen = nil
		}
	}()
	for _, img := range carsSeg(t, datasets.Training, 40) {
		if _, err := Matte(context.Background(), img); err != nil {
			t.Fatal(err)
		}
	}
	keepFloat := map[string]bool{}
	for _, f := range strings.Split(*float, ",") {
		keepFloat[f] = true
	}
	names, rs := make([]string, len(ls)), make([]nn.Range, len(ls))
	for i, s := range seen {
		names[i] = ls[i].name
		if !keepFloat[fmt.Sprint(i)] {
			rs[i] = s.Clip(*clip)
		}
	}
	about := fmt.Sprintf(`calibrated is each convolution's input range (intLayers's order) on 40
training photos of cars-seg, leaving out %g of the inputs at each end;
zero: the layer stays in float. Written by go test -tags measure -run TestCalibrate
-calibrate.`, *clip)
	if err := calibration.Write("calibration.go", "cutout", about, names, rs, seen); err != nil {
		t.Fatal(err)
	}
}

// TestSensitivity, with -sensitivity, reports for each convolution alone
// on integers the lowest and mean IoU of the matte against the float one
// on 8 validation photos.
func TestSensitivity(t *testing.T) {
	if !*sensitivity {
		t.Skip("run with -sensitivity")
	}
	n, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	imgs := carsSeg(t, datasets.Validation, *sensN)
	var want []*image.Alpha
	restore := nn.SetIntegers(false)
	for _, img := range imgs {
		m, err := Matte(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	restore()
	ls := n.intLayers()
	saved := make([][]nn.Range, len(ls))
	for i, l := range ls {
		saved[i], l.c.InRange = l.c.InRange, nil
	}
	defer func() {
		for i, l := range ls {
			l.c.InRange = saved[i]
		}
	}()
	for i, l := range ls {
		if saved[i] == nil {
			continue
		}
		l.c.InRange = saved[i]
		lo, sum := 1.0, 0.0
		for k, img := range imgs {
			m, err := Matte(context.Background(), img)
			if err != nil {
				t.Fatal(err)
			}
			v := maskIoU(m, want[k])
			lo, sum = min(lo, v), sum+v
		}
		l.c.InRange = nil
		t.Logf("layer %3d %-8s: IoU lowest %.4f mean %.4f", i, l.name, lo, sum/float64(len(imgs)))
	}
}
