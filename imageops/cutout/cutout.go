// Package cutout separates the car from the rest of a photo: an alpha matte (Matte)
// and the car on a transparent background with its edge colours cleaned (Cut).
//
// U²-Net-p, a salient-object network (Qin et al. 2020), fine-tuned on car photos
// (train/cutout/u2finetune.py, converted by u2netp.py, embedded in u2netp.bin, run in
// Go by u2net.go), finds the car on a copy of the photo of about 320×240 pixels. Its matte is made a car's: thin
// attachments are cut off by an opening, blobs much smaller than the largest dropped,
// holes inside the car filled. On a copy of about 768 pixels, a guided filter is
// fitted to it and the car's and the background's colours are filled in from beyond
// a band around its outline. Only in that band, at full resolution, is alpha
// refined: from the guided filter (and, where it is trusted, from where each pixel's
// colour lies between the car's and the background's). Colours there are
// decontaminated by removing the background's share of each edge pixel.
package cutout

import (
	"context"
	"image"
	"math"
)

// Working sizes and refinement settings, tuned on the cars-seg images that are not
// held out (see docs/research/cutout.md).
const (
	midLong = 768  // long side of the grid the guided filter is fitted on
	bandLo  = 0.02 // the coarse matte's values strictly between bandLo and
	bandHi  = 0.98 // bandHi (after upsampling) form the refined band
)

// Settings are the cut-out's tuned settings: the network's input size, the
// clean-up of its answer and the refinement. Matte and Cut run
// DefaultSettings(); train/cutout/tune sweeps others (NetworkPass).
type Settings struct {
	// NetW×NetH is the network's input area (4:3, landscape; see
	// docs/research/cutout.md), in the photo's proportions unless NetExact.
	NetW, NetH int
	NetExact   bool
	// OpenRadius is the radius, in U²-Net-p output pixels, of the opening
	// that cuts thin attachments (a pole, a kerb line, a strip of road) off
	// the car before its blobs are counted; KeepBlobs keeps blobs of the
	// opened mask at least this fraction of the largest (other cars in the
	// photo), or from oneCarKeep up the main blob alone: the one car.
	OpenRadius int
	KeepBlobs  float64
	// The refinement: the guided filter's radius, in network output pixels;
	// how far from the outline, in network pixels, the refined band
	// reaches; the weight of the colour projection's alpha where it is
	// reliable.
	GuidedRadius float64
	BandGrow     float64
	Project      float32
	// Mirror runs the network on the photo and on its mirror image and
	// averages the two maps (the second mirrored back): twice the
	// network's time.
	Mirror bool
}

// DefaultSettings are the settings chosen on the cars-seg photos that are
// not held out, but for KeepBlobs: the cut-out is the one car,
// though cars-seg labels every car in a photo, so on its few photos of
// several cars the one car scores lower (docs/research/cutout.md).
func DefaultSettings() Settings {
	return Settings{NetW: 320, NetH: 240, OpenRadius: 2, KeepBlobs: oneCarKeep, GuidedRadius: 1.5, BandGrow: 2.5, Project: 0.5}
}

// Matte returns the car's alpha matte (255 = car) for img as displayed, with img's bounds.
func Matte(ctx context.Context, img image.Image) (*image.Alpha, error) {
	b := img.Bounds()
	m := image.NewAlpha(image.Rect(0, 0, b.Dx(), b.Dy()))
	if err := matte(ctx, newRows(img), m, DefaultSettings()); err != nil {
		return nil, err
	}
	m.Rect = m.Rect.Add(b.Min)
	return m, nil
}

// Cut returns the car on a transparent background: img's pixels with alpha set to the
// matte and the colours of partly transparent edge pixels decontaminated, so no halo
// of the old background shows on another backdrop; fully transparent pixels are
// zero. Same size as img, bounds at (0,0).
//
// The photo is read a row at a time: the network runs on its shrunk copy, and only
// then is the answer allocated and filled, so no full-size copy of the photo is ever
// held beside the network's working memory.
func Cut(ctx context.Context, img image.Image) (*image.NRGBA, error) {
	b := img.Bounds()
	src := newRows(img)
	s := DefaultSettings()
	c, err := coarse(ctx, src, s)
	if err != nil {
		return nil, err
	}
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if b.Empty() {
		return out, ctx.Err()
	}
	if err := refine(ctx, src, c, s.params(), out); err != nil {
		return nil, err
	}
	return out, ctx.Err()
}

// params are the refinement's settings.
type params struct {
	gfRadius float64 // guided filter radius, in network output pixels
	gfEps    float32 // guided filter regulariser (colours in 0..1)
	sharpen  float32 // contrast applied to the guided filter's alpha around 0.5
	project  float32 // weight of the colour projection's alpha where it is reliable
	bandGrow float64 // the refined band reaches this many network pixels from the outline
}

// params are s's refinement settings; the guided filter's regulariser and
// sharpening are fixed.
func (s Settings) params() params {
	return params{gfRadius: s.GuidedRadius, gfEps: 1e-3, sharpen: 3, project: s.Project, bandGrow: s.BandGrow}
}

// coarseMatte is the network's cleaned car probability on a small grid, with the
// photo shrunk to the refinement grid.
type coarseMatte struct {
	mid    *plane    // the photo on the refinement grid (colours 0..1)
	prob   []float32 // car probability, lw×lh, cleaned
	raw    []float32 // the network's probability before cleaning
	lw, lh int
}

// matte writes the full-resolution alpha of the photo src reads to dst.
func matte(ctx context.Context, src *rows, dst *image.Alpha, s Settings) error {
	if src.b.Empty() {
		return ctx.Err()
	}
	c, err := coarse(ctx, src, s)
	if err != nil {
		return err
	}
	return refine(ctx, src, c, s.params(), dst)
}

// coarse runs U²-Net-p on a shrunk copy of the photo and keeps the car in its output.
func coarse(ctx context.Context, src *rows, s Settings) (*coarseMatte, error) {
	W, H := src.b.Dx(), src.b.Dy()
	if W == 0 || H == 0 {
		return &coarseMatte{}, ctx.Err()
	}
	// The refinement grid: at most midLong on the long side.
	mw, mh := fitLong(W, H, midLong)
	mid := shrink(src, mw, mh)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := u2Prob(ctx, mid, s)
	if err != nil {
		return nil, err
	}
	raw := append([]float32(nil), p.d...)
	cleanCar(p.d, p.w, p.h, s.KeepBlobs, s.OpenRadius)
	return &coarseMatte{mid: mid, prob: p.d, raw: raw, lw: p.w, lh: p.h}, nil
}

// fitLong returns w×h scaled so the long side is at most long (never enlarged).
func fitLong(w, h, long int) (int, int) {
	if max(w, h) <= long {
		return w, h
	}
	if w >= h {
		return long, max(1, int(math.Round(float64(h)*float64(long)/float64(w))))
	}
	return max(1, int(math.Round(float64(w)*float64(long)/float64(h)))), long
}

// fill sets every value of d to v.
func fill(d []float32, v float32) {
	for i := range d {
		d[i] = v
	}
}
