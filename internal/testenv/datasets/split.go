package datasets

import (
	"hash/fnv"
	"image"
	"math"
	"path"

	"golang.org/x/image/draw"
)

// HeldOut reports whether a labelled photo (by file name) belongs to the
// fixed held-out split that training and tuning never touch: fnv32a of the
// base name mod 5 is 0. Every set uses it: the plate sets, cars-seg and
// the extra sets.
func HeldOut(name string) bool { return splitHash(name)%5 == 0 }

// Validation reports whether a photo belongs to the tuning split inside the
// non-held-out photos (mod 5 is 1), on which thresholds and margins were set.
func Validation(name string) bool { return splitHash(name)%5 == 1 }

// Training reports whether a photo belongs to the rest, which the networks
// learn from (train/plates/train.py's split).
func Training(name string) bool { return splitHash(name)%5 > 1 }

func splitHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(path.Base(name)))
	return h.Sum32()
}

// The plate sets hold copies: the web set the same photo under several
// names (205 pairs, identical to the pixel), the dash-cam set frames a
// moment apart. The split by file name puts many of them on both sides, so
// a held-out photo can be one the networks learnt from; the benchmark and
// the held-out tests tell such photos apart by a fingerprint of each
// photo's content.

// Fingerprint is a photo's grey levels on a 16×16 grid (Catmull-Rom, which
// averages over the pixels each cell spans), scaled to zero mean and unit
// spread, so a re-encoded or brightened copy gives the same one.
type Fingerprint [256]float64

// copyCorrelation is the correlation of two fingerprints from which the
// photos count as copies: 1 for the same photo, 0.97–0.999 for the dash-cam
// set's consecutive frames, below 0.9 for different cars.
const copyCorrelation = 0.97

// FingerprintOf returns img's fingerprint.
func FingerprintOf(img image.Image) *Fingerprint {
	small := image.NewRGBA(image.Rect(0, 0, 16, 16))
	draw.CatmullRom.Scale(small, small.Rect, img, img.Bounds(), draw.Src, nil)
	var f Fingerprint
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

// Copies reports whether a and b are fingerprints of copies.
func (a *Fingerprint) Copies(b *Fingerprint) bool {
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	return dot/float64(len(a)) >= copyCorrelation
}

// CopiedIn reports whether a is a copy of any of others.
func (a *Fingerprint) CopiedIn(others []*Fingerprint) bool {
	for _, o := range others {
		if a.Copies(o) {
			return true
		}
	}
	return false
}
