package paint

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"math"

	xdraw "golang.org/x/image/draw"

	"carphoto"
	"carphoto/imageops/plates"
)

// PlaceLogo returns a copy of img (same bounds, starting at 0,0) with the
// design warped onto every quad of quads, so that the result reads as a
// plate printed with the design, not as a sticker on a patch, and every
// quad of unsure (detections too doubtful to carry a design: a badge or a
// lamp, perhaps) hidden as HidePlates hides in StyleBlur.
//
// The design fills the quad corner to corner, mapped onto its corners by a
// homography. Its aspect ratio is kept: where it is wider or taller than
// the plate, the rest of the plate is padded with the design's own colour
// at that edge (the mean of its outermost pixels there), so a dark-blue
// design makes a dark-blue plate, not a small design on a pale one. Its
// transparent parts show the plate's own background colour, measured
// inside the quad, never the old characters. The margin of the hidden
// shape beyond the quad (the strip that hides the old plate's edge) takes
// the plate's surroundings: the photo just outside the hidden shape,
// reflected inwards across its edge (surroundMirror), so the bumper or
// grille seems to continue up to the new plate.
//
// The design is scaled once with a Catmull-Rom kernel to about the plate's
// size in the photo, so minifying it does not alias, then sampled
// bilinearly (trilinearly from halved copies where perspective shrinks it
// further). In a dark scene (plate and surroundings darker than a white
// plate in daylight) it is dimmed to match, so it does not glow.
func PlaceLogo(ctx context.Context, img image.Image, quads, unsure []plates.Quad, logo image.Image) (*image.RGBA, error) {
	if logo == nil || logo.Bounds().Empty() {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "logo is an empty image")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := copyForRender(img)
	at := img.Bounds().Min
	if err := placeLogoOn(ctx, dst, translateQuads(quads, at), translateQuads(unsure, at), logo); err != nil {
		return nil, err
	}
	return dst, nil
}

// placeLogoOn is PlaceLogo drawing on dst itself (bounds at (0,0); see
// paintable), with no copy of the photo.
func placeLogoOn(ctx context.Context, dst *image.RGBA, quads, unsure []plates.Quad, logo image.Image) error {
	if logo == nil || logo.Bounds().Empty() {
		return carphoto.Errorf(carphoto.EInvalidParams, "logo is an empty image")
	}
	if err := renderPlates(ctx, dst, unsure, hideBlur); err != nil {
		return err
	}
	return renderPlates(ctx, dst, quads, func(dst *image.RGBA, s *plateShape) {
		placeLogo(dst, s, logo)
	})
}

// Scene matching: a white plate lit like a sunny street reads about
// plateWhite in luminance. The scene's light is the brighter of the plate's
// background and the bright parts of its surroundings (a black plate in
// daylight is not a dark scene); darker than plateWhite, the design is
// dimmed by the same ratio, at most down to minLogoGain.
const (
	plateWhite  = 215.0
	minLogoGain = 0.5
)

// placeLogo paints the design on one plate's quad and the reflected
// surroundings over the rest of its shape.
func placeLogo(dst *image.RGBA, s *plateShape, logo image.Image) {
	base := plateColour(dst, s)
	light := max(plateLuma(base[0], base[1], base[2]), surroundLight(dst, s))
	gain := min(1, max(minLogoGain, light/plateWhite))
	area := s.outer.Intersect(dst.Rect)
	around := newSurroundMirror(dst, s)

	// Scale the design once to the size the plate takes on its nearer
	// side, padded to the plate's shape, so the per-pixel warp never
	// magnifies it much.
	q := s.quad
	dist := func(a, b plates.Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }
	tw := max(1, int(math.Ceil(max(dist(q[0], q[1]), dist(q[3], q[2])))))
	th := max(1, int(math.Ceil(max(dist(q[0], q[3]), dist(q[1], q[2])))))
	// designAt maps a photo point to the scaled design's pixel-centre
	// coordinates.
	designAt := func(px, py float64) (dx, dy float64, ok bool) {
		u, v, ok := s.toPlate.apply(px, py)
		return u*float64(tw) - 0.5, v*float64(th) - 0.5, ok
	}
	// How many design pixels one photo pixel spans at worst: at a corner of
	// the quad, where perspective shrinks the design most.
	worst := 1.0
	for _, c := range q {
		worst = max(worst, designFootprint(designAt, c.X, c.Y))
	}
	design := newDesignPyramid(fitDesign(logo, tw, th, s.w/s.h), worst)

	quad := s.quad.outline()
	blendShape(dst, s, area, func(x, y int) [4]float64 {
		px, py := float64(x)+0.5, float64(y)+0.5
		// The share of the pixel the quad covers, from its distance to
		// the quad's outline: the plate's edge is anti-aliased, not
		// feathered.
		c := min(1, max(0, 0.5-quad.signedDistance(px, py)))
		dx, dy, ok := designAt(px, py)
		if c == 0 || !ok {
			return around.at(x, y)
		}
		// The design's edge pixels reach the quad's edge (no fade to
		// transparent there: the coverage above draws the edge).
		dx = min(float64(tw)-1, max(0, dx))
		dy = min(float64(th)-1, max(0, dy))
		scale := 1.0
		if len(design.levels) > 1 {
			scale = designFootprint(designAt, px, py)
		}
		r, g, b, a := design.sample(dx, dy, scale)
		t := 1 - a/255
		plate := [4]float64{r*gain + base[0]*t, g*gain + base[1]*t, b*gain + base[2]*t, 255}
		if c == 1 {
			return plate
		}
		o := around.at(x, y)
		for k := range plate {
			plate[k] = plate[k]*c + o[k]*(1-c)
		}
		return plate
	})
}

