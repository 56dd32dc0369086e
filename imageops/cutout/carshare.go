package cutout

import "image"

// MinCarShare is the smallest share of the photo a cut-out's confident car
// (alpha >= 128) may cover for the photo to count as holding a car: below it,
// car-cutout and car-shadow answer car_not_found instead of an empty cut-out.
// Chosen by measurement (docs/research/cutout.md, "No car";
// train/cutout/tune/carshare_test.go): the smallest car among the 191 cars-seg photos
// covers 0.65% (a distant car), the web set's at least 6.7%; a blank
// cut-out (5 of 6 uniform colours, a gradient, fine noise, about 1 plate
// close-up in 15) covers exactly 0. Coverage does not tell a plate close-up,
// a black frame or coarse noise from a car: the network finds the plate, or
// floods the frame, over 13% to 99% of it.
const MinCarShare = 0.002

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
