package imageops

import (
	"errors"
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
)

// The operations and their parameters, owned here: their names as the API
// spells them, their defaults and ranges, and the check of an image's
// header against the limits. The web side reads a request's fields with
// ParseParams and checks its images with CheckImage, CheckBackdrop and
// CheckCanvas before any work; the task carries the Params to the worker
// (in the queue's wire format, which is jobs'), which hands them to
// Process.

// Ops are the photo operations Process runs, as named in the URL path.
var Ops = []Op{BlurPlates, PlateLogo, CarShadow, CarCutout, LogoOverlay}

// VideoBlur is the video operation: a job whose frames go through the
// frame operation (frame.go), priced per started 10 seconds.
const VideoBlur Op = "video-blur"

// Formats are the answer formats a call may ask for in its format field.
var Formats = []string{"jpeg", "png", "webp"}

// The parameters each operation reads, by their API names.
var (
	canvasNames    = []string{"crop", "padding", "aspect", "background"}
	placementNames = []string{"floorY", "scale", "centerX"}
	overlayNames   = []string{"position", "scale", "opacity", "margin"}
	studioNames    = []string{"plates", "requireWholeCar"}
	paramNames     = map[Op][]string{
		BlurPlates:  {"style", "requirePlate", "format"},
		PlateLogo:   {"requirePlate", "format"},
		CarShadow:   slices.Concat([]string{"reflection", "format"}, canvasNames, placementNames, studioNames),
		CarCutout:   slices.Concat([]string{"format"}, canvasNames, placementNames, studioNames),
		LogoOverlay: slices.Concat(overlayNames, []string{"format"}),
	}
)

// ParamNames are the text fields op reads (ParseParams), nil for an
// unknown op.
func ParamNames(op Op) []string { return paramNames[op] }

// ParseParams reads op's parameters from a call's text fields (by their
// API names; an absent or empty field takes its default), each checked
// against its range. withBackdrop says the call stands the car on a
// backdrop (car-shadow, car-cutout): the placement fields apply and the
// canvas fields do not. Errors are *carphoto.Error with code
// EInvalidParams, naming the field and what it takes.
func ParseParams(op Op, v map[string]string, withBackdrop bool) (Params, error) {
	p := Params{Op: op}
	var err error
	if p.RequirePlate, err = parseBool("requirePlate", v["requirePlate"]); err != nil {
		return p, err
	}
	if p.Format, err = parseFormat(v["format"]); err != nil {
		return p, err
	}
	switch op {
	case BlurPlates:
		p.Style, err = paint.ParseStyle(v["style"])
	case PlateLogo:
	case CarShadow, CarCutout:
		if p.Plates, err = ParsePlates(v["plates"]); err != nil {
			return p, err
		}
		if p.RequireWholeCar, err = parseBool("requireWholeCar", v["requireWholeCar"]); err != nil {
			return p, err
		}
		if op == CarShadow {
			if p.Reflection, err = parseBool("reflection", v["reflection"]); err != nil {
				return p, err
			}
		}
		if withBackdrop {
			p.Backdrop, err = parsePlacement(v)
		} else {
			err = parseCanvas(v, &p)
		}
	case LogoOverlay:
		p.Overlay, err = parseOverlay(v)
	default:
		err = carphoto.Errorf(carphoto.EUnknownTool, "unknown tool %q", op)
	}
	return p, err
}

// parseFormat reads the format field; empty keeps the operation's own rule.
func parseFormat(v string) (string, error) {
	if v != "" && !slices.Contains(Formats, v) {
		return "", carphoto.Errorf(carphoto.EInvalidParams, "format must be one of %s, not %q", strings.Join(Formats, ", "), v)
	}
	return v, nil
}

// parseBool reads a boolean field: exactly "true" or "false"; empty is
// false.
func parseBool(name, v string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, carphoto.Errorf(carphoto.EInvalidParams, "%s must be exactly true or false, not %q", name, v)
}