// fitDesign returns the design scaled to w×h, the unit plate in design
// pixels, its aspect ratio kept on a plate of the given aspect (its mean
// width over its mean height): it is centred, and the strips it leaves on
// two opposite sides take the design's colour along those edges (the
// premultiplied mean of its outermost pixels there: transparent for a
// design with a transparent border, whose plate colour then shows).
func fitDesign(logo image.Image, w, h int, plateAspect float64) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	lb := logo.Bounds()
	logoAspect := float64(lb.Dx()) / float64(lb.Dy())
	inner := out.Rect
	var before, after image.Rectangle // the padded strips
	var edgeBefore, edgeAfter image.Rectangle
	if logoAspect < plateAspect {
		dw := int(math.Round(float64(w) * logoAspect / plateAspect))
		x0 := (w - dw) / 2
		inner = image.Rect(x0, 0, x0+dw, h)
		before, after = image.Rect(0, 0, x0, h), image.Rect(x0+dw, 0, w, h)
		k := max(1, lb.Dx()/32)
		edgeBefore = image.Rect(lb.Min.X, lb.Min.Y, lb.Min.X+k, lb.Max.Y)
		edgeAfter = image.Rect(lb.Max.X-k, lb.Min.Y, lb.Max.X, lb.Max.Y)
	} else {
		dh := int(math.Round(float64(h) * plateAspect / logoAspect))
		y0 := (h - dh) / 2
		inner = image.Rect(0, y0, w, y0+dh)
		before, after = image.Rect(0, 0, w, y0), image.Rect(0, y0+dh, w, h)
		k := max(1, lb.Dy()/32)
		edgeBefore = image.Rect(lb.Min.X, lb.Min.Y, lb.Max.X, lb.Min.Y+k)
		edgeAfter = image.Rect(lb.Min.X, lb.Max.Y-k, lb.Max.X, lb.Max.Y)
	}
	if inner.Empty() {
		inner = out.Rect
	}
	draw.Draw(out, before, image.NewUniform(meanColour(logo, edgeBefore)), image.Point{}, draw.Src)
	draw.Draw(out, after, image.NewUniform(meanColour(logo, edgeAfter)), image.Point{}, draw.Src)
	xdraw.CatmullRom.Scale(out, inner, logo, lb, xdraw.Src, nil)
	return out
}

// meanColour is the mean premultiplied colour of img over r.
func meanColour(img image.Image, r image.Rectangle) color.RGBA {
	var sum [4]float64
	n := 0.0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			sum[0], sum[1], sum[2], sum[3] = sum[0]+float64(cr), sum[1]+float64(cg), sum[2]+float64(cb), sum[3]+float64(ca)
			n++
		}
	}
	if n == 0 {
		return color.RGBA{}
	}
	c := func(v float64) uint8 { return uint8(math.Round(v / n / 257)) }
	return color.RGBA{c(sum[0]), c(sum[1]), c(sum[2]), c(sum[3])}
}

// designFootprint returns how many design pixels the photo pixel at
// (px, py) spans along its longer side.
func designFootprint(designAt func(px, py float64) (dx, dy float64, ok bool), px, py float64) float64 {
	x0, y0, ok0 := designAt(px, py)
	x1, y1, ok1 := designAt(px+1, py)
	x2, y2, ok2 := designAt(px, py+1)
	if !ok0 || !ok1 || !ok2 {
		return 1
	}
	return max(math.Hypot(x1-x0, y1-y0), math.Hypot(x2-x0, y2-y0))
}

// designPyramid is the design scaled to the plate (level 0) and halved
// again for each further level: where a strongly foreshortened plate
// shrinks the design more than twofold, sampling blends the two levels
// that bracket the shrink (trilinear filtering) rather than skipping
// design pixels and aliasing.
type designPyramid struct {
	levels []*image.RGBA
}

// maxDesignLevels bounds the pyramid: a sixteenfold shrink of a design
// already scaled to the plate is a sliver of a few pixels.
const maxDesignLevels = 5

