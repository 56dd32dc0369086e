package paint

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"

	"carphoto"
	"carphoto/imageops/plates"
)

// Style is how blur-plates hides a plate. A Style is read once, where the
// call arrives (ParseStyle) or from a task's bytes (UnmarshalText, the same
// check), and painted as it is from then on: the painters check it no
// more, and take the empty Style as blur.
type Style string

// The styles of blur-plates' style field.
const (
	StyleBlur     Style = "blur"
	StylePixelate Style = "pixelate"
	StyleWhite    Style = "white"
	StyleBlack    Style = "black"
)

// Styles are the hiding styles, the one list of them: ParseStyle, the
// studio operations' plates field and the API's enums follow it.
var Styles = []Style{StyleBlur, StylePixelate, StyleWhite, StyleBlack}

// ParseStyle maps the request field (empty means blur) to a Style; anything
// else is a *carphoto.Error with code carphoto.EInvalidParams.
func ParseStyle(s string) (Style, error) {
	if s == "" {
		return StyleBlur, nil
	}
	if st := Style(s); slices.Contains(Styles, st) {
		return st, nil
	}
	names := make([]string, len(Styles))
	for i, st := range Styles {
		names[i] = string(st)
	}
	return "", carphoto.Errorf(carphoto.EInvalidParams, "style must be one of %s", strings.Join(names, ", "))
}

// UnmarshalText reads st with ParseStyle, so that a Style read from JSON
// (a queued task's parameters) is one of Styles.
func (st *Style) UnmarshalText(text []byte) error {
	v, err := ParseStyle(string(text))
	if err != nil {
		return err
	}
	*st = v
	return nil
}

// How much of the photo around a plate is hidden with it, and how strongly.
// Sizes are fractions of the plate's own width w and height h (mean edge
// lengths of its quad), so they follow the plate at any size and, being
// applied in the plate's plane, follow its perspective.
const (
	// cornerRadius rounds the hidden shape's corners like a plate's (in
	// units of h). A plate's corner stays covered while the margin is at
	// least (1 − sin(θ/2)) of the radius at a corner of angle θ: 0.03·h at
	// a right angle, 0.05·h at 60°, against plates.HideMargin's 0.15·h.
	cornerRadius = 0.1
	// featherBase and featherPerH set the width in pixels of the soft edge
	// outside the covered shape: 1 px plus 3% of h (about 4 px on a plate
	// 100 px tall), enough to anti-alias and not to look smeared.
	featherBase = 1.0
	featherPerH = 0.03
	// blurSigma is the blur's Gaussian σ in units of h, at least
	// minBlurSigmaPx. Characters are about 0.7·h tall with strokes of about
	// 0.1·h: a σ of 0.3·h (three stroke widths) merges every character into
	// a smooth smudge whatever the plate's size in the photo. A Gaussian
	// keeps exp(−2π²σ²/p²) of a pattern of period p: for p = h/2, about a
	// character's width, that is 0.08%, a fifth of a grey level of black on
	// white, lost to 8-bit rounding, so no deconvolution brings it back.
	// (The three box passes that stand for the Gaussian let through at most
	// 1% in one narrow band of periods, too little to rebuild a shape.)
	blurSigma      = 0.3
	minBlurSigmaPx = 2.0
	// pixelCell is the side of a pixelate cell in units of the plate's
	// character scale min(h, w/3), at least minPixelCellPx. On a one-row
	// plate a character (about 0.5·h wide, 0.7·h tall) falls into one or two
	// cells, whose mean ink says nothing of its shape; 0.4·h cells kept half
	// again as much of what tells characters apart. The w/3 bound keeps the
	// same ratio for the smaller characters of square two-row plates, which
	// 0.6·h would turn into four big blocks.
	pixelCell      = 0.6
	minPixelCellPx = 3.0
)

// plateShape is the part of the photo that hiding or replacing one plate
// covers: the plate quad grown by the margin rule (plates.HideOf), with
// rounded corners and a feathered edge.
type plateShape struct {
	quad    polygon    // the plate, convex and clockwise
	toPhoto homography // unit square → quad, in photo pixels
	toPlate homography // photo pixels → unit square
	w, h    float64    // plate width and height in photo pixels

	core    outline // covered shape minus its corner radius
	radius  float64 // corner radius in pixels
	feather float64 // soft edge width in pixels
	outer   image.Rectangle
}

