//go:build cutouttune

package tune

// The measurement behind cutout.DefaultTruncation (X-Car-Truncated): rules
// swept on cars-seg's training and validation photos, the shipped one then
// scored on the held-out photos, which no choice here looked at. A photo
// counts as touching the frame when its labelled main car
// (datasets.MainCar) has a pixel in the outermost row or column.
//
//	go test -tags cutouttune -run TestMeasureTruncation -v ./train/cutout/tune/

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"carphoto/imageops/cutout"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

type truncSample struct {
	name  string
	car   *image.NRGBA
	touch bool
	// The network's cleaned car probability on its grid.
	prob   []float32
	pw, ph int
}

// coarseTouches is the rule on the network's grid: the cleaned car
// probability at least 0.5 within band grid pixels of a side along at
// least run of it.
func coarseTouches(s truncSample, band int, run float64) bool {
	at := func(x, y int) bool { return s.prob[y*s.pw+x] >= 0.5 }
	side := func(n int, f func(i, d int) (int, int)) bool {
		k := 0
		for i := range n {
			for d := range band {
				if at(f(i, d)) {
					k++
					break
				}
			}
		}
		return float64(k) >= run*float64(n)
	}
	return side(s.ph, func(i, d int) (int, int) { return d, i }) || side(s.pw, func(i, d int) (int, int) { return i, d }) ||
		side(s.ph, func(i, d int) (int, int) { return s.pw - 1 - d, i }) || side(s.pw, func(i, d int) (int, int) { return i, s.ph - 1 - d })
}

// scoreBy is score for any rule.
func scoreBy(flag func(truncSample) bool, set []truncSample) string {
	var tf, tn, ff, fn int
	for _, s := range set {
		if s.touch {
			tn++
			if flag(s) {
				tf++
			}
		} else {
			fn++
			if flag(s) {
				ff++
			}
		}
	}
	return fmt.Sprintf("touching the frame %d/%d flagged; not touching %d/%d flagged", tf, tn, ff, fn)
}

func TestMeasureTruncation(t *testing.T) {
	dir := datasets.Set(t, "cars-seg")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	var tune, held []truncSample
	for _, l := range labels {
		name := filepath.Base(l.File)
		img := imgtest.DecodeFile(t, filepath.Join(dir, l.File))
		car, err := cutout.Cut(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		pass, err := cutout.NetworkPass(context.Background(), img, cutout.DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		s := truncSample{name: name, car: car, touch: touchesFrame(datasets.MainCar(imgtest.DecodeFile(t, filepath.Join(dir, l.Mask))))}
		s.prob, s.pw, s.ph = pass.Car()
		if datasets.HeldOut(name) {
			held = append(held, s)
		} else {
			tune = append(tune, s)
		}
	}
	var lines []string
	for _, alpha := range []uint8{32, 64, 128} {
		for _, band := range []float64{0.67, 1.33, 2, 2.67, 3.33, 4} {
			for _, run := range []float64{0.005, 0.01, 0.02, 0.04} {
				r := cutout.Truncation{Alpha: alpha, Band: band, MinRun: run}
				lines = append(lines, fmt.Sprintf("alpha %3d band %.2f run %.3f: %s", alpha, band, run, score(r, tune)))
			}
		}
	}
	for _, band := range []int{1, 2, 3} {
		for _, run := range []float64{0.01, 0.02, 0.04, 0.08} {
			lines = append(lines, fmt.Sprintf("coarse band %d run %.3f: %s", band, run,
				scoreBy(func(s truncSample) bool { return coarseTouches(s, band, run) }, tune)))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log("training+validation, " + l)
	}
	r := cutout.DefaultTruncation()
	t.Logf("shipped rule %+v on training+validation: %s", r, score(r, tune))
	t.Logf("shipped rule %+v on held-out: %s", r, score(r, held))
	for _, s := range held {
		if got := r.Sides(s.car); (len(got) > 0) != s.touch {
			t.Logf("held-out %s: flagged %v, labelled car touches the frame: %v", s.name, got, s.touch)
		}
	}
}

// score is "touching the frame: flagged/total; not touching: flagged/total".
func score(r cutout.Truncation, set []truncSample) string {
	var tf, tn, ff, fn int
	for _, s := range set {
		flagged := len(r.Sides(s.car)) > 0
		if s.touch {
			tn++
			if flagged {
				tf++
			}
		} else {
			fn++
			if flagged {
				ff++
			}
		}
	}
	return fmt.Sprintf("touching the frame %d/%d flagged; not touching %d/%d flagged", tf, tn, ff, fn)
}

// touchesFrame reports whether mask (gray >= 128 = car) has a pixel in its
// outermost row or column.
func touchesFrame(mask *image.Gray) bool {
	b := mask.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			edge := x == b.Min.X || x == b.Max.X-1 || y == b.Min.Y || y == b.Max.Y-1
			if edge && mask.GrayAt(x, y).Y >= 128 {
				return true
			}
		}
	}
	return false
}
