package plates

import (
	"context"
	"flag"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/internal/nn/calibration"
	"carphoto/internal/testenv/datasets"
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

// TestCalibrate, with -calibrate, runs the float networks as the finder
// does (DetectUnread: both looks of the first stage, the jury on every
// proposal) on 60 training photos of each plate set, records the largest
// and smallest input of each integer layer and writes them to
// calibration.go.
func TestCalibrate(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibrate to measure the integer layers' ranges")
	}
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	defer nn.SetIntegers(false)()
	ls := intLayers(n, j)
	seen := make([]nn.Sampler, len(ls))
	for i, l := range ls {
		l.c.Seen = &seen[i]
	}
	defer func() {
		for _, l := range ls {
			l.c.Seen = nil
		}
	}()
	count := 0
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		imgs, _ := labelledPhotos(t, set, datasets.Training, 60)
		for _, img := range imgs {
			if _, err := DetectUnread(context.Background(), img); err != nil {
				t.Fatal(err)
			}
			count++
		}
	}
	names, rs := make([]string, len(ls)), make([]nn.Range, len(ls))
	for i, s := range seen {
		names[i], rs[i] = ls[i].name, s.Clip(0)
	}
	about := fmt.Sprintf(`calibrated is each integer layer's input range (intLayers's order) on
%d training photos (60 of plates-web-cc0, 60 of plates-dashcam-ro) run
through DetectUnread; zero: the layer stays in float.
Written by go test -run TestCalibrate -calibrate.`, count)
	if err := calibration.Write("calibration.go", "plates", about, names, rs, seen); err != nil {
		t.Fatal(err)
	}
}

// The calibration matches the networks' integer layers.
func TestCalibrated(t *testing.T) {
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(intLayers(n, j)) != len(calibrated) {
		t.Fatalf("%d ranges calibrated for %d integer layers: run go test -run TestCalibrate -calibrate", len(calibrated), len(intLayers(n, j)))
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

// On the labelled plates of 8 validation photos of each plate set, the
// integer layers give the first stage's plate probabilities and the
// jury's within 0.02 of the float networks'.
func TestIntScoresMatchFloat(t *testing.T) {
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	allInt(t, n, j)
	var firstGap, juryGap float64
	windows := 0
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		imgs, labelled := labelledPhotos(t, set, datasets.Validation, 8)
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
	imgs, labelled := labelledPhotos(t, "plates-web-cc0", datasets.Validation, 1)
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

// TestIntPlatesMatchFloat, with -photos, runs Detect on every photo of a
// split of both plate sets with the integer layers and in float, and
// reports for each set the labelled plates found each way (bench plates'
// rule: ≥ 95% of the box hidden), the plates found one way only and the
// photos whose number of plates differs: the measure that chose
// floatLayers (on validation).
func TestIntPlatesMatchFloat(t *testing.T) {
	split := map[string]func(string) bool{"validation": datasets.Validation, "heldout": datasets.HeldOut}[*photosSplit]
	if split == nil {
		t.Skip("run with -photos validation or -photos heldout")
	}
	n, j, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if *onlyInt != "" {
		keep := map[string]bool{}
		for _, f := range strings.Split(*onlyInt, ",") {
			keep[f] = true
		}
		for i, l := range intLayers(n, j) {
			saved := l.c.InRange
			l.c.InRange = nil
			if keep[fmt.Sprint(i)] {
				l.c.InRange = []nn.Range{calibrated[i]}
			}
			defer func() { l.c.InRange = saved }()
		}
	}
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		imgs, labelled := labelledPhotos(t, set, split, 1<<30)
		var foundInt, foundFloat, onlyOne, photosDiffer, platesInt, platesFloat int
		for i, img := range imgs {
			restore := nn.SetIntegers(false)
			want, err := Detect(context.Background(), img)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Detect(context.Background(), img)
			if err != nil {
				t.Fatal(err)
			}
			platesInt, platesFloat = platesInt+len(got), platesFloat+len(want)
			if len(got) != len(want) {
				photosDiffer++
			}
			for _, b := range labelled[i] {
				lb := Box{X: b.x0, Y: b.y0, W: b.x1 - b.x0, H: b.y1 - b.y0}
				fi, ff := lb.CoveredBy(got) >= 0.95, lb.CoveredBy(want) >= 0.95
				if fi {
					foundInt++
				}
				if ff {
					foundFloat++
				}
				if fi != ff {
					onlyOne++
				}
			}
		}
		t.Logf("%s: %d photos: labelled plates found %d (float %d), %d found one way only; plates reported %d (float %d), %d photos with another number",
			set, len(imgs), foundInt, foundFloat, onlyOne, platesInt, platesFloat, photosDiffer)
	}
}
