package cutout

import (
	"context"
	"flag"
	"fmt"
	"image"
	"slices"
	"strings"
	"testing"

	"carphoto/imageops/internal/nn"
	"carphoto/imageops/internal/nn/calibration"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

var (
	calibrate   = flag.Bool("calibrate", false, "TestCalibrate: measure the integer layers' input ranges on training photos and write calibration.go")
	clip        = flag.Float64("clip", 1e-4, "TestCalibrate: the share of inputs left outside the range at each end")
	float       = flag.String("float", "", "TestCalibrate: indexes of layers kept in float, comma-separated")
	sensitivity = flag.Bool("sensitivity", false, "TestSensitivity: how far each integer layer alone moves the mask")
	tune        = flag.Bool("tune", false, "TestIntMatteMatchesFloat: validation photos instead of held-out ones, for choosing")
	sensN       = flag.Int("sensn", 8, "TestSensitivity: validation photos")
)

// carsSeg returns the cars-seg photos whose names pass keep, in the order
// of its labels (by name), at most n.
func carsSeg(tb testing.TB, keep func(string) bool, n int) []image.Image {
	tb.Helper()
	var out []image.Image
	for _, l := range datasets.Labels(tb, "cars-seg", keep, n) {
		out = append(out, imgtest.DecodeFile(tb, datasets.File(tb, "cars-seg", l.File)))
	}
	return out
}

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
zero: the layer stays in float. Written by go test -run TestCalibrate
-calibrate.`, *clip)
	if err := calibration.Write("calibration.go", "cutout", about, names, rs, seen); err != nil {
		t.Fatal(err)
	}
}

// The calibration matches the network's convolutions.
func TestCalibrated(t *testing.T) {
	n, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	if len(n.intLayers()) != len(calibrated) {
		t.Fatalf("%d ranges calibrated for %d convolutions: run go test -run TestCalibrate -calibrate", len(calibrated), len(n.intLayers()))
	}
}

// maskIoU is the intersection over union of two mattes thresholded at half.
func maskIoU(a, b *image.Alpha) float64 {
	var in, un int
	for i, v := range a.Pix {
		x, y := v >= 128, b.Pix[i] >= 128
		if x && y {
			in++
		}
		if x || y {
			un++
		}
	}
	if un == 0 {
		return 1
	}
	return float64(in) / float64(un)
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

// The integer network's matte matches the float network's on held-out
// photos of cars-seg: IoU at least 0.995 on each.
func TestIntMatteMatchesFloat(t *testing.T) {
	split := datasets.HeldOut
	if *tune {
		split = datasets.Validation
	}
	imgs := carsSeg(t, split, 8)
	lo, sum := 1.0, 0.0
	for i, img := range imgs {
		restore := nn.SetIntegers(false)
		want, err := Matte(context.Background(), img)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Matte(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		v := maskIoU(got, want)
		lo, sum = min(lo, v), sum+v
		if v < 0.995 {
			t.Errorf("photo %d: integer matte's IoU with the float one %.4f, want ≥ 0.995", i, v)
		}
	}
	t.Logf("%d photos: IoU with the float matte lowest %.4f, mean %.4f", len(imgs), lo, sum/float64(len(imgs)))
}

// Each integer kernel this CPU runs gives the same probabilities, bit for
// bit, on a small input.
func TestIntKernelsSameProbability(t *testing.T) {
	n, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	x := syntheticU2(48, 64)
	var ref []float32
	for _, k := range nn.IntKernels() {
		restore, err := nn.SetIntKernel(k)
		if err != nil {
			t.Fatal(err)
		}
		got := n.forward(x).d
		restore()
		if ref == nil {
			ref = got
		} else if !slices.Equal(got, ref) {
			t.Errorf("kernel %d's probabilities differ from the portable loop's", k)
		}
	}
}