// newDesignPyramid takes the design scaled to the plate (fitDesign, with
// a Catmull-Rom kernel, which widens as it minifies, so it does not alias)
// and adds the halved levels a shrink of up to worst needs.
func newDesignPyramid(top *image.RGBA, worst float64) designPyramid {
	p := designPyramid{levels: []*image.RGBA{top}}
	for k := 1; k < maxDesignLevels && math.Log2(worst)-0.5 > float64(k-1); k++ {
		prev := p.levels[k-1]
		if prev.Rect.Dx() < 2 && prev.Rect.Dy() < 2 {
			break
		}
		next := image.NewRGBA(image.Rect(0, 0, max(1, (prev.Rect.Dx()+1)/2), max(1, (prev.Rect.Dy()+1)/2)))
		xdraw.CatmullRom.Scale(next, next.Rect, prev, prev.Rect, xdraw.Src, nil)
		p.levels = append(p.levels, next)
	}
	return p
}

// sample returns the premultiplied colour at level-0 pixel-centre
// coordinates (x, y) for a photo pixel spanning scale level-0 pixels.
func (p designPyramid) sample(x, y, scale float64) (r, g, b, a float64) {
	at := func(k int) (r, g, b, a float64) {
		l, top := p.levels[k], p.levels[0]
		sx := float64(l.Rect.Dx()) / float64(top.Rect.Dx())
		sy := float64(l.Rect.Dy()) / float64(top.Rect.Dy())
		return sampleBilinear(l, (x+0.5)*sx-0.5, (y+0.5)*sy-0.5)
	}
	// Bilinear sampling alone holds up to a shrink of about √2; blending
	// starts there, so mildly foreshortened plates stay sharp.
	lv := min(float64(len(p.levels)-1), max(0, math.Log2(scale)-0.5))
	k := int(lv)
	f := lv - float64(k)
	r, g, b, a = at(k)
	if f == 0 || k+1 >= len(p.levels) {
		return r, g, b, a
	}
	r1, g1, b1, a1 := at(k + 1)
	return r + (r1-r)*f, g + (g1-g)*f, b + (b1-b)*f, a + (a1-a)*f
}

// plateColour estimates the plate's background colour as lit in the photo:
// the mean of the pixels inside the quad whose brightness lies between the
// 60th and 95th percentiles, which skips dark characters, frame and bolts
// (up to half the quad on a plate of bold characters) as well as specular
// highlights.
func plateColour(img *image.RGBA, s *plateShape) [3]float64 {
	var h lumaHistogram
	area := s.quad.bounds().Intersect(img.Rect)
	quad := s.quad.outline()
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if quad.signedDistance(float64(x)+0.5, float64(y)+0.5) <= 0 {
				h.add(img, x, y)
			}
		}
	}
	if h.n == 0 {
		return [3]float64{plateWhite, plateWhite, plateWhite}
	}
	return h.meanBetween(0.60, 0.95)
}

// surroundLight is the brightness of the bright parts (90th to 100th
// percentile) of a band one plate height wide around the plate.
func surroundLight(img *image.RGBA, s *plateShape) float64 {
	var h lumaHistogram
	area := s.quad.offset(s.h).bounds().Intersect(img.Rect)
	quad := s.quad.outline()
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if d := quad.signedDistance(float64(x)+0.5, float64(y)+0.5); d > 0 && d <= s.h {
				h.add(img, x, y)
			}
		}
	}
	if h.n == 0 {
		return 0
	}
	c := h.meanBetween(0.90, 1)
	return plateLuma(c[0], c[1], c[2])
}

// lumaHistogram counts pixels by brightness and sums their colours, so
// that the mean colour of a brightness percentile range costs no sort.
type lumaHistogram struct {
	n     int
	count [256]int
	sum   [256][3]float64
}

// add counts the pixel at (x, y) by its colour; a wholly transparent one
// (the background a cut-out dropped, PlaceLogoOnCar) is not counted, not
// even as black.
func (h *lumaHistogram) add(img *image.RGBA, x, y int) {
	o := img.PixOffset(x, y)
	if img.Pix[o+3] == 0 {
		return
	}
	r, g, b := float64(img.Pix[o]), float64(img.Pix[o+1]), float64(img.Pix[o+2])
	l := min(255, int(plateLuma(r, g, b)+0.5))
	h.n++
	h.count[l]++
	h.sum[l][0] += r
	h.sum[l][1] += g
	h.sum[l][2] += b
}

// meanBetween returns the mean colour of the pixels ranked between the
// fractions lo and hi of the histogram, darkest first.
func (h *lumaHistogram) meanBetween(lo, hi float64) [3]float64 {
	from, to := float64(h.n)*lo, max(float64(h.n)*hi, float64(h.n)*lo+1)
	var c [3]float64
	var taken float64
	seen := 0.0
	for l := range 256 {
		if h.count[l] == 0 {
			continue
		}
		n := float64(h.count[l])
		// The share of this bin that falls inside [from, to).
		part := max(0, min(seen+n, to)-max(seen, from))
		seen += n
		if part == 0 {
			continue
		}
		for k := range 3 {
			c[k] += h.sum[l][k] / n * part
		}
		taken += part
	}
	if taken == 0 {
		return c
	}
	return [3]float64{c[0] / taken, c[1] / taken, c[2] / taken}
}

// plateLuma is the Rec. 601 brightness of a colour.
func plateLuma(r, g, b float64) float64 { return 0.299*r + 0.587*g + 0.114*b }