// newPlateShape returns the shape for q. A quad that is not convex (a
// confused detector) is replaced by its bounding rectangle, which covers
// it; ok is false for a quad with no area to hide.
func newPlateShape(q plates.Quad) (s plateShape, ok bool, err error) {
	for _, p := range q {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return s, false, fmt.Errorf("plate quad %v has a non-finite corner", q)
		}
		// Far beyond any photo the service accepts: nothing there to hide,
		// and pixel arithmetic would overflow.
		if math.Abs(p.X) > 1e7 || math.Abs(p.Y) > 1e7 {
			return s, false, nil
		}
	}
	poly, convex := convexClockwise(q)
	if !convex {
		lo, hi := q[0], q[0]
		for _, p := range q[1:] {
			lo = plates.Point{X: min(lo.X, p.X), Y: min(lo.Y, p.Y)}
			hi = plates.Point{X: max(hi.X, p.X), Y: max(hi.Y, p.Y)}
		}
		if poly, convex = convexClockwise(plates.Quad{lo, {X: hi.X, Y: lo.Y}, hi, {X: lo.X, Y: hi.Y}}); !convex {
			return s, false, nil
		}
	}
	s.quad = poly
	s.toPhoto = squareToQuad(plates.Quad(poly))
	s.toPlate = s.toPhoto.inverse()
	dist := func(a, b plates.Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }
	s.w = (dist(poly[0], poly[1]) + dist(poly[3], poly[2])) / 2
	s.h = (dist(poly[0], poly[3]) + dist(poly[1], poly[2])) / 2

	// The region hidden is the quad grown by the plate finder's margin
	// rule, one rule for every style.
	hide, convex := convexClockwise(plates.HideOf(plates.Quad(poly)))
	if !convex {
		hide = poly.offset(max(plates.HideMargin*s.h, plates.MinHidePx))
	}
	s.radius = cornerRadius * s.h
	s.feather = featherBase + featherPerH*s.h
	s.core = hide.offset(-s.radius).outline()
	s.outer = hide.offset(s.feather + 1).bounds()
	return s, true, nil
}

// coverage returns how much of the pixel whose centre is (x, y) the shape
// covers: 1 inside, falling linearly to 0 across the feather. Computed from
// the exact distance to the rounded outline, it anti-aliases the edge at
// any angle without supersampling.
func (s *plateShape) coverage(x, y float64) float64 {
	d := s.core.signedDistance(x, y) - s.radius
	return min(1, max(0, 1-d/s.feather))
}

// HidePlates returns a copy of img (same bounds, starting at 0,0) with every
// quad hidden in the given style. Quads are in img's coordinates. Each plate
// is covered together with the margin of the plate finder's rule
// (plates.HideOf), with rounded corners and a soft edge.
//
// The strength follows the plate's size so characters are illegible at any
// size: blur is a Gaussian of σ = 0.3 × plate height (at least 2 px);
// pixelate averages cells of 0.6 × min(plate height, plate width / 3) (at
// least 3 px) laid out in the plate's perspective; white and black are solid
// fills; the empty style is blur, as for ParseStyle. Only the pixels around
// the plates are read and written.
func HidePlates(ctx context.Context, img image.Image, quads []plates.Quad, style Style) (*image.RGBA, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := copyForRender(img)
	quads = translateQuads(quads, img.Bounds().Min)
	if err := hidePlatesOn(ctx, dst, quads, style); err != nil {
		return nil, err
	}
	return dst, nil
}

// hidePlatesOn is HidePlates drawing on dst itself (bounds at (0,0); see
// paintable), with no copy of the photo. A style not one of Styles is
// blurred, as the empty one: a plate is never left showing.
func hidePlatesOn(ctx context.Context, dst *image.RGBA, quads []plates.Quad, style Style) error {
	return renderPlates(ctx, dst, quads, func(dst *image.RGBA, s *plateShape) {
		switch style {
		case StylePixelate:
			hidePixelate(dst, s)
		case StyleWhite:
			fillShape(dst, s, [3]float64{255, 255, 255})
		case StyleBlack:
			fillShape(dst, s, [3]float64{0, 0, 0})
		default: // StyleBlur, the empty Style
			hideBlur(dst, s)
		}
	})
}

