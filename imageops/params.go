package imageops

import (
	"errors"
	"fmt"
	"image/color"
	"strconv"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
)

// The operations and the values of their parameters, owned here: the
// operations' and formats' names, the typed values the parameters take
// (Params, Plates, Style, Colour, Canvas, Placement, OverlayOptions) and
// the check of an image's header against the limits. The web side reads a
// call's form into Params once (server/params.go) and checks its images
// with CheckImage, CheckBackdrop and CheckCanvas before any work; the task
// carries the Params to the worker (in the queue's wire format, which is
// jobs'), which hands them to Process.

// Ops are the photo operations Process runs, as named in the URL path.
var Ops = []Op{BlurPlates, PlateLogo, CarShadow, CarCutout, LogoOverlay}

// VideoBlur is the video operation: a job whose frames go through the
// frame operation (frame.go), priced per started 10 seconds.
const VideoBlur Op = "video-blur"

// Formats are the answer formats a call may ask for in its format field.
var Formats = []string{"jpeg", "png", "webp"}

// Positions are the places logo-overlay may put the logo.
var Positions = paint.Positions

// Colour is a background colour, written #rrggbb (MarshalText) and read
// from #RRGGBB in either case (UnmarshalText).
type Colour color.NRGBA

// MarshalText writes c as #rrggbb.
func (c Colour) MarshalText() ([]byte, error) {
	return fmt.Appendf(nil, "#%02x%02x%02x", c.R, c.G, c.B), nil
}

// ParseColour reads a background colour written #RRGGBB; anything else is
// invalid_params.
func ParseColour(s string) (Colour, error) {
	c, err := shadow.ParseColour(s)
	return Colour(c), err
}

// UnmarshalText reads c from #RRGGBB.
func (c *Colour) UnmarshalText(text []byte) error {
	v, err := ParseColour(string(text))
	*c = v
	return err
}

// CheckImage refuses an image that is empty, not an image, too large in
// pixels or on a side, or too long for its width, from its header alone,
// naming field in the message. It returns the displayed width and height.
func CheckImage(field string, data []byte, lim Limits) (width, height int, err error) {
	if len(data) == 0 {
		return 0, 0, carphoto.Errorf(carphoto.EInvalidParams, "%s is empty", field)
	}
	if _, width, height, err = codec.DecodeConfig(data, lim); err != nil {
		var e *carphoto.Error
		if errors.As(err, &e) {
			return 0, 0, &carphoto.Error{Code: e.Code, Message: field + ": " + e.Message, Err: e.Err}
		}
		return 0, 0, carphoto.Wrap(err, carphoto.EInvalidParams, field+": not a readable image")
	}
	return width, height, nil
}

// CheckBackdrop is CheckImage for a backdrop, which is also held to
// maxPixels (at most MaxCanvasPixels): the answer is the backdrop's size,
// so this bounds the work.
func CheckBackdrop(field string, data []byte, lim Limits, maxPixels int) (width, height int, err error) {
	if width, height, err = CheckImage(field, data, lim); err != nil {
		return 0, 0, err
	}
	maxPixels = backdropMaxPixels(maxPixels)
	if width*height > maxPixels {
		return 0, 0, carphoto.Errorf(carphoto.EInvalidParams,
			"%s: the backdrop is %d×%d pixels (%s); a backdrop may have at most %s: scale it down",
			field, width, height, megapixels(width*height), megapixels(maxPixels))
	}
	return width, height, nil
}

// CheckCanvas refuses, before any work, car-cutout's and car-shadow's
// crop, padding and aspect whose canvas could pass lim's pixel cap for a
// width × height photo: its worst case, a car filling the photo as
// Process takes it (scaled to MaxCanvasPixels). Process scales any canvas
// past MaxCanvasPixels down to it; what is refused here would shrink the
// car more than that, for a canvas nobody lists (padding=10000 asks for
// 400 MP around any car). A call on a backdrop has no canvas to check.
func CheckCanvas(p Params, width, height int, lim Limits) error {
	if (p.Op != CarShadow && p.Op != CarCutout) || p.Backdrop != nil {
		return nil
	}
	w, h := codec.FitSize(width, height, MaxCanvasPixels)
	cw, ch := p.Canvas.Size(w, h)
	limit := lim.MaxPixels
	if limit <= 0 {
		limit = DefaultMaxPixels
	}
	if float64(cw)*float64(ch) <= float64(limit) {
		return nil
	}
	return carphoto.Errorf(carphoto.EInvalidParams,
		"crop, padding and aspect would make a canvas too large: up to %d×%d pixels (%.0f MP) around this %d×%d photo; the limit is %d MP (the answer itself is scaled to at most %d MP): use a smaller padding or an aspect nearer the photo's",
		cw, ch, float64(cw)*float64(ch)/1e6, width, height, limit/1_000_000, MaxCanvasPixels/1_000_000)
}

// megapixels writes a pixel count in megapixels.
func megapixels(pixels int) string {
	return strconv.FormatFloat(float64(pixels)/1e6, 'f', 1, 64) + " MP"
}
