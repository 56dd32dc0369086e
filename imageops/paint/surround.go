package paint

import (
	"image"
	"math"

	"carphoto/imageops/plates"
)

// surroundMirror is what covers the margin of a replaced plate: the
// hidden shape reaches past the plate's quad (plates.HideMargin, to hide
// the old plate's edge), and that strip is painted with the photo around
// the shape reflected into it. A pixel of the strip takes the colour found
// as far outside the shape's nearest edge as it lies inside (near a
// corner, a mix of both edges' reflections), so a grille's bars or a
// bumper's curve carry on up to the new plate with their texture and meet
// the untouched photo at the shape's outline without a seam. It reads a
// copy of the photo taken before painting.
type surroundMirror struct {
	snap  *image.RGBA // the photo around the shape, as it was
	local *image.RGBA // the same pixels, bounds from (0,0), for sampleBilinear
	s     *plateShape
}

// newSurroundMirror copies the photo around s that the margin's
// reflections reach: the shape's bounds grown by the margin's depth, within
// plateReach's reads, so a crop holding those gives the same pixels as the
// whole photo.
func newSurroundMirror(dst *image.RGBA, s *plateShape) *surroundMirror {
	depth := plates.HideMargin*s.h + plates.MinHidePx + 2
	r := s.outer.Inset(-int(math.Ceil(depth))).Intersect(dst.Rect)
	snap := image.NewRGBA(r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(snap.Pix[snap.PixOffset(r.Min.X, y):snap.PixOffset(r.Max.X, y)], dst.Pix[dst.PixOffset(r.Min.X, y):dst.PixOffset(r.Max.X, y)])
	}
	local := &image.RGBA{Pix: snap.Pix, Stride: snap.Stride, Rect: image.Rect(0, 0, r.Dx(), r.Dy())}
	return &surroundMirror{snap: snap, local: local, s: s}
}

// at is the reflected colour at pixel (x, y), premultiplied. A reflection
// that falls beyond the photo's edge takes the nearest pixel inside.
func (m *surroundMirror) at(x, y int) [4]float64 {
	px, py := float64(x)+0.5, float64(y)+0.5
	o := &m.s.core
	// How deep inside each edge's line the point lies (0 outside it).
	var depth [4]float64
	nearest := math.Inf(1)
	for i, p := range o.pts {
		depth[i] = max(0, m.s.radius-((px-p.X)*o.nx[i]+(py-p.Y)*o.ny[i]))
		nearest = min(nearest, depth[i])
	}
	// Reflected across the nearest edge; near a corner, where two edges
	// are about as near, across both, mixed by nearness, so the two
	// reflections meet without a mitred seam.
	var c [4]float64
	var sum float64
	b := m.snap.Rect
	for i := range depth {
		w := math.Pow((nearest+1)/(depth[i]+1), 4)
		if w < 0.01 {
			continue
		}
		qx, qy := px+2*depth[i]*o.nx[i], py+2*depth[i]*o.ny[i]
		sx := min(float64(b.Dx()-1), max(0, qx-0.5-float64(b.Min.X)))
		sy := min(float64(b.Dy()-1), max(0, qy-0.5-float64(b.Min.Y)))
		r, g, bl, a := sampleBilinear(m.local, sx, sy)
		c[0], c[1], c[2], c[3] = c[0]+w*r, c[1]+w*g, c[2]+w*bl, c[3]+w*a
		sum += w
	}
	for k := range c {
		c[k] /= sum
	}
	return c
}
