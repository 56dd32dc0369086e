package plates

import (
	"context"
	"flag"
	"image"
	"math"
	"slices"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/internal/nn"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

var calibrate = flag.Bool("calibrate", false, "TestCalibrate: measure the integer layers' input ranges on training photos and write calibration.go")

// labelledPhotos returns up to n photos of set whose file names pass keep,
// decoded as the service and bench plates decode them, each with its
// labelled plates.
func labelledPhotos(tb testing.TB, set string, keep func(string) bool, n int) (imgs []image.Image, plates [][]box) {
	tb.Helper()
	for _, l := range datasets.Labels(tb, set, keep, n) {
		photo, err := codec.Decode(context.Background(), datasets.ReadFile(tb, set, l.File), codec.Limits{MaxPixels: codec.DefaultMaxPixels})
		if err != nil {
			tb.Fatalf("%s: %v", l.File, err)
		}
		var bs []box
		for _, p := range l.Plates {
			bs = append(bs, box{x0: p.X, y0: p.Y, x1: p.X + p.W, y1: p.Y + p.H})
		}
		imgs, plates = append(imgs, photo.Image), append(plates, bs)
	}
	return imgs, plates
}

// The calibration matches the networks' integer layers.
func TestCalibrated(t *testing.T) {
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(intLayers(n, j)) != len(calibrated) {
		t.Fatalf("%d ranges calibrated for %d integer layers: run go test -tags measure -run TestCalibrate -calibrate", len(calibrated), len(intLayers(n, j)))
	}
}

// allInt puts every integer layer of n and j on integers, floatLayers's
// too, until the test ends: the tests below measure the integer layers
// whichever the product runs.
func allInt(t *testing.T, n *net, j jury) {
	for i, l := range intLayers(n, j) {
		saved := l.c.InRange
		l.c.InRange = []nn.Range{calibrated[i]}
		t.Cleanup(func() { l.c.InRange = saved })
	}
}

// sigmoid is the probability of a logit.
func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// samplePlates returns the shipped samples (docs/samples car.jpg and
// listing.jpg), decoded as the service decodes them, with their labelled
// plates.
func samplePlates(tb testing.TB) (imgs []image.Image, plates [][]box) {
	tb.Helper()
	for _, s := range []struct {
		name  string
		boxes []image.Rectangle
	}{{"car.jpg", []image.Rectangle{imgtest.SamplePlate}}, {"listing.jpg", imgtest.ListingPlates}} {
		photo, err := codec.Decode(context.Background(), imgtest.Sample(tb, s.name), codec.Limits{MaxPixels: codec.DefaultMaxPixels})
		if err != nil {
			tb.Fatalf("%s: %v", s.name, err)
		}
		var bs []box
		for _, r := range s.boxes {
			bs = append(bs, box{x0: float64(r.Min.X), y0: float64(r.Min.Y), x1: float64(r.Max.X), y1: float64(r.Max.Y)})
		}
		imgs, plates = append(imgs, photo.Image), append(plates, bs)
	}
	return imgs, plates
}

// On the labelled plates of the shipped samples, and of 7 validation
// photos of each plate set where the shared sets are here
// (CARPHOTO_DATASETS; README.md, "Data sets"), the integer layers give the
// first stage's plate probabilities and the jury's within 0.02 of the
// float networks'.
func TestIntScoresMatchFloat(t *testing.T) {
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	allInt(t, n, j)
	var firstGap, juryGap float64
	windows := 0
	imgs, labelled := samplePlates(t)
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		if !datasets.Present(t, set) {
			t.Logf("%s not at %s: not measured on its photos", set, datasets.Dir())
			continue
		}
		i, l := labelledPhotos(t, set, datasets.Validation, 7)
		imgs, labelled = append(imgs, i...), append(labelled, l...)
	}
	for i, img := range imgs {
		x, _ := prepare(img, 640)
		restore := nn.SetIntegers(false)
		want, err := n.forward(context.Background(), x)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		got, err := n.forward(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range want.Plane(0) {
			firstGap = max(firstGap, math.Abs(sigmoid(float64(got.Plane(0)[k]))-sigmoid(float64(v))))
		}
		nn.Free(x, got, want)
		for _, b := range labelled[i] {
			restore := nn.SetIntegers(false)
			lw, _, _ := j.judge(wholeView(img), b)
			restore()
			lg, _, _ := j.judge(wholeView(img), b)
			juryGap = max(juryGap, math.Abs(sigmoid(lg)-sigmoid(lw)))
			windows++
		}
	}
	t.Logf("first stage: largest cell probability difference %.4f; jury: largest difference %.4f on %d plates", firstGap, juryGap, windows)
	if windows == 0 {
		t.Fatal("no plates")
	}
	if firstGap > 0.02 {
		t.Errorf("a first-stage cell's plate probability moved by %.4f, want ≤ 0.02", firstGap)
	}
	if juryGap > 0.02 {
		t.Errorf("the jury's plate probability moved by %.4f, want ≤ 0.02", juryGap)
	}
}

// Each integer kernel this CPU runs gives the same first-stage head and
// the same jury judgement, bit for bit.
func TestIntKernelsSameScores(t *testing.T) {
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	allInt(t, n, j)
	// The sample photo (docs/samples/car.jpg) and its labelled plate.
	photo, err := codec.Decode(context.Background(), imgtest.Sample(t, "car.jpg"), codec.Limits{MaxPixels: codec.DefaultMaxPixels})
	if err != nil {
		t.Fatal(err)
	}
	sp := imgtest.SamplePlate
	imgs := []image.Image{photo.Image}
	labelled := [][]box{{{x0: float64(sp.Min.X), y0: float64(sp.Min.Y), x1: float64(sp.Max.X), y1: float64(sp.Max.Y)}}}
	x, _ := prepare(imgs[0], 640)
	defer nn.Free(x)
	var ref []float32
	var refJury float64
	var refQuad Quad
	for _, k := range nn.IntKernels() {
		restore, err := nn.SetIntKernel(k)
		if err != nil {
			t.Fatal(err)
		}
		out, err := n.forward(context.Background(), x)
		l, _, q := j.judge(wholeView(imgs[0]), labelled[0][0])
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref, refJury, refQuad = slices.Clone(out.Data), l, q
		} else {
			if !slices.Equal(out.Data, ref) {
				t.Errorf("kernel %d's first-stage head differs from the portable loop's", k)
			}
			if l != refJury || q != refQuad {
				t.Errorf("kernel %d's jury judgement differs from the portable loop's", k)
			}
		}
		nn.Free(out)
	}
}

var photosSplit = flag.String("photos", "", "TestIntPlatesMatchFloat: the split whose photos to run (validation, heldout)")

var onlyInt = flag.String("only", "", "TestIntPlatesMatchFloat: the integer layers to keep, by index (the others in float); \"none\": all in float")
