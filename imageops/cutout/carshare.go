package cutout

import "image"

// MinCarShare is the smallest share of the photo a cut-out's confident car
// (alpha >= 128) may cover for the photo to count as holding a car: below it,
// car-cutout and car-shadow answer car_not_found instead of an empty or
// fragmentary cut-out. Chosen by measurement (docs/research/cutout.md,
// "No car"): every cars-seg photo and the web-set car photos lie well above
// it, uniform colours, gradients, noise and plate close-ups below it.
const MinCarShare = 0.02

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