// renderPlates applies paint to dst (bounds at (0,0)) in the shape of every
// quad that reaches the photo; ctx is checked between plates.
func renderPlates(ctx context.Context, dst *image.RGBA, quads []plates.Quad, paint func(dst *image.RGBA, s *plateShape)) error {
	for _, q := range quads {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, ok, err := newPlateShape(q)
		if err != nil {
			return err
		}
		if !ok || s.outer.Intersect(dst.Rect).Empty() {
			continue
		}
		paint(dst, &s)
	}
	return nil
}

// translateQuads moves quads from img's coordinates to its copy's, which
// start at 0,0.
func translateQuads(quads []plates.Quad, min image.Point) []plates.Quad {
	out := make([]plates.Quad, len(quads))
	for i, q := range quads {
		out[i] = translateQuad(q, min)
	}
	return out
}

// paintable returns img as an *image.RGBA that hidePlatesOn and placeLogoOn
// may draw on, for a caller that hands img over: an *image.RGBA itself, an
// *image.NRGBA's own pixels premultiplied where they are (image/draw's
// arithmetic, so the same values a copy would hold), anything else (a JPEG's
// *image.YCbCr) copied. Bounds start at (0,0).
func paintable(img image.Image) *image.RGBA {
	switch m := img.(type) {
	case *image.RGBA:
		return &image.RGBA{Pix: m.Pix[m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y):], Stride: m.Stride, Rect: image.Rect(0, 0, m.Rect.Dx(), m.Rect.Dy())}
	case *image.NRGBA:
		w := m.Rect.Dx()
		for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
			row := m.Pix[m.PixOffset(m.Rect.Min.X, y):][:4*w]
			for i := 0; i < len(row); i += 4 {
				p := row[i : i+4 : i+4]
				if p[3] == 255 {
					continue // premultiplied by 255: unchanged
				}
				sa := uint32(p[3]) * 0x101
				p[0] = uint8(uint32(p[0]) * sa / 0xff >> 8)
				p[1] = uint8(uint32(p[1]) * sa / 0xff >> 8)
				p[2] = uint8(uint32(p[2]) * sa / 0xff >> 8)
			}
		}
		return &image.RGBA{Pix: m.Pix[m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y):], Stride: m.Stride, Rect: image.Rect(0, 0, w, m.Rect.Dy())}
	}
	return copyForRender(img)
}

// translateQuad moves q from img's coordinates to the copy's, which start
// at 0,0.
func translateQuad(q plates.Quad, min image.Point) plates.Quad {
	for i := range q {
		q[i].X -= float64(min.X)
		q[i].Y -= float64(min.Y)
	}
	return q
}

// hideBlur blurs the photo under the shape, working on a crop around it.
func hideBlur(dst *image.RGBA, s *plateShape) {
	sigma := max(minBlurSigmaPx, blurSigma*s.h)
	// A wide blur is taken on blocks of f×f pixels averaged, with σ/f, and
	// read back bilinearly: with blocks of a sixteenth of the box radius
	// the averaging and the reading back widen the blur by well under 1%
	// (the radius on blocks, rounded up so the blur is never weaker, by up
	// to 6% more), and the blur of a large plate of a 12 MP photo (σ of
	// tens of pixels, over the plate and three radii around it) falls from
	// about a quarter of a second to a few milliseconds; blending it in
	// under the shape's soft edge then takes most of the time.
	blurAt(dst, s, sigma, max(1, boxRadius(sigma)/16))
}

// boxRadius is the radius of the three box passes that give σ² = r(r+1).
func boxRadius(sigma float64) int {
	return int(math.Round((math.Sqrt(1+4*sigma*sigma) - 1) / 2))
}

