package main

import (
	"image"
	"math"
)

// The plate sets hold copies: the web set the same photo under several
// names (205 pairs, identical to the pixel), the dash-cam set frames a
// moment apart. A split by file name puts many of them on both sides, so a
// held-out photo can be one the networks learnt from. bench plates scores
// the photos with no copy in the other splits apart, by a fingerprint of
// each photo's content.

// fingerprint is a photo's grey levels on a 16×16 grid (Catmull-Rom, which
// averages over the pixels each cell spans), scaled to zero mean and unit
// spread, so a re-encoded or brightened copy gives the same one.
type fingerprint [256]float64

// copyCorrelation is the correlation of two fingerprints from which the
// photos count as copies: 1 for the same photo, 0.97–0.999 for the dash-cam
// set's consecutive frames, below 0.9 for different cars.
const copyCorrelation = 0.97

func fingerprintOf(img image.Image) *fingerprint {
	small := resized(img, 16, 16)
	var f fingerprint
	var sum float64
	for i := range f {
		p := small.Pix[4*i : 4*i+3]
		f[i] = 0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])
		sum += f[i]
	}
	mean, ss := sum/float64(len(f)), 0.0
	for i := range f {
		f[i] -= mean
		ss += f[i] * f[i]
	}
	sd := math.Sqrt(ss/float64(len(f))) + 1e-6
	for i := range f {
		f[i] /= sd
	}
	return &f
}

// copies reports whether a and b are fingerprints of copies.
func (a *fingerprint) copies(b *fingerprint) bool {
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	return dot/float64(len(a)) >= copyCorrelation
}
