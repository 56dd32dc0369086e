package shadow

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"

	"carphoto"
	"carphoto/imageops/codec"
)

// Canvas says how a cut-out car (with or without its shadow) is framed.
type Canvas struct {
	// Crop cuts the canvas down to the car's bounds (every pixel not fully
	// transparent) plus Padding on each side.
	Crop bool
	// Padding is in pixels, or with PaddingShare a share of the longer
	// side of the car's bounds.
	Padding      float64
	PaddingShare bool
	// Aspect, when both are set, widens or heightens the canvas (the car
	// centred, the new area transparent) to width:height = Aspect[0]:Aspect[1].
	Aspect [2]int
}

// CanvasMaxSide bounds each side of such a canvas: WebP, the most limited
// of the answer formats, holds at most 16383 pixels a side.
const CanvasMaxSide = 16383

// Size is the canvas c makes around a car whose bounds are w×h (with
// Crop), or around a w×h image (without): what Frame would allocate. It
// grows with w and h, so the canvas of a car that fills its photo is the
// largest that photo can give.
func (c Canvas) Size(w, h int) (int, int) {
	r := c.around(image.Rect(0, 0, w, h))
	return r.Dx(), r.Dy()
}

// around is the canvas for r: with Crop, r is the car's bounds and gets
// the padding on each side; then the aspect ratio grows it, r centred.
func (c Canvas) around(r image.Rectangle) image.Rectangle {
	if c.Crop {
		pad := c.Padding
		if c.PaddingShare {
			pad *= float64(max(r.Dx(), r.Dy()))
		}
		r = r.Inset(-int(math.Round(pad)))
	}
	if c.Aspect[0] > 0 && c.Aspect[1] > 0 {
		want := float64(c.Aspect[0]) / float64(c.Aspect[1])
		w, h := r.Dx(), r.Dy()
		if float64(w)/float64(h) < want {
			nw := int(math.Round(float64(h) * want))
			r.Min.X -= (nw - w) / 2
			r.Max.X = r.Min.X + nw
		} else if nh := int(math.Round(float64(w) / want)); nh > h {
			r.Min.Y -= (nh - h) / 2
			r.Max.Y = r.Min.Y + nh
		}
	}
	return r
}

// frameRect is the rectangle of img that Frame makes the canvas, in img's
// coordinates (it may reach past img).
func (c Canvas) frameRect(img *image.NRGBA) image.Rectangle {
	r := img.Rect
	if c.Crop {
		if car := OpaqueBounds(img); !car.Empty() {
			r = car
		} // else nothing to crop to: keep the canvas
	}
	return c.around(r)
}

// Frame returns img framed as c says, bounds at (0,0): img itself when c
// changes nothing, a view of img's own pixels when the frame lies inside it
// (a crop), and a new image only when the frame reaches past it. The car is
// never cut: a canvas is only ever cropped to its bounds plus padding, and
// only ever grown to reach the aspect ratio. Frame allocates what c asks
// for, however large: with sizes a client chose, use FrameFit.
func Frame(img *image.NRGBA, c Canvas) *image.NRGBA {
	return frameTo(img, c.frameRect(img))
}

func frameTo(img *image.NRGBA, r image.Rectangle) *image.NRGBA {
	if r == img.Rect {
		return img
	}
	if r.In(img.Rect) {
		return &image.NRGBA{Pix: img.Pix[img.PixOffset(r.Min.X, r.Min.Y):], Stride: img.Stride, Rect: image.Rect(0, 0, r.Dx(), r.Dy())}
	}
	out := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Rect, img, r.Min, draw.Src)
	return out
}

// FrameFit is Frame with the canvas held to maxPixels and to maxSide on
// each side: when the frame c asks for would be larger, img is scaled down
// first (area filter), a padding in pixels with it, so the answer keeps the
// composition asked for at a size that fits. The large canvas is never
// allocated.
func FrameFit(ctx context.Context, img *image.NRGBA, c Canvas, maxPixels, maxSide int) (*image.NRGBA, error) {
	margin := 0.998
	for range 6 {
		r := c.frameRect(img)
		w, h := r.Dx(), r.Dy()
		if w*h <= maxPixels && w <= maxSide && h <= maxSide {
			return frameTo(img, r), nil
		}
		// A hair under the exact factor: the frame of the scaled car
		// rounds to whole pixels, and its edge may bleed by one. A small
		// car may need more.
		f := margin * min(math.Sqrt(float64(maxPixels)/(float64(w)*float64(h))),
			float64(maxSide)/float64(max(w, h)))
		area := float64(img.Rect.Dx()) * float64(img.Rect.Dy())
		scaled, err := codec.FitPixels(ctx, img, max(int(area*f*f), 1))
		if err != nil {
			return nil, err
		}
		img = codec.ToNRGBA(scaled)
		if !c.PaddingShare {
			c.Padding *= f
		}
		margin = 0.9
	}
	return nil, carphoto.Errorf(carphoto.EInvalidParams,
		"crop, padding and aspect make a canvas that cannot be fitted into %s; use a smaller padding or an aspect nearer the photo's", codec.Megapixels(maxPixels))
}

// OpaqueBounds is the smallest rectangle holding every pixel of img whose
// alpha is above zero (empty when there is none).
func OpaqueBounds(img *image.NRGBA) image.Rectangle {
	var r image.Rectangle
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		row := img.Pix[img.PixOffset(img.Rect.Min.X, y) : img.PixOffset(img.Rect.Max.X-1, y)+4]
		first, last := -1, -1
		for x := 0; x < len(row); x += 4 {
			if row[x+3] != 0 {
				if first < 0 {
					first = x / 4
				}
				last = x / 4
			}
		}
		if first >= 0 {
			r = r.Union(image.Rect(img.Rect.Min.X+first, y, img.Rect.Min.X+last+1, y+1))
		}
	}
	return r
}

// ParseColour reads a colour written #rrggbb (either case).
func ParseColour(s string) (color.NRGBA, error) {
	var c color.NRGBA
	if len(s) != 7 || s[0] != '#' {
		return c, carphoto.Errorf(carphoto.EInvalidParams, "background must be transparent or a colour written #RRGGBB, not %q", s)
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return c, carphoto.Errorf(carphoto.EInvalidParams, "background must be transparent or a colour written #RRGGBB, not %q", s)
	}
	return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}, nil
}
