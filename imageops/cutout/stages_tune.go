//go:build cutouttune

package cutout

import "image"

// The measures train/cutout/tune reads beside the product's, for its
// sweeps of the car-not-found and truncation rules.

// LargestBlob is the share of car's pixels that the largest 4-connected
// region of confident car (alpha at least 128) covers: beside CarShare, a
// measure the car-not-found rule was chosen against.
func LargestBlob(car *image.NRGBA) float64 {
	b := car.Bounds()
	w, h := b.Dx(), b.Dy()
	if w == 0 || h == 0 {
		return 0
	}
	_, sizes := components(w, h, func(i int) bool { return car.Pix[(i/w)*car.Stride+4*(i%w)+3] >= 128 })
	big := 0
	for _, n := range sizes {
		big = max(big, n)
	}
	return float64(big) / float64(w*h)
}

// Car is the network's car probability after the clean-up (one car kept),
// on its w×h grid: for sweeps of rules read from it (train/cutout/tune).
func (c *Coarse) Car() (prob []float32, w, h int) { return c.c.prob, c.c.lw, c.c.lh }
