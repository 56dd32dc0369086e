package datasets

import (
	"encoding/json"
	"hash/fnv"
	"image"
	"math"
	"os"
	"path"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"
)

// HeldOut reports whether a labelled photo (by file name) belongs to the
// fixed held-out split that training and tuning never touch: fnv32a of the
// base name mod 5 is 0. Every set uses it: the plate sets, cars-seg and
// the extra sets.
// The photos that ship in docs/samples (Shipped) are in neither.
func HeldOut(name string) bool { return !shipped(name) && splitHash(name)%5 == 0 }

// Validation reports whether a photo belongs to the tuning split inside the
// non-held-out photos (mod 5 is 1), on which thresholds and margins were set.
func Validation(name string) bool { return !shipped(name) && splitHash(name)%5 == 1 }

// Training reports whether a photo belongs to the rest, which the networks
// learn from (train/plates/train.py's split).
func Training(name string) bool { return splitHash(name)%5 > 1 }

// A Sample is a photo of a set that ships in the repository: Sample is
// its path in the repository, Set and File its place in the built set, and
// Source the file of the set's origin it was made from (build.py's
// source_file, for the extra sets).
type Sample struct {
	Sample, Set, File, Source string
}

// Shipped are the sets' photos that ship in docs/samples. Anyone can see
// them, and the docs show what the service makes of them, so they measure
// nothing: they are in no held-out or validation split (HeldOut and
// Validation say no). Both fell in the training split by their names'
// hash (3 and 4), where Training keeps them: the networks may have learnt
// from them before they shipped. CheckShipped tests, where a set is read,
// that its File is still the photo made from Source.
var Shipped = []Sample{
	{"docs/samples/car.jpg", "plates-web-cc0", "images/plates-web-cc0-0296.jpg", "images/Cars365.png"},
	{"docs/samples/listing.jpg", "plates-openimages", "images/plates-openimages-1500.jpg",
		"LP_Detection/valid/3d98e3713783e82d_jpg.rf.2f2a5c1193888c192881d10c41a64633.jpg"},
}

// shipped reports whether name (a set's file, by its base name) is one of
// Shipped.
func shipped(name string) bool {
	for _, s := range Shipped {
		if path.Base(s.File) == path.Base(name) {
			return true
		}
	}
	return false
}

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

// CheckShipped fails tb when the set name, read from dir, holds a sample
// of Shipped under another file name than Shipped says, or another photo
// under its name (a set built otherwise, or its exclude list changed): the
// sample would then be back in a held-out or validation split, and
// Shipped needs its new name.
func CheckShipped(tb testing.TB, name, dir string) {
	tb.Helper()
	var want []Sample
	for _, s := range Shipped {
		if s.Set == name {
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var labels []struct {
		File   string `json:"file"`
		Source string `json:"source_file"`
	}
	if err := json.Unmarshal(data, &labels); err != nil {
		tb.Fatalf("%s: labels.json: %v", name, err)
	}
	for _, s := range want {
		for _, l := range labels {
			if l.Source == s.Source && l.File != s.File {
				tb.Fatalf("%s: the photo shipped as %s (source %s) is %s in the set at %s, not %s: give datasets.Shipped its name there", name, s.Sample, s.Source, l.File, dir, s.File)
			}
			if l.File == s.File && l.Source != s.Source {
				tb.Fatalf("%s: %s in the set at %s is made from %s, not from %s, the photo shipped as %s: give datasets.Shipped the shipped photo's name there", name, s.File, dir, l.Source, s.Source, s.Sample)
			}
		}
	}
}
