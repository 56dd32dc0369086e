//go:build measure

package textrec

import (
	"bytes"
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/internal/nn/calibration"
	"carphoto/imageops/textdet"
	"carphoto/internal/testenv/datasets"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	"slices"
	"strings"
	"testing"
)

// Measurements run on demand (go test -tags measure -run NAME -FLAG):
// they write or report figures and check nothing a change could break,
// so the suite leaves them out rather than skipping them.

// TestCalibrate, with -calibrate, runs the float network on the lines of
// 60 training photos of each plate set, records the largest and smallest
// input of each integer layer and writes them to calibration.go.
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
		l.c.Seen = &seen[i]
	}
	defer func() {
		for _, l := range ls {
			l.c.Seen = nil
		}
	}()
	count := 0
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		imgs, lines := photoLines(t, set, datasets.Training, 60)
		for i, img := range imgs {
			for _, q := range lines[i] {
				if _, err := Read(context.Background(), img, q); err != nil {
					t.Fatal(err)
				}
				count++
			}
		}
	}
	names, rs := make([]string, len(ls)), make([]nn.Range, len(ls))
	for i, s := range seen {
		names[i], rs[i] = ls[i].name, s.Clip(0)
	}
	about := fmt.Sprintf(`calibrated is each integer layer's input range (intLayers's order) on the
%d lines (labelled plates and the text detector's line-shaped regions) of
60 training photos of plates-web-cc0 and 60 of plates-dashcam-ro; zero:
the layer stays in float.
Written by go test -tags measure -run TestCalibrate -calibrate.`, count)
	if err := calibration.Write("calibration.go", "textrec", about, names, rs, seen); err != nil {
		t.Fatal(err)
	}
}

// TestIntLinesMatchFloat, with -lines, reads the lines of 40 photos of
// each plate set of a split with the integer layers and in float, and
// reports how many read differently and the largest probability change
// of those read alike: the measure that chose floatLayers (on validation).
func TestIntLinesMatchFloat(t *testing.T) {
	split := map[string]func(string) bool{"validation": datasets.Validation, "heldout": datasets.HeldOut}[*linesSplit]
	if split == nil {
		t.Skip("run with -lines validation or -lines heldout")
	}
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	if *onlyInt != "" {
		keep := map[string]bool{}
		for _, f := range strings.Split(*onlyInt, ",") {
			keep[f] = true
		}
		for i, l := range n.intLayers() {
			if !keep[fmt.Sprint(i)] {
				saved := l.c.InRange
				l.c.InRange = nil
				defer func() { l.c.InRange = saved }()
			}
		}
	}
	var total, differ int
	var gaps []float64
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		imgs, lines := photoLines(t, set, split, 40)
		for i, img := range imgs {
			for _, q := range lines[i] {
				w := Width((dist(q[0], q[1])+dist(q[3], q[2]))/2, (dist(q[0], q[3])+dist(q[1], q[2]))/2)
				x := prepare(img, q, w)
				got, want := readBoth(t, n, x)
				nn.Free(x)
				total++
				if got.Text != want.Text {
					differ++
					continue
				}
				gaps = append(gaps, confGap(got, want))
			}
		}
	}
	slices.Sort(gaps)
	if len(gaps) == 0 {
		t.Fatal("no lines")
	}
	t.Logf("%d lines: %d read differently; of the others, probability change median %.4f, p99 %.4f, largest %.4f",
		total, differ, gaps[len(gaps)/2], gaps[len(gaps)*99/100], gaps[len(gaps)-1])
}

// photoLines returns up to n photos of set whose file names pass keep, each
// with the lines a reader is given there: its labelled plates and the text
// detector's regions at the plate finder's side (960) of a line's shape,
// as axis-aligned boxes (the plate finder reads boxes).
func photoLines(tb testing.TB, set string, keep func(string) bool, n int) (imgs []image.Image, lines [][]Quad) {
	tb.Helper()
	box := func(x0, y0, x1, y1 float64) Quad { return Quad{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}} }
	for _, l := range datasets.Labels(tb, set, keep, n) {
		img, _, err := image.Decode(bytes.NewReader(datasets.ReadFile(tb, set, l.File)))
		if err != nil {
			tb.Fatalf("%s: %v", l.File, err)
		}
		var qs []Quad
		for _, p := range l.Plates {
			qs = append(qs, box(p.X, p.Y, p.X+p.W, p.Y+p.H))
		}
		m, err := textdet.Probabilities(context.Background(), img, 960)
		if err != nil {
			tb.Fatal(err)
		}
		for _, r := range m.Regions() {
			lo, hi := r.Quad.Extent()
			if w, h := hi.X-lo.X, hi.Y-lo.Y; h >= 6 && w >= 1.5*h && len(qs) < 12 {
				qs = append(qs, box(lo.X, lo.Y, hi.X, hi.Y))
			}
		}
		imgs, lines = append(imgs, img), append(lines, qs)
	}
	return imgs, lines
}
