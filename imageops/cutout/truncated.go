package cutout

import (
	"image"
	"math"
)

// The photo's sides, as X-Car-Truncated names them.
const (
	SideLeft   = "left"
	SideTop    = "top"
	SideRight  = "right"
	SideBottom = "bottom"
)

// Truncation is the rule that tells a car cut off by the photo's edge: the
// car's matte (alpha >= Alpha) reaches the edge of a side, within Band
// network pixels of it (the refined matte stops a pixel or two short of
// the frame where the car runs out of it), along at least MinRun of the
// side's length.
type Truncation struct {
	Alpha  uint8
	Band   float64 // in pixels of the network's input (DefaultSettings' NetW × NetH)
	MinRun float64 // a share of the side's length
}

// DefaultTruncation is the shipped rule, chosen on cars-seg's training and
// validation photos (train/cutout/tune, TestMeasureTruncation): 10 of the
// 12 cars the labels show touching the frame flagged, 6 of the 147 others.
func DefaultTruncation() Truncation { return Truncation{Alpha: 128, Band: 2, MinRun: 0.02} }

// Truncated returns the sides of the photo that cut the car off, by the
// shipped rule (DefaultTruncation).
func Truncated(car *image.NRGBA) []string { return DefaultTruncation().Sides(car) }

// Sides returns the sides (left, top, right, bottom, in that order) along
// which r finds car's matte reaching the photo's edge. A car wholly in view
// touches none. car is a cut-out as Cut returns it.
func (r Truncation) Sides(car *image.NRGBA) []string {
	var sides []string
	for i, run := range r.Runs(car) {
		if run >= r.MinRun {
			sides = append(sides, sideNames[i])
		}
	}
	return sides
}

// sideNames are the sides in the order Runs measures them.
var sideNames = [4]string{SideLeft, SideTop, SideRight, SideBottom}

// Runs returns, for the left, top, right and bottom side in that order, the
// share of the side's length along which car's matte (alpha >= r.Alpha) is
// within r.Band network pixels of the photo's edge; all 0 for an empty image.
func (r Truncation) Runs(car *image.NRGBA) [4]float64 {
	var runs [4]float64
	b := car.Bounds()
	w, h := b.Dx(), b.Dy()
	if w == 0 || h == 0 {
		return runs
	}
	s := DefaultSettings()
	perNet := math.Max(float64(w)/float64(s.NetW), float64(h)/float64(s.NetH))
	band := max(1, int(math.Round(r.Band*perNet)))
	band = min(band, w, h)
	solid := func(x, y int) bool { return car.Pix[car.PixOffset(b.Min.X+x, b.Min.Y+y)+3] >= r.Alpha }
	// reached counts the places along a side of n pixels where the car
	// is within the band next to it; at(i, d) is the pixel d in from the
	// side at place i.
	reached := func(n int, at func(i, d int) (int, int)) int {
		k := 0
		for i := range n {
			for d := range band {
				if solid(at(i, d)) {
					k++
					break
				}
			}
		}
		return k
	}
	for i, side := range []struct {
		n  int
		at func(i, d int) (int, int)
	}{
		{h, func(i, d int) (int, int) { return d, i }},
		{w, func(i, d int) (int, int) { return i, d }},
		{h, func(i, d int) (int, int) { return w - 1 - d, i }},
		{w, func(i, d int) (int, int) { return i, h - 1 - d }},
	} {
		runs[i] = float64(reached(side.n, side.at)) / float64(side.n)
	}
	return runs
}
