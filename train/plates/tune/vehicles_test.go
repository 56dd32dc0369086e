//go:build platestune

package tune

import (
	"fmt"
	"image"
	"os"
	"slices"
	"strconv"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/imageops/vehicles"
	"carphoto/internal/testenv/datasets"
	"carphoto/train/plates/labelled"
)

// TestFitVehicleShare measures, on the labelled plates of a split, how
// plates sit on the vehicles the detector finds (imageops/plates'
// vehicle rules): the share of plates with a vehicle under their centre,
// of photos with no vehicle at all (close-ups), the plate width ÷ vehicle
// width (largest, and its top percentiles) and where the plate's centre
// lies in its vehicle's box (percentiles of x and y as shares of the box).
// maxVehicleShare and plateSpot are fitted on VEHICLES_SPLIT=train (the
// default) and checked on val. VEHICLES_MAX=N reads at most N photos a set.
//
//	PLATES_EXTRA=~/carphoto-data go test -tags platestune -run TestFitVehicleShare -v ./train/plates/tune/
func TestFitVehicleShare(t *testing.T) {
	sets := append([]string{"plates-web-cc0", "plates-dashcam-ro"}, labelled.ExtraSets...)
	if os.Getenv("PLATES_EXTRA") == "" {
		sets = sets[:2]
	}
	keep := datasets.Training
	if os.Getenv("VEHICLES_SPLIT") == "val" {
		keep = datasets.Validation
	}
	most := 1 << 30
	if s := os.Getenv("VEHICLES_MAX"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		most = n
	}
	for _, set := range sets {
		var shares, xs, ys []float64
		var total, under, noneInView, wide, photos, bare int
		n := 0
		labelled.Stream(t, labelled.Dir(set), keep, func(file string, img image.Image, boxes []plates.Box) {
			if n >= most {
				return
			}
			n++
			vs, err := vehicles.Detect(t.Context(), img)
			if err != nil {
				t.Fatal(err)
			}
			photos++
			if !slices.ContainsFunc(vs, func(o vehicles.Object) bool { return plates.IsVehicle(o.Class) }) {
				bare++
			}
			for _, b := range boxes {
				total++
				cx, cy := b.X+b.W/2, b.Y+b.H/2
				r, ok := plates.VehicleUnder(cx, cy, 0, vs)
				if !ok {
					if !slices.ContainsFunc(vs, func(o vehicles.Object) bool { return plates.IsVehicle(o.Class) }) {
						noneInView++
					}
					continue
				}
				under++
				s := b.W / float64(r.Dx())
				shares = append(shares, s)
				if _, fits := plates.VehicleUnder(cx, cy, b.W, vs); !fits {
					wide++
				}
				xs = append(xs, (cx-float64(r.Min.X))/float64(r.Dx()))
				ys = append(ys, (cy-float64(r.Min.Y))/float64(r.Dy()))
			}
		})
		slices.Sort(shares)
		slices.Sort(xs)
		slices.Sort(ys)
		pc := func(v []float64, q float64) float64 {
			if len(v) == 0 {
				return 0
			}
			return v[min(len(v)-1, int(q*float64(len(v))))]
		}
		t.Logf("%s: %d photos (%d with no vehicle), %d plates: %d under a vehicle, %d on none with none in view, %d wider than maxVehicleShare of theirs", set, photos, bare, total, under, noneInView, wide)
		t.Logf("  share p50 %.3f p98 %.3f p99 %.3f max %.3f; top %s", pc(shares, 0.5), pc(shares, 0.98), pc(shares, 0.99), pc(shares, 1), top(shares, 5))
		t.Logf("  x p2 %.2f p98 %.2f (min %.2f max %.2f); y p2 %.2f p98 %.2f (min %.2f max %.2f)", pc(xs, 0.02), pc(xs, 0.98), pc(xs, 0), pc(xs, 1), pc(ys, 0.02), pc(ys, 0.98), pc(ys, 0), pc(ys, 1))
	}
}

// top is the last n values of sorted v, formatted.
func top(v []float64, n int) string {
	s := ""
	for _, x := range v[max(0, len(v)-n):] {
		s += fmt.Sprintf(" %.3f", x)
	}
	return s
}