// blurAt blurs the photo under the shape with a Gaussian of σ sigma,
// computed on f×f blocks.
func blurAt(dst *image.RGBA, s *plateShape, sigma float64, f int) {
	area := s.outer.Intersect(dst.Rect)
	if area.Empty() {
		return
	}
	radius := boxRadius(sigma)
	src := area.Inset(-3 * radius).Intersect(dst.Rect)
	crop := shrinkRGBA(dst, src, f)
	if f > 1 {
		// On blocks, a radius of a few units rounded down could weaken the
		// blur by a tenth: take the next one up instead.
		sf := sigma / float64(f)
		if radius = boxRadius(sf); float64(radius*(radius+1)) < sf*sf {
			radius++
		}
	}
	boxBlur3(crop, radius)
	// Pixel x's centre, x+½, lies at (x+½)/f − ½ in block-centre
	// coordinates: with f = 1, on the pixel itself.
	cw, ch := float64(crop.Rect.Dx()-1), float64(crop.Rect.Dy()-1)
	us := make([]float64, area.Dx())
	for i := range us {
		us[i] = max(0, min((float64(area.Min.X+i-src.Min.X)+0.5)/float64(f)-0.5, cw))
	}
	vs := make([]float64, area.Dy())
	for i := range vs {
		vs[i] = max(0, min((float64(area.Min.Y+i-src.Min.Y)+0.5)/float64(f)-0.5, ch))
	}
	blendShape(dst, s, area, func(x, y int) [4]float64 {
		r, g, b, a := sampleBilinear(crop, us[x-area.Min.X], vs[y-area.Min.Y])
		return [4]float64{r, g, b, a}
	})
}

// shrinkRGBA returns the pixels of r in img averaged over blocks of f×f
// (the last row and column of blocks over the pixels left).
func shrinkRGBA(img *image.RGBA, r image.Rectangle, f int) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, (r.Dx()+f-1)/f, (r.Dy()+f-1)/f))
	if f == 1 {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			copy(out.Pix[(y-r.Min.Y)*out.Stride:], img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)])
		}
		return out
	}
	sums := make([]uint32, out.Rect.Dx()*4)
	for by := range out.Rect.Dy() {
		clear(sums)
		y0, y1 := r.Min.Y+by*f, min(r.Min.Y+(by+1)*f, r.Max.Y)
		for y := y0; y < y1; y++ {
			row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
			for i := 0; i < len(row); i += 4 {
				b := (i / 4 / f) * 4
				sums[b] += uint32(row[i])
				sums[b+1] += uint32(row[i+1])
				sums[b+2] += uint32(row[i+2])
				sums[b+3] += uint32(row[i+3])
			}
		}
		orow := out.Pix[by*out.Stride : by*out.Stride+len(sums)]
		for bx := range out.Rect.Dx() {
			n := uint32((y1 - y0) * (min(r.Min.X+(bx+1)*f, r.Max.X) - (r.Min.X + bx*f)))
			for k := range 4 {
				orow[bx*4+k] = uint8((sums[bx*4+k] + n/2) / n)
			}
		}
	}
	return out
}

// hidePixelate replaces the photo under the shape by the mean colours of
// square cells laid out on the plate's plane.
func hidePixelate(dst *image.RGBA, s *plateShape) {
	area := s.outer.Intersect(dst.Rect)
	if area.Empty() {
		return
	}
	cell := max(minPixelCellPx, pixelCell*min(s.h, s.w/3))
	// The cell of every pixel of the area, as (column, row) on the plate.
	n := area.Dx() * area.Dy()
	cols, rows := make([]int32, n), make([]int32, n)
	minC, minR, maxC, maxR := int32(math.MaxInt32), int32(math.MaxInt32), int32(math.MinInt32), int32(math.MinInt32)
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			i := (y-area.Min.Y)*area.Dx() + x - area.Min.X
			// Pixels far off the plate's plane (only where the shape does
			// not reach under strong perspective) take the area's mean,
			// so the cell grid stays the plate's size.
			u, v, ok := s.toPlate.apply(float64(x)+0.5, float64(y)+0.5)
			if !ok || u < -3 || u > 4 || v < -3 || v > 4 {
				cols[i], rows[i] = math.MinInt32, 0
				continue
			}
			c := int32(math.Floor(u * s.w / cell))
			r := int32(math.Floor(v * s.h / cell))
			cols[i], rows[i] = c, r
			minC, maxC, minR, maxR = min(minC, c), max(maxC, c), min(minR, r), max(maxR, r)
		}
	}
	if minC > maxC {
		return
	}
	gw, gh := int(maxC-minC+1), int(maxR-minR+1)
	sums := make([][5]float64, gw*gh)
	var all [5]float64
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			i := (y-area.Min.Y)*area.Dx() + x - area.Min.X
			o := dst.PixOffset(x, y)
			p := [5]float64{float64(dst.Pix[o]), float64(dst.Pix[o+1]), float64(dst.Pix[o+2]), float64(dst.Pix[o+3]), 1}
			for k := range p {
				all[k] += p[k]
			}
			if cols[i] == math.MinInt32 {
				continue
			}
			g := &sums[int(rows[i]-minR)*gw+int(cols[i]-minC)]
			for k := range p {
				g[k] += p[k]
			}
		}
	}
	// Each output pixel averages the cells under four points of it, so the
	// tilted borders between cells are anti-aliased rather than stepped.
	mean := func(x, y int, px, py float64) [5]float64 {
		if u, v, ok := s.toPlate.apply(px, py); ok {
			c := min(maxC, max(minC, int32(math.Floor(u*s.w/cell))))
			r := min(maxR, max(minR, int32(math.Floor(v*s.h/cell))))
			if g := sums[int(r-minR)*gw+int(c-minC)]; g[4] > 0 {
				return g
			}
		}
		if i := (y-area.Min.Y)*area.Dx() + x - area.Min.X; cols[i] != math.MinInt32 {
			return sums[int(rows[i]-minR)*gw+int(cols[i]-minC)]
		}
		return all
	}
	blendShape(dst, s, area, func(x, y int) [4]float64 {
		var out [4]float64
		for _, d := range [4][2]float64{{0.25, 0.25}, {0.75, 0.25}, {0.25, 0.75}, {0.75, 0.75}} {
			g := mean(x, y, float64(x)+d[0], float64(y)+d[1])
			for k := range out {
				out[k] += g[k] / g[4] / 4
			}
		}
		return out
	})
}

