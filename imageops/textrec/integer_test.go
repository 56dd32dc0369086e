package textrec

import (
	"context"
	"flag"
	_ "image/jpeg"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"carphoto/imageops/internal/nn"
)

var calibrate = flag.Bool("calibrate", false, "TestCalibrate: measure the integer layers' input ranges on training photos' lines and write calibration.go")

// The calibration matches the network's integer layers.
func TestCalibrated(t *testing.T) {
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	if len(n.intLayers()) != len(calibrated) {
		t.Fatalf("%d ranges calibrated for %d integer layers: run go test -tags measure -run TestCalibrate -calibrate", len(calibrated), len(n.intLayers()))
	}
}

// readBoth reads a prepared line with the integer layers and in float.
func readBoth(t *testing.T, n *net, x *nn.Tensor) (got, want Reading) {
	t.Helper()
	restore := nn.SetIntegers(false)
	want, err := n.read(context.Background(), x)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	got, err = n.read(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	return got, want
}

// confGap is the largest difference of two readings' character
// probabilities (1 where the texts differ).
func confGap(a, b Reading) float64 {
	if a.Text != b.Text || len(a.Conf) != len(b.Conf) {
		return 1
	}
	d := 0.0
	for i := range a.Conf {
		d = max(d, math.Abs(a.Conf[i]-b.Conf[i]))
	}
	return d
}

// On the four parity crops the integer layers read what the float network
// reads, each character's probability within 0.02.
func TestIntReadsMatchFloat(t *testing.T) {
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	crops, _ := filepath.Glob("testdata/*.png")
	for _, path := range crops {
		img, _ := loadCrop(t, path)
		b := img.Bounds()
		x := prepare(img, Quad{{0, 0}, {float64(b.Dx()), 0}, {float64(b.Dx()), Height}, {0, Height}}, b.Dx())
		got, want := readBoth(t, n, x)
		nn.Free(x)
		d := confGap(got, want)
		t.Logf("%s: largest probability difference %.4f", filepath.Base(path), d)
		if got.Text != want.Text {
			t.Errorf("%s: the integer layers read a different text (%d characters, float %d)", path, len(got.Conf), len(want.Conf))
		} else if d > 0.02 {
			t.Errorf("%s: a character's probability moved by %.4f, want ≤ 0.02", path, d)
		}
	}
}

var linesSplit = flag.String("lines", "", "TestIntLinesMatchFloat: the split whose lines to read (validation, heldout)")

var onlyInt = flag.String("only", "", "TestIntLinesMatchFloat: the integer layers to keep, by index (the others in float)")

// Each integer kernel this CPU runs gives the same logits, bit for bit.
func TestIntKernelsSameLogits(t *testing.T) {
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	img, _ := loadCrop(t, "testdata/plates-web-cc0-0005.png")
	b := img.Bounds()
	x := prepare(img, Quad{{0, 0}, {float64(b.Dx()), 0}, {float64(b.Dx()), Height}, {0, Height}}, b.Dx())
	defer nn.Free(x)
	var ref []float32
	for _, k := range nn.IntKernels() {
		restore, err := nn.SetIntKernel(k)
		if err != nil {
			t.Fatal(err)
		}
		out, err := n.forward(context.Background(), x)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = slices.Clone(out.Data)
		} else if !slices.Equal(out.Data, ref) {
			t.Errorf("kernel %d's logits differ from the portable loop's", k)
		}
		nn.Free(out)
	}
}