// parseCanvas reads car-cutout's and car-shadow's crop, padding (pixels,
// or a percentage of the car's longer side), background (transparent or
// #RRGGBB) and aspect (W:H), refusing the placement fields, which need a
// backdrop.
func parseCanvas(v map[string]string, p *Params) (err error) {
	if sent := sentFields(v, placementNames); len(sent) > 0 {
		return carphoto.Errorf(carphoto.EInvalidParams,
			"%s %s the car on a backdrop: send one in backgroundImage (a file), backgroundUrl or backgroundAssetId, or leave %s out",
			strings.Join(sent, ", "), agree(sent, "places", "place"), agree(sent, "it", "them"))
	}
	if p.Canvas.Crop, err = parseBool("crop", v["crop"]); err != nil {
		return err
	}
	if pad := v["padding"]; pad != "" {
		num, share := strings.CutSuffix(pad, "%")
		f, err := strconv.ParseFloat(num, 64)
		limit := 10000.0
		if share {
			limit = 100
		}
		if err != nil || !(f >= 0 && f <= limit) {
			return carphoto.Errorf(carphoto.EInvalidParams,
				"padding must be pixels from 0 to 10000 or a percentage from 0%% to 100%% (like 20 or 5%%), not %q", pad)
		}
		if share {
			f /= 100
		}
		p.Canvas.Padding, p.Canvas.PaddingShare = f, share
	}
	if bg := v["background"]; bg != "" && bg != "transparent" {
		c, err := shadow.ParseColour(bg)
		if err != nil {
			return err
		}
		p.Background = (*Colour)(&c)
	}
	if a := v["aspect"]; a != "" {
		w, h, ok := strings.Cut(a, ":")
		aw, err1 := strconv.Atoi(w)
		ah, err2 := strconv.Atoi(h)
		if !ok || err1 != nil || err2 != nil || aw < 1 || ah < 1 || aw > 100 || ah > 100 {
			return carphoto.Errorf(carphoto.EInvalidParams, "aspect must be width:height in whole numbers from 1 to 100 (like 4:3 or 16:9), not %q", a)
		}
		p.Canvas.Aspect = [2]int{aw, ah}
	}
	return nil
}

// parsePlacement reads where the car stands on a backdrop (floorY, scale,
// centerX, defaults filled in), refusing the canvas fields: the answer is
// the backdrop at its own size.
func parsePlacement(v map[string]string) (*shadow.Placement, error) {
	if sent := sentFields(v, canvasNames); len(sent) > 0 {
		return nil, carphoto.Errorf(carphoto.EInvalidParams,
			"%s %s not apply with a backdrop: the answer is the backdrop at its own size, the car placed on it by floorY, scale and centerX; leave %s out",
			strings.Join(sent, ", "), agree(sent, "does", "do"), strings.Join(sent, ", "))
	}
	var pl shadow.Placement
	err := parseNumbers(v, []number{
		{name: "floorY", to: &pl.FloorY, def: 0.85, lo: 0.1, hi: 1},
		{name: "scale", to: &pl.Scale, def: 0.8, lo: 0.05, hi: 1},
		{name: "centerX", to: &pl.CenterX, def: 0.5, lo: 0, hi: 1},
	})
	return &pl, err
}

// parseOverlay reads logo-overlay's position, scale, opacity and margin,
// filling in the defaults.
func parseOverlay(v map[string]string) (paint.OverlayOptions, error) {
	o := paint.OverlayOptions{Position: v["position"]}
	if o.Position == "" {
		o.Position = "bottom-right"
	}
	if !slices.Contains(paint.Positions, o.Position) {
		return o, carphoto.Errorf(carphoto.EInvalidParams, "position must be one of %s, not %q", strings.Join(paint.Positions, ", "), o.Position)
	}
	err := parseNumbers(v, []number{
		{name: "scale", to: &o.Scale, def: 0.2, lo: 0, hi: 1, loOpen: true},
		{name: "opacity", to: &o.Opacity, def: 1, lo: 0, hi: 1},
		{name: "margin", to: &o.Margin, def: 0.03, lo: 0, hi: 0.45},
	})
	return o, err
}

// number is a numeric field: its default and its range, open at lo when
// loOpen.
type number struct {
	name   string
	to     *float64
	def    float64
	lo, hi float64
	loOpen bool
}

// parseNumbers reads each field into its place, its default when absent.
func parseNumbers(v map[string]string, fields []number) error {
	for _, f := range fields {
		*f.to = f.def
		s := v[f.name]
		if s == "" {
			continue
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !(x >= f.lo && x <= f.hi) || (f.loOpen && x == f.lo) {
			lo := "from"
			if f.loOpen {
				lo = "above"
			}
			return carphoto.Errorf(carphoto.EInvalidParams, "%s must be a number %s %g to %g, not %q", f.name, lo, f.lo, f.hi, s)
		}
		*f.to = x
	}
	return nil
}

// sentFields are the names of fields that were sent with a value.
func sentFields(v map[string]string, names []string) []string {
	var sent []string
	for _, name := range names {
		if v[name] != "" {
			sent = append(sent, name)
		}
	}
	return sent
}

// agree is one or many, by how many names there are.
func agree(names []string, one, many string) string {
	if len(names) == 1 {
		return one
	}
	return many
}

// Colour is a background colour, written #rrggbb (MarshalText) and read
// from #RRGGBB in either case (UnmarshalText).
type Colour color.NRGBA

// MarshalText writes c as #rrggbb.
func (c Colour) MarshalText() ([]byte, error) {
	return fmt.Appendf(nil, "#%02x%02x%02x", c.R, c.G, c.B), nil
}

// UnmarshalText reads c from #RRGGBB.
func (c *Colour) UnmarshalText(text []byte) error {
	v, err := shadow.ParseColour(string(text))
	*c = Colour(v)
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
	if maxPixels <= 0 || maxPixels > MaxCanvasPixels {
		maxPixels = MaxCanvasPixels
	}
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
