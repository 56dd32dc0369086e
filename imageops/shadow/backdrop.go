package shadow

import (
	"context"
	"image"
	"image/draw"
	"math"

	xdraw "golang.org/x/image/draw"

	"carphoto"
	"carphoto/imageops/codec"
)

// Placement says where a car stands on a backdrop, in fractions of the
// backdrop's size.
type Placement struct {
	// FloorY is where the tyres touch the floor: the lowest row of the
	// car's matte lands at FloorY × the backdrop's height, from the top.
	FloorY float64
	// Scale is the car's width (its matte's solid bounds) as a share of
	// the backdrop's width. A car that would then reach above the
	// backdrop's top (a front view on a low floor) is made smaller until
	// its roof is backdropHeadroom (a tenth of its height) below the top.
	Scale float64
	// CenterX is the car's horizontal centre, from the left.
	CenterX float64
}

// BackdropOptions selects what car-cutout and car-shadow put on a
// backdrop.
type BackdropOptions struct {
	Placement
	// Shadow draws CarShadow's ground shadow under the car, on the
	// backdrop's floor; Reflection adds its floor reflection.
	Shadow     bool
	Reflection bool
	// MaxEnlarge, when above zero, is the most the car is enlarged from
	// its cut-out's own pixels: where the placement would enlarge it more
	// (a small photo on a large backdrop: soft edges, jagged roof rails),
	// the backdrop is scaled down instead, so that the car is enlarged
	// MaxEnlarge and the composition, in shares of the backdrop, is kept.
	MaxEnlarge float64
}

// MaxEnlarge is the most car-cutout and car-shadow enlarge a car on a
// backdrop (BackdropOptions.MaxEnlarge): past it the enlargement shows
// (2.1× on the sample backdrop is soft and jagged).
const MaxEnlarge = 1.5

// Fit is how Stand placed the car.
type Fit struct {
	// Scale is the car's width (its matte's solid bounds) as a share of
	// the answer's width: Placement.Scale, or less where the headroom rule
	// made the car smaller.
	Scale float64
	// Enlarge is the car's size in the answer over its size in the
	// cut-out (below 1: made smaller).
	Enlarge float64
	// Backdrop is the answer's size: the backdrop's, or smaller where
	// MaxEnlarge scaled it down.
	Backdrop image.Point
}

// backdropHeadroom is the least space kept above a car's roof, as a share
// of the backdrop's height, when its width would push the roof out: at
// the default placement a front or rear view, taller for its width than
// a side view, would otherwise touch the top (seen on plates-web-cc0,
// docs/backdrop-sheet.jpg).
const backdropHeadroom = 0.1

// backdropEdge bounds the soft edge kept around the car's solid bounds,
// as a share of the backdrop's longer side, once scaled.
const backdropEdge = 0.05

// OnBackdrop stands a cut-out car on backdrop: the answer is the backdrop
// at its own size, the car scaled to opt.Scale of its width (up or down,
// from the cut-out's own pixels) with its lowest point on the floor line
// opt.FloorY, and with opt.Shadow its shadow (and reflection) falling on
// the backdrop from the same contact points. car is an RGBA cut-out
// (non-premultiplied; alpha = the car matte); parts of the matte too
// small to be the car (specks of background, see ground) are left out,
// cleared in car itself: the caller must not use car afterwards.
//
// The work is bounded by the backdrop: the car is scaled to at most its
// width and height (plus the matte's soft edge), and the shadow grows it
// by a fixed share of the car's size. The answer is allocated first and
// the backdrop drawn into it, so a caller that holds no other reference
// to backdrop lets it go before the car is scaled.
func OnBackdrop(ctx context.Context, car *image.NRGBA, backdrop image.Image, opt BackdropOptions) (*image.RGBA, error) {
	out, _, err := Stand(ctx, car, backdrop, opt)
	return out, err
}

