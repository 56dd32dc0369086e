package imageops

import (
	"bytes"
	"context"
	"time"

	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
	"carphoto/imageops/plates"
)

// The command-line tools' door (`carphoto plates`, `carphoto cutout`): what
// the service finds and cuts out, on a photo file, without an answer
// around it.

// FoundPlate is one plate FindPlatesInPhoto found: its corners (Quad) and the
// region a hiding style covers (Hide: the quad grown by the margin rule),
// each clockwise from the top-left corner as {x, y} in pixels of the
// displayed photo, and the finder's confidence in [0, 1].
type FoundPlate struct {
	Quad, Hide [4][2]float64
	Score      float64
}

// PlatesFound is what FindPlatesInPhoto sees on one photo.
type PlatesFound struct {
	Width, Height int // the displayed (EXIF-oriented) photo's
	Plates        []FoundPlate
	Search        time.Duration // the finder's time, decoding excluded
}

// FindPlatesInPhoto decodes photo (EXIF orientation applied) and finds its plates,
// as blur-plates does on a photo it decodes in full.
func FindPlatesInPhoto(ctx context.Context, photo []byte, lim Limits) (*PlatesFound, error) {
	p, err := codec.Decode(ctx, photo, lim)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	found, err := plates.Detect(ctx, p.Image)
	took := time.Since(start)
	if err != nil {
		return nil, err
	}
	b := p.Image.Bounds()
	out := &PlatesFound{Width: b.Dx(), Height: b.Dy(), Plates: make([]FoundPlate, len(found)), Search: took}
	for i, f := range found {
		fp := &out.Plates[i]
		for k := range f.Quad {
			fp.Quad[k] = [2]float64{f.Quad[k].X, f.Quad[k].Y}
			fp.Hide[k] = [2]float64{f.Hide[k].X, f.Hide[k].Y}
		}
		fp.Score = f.Score
	}
	return out, nil
}

// CutOutPNG decodes photo (EXIF orientation applied) and cuts the car out:
// a PNG of the photo's displayed size, the car on a transparent background,
// with the photo's ICC profile.
func CutOutPNG(ctx context.Context, photo []byte, lim Limits) (png []byte, width, height int, err error) {
	p, err := codec.Decode(ctx, photo, lim)
	if err != nil {
		return nil, 0, 0, err
	}
	cut, err := cutout.Cut(ctx, p.Image)
	if err != nil {
		return nil, 0, 0, err
	}
	var buf bytes.Buffer
	if err := codec.EncodePNG(&buf, cut, p.ICC); err != nil {
		return nil, 0, 0, err
	}
	b := cut.Bounds()
	return buf.Bytes(), b.Dx(), b.Dy(), nil
}
