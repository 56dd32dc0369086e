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
