package imageops

import (
	"context"
	"image"
	"math"

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
// bilinearly. In a dark scene (plate and surroundings darker than a white
// plate in daylight) it is dimmed to match, so it does not glow.
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

func (h *lumaHistogram) add(img *image.RGBA, x, y int) {
	o := img.PixOffset(x, y)
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
