package imageops

import (
	"context"
	"image"
	"math"
	"slices"

	xdraw "golang.org/x/image/draw"

	"carphoto"
	"carphoto/imageops/plates"
)

// PlaceLogo returns a copy of img (same bounds, starting at 0,0) with the
// design warped onto every quad.
//
// The plate and its margin (the shape HidePlates covers) are first painted
// in the plate's own background colour, measured inside the quad, so the
// old characters never show through the design's transparent parts or
// around it. The design, its aspect ratio kept, is centred on the plate
// (letterboxed when the shapes differ) and mapped onto the quad's corners
// by a homography: it is scaled once with a Catmull-Rom kernel to about the
// plate's size in the photo, so minifying it does not alias, then sampled
// bilinearly. It is dimmed as the measured plate colour is darker than a
// white plate in daylight, so it does not glow in a dark photo.
func PlaceLogo(ctx context.Context, img image.Image, quads []plates.Quad, logo image.Image) (*image.RGBA, error) {
	if logo == nil || logo.Bounds().Empty() {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "logo is an empty image")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := copyForRender(img)
	for _, q := range quads {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, ok, err := newPlateShape(translateQuad(q, img.Bounds().Min))
		if err != nil {
			return nil, err
		}
		if !ok || s.outer.Intersect(dst.Rect).Empty() {
			continue
		}
		placeLogo(dst, &s, logo)
	}
	return dst, nil
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

// placeLogo paints the plate base and the design over one plate shape.
func placeLogo(dst *image.RGBA, s *plateShape, logo image.Image) {
	base := plateColour(dst, s)
	light := max(plateLuma(base[0], base[1], base[2]), surroundLight(dst, s))
	gain := min(1, max(minLogoGain, light/plateWhite))

	// Where the design sits on the unit plate: centred, aspect kept.
	lb := logo.Bounds()
	plateAspect := s.w / s.h
	logoAspect := float64(lb.Dx()) / float64(lb.Dy())
	u0, u1, v0, v1 := 0.0, 1.0, 0.0, 1.0
	if logoAspect > plateAspect {
		span := plateAspect / logoAspect
		v0, v1 = (1-span)/2, (1+span)/2
	} else {
		span := logoAspect / plateAspect
		u0, u1 = (1-span)/2, (1+span)/2
	}

	// Scale the design once to the size it takes on the plate's nearer
	// side, so the per-pixel warp never minifies by much.
	q := s.quad
	dist := func(a, b plates.Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }
	tw := max(1, int(math.Ceil(max(dist(q[0], q[1]), dist(q[3], q[2]))*(u1-u0))))
	th := max(1, int(math.Ceil(max(dist(q[0], q[3]), dist(q[1], q[2]))*(v1-v0))))
	design := image.NewRGBA(image.Rect(0, 0, tw, th))
	xdraw.CatmullRom.Scale(design, design.Rect, logo, lb, xdraw.Src, nil)

	area := s.outer.Intersect(dst.Rect)
	blendShape(dst, s, area, func(x, y int) [4]float64 {
		out := [4]float64{base[0], base[1], base[2], 255}
		u, v, ok := s.toPlate.apply(float64(x)+0.5, float64(y)+0.5)
		if !ok {
			return out
		}
		dx := (u-u0)/(u1-u0)*float64(tw) - 0.5
		dy := (v-v0)/(v1-v0)*float64(th) - 0.5
		r, g, b, a := sampleBilinear(design, dx, dy)
		if a == 0 {
			return out
		}
		t := 1 - a/255
		return [4]float64{r*gain + base[0]*t, g*gain + base[1]*t, b*gain + base[2]*t, 255}
	})
}

// plateColour estimates the plate's background colour as lit in the photo:
// the mean of the pixels inside the quad whose brightness lies between the
// 40th and 85th percentiles, which skips dark characters and bolts as well
// as specular highlights.
func plateColour(img *image.RGBA, s *plateShape) [3]float64 {
	type px struct{ l, r, g, b float64 }
	var pxs []px
	area := s.quad.bounds().Intersect(img.Rect)
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if s.quad.signedDistance(float64(x)+0.5, float64(y)+0.5) > 0 {
				continue
			}
			o := img.PixOffset(x, y)
			r, g, b := float64(img.Pix[o]), float64(img.Pix[o+1]), float64(img.Pix[o+2])
			pxs = append(pxs, px{plateLuma(r, g, b), r, g, b})
		}
	}
	if len(pxs) == 0 {
		return [3]float64{plateWhite, plateWhite, plateWhite}
	}
	slices.SortFunc(pxs, func(a, b px) int {
		switch {
		case a.l < b.l:
			return -1
		case a.l > b.l:
			return 1
		}
		return 0
	})
	lo, hi := len(pxs)*40/100, max(len(pxs)*85/100, len(pxs)*40/100+1)
	var c [3]float64
	for _, p := range pxs[lo:hi] {
		c[0], c[1], c[2] = c[0]+p.r, c[1]+p.g, c[2]+p.b
	}
	n := float64(hi - lo)
	return [3]float64{c[0] / n, c[1] / n, c[2] / n}
}

// surroundLight is the 90th percentile of brightness in a band one plate
// height wide around the plate.
func surroundLight(img *image.RGBA, s *plateShape) float64 {
	var ls []float64
	area := s.quad.offset(s.h).bounds().Intersect(img.Rect)
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if d := s.quad.signedDistance(float64(x)+0.5, float64(y)+0.5); d <= 0 || d > s.h {
				continue
			}
			o := img.PixOffset(x, y)
			ls = append(ls, plateLuma(float64(img.Pix[o]), float64(img.Pix[o+1]), float64(img.Pix[o+2])))
		}
	}
	if len(ls) == 0 {
		return 0
	}
	slices.Sort(ls)
	return ls[len(ls)*9/10]
}

// plateLuma is the Rec. 601 brightness of a colour.
func plateLuma(r, g, b float64) float64 { return 0.299*r + 0.587*g + 0.114*b }
