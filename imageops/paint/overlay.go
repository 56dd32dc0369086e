package paint

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"math"

	xdraw "golang.org/x/image/draw"

	"carphoto"
)

// Positions a watermark may take (logo-overlay's position field).
var Positions = []string{"top-left", "top-right", "bottom-left", "bottom-right", "center"}

// OverlayOptions place a watermark on a photo.
type OverlayOptions struct {
	Position string  // one of Positions
	Scale    float64 // the logo's width as a share of the photo's width, in (0, 1]
	Opacity  float64 // in [0, 1]
	Margin   float64 // from the photo's edges, as a share of its shorter side, in [0, 0.5)
}

// Overlay returns a copy of img with logo drawn on it as a watermark: scaled
// to opt.Scale of the photo's width (its aspect ratio kept, shrunk further
// if it would not fit between the margins) with a Catmull-Rom kernel, which
// widens as it minifies so a large logo does not alias; its own alpha
// times opt.Opacity blended over the photo at opt.Position, opt.Margin
// from the edges. Pixels outside the logo's rectangle are copied as they
// are. It also returns that rectangle.
func Overlay(ctx context.Context, img, logo image.Image, opt OverlayOptions) (*image.RGBA, image.Rectangle, error) {
	if logo == nil || logo.Bounds().Empty() {
		return nil, image.Rectangle{}, carphoto.Errorf(carphoto.EInvalidParams, "logo is an empty image")
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	margin := int(math.Round(opt.Margin * float64(min(w, h))))
	lb := logo.Bounds()
	lw := opt.Scale * float64(w)
	lh := lw * float64(lb.Dy()) / float64(lb.Dx())
	if room := float64(w - 2*margin); lw > room {
		lw, lh = room, room*float64(lb.Dy())/float64(lb.Dx())
	}
	if room := float64(h - 2*margin); lh > room {
		lw, lh = room*float64(lb.Dx())/float64(lb.Dy()), room
	}
	size := image.Pt(max(1, int(math.Round(lw))), max(1, int(math.Round(lh))))
	var at image.Point
	switch opt.Position {
	case "top-left":
		at = image.Pt(margin, margin)
	case "top-right":
		at = image.Pt(w-margin-size.X, margin)
	case "bottom-left":
		at = image.Pt(margin, h-margin-size.Y)
	case "center":
		at = image.Pt((w-size.X)/2, (h-size.Y)/2)
	default: // bottom-right
		at = image.Pt(w-margin-size.X, h-margin-size.Y)
	}
	where := image.Rectangle{Min: at, Max: at.Add(size)}.Intersect(image.Rect(0, 0, w, h))
	if err := ctx.Err(); err != nil {
		return nil, image.Rectangle{}, err
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(out, out.Rect, img, b.Min, draw.Src)
	scaled := image.NewRGBA(image.Rectangle{Min: at, Max: at.Add(size)})
	xdraw.CatmullRom.Scale(scaled, scaled.Rect, logo, lb, xdraw.Src, nil)
	mask := image.NewUniform(color.Alpha{A: uint8(math.Round(255 * min(max(opt.Opacity, 0), 1)))})
	draw.DrawMask(out, where, scaled, where.Min, mask, image.Point{}, draw.Over)
	return out, where, nil
}