// Stand is OnBackdrop, saying how it placed the car (Fit). With
// opt.MaxEnlarge, a backdrop on which the car would be enlarged more is
// scaled down first (codec's area filter), and the answer is that size.
func Stand(ctx context.Context, car *image.NRGBA, backdrop image.Image, opt BackdropOptions) (*image.RGBA, Fit, error) {
	bb := backdrop.Bounds()
	W, H := bb.Dx(), bb.Dy()
	if W <= 0 || H <= 0 {
		return nil, Fit{}, carphoto.Errorf(carphoto.EInvalidParams, "the backdrop is empty: it has no pixels")
	}
	if car == nil || car.Rect.Empty() {
		return nil, Fit{}, carphoto.Errorf(carphoto.EInvalidParams, "the image is empty: it has no pixels")
	}
	if car.Rect.Min != (image.Point{}) {
		car = codec.ToNRGBA(car) // ground works in coordinates from (0,0)
	}
	gr, ok := findGround(car)
	if !ok {
		return nil, Fit{}, carphoto.Errorf(carphoto.EInvalidParams, "the image has no visible car: no pixel of the cut-out is more than half opaque")
	}
	if f := carFactor(gr.box, W, H, opt.Placement); opt.MaxEnlarge > 0 && f > opt.MaxEnlarge {
		// The composition kept at a size the car's pixels can fill: the
		// backdrop scaled by MaxEnlarge/f, every share of it the same.
		k := opt.MaxEnlarge / f
		w, h := max(1, int(math.Round(float64(W)*k))), max(1, int(math.Round(float64(H)*k)))
		small, err := codec.FitPixels(ctx, backdrop, w*h)
		if err != nil {
			return nil, Fit{}, err
		}
		backdrop = small
		bb = backdrop.Bounds()
		W, H = bb.Dx(), bb.Dy()
	}
	out := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(out, out.Rect, backdrop, bb.Min, draw.Src)
	backdrop = nil // drawn: the caller's decoded backdrop may go
	if err := ctx.Err(); err != nil {
		return nil, Fit{}, err
	}
	f := carFactor(gr.box, W, H, opt.Placement)
	if opt.MaxEnlarge > 0 {
		f = math.Min(f, opt.MaxEnlarge) // the scaled backdrop's rounding
	}
	fit := Fit{Scale: float64(gr.box.Dx()) * f / float64(W), Enlarge: f, Backdrop: image.Pt(W, H)}
	scaled, err := backdropCar(ctx, car, gr.box, W, H, f)
	if err != nil {
		return nil, Fit{}, err
	}

	// The scaled car's own floor contact, measured again at its new size:
	// its lowest solid row goes on the floor line, its solid bounds
	// centred on CenterX.
	sgr, ok := findGround(scaled)
	if !ok {
		return nil, Fit{}, carphoto.Errorf(carphoto.EInvalidParams,
			"the car is too small to place at scale %g on a %d×%d backdrop: use a larger scale or a larger photo of the car", opt.Scale, W, H)
	}
	at := image.Pt(
		int(math.Round(opt.CenterX*float64(W)-float64(sgr.box.Min.X+sgr.box.Max.X)/2)),
		int(math.Round(opt.FloorY*float64(H)))-sgr.box.Max.Y,
	)
	layer := scaled
	if opt.Shadow {
		if err := ctx.Err(); err != nil {
			return nil, Fit{}, err
		}
		// CarShadow's steps on the scaled car, keeping the layout: the
		// canvas it grows to fit the shadow starts at lay.canvas.Min
		// relative to the car.
		lay := newShadowLayout(&sgr, scaled.Rect.Dx(), scaled.Rect.Dy())
		sh := paintShadow(&sgr, lay)
		var rf *reflection
		if opt.Reflection {
			rf = newReflection(scaled, &sgr, lay)
		}
		if err := ctx.Err(); err != nil {
			return nil, Fit{}, err
		}
		layer = composeShadow(scaled, &sgr, lay, sh, rf, true)
		at = at.Add(lay.canvas.Min)
	}
	if err := ctx.Err(); err != nil {
		return nil, Fit{}, err
	}
	draw.Draw(out, layer.Rect.Sub(layer.Rect.Min).Add(at), layer, layer.Rect.Min, draw.Over)
	return out, fit, nil
}

// carFactor is how much a car whose matte's solid bounds are box is scaled
// to stand on a W×H backdrop as p says: box's width to p.Scale × W, less
// when its height would not fit between the floor line and the headroom.
func carFactor(box image.Rectangle, W, H int, p Placement) float64 {
	f := p.Scale * float64(W) / float64(box.Dx())
	if room := (p.FloorY - backdropHeadroom) * float64(H); room > 0 && float64(box.Dy())*f > room {
		f = room / float64(box.Dy())
	}
	return f
}

// backdropCar is the car cut from its matte's solid bounds box (plus the
// soft edge around them) and scaled by f (carFactor) to stand on a W×H
// backdrop.
func backdropCar(ctx context.Context, car *image.NRGBA, box image.Rectangle, W, H int, f float64) (*image.NRGBA, error) {
	// The matte's soft edge, a few pixels past the solid bounds, comes
	// along; anything further out is not the car. Scaled, the edge is at
	// most backdropEdge of the backdrop, so the scaled car stays within
	// about the backdrop's size however small the car was (a few pixels
	// blown up to its width).
	edge := math.Max(2, 0.02*float64(max(box.Dx(), box.Dy())))
	edge = math.Min(edge, backdropEdge*float64(max(W, H))/f)
	e := int(edge) // down: a pixel more, scaled, may be a large share
	src := box.Inset(-e).Intersect(car.Rect)
	w := max(int(math.Round(float64(src.Dx())*f)), 1)
	h := max(int(math.Round(float64(src.Dy())*f)), 1)
	// Only the parts of the matte the floor was found from: a speck of
	// background the cut-out left would otherwise float on the backdrop,
	// shadow and all. Cleared in car itself, which is ours.
	parts := newGroundParts(car)
	for y := src.Min.Y; y < src.Max.Y; y++ {
		row := car.Pix[car.PixOffset(0, y):]
		for x := src.Min.X; x < src.Max.X; x++ {
			if !parts.has(x, y) {
				clear(row[4*x : 4*x+4])
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Both ways with premultiplied alpha, so the colour of transparent
	// pixels does not bleed into the car's edge, and in memory for the
	// output only: down with codec's area filter (read a row at a time),
	// up bilinearly. (x/image's Catmull-Rom keeps a float64 buffer of the
	// output's width × the source's height: 400 MB for a 16 MP car.)
	if w*h < src.Dx()*src.Dy() {
		small, err := codec.FitPixels(ctx, car.SubImage(src), w*h)
		if err != nil {
			return nil, err
		}
		return codec.ToNRGBA(small), nil
	}
	pm := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.ApproxBiLinear.Scale(pm, pm.Rect, car, src, xdraw.Src, nil)
	return unpremultiply(pm), nil
}

// unpremultiply converts premultiplied RGBA to NRGBA in its own pixels
// (the two share a layout), so no second copy is made.
func unpremultiply(pm *image.RGBA) *image.NRGBA {
	for i := 0; i < len(pm.Pix); i += 4 {
		if a := pm.Pix[i+3]; a != 0 && a != 255 {
			for c := range 3 {
				pm.Pix[i+c] = uint8(min(255, (uint32(pm.Pix[i+c])*255+uint32(a)/2)/uint32(a)))
			}
		}
	}
	return &image.NRGBA{Pix: pm.Pix, Stride: pm.Stride, Rect: pm.Rect}
}
