package paint

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"slices"

	"carphoto/imageops/codec"
	"carphoto/imageops/jpegblock"
	"carphoto/imageops/plates"
)

// BlockJPEG is a baseline JPEG opened for editing in its own blocks
// (package jpegblock): the plate finder reads a preview built from its
// coefficients and full-resolution pixels only around its proposals, and
// hiding a plate decodes and codes again only the MCUs whose pixels change.
// Everywhere else the answer decodes to the input's pixels exactly. It is
// a plates.Source; coordinates are in displayed orientation.
type BlockJPEG struct {
	f *jpegblock.File
}

// ICCBytes is the size of the profile segments an answer copies from the
// file (jpegblock.File.ICCBytes).
func (b *BlockJPEG) ICCBytes() int { return b.f.ICCBytes() }

// OpenBlockJPEG checks data as Decode does (format, structure, pixel cap,
// as *carphoto.Error) and reads its entropy-coded data once. A JPEG it
// does not edit (progressive, arithmetic, CMYK, not JPEG at all) is
// jpegblock.ErrUnsupported: decode it in full instead.
func OpenBlockJPEG(ctx context.Context, data []byte, lim codec.Limits) (*BlockJPEG, error) {
	format, orientation, err := codec.Inspect(data, lim)
	if err != nil {
		return nil, err
	}
	if format != "jpeg" {
		return nil, fmt.Errorf("%w: a %s file", jpegblock.ErrUnsupported, format)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := jpegblock.Parse(data, orientation, plates.PreviewSide())
	if err != nil {
		return nil, err
	}
	return &BlockJPEG{f: f}, ctx.Err()
}

// Bounds is the photo in displayed orientation.
func (b *BlockJPEG) Bounds() image.Rectangle { return b.f.Bounds() }

// Preview is the photo reduced from its coefficients, and its scale.
func (b *BlockJPEG) Preview() (image.Image, float64) {
	return b.f.Preview(), 1 / float64(b.f.Factor())
}

// Region decodes the MCUs under r, reduced by up to most. Every MCU
// decoded without error when the file was opened, so decoding one again
// cannot fail; should it, the region reads as mid-grey, which the plate
// finder takes as nothing.
func (b *BlockJPEG) Region(r image.Rectangle, most int) (image.Image, int) {
	img, g, err := b.f.RegionAt(r, most)
	if err != nil {
		grey := image.NewRGBA(image.Rect(r.Min.X/g, r.Min.Y/g, r.Max.X/g+1, r.Max.Y/g+1))
		for i := range grey.Pix {
			grey.Pix[i] = 128
		}
		return grey, g
	}
	return img, g
}

// HidePlates is HidePlates on the photo's blocks: the encoded answer.
func (b *BlockJPEG) HidePlates(ctx context.Context, quads []plates.Quad, style Style) ([]byte, error) {
	return b.render(ctx, quads, func(crop image.Image, qs []plates.Quad, _ []int) (*image.RGBA, error) {
		return HidePlates(ctx, crop, qs, style)
	})
}

// PlaceLogo is PlaceLogo on the photo's blocks: the encoded answer.
func (b *BlockJPEG) PlaceLogo(ctx context.Context, quads, unsure []plates.Quad, logo image.Image) ([]byte, error) {
	all := append(slices.Clip(quads), unsure...)
	return b.render(ctx, all, func(crop image.Image, qs []plates.Quad, which []int) (*image.RGBA, error) {
		sure, doubtful := splitAt(qs, which, len(quads))
		return PlaceLogo(ctx, crop, sure, doubtful, logo)
	})
}

// EditShare is the share of the photo's area that hiding or replacing the
// quads decodes and may code again: the crops render works on. Past a
// few tenths the full path is faster (its cost does not grow with the
// plates), docs/research/measurements.md.
func (b *BlockJPEG) EditShare(quads []plates.Quad) float64 {
	area := 0
	for _, g := range plateGroups(quads, b.Bounds()) {
		area += g.r.Dx() * g.r.Dy()
	}
	r := b.Bounds()
	return float64(area) / float64(r.Dx()*r.Dy())
}

// render paints quads on crops of the photo, one crop for each group of
// plates whose reach overlaps (paint gets the group's quads and their
// indices in quads), and writes the JPEG with the changed MCUs coded
// again. With no quads the pixels are the input's, all of them.
func (b *BlockJPEG) render(ctx context.Context, quads []plates.Quad, paint func(crop image.Image, qs []plates.Quad, which []int) (*image.RGBA, error)) ([]byte, error) {
	var patches []jpegblock.Patch
	for _, g := range plateGroups(quads, b.Bounds()) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before, err := b.f.Region(g.r)
		if err != nil {
			return nil, err
		}
		after, err := paint(before, g.of(quads), g.quads)
		if err != nil {
			return nil, err
		}
		after.Rect = before.Rect // painted from (0,0), same layout
		patches = append(patches, jpegblock.Patch{Before: before, After: after, Changed: g.writes})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := b.f.Write(&buf, patches); err != nil {
		return nil, fmt.Errorf("write jpeg: %w", err)
	}
	return buf.Bytes(), nil
}
