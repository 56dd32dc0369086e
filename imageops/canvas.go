package imageops

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"

	"carphoto"
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

// Frame returns img framed as c says, bounds at (0,0): img itself when c
// changes nothing, a view of img's own pixels when the frame lies inside it
// (a crop), and a new image only when the frame reaches past it. The car is
// never cut: a canvas is only ever cropped to its bounds plus padding, and
// only ever grown to reach the aspect ratio.
func Frame(img *image.NRGBA, c Canvas) *image.NRGBA {
	r := img.Rect
	if c.Crop {
		car := OpaqueBounds(img)
		if car.Empty() {
			car = img.Rect // nothing to crop to: keep the canvas
		}
		pad := c.Padding
		if c.PaddingShare {
			pad *= float64(max(car.Dx(), car.Dy()))
		}
		p := int(math.Round(pad))
		r = car.Inset(-p)
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