// fillShape paints the shape in one colour.
func fillShape(dst *image.RGBA, s *plateShape, c [3]float64) {
	opaque := [4]float64{c[0], c[1], c[2], 255}
	blendShape(dst, s, s.outer.Intersect(dst.Rect), func(int, int) [4]float64 { return opaque })
}

// blendShape mixes layer's premultiplied colour into dst over area by the
// shape's coverage.
//
// Pixels whose centre lies inside the core outline are covered whole (the
// distance there is at most 0, under the corner radius): across each row
// they are found from the outline's edges at once, and take the layer's
// colour without the per-pixel distance and mix, which give the same.
func blendShape(dst *image.RGBA, s *plateShape, area image.Rectangle, layer func(x, y int) [4]float64) {
	for y := area.Min.Y; y < area.Max.Y; y++ {
		cy := float64(y) + 0.5
		lo, hi := s.core.insideSpan(cy)
		if s.radius <= 0 {
			lo, hi = 1, 0 // no corner radius to absorb rounding at the outline
		}
		for x := area.Min.X; x < area.Max.X; x++ {
			cx := float64(x) + 0.5
			a := 1.0
			if cx <= lo || cx >= hi {
				if a = s.coverage(cx, cy); a == 0 {
					continue
				}
			}
			c := layer(x, y)
			o := dst.PixOffset(x, y)
			p := dst.Pix[o : o+4 : o+4]
			if a == 1 {
				for k := range 4 {
					p[k] = uint8(math.Round(min(255, max(0, c[k]))))
				}
				continue
			}
			for k := range 4 {
				p[k] = uint8(math.Round(float64(p[k])*(1-a) + min(255, max(0, c[k]))*a))
			}
		}
	}
}

// plateReach is the part of the photo (in its coordinates) that hiding or
// replacing the plate q reads or writes, in any style, and within it the
// part it may change. reads holds the shape with its feather, the band
// around the plate that sets a design's light, and the blur's reach (which
// holds what a design's margin reflects, newSurroundMirror):
// painting a crop that holds it gives the same pixels as painting the whole
// photo. writes is the shape's outer bounds (every painter's blend area)
// and a pixel more for the rounding of a quad moved to a crop's
// coordinates. Both are empty for a quad with nothing to paint.
func plateReach(q plates.Quad) (reads, writes image.Rectangle) {
	s, ok, err := newPlateShape(q)
	if err != nil || !ok {
		return image.Rectangle{}, image.Rectangle{}
	}
	r := s.outer.Union(s.quad.offset(s.h).bounds())
	reach := 3 * boxRadius(max(minBlurSigmaPx, blurSigma*s.h))
	return r.Union(s.outer.Inset(-reach)).Inset(-2), s.outer.Inset(-1)
}
