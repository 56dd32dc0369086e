//go:build measure

package plates

import (
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/internal/nn/calibration"
	"carphoto/internal/testenv/datasets"
	"context"
	"fmt"
	"strings"
	"testing"
)

// Measurements run on demand (go test -tags measure -run NAME -FLAG):
// they write or report figures and check nothing a change could break,
// so the suite leaves them out rather than skipping them.

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
Written by go test -tags measure -run TestCalibrate -calibrate.`, count)
	if err := calibration.Write("calibration.go", "plates", about, names, rs, seen); err != nil {
		t.Fatal(err)
	}
}

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
