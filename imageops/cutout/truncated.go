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
	b := car.Bounds()
	w, h := b.Dx(), b.Dy()
	if w == 0 || h == 0 {
		return nil
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
	var sides []string
	for _, side := range []struct {
		name string
		n    int
		at   func(i, d int) (int, int)
	}{
		{SideLeft, h, func(i, d int) (int, int) { return d, i }},
		{SideTop, w, func(i, d int) (int, int) { return i, d }},
		{SideRight, h, func(i, d int) (int, int) { return w - 1 - d, i }},
		{SideBottom, w, func(i, d int) (int, int) { return i, h - 1 - d }},
	} {
		if float64(reached(side.n, side.at)) >= r.MinRun*float64(side.n) {
			sides = append(sides, side.name)
		}
	}
	return sides
}
