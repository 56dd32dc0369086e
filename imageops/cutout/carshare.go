package cutout

import "image"

// MinCarShare is the smallest share of the photo a cut-out's confident car
// (alpha >= 128) may cover for the photo to count as holding a car a studio
// shot can be made of: below it, car-cutout and car-shadow answer
// car_not_found instead of an empty cut-out or a speck (a car under about
// 1% of the frame). Measured (docs/research/cutout.md, "No
// car" and "Scenery"; train/cutout/tune/carshare_test.go, scenery_test.go):
// the smallest car among the 191 cars-seg photos covers 0.65% (a distant
// car, refused), the web set's at least 2.1%; a blank cut-out (5 of 6
// uniform colours, a gradient, fine noise, about 1 plate close-up in 15,
// half the dash-cam set's night frames) covers exactly 0. Coverage does not
// tell a plate close-up, a black frame or coarse noise from a car: the
// network finds the plate, or floods the frame, over 13% to 99% of it.
const MinCarShare = 0.01

// CarShare is the share of car's pixels whose alpha is at least 128: the part
// of the photo the cut-out is confident is car. 0 for an empty image.
func CarShare(car *image.NRGBA) float64 {
	b := car.Bounds()
	if b.Empty() {
		return 0
	}
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := car.Pix[(y-b.Min.Y)*car.Stride:]
		for i := 3; i < 4*b.Dx(); i += 4 {
			if row[i] >= 128 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// SceneryRule tells a cut-out that is scenery rather than a car: its
// confident matte (as DefaultTruncation measures a side's run) reaches the
// photo's left or right side along at least FullSide of its height, and
// another side along at least OtherSide of its length. That is the ground,
// a road, the buildings or the sky taken from one edge of the photo to
// another, as on a street scene with no car near; a car, even close up and
// cut off by the frame, leaves part of the photo's side clear above or below
// it.
type SceneryRule struct {
	FullSide, OtherSide float64
}

// DefaultScenery is the shipped rule, chosen on the validation splits of
// cars-seg, plates-web-cc0 and the dash-cam set and on scenery cut from
// dash-cam frames (train/cutout/tune/scenery_test.go; docs/research/cutout.md,
// "Scenery").
func DefaultScenery() SceneryRule { return SceneryRule{FullSide: 0.9, OtherSide: 0.5} }

// Scenery reports whether car, a cut-out as Cut returns it, is scenery by
// the shipped rule (DefaultScenery).
func Scenery(car *image.NRGBA) bool { return DefaultScenery().Is(car) }

// Is reports whether car is scenery by r.
func (r SceneryRule) Is(car *image.NRGBA) bool {
	runs := DefaultTruncation().Runs(car) // left, top, right, bottom
	for _, side := range []int{0, 2} {
		if runs[side] < r.FullSide {
			continue
		}
		for other, run := range runs {
			if other != side && run >= r.OtherSide {
				return true
			}
		}
	}
	return false
}
