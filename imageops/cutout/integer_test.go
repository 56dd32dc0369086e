package cutout

import (
	"context"
	"flag"
	"image"
	"slices"
	"testing"

	"carphoto/imageops/internal/nn"
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

// The calibration matches the network's convolutions.
func TestCalibrated(t *testing.T) {
	n, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	if len(n.intLayers()) != len(calibrated) {
		t.Fatalf("%d ranges calibrated for %d convolutions: run go test -tags measure -run TestCalibrate -calibrate", len(calibrated), len(n.intLayers()))
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

// The integer network's matte matches the float network's, IoU at least
// 0.995 on each photo: the shipped samples (docs/samples car.jpg and
// listing.jpg), and 6 held-out photos of cars-seg where the shared sets are
// here (CARPHOTO_DATASETS; README.md, "Data sets").
func TestIntMatteMatchesFloat(t *testing.T) {
	split := datasets.HeldOut
	if *tune {
		split = datasets.Validation
	}
	imgs := []image.Image{imgtest.DecodeFile(t, imgtest.SamplePath("car.jpg")), imgtest.DecodeFile(t, imgtest.SamplePath("listing.jpg"))}
	if datasets.Present(t, "cars-seg") {
		imgs = append(imgs, carsSeg(t, split, 6)...)
	} else {
		t.Logf("cars-seg not at %s: the samples only", datasets.Dir())
	}
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
