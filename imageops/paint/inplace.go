package paint

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"slices"

	"carphoto"
	"carphoto/imageops/plates"
)

// group is plates painted on one crop: those whose reach overlaps.
type group struct {
	r      image.Rectangle // what painting them reads or writes, within the photo
	writes image.Rectangle // what painting them may change
	quads  []int           // indices in quads, in order
}

// of returns the group's quads, in their order in quads.
func (g group) of(quads []plates.Quad) []plates.Quad {
	qs := make([]plates.Quad, len(g.quads))
	for i, k := range g.quads {
		qs[i] = quads[k]
	}
	return qs
}

// plateGroups gathers quads into crops of a photo of the given bounds,
// merging those whose reach overlaps; a quad with nothing to paint in the
// photo is left out.
func plateGroups(quads []plates.Quad, bounds image.Rectangle) []group {
	var groups []group
	for i, q := range quads {
		r, w := plateReach(q)
		r, w = r.Intersect(bounds), w.Intersect(bounds)
		if r.Empty() || w.Empty() {
			continue
		}
		g := group{r: r, writes: w, quads: []int{i}}
		// Merge every group the new one overlaps, until none does.
		for merged := true; merged; {
			merged = false
			for i := 0; i < len(groups); i++ {
				if groups[i].r.Overlaps(g.r) {
					g.r = g.r.Union(groups[i].r)
					g.writes = g.writes.Union(groups[i].writes)
					g.quads = append(groups[i].quads, g.quads...)
					groups = append(groups[:i], groups[i+1:]...)
					merged = true
					break
				}
			}
		}
		slices.Sort(g.quads)
		groups = append(groups, g)
	}
	return groups
}

// HidePlatesInPlace is HidePlates on a photo the caller owns and no longer
// needs as it was, with no copy of the whole frame: an *image.YCbCr (a
// decoded JPEG) is painted one crop around each group of plates at a
// time, written back where the painting changed pixels, so what the
// plates do not touch is neither copied nor converted (a 12 MP photo's
// RGBA copy alone took about 50 ms); an *image.RGBA or *image.NRGBA is
// painted where it is (paintable); anything else is copied as HidePlates
// does. It returns the painted image.
func HidePlatesInPlace(ctx context.Context, img image.Image, quads []plates.Quad, style Style) (image.Image, error) {
	return paintInPlace(ctx, img, quads, func(dst *image.RGBA, qs []plates.Quad, _ []int) error {
		return hidePlatesOn(ctx, dst, qs, style)
	})
}

// PlaceLogoInPlace is PlaceLogo painted in place, as HidePlatesInPlace.
func PlaceLogoInPlace(ctx context.Context, img image.Image, quads, unsure []plates.Quad, logo image.Image) (image.Image, error) {
	if logo == nil || logo.Bounds().Empty() {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "logo is an empty image")
	}
	all := append(slices.Clip(quads), unsure...)
	return paintInPlace(ctx, img, all, func(dst *image.RGBA, qs []plates.Quad, which []int) error {
		sure, doubtful := splitAt(qs, which, len(quads))
		return placeLogoOn(ctx, dst, sure, doubtful, logo)
	})
}

// splitAt parts qs, the quads of indices which in a list, into those of
// index below n and the others.
func splitAt(qs []plates.Quad, which []int, n int) (below, rest []plates.Quad) {
	for i, q := range qs {
		if which[i] < n {
			below = append(below, q)
		} else {
			rest = append(rest, q)
		}
	}
	return below, rest
}

// paintInPlace runs paint (a renderer of plates on an RGBA image from
// (0,0), quads in its coordinates, which their indices in quads) on img as
// HidePlatesInPlace describes.
func paintInPlace(ctx context.Context, img image.Image, quads []plates.Quad, paint func(dst *image.RGBA, qs []plates.Quad, which []int) error) (image.Image, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, ok := img.(*image.YCbCr)
	if !ok {
		dst := paintable(img)
		which := make([]int, len(quads))
		for i := range which {
			which[i] = i
		}
		if err := paint(dst, translateQuads(quads, img.Bounds().Min), which); err != nil {
			return nil, err
		}
		return dst, nil
	}
	for _, g := range plateGroups(quads, m.Rect) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before := image.NewRGBA(g.r)
		draw.Draw(before, g.r, m, g.r.Min, draw.Src)
		after := image.NewRGBA(image.Rect(0, 0, g.r.Dx(), g.r.Dy()))
		copy(after.Pix, before.Pix)
		if err := paint(after, translateQuads(g.of(quads), g.r.Min), g.quads); err != nil {
			return nil, err
		}
		after.Rect = before.Rect // same layout, back in the photo's coordinates
		writeYCbCr(m, before, after, g.writes)
	}
	return m, nil
}

// writeYCbCr writes into m the pixels of after that differ from before
// within r: their luma, and the chroma of every chroma sample one of them
// falls in, as the mean of its pixels' chroma in after (before and after
// cover r's chroma samples: a crop holds a plate's reach, wider than its
// writes). Pixels and chroma samples the painting did not change keep
// their values exactly.
func writeYCbCr(m *image.YCbCr, before, after *image.RGBA, r image.Rectangle) {
	r = r.Intersect(m.Rect).Intersect(after.Rect)
	if r.Empty() {
		return
	}
	// Chroma samples to compute again: the grid under r, cw × ch.
	cx0 := m.COffset(r.Min.X, r.Min.Y)
	cw := m.COffset(r.Max.X-1, r.Min.Y) - cx0 + 1
	ch := (m.COffset(r.Min.X, r.Max.Y-1)-cx0)/m.CStride + 1
	dirty := make([]bool, cw*ch)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			a, b := after.PixOffset(x, y), before.PixOffset(x, y)
			pa, pb := after.Pix[a:a+3:a+3], before.Pix[b:b+3:b+3]
			if pa[0] == pb[0] && pa[1] == pb[1] && pa[2] == pb[2] {
				continue
			}
			yy, _, _ := color.RGBToYCbCr(pa[0], pa[1], pa[2])
			m.Y[m.YOffset(x, y)] = yy
			c := m.COffset(x, y) - cx0
			dirty[c/m.CStride*cw+c%m.CStride] = true
		}
	}
	// Each dirty chroma sample: the mean of the pixels it spans.
	sx, sy := chromaSpan(m.SubsampleRatio)
	for i, d := range dirty {
		if !d {
			continue
		}
		// The sample's first pixel: the chroma grid starts at the frame's
		// origin rounded down to a sample.
		c := cx0 + i/cw*m.CStride + i%cw
		px := (m.Rect.Min.X/sx)*sx + (c%m.CStride)*sx
		py := (m.Rect.Min.Y/sy)*sy + (c/m.CStride)*sy
		var cb, cr, n int
		for y := max(py, m.Rect.Min.Y); y < min(py+sy, m.Rect.Max.Y); y++ {
			for x := max(px, m.Rect.Min.X); x < min(px+sx, m.Rect.Max.X); x++ {
				o := after.PixOffset(x, y)
				p := after.Pix[o : o+3 : o+3]
				_, b, r := color.RGBToYCbCr(p[0], p[1], p[2])
				cb += int(b)
				cr += int(r)
				n++
			}
		}
		if n > 0 {
			m.Cb[c], m.Cr[c] = uint8((cb+n/2)/n), uint8((cr+n/2)/n)
		}
	}
}

// chromaSpan is how many pixels a chroma sample spans across and down.
func chromaSpan(r image.YCbCrSubsampleRatio) (int, int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}
