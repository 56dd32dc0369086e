package cutout

import (
	"context"
	"image"
)

// Coarse is the network's answer for a photo before its clean-up: kept so
// that a sweep of the clean-up and refinement settings (train/cutout/tune)
// runs the network once per photo.
type Coarse struct {
	src *rows
	c   *coarseMatte
}

// NetworkPass runs the network on img at s's input size.
func NetworkPass(ctx context.Context, img image.Image, s Settings) (*Coarse, error) {
	src := newRows(img)
	c, err := coarse(ctx, src, s)
	if err != nil {
		return nil, err
	}
	return &Coarse{src: src, c: c}, nil
}

// Matte is the photo's alpha matte from the network's answer, cleaned up and
// refined with s's clean-up and refinement settings (its input size is
// the pass's), with img's bounds.
func (c *Coarse) Matte(ctx context.Context, s Settings) (*image.Alpha, error) {
	m := *c.c
	m.prob = append([]float32(nil), m.raw...)
	cleanCar(m.prob, m.lw, m.lh, s.KeepBlobs, s.OpenRadius)
	dst := image.NewAlpha(c.src.b)
	if err := refine(ctx, c.src, &m, s.params(), dst); err != nil {
		return nil, err
	}
	return dst, nil
}

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
