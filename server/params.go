package server

import (
	"slices"
	"strconv"
	"strings"

	"carphoto"
	"carphoto/imageops"
)

// The one validator of a photo call's text fields: parseParams turns them
// into the typed imageops.Params that travel unchanged to imageops.Process,
// each value checked against its range, every error naming the form field
// and what it takes.

// The parameters each operation reads, by their API names.
var (
	canvasNames    = []string{"crop", "padding", "aspect", "background"}
	placementNames = []string{"floorY", "scale", "centerX"}
	overlayNames   = []string{"position", "scale", "opacity", "margin"}
	studioNames    = []string{"plates", "requireWholeCar"}
	paramNames     = map[imageops.Op][]string{
		imageops.BlurPlates:  {"style", "requirePlate", "format"},
		imageops.PlateLogo:   {"requirePlate", "format"},
		imageops.CarShadow:   slices.Concat([]string{"reflection", "format"}, canvasNames, placementNames, studioNames),
		imageops.CarCutout:   slices.Concat([]string{"format"}, canvasNames, placementNames, studioNames),
		imageops.LogoOverlay: slices.Concat(overlayNames, []string{"format"}),
	}
)

// paramNamesOf are the text fields op reads (parseParams), nil for an
// unknown op.
func paramNamesOf(op imageops.Op) []string { return paramNames[op] }

// parseParams reads op's parameters from a call's text fields (by their
// API names; an absent or empty field takes its default), each checked
// against its range. withBackdrop says the call stands the car on a
// backdrop (car-shadow, car-cutout): the placement fields apply and the
// canvas fields do not. Errors are *carphoto.Error with code
// EInvalidParams, naming the field and what it takes.
func parseParams(op imageops.Op, v map[string]string, withBackdrop bool) (imageops.Params, error) {
	p := imageops.Params{Op: op}
	var err error
	if p.RequirePlate, err = parseBool("requirePlate", v["requirePlate"]); err != nil {
		return p, err
	}
	if p.Format, err = parseFormat(v["format"]); err != nil {
		return p, err
	}
	switch op {
	case imageops.BlurPlates:
		p.Style, err = imageops.ParseStyle(v["style"])
	case imageops.PlateLogo:
	case imageops.CarShadow, imageops.CarCutout:
		if p.Plates, err = imageops.ParsePlates(v["plates"]); err != nil {
			return p, err
		}
		if p.RequireWholeCar, err = parseBool("requireWholeCar", v["requireWholeCar"]); err != nil {
			return p, err
		}
		if op == imageops.CarShadow {
			if p.Reflection, err = parseBool("reflection", v["reflection"]); err != nil {
				return p, err
			}
		}
		if withBackdrop {
			p.Backdrop, err = parsePlacement(v)
		} else {
			err = parseCanvas(v, &p)
		}
	case imageops.LogoOverlay:
		p.Overlay, err = parseOverlay(v)
	default:
		err = carphoto.Errorf(carphoto.EUnknownTool, "unknown tool %s", echoed(string(op)))
	}
	return p, err
}

// parseFormat reads the format field; empty keeps the operation's own rule.
func parseFormat(v string) (string, error) {
	if v != "" && !slices.Contains(imageops.Formats, v) {
		return "", carphoto.Errorf(carphoto.EInvalidParams, "format must be one of %s, not %q", strings.Join(imageops.Formats, ", "), v)
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
func parseCanvas(v map[string]string, p *imageops.Params) (err error) {
	if sent := sentFields(v, placementNames); len(sent) > 0 {
		return carphoto.Errorf(carphoto.EInvalidParams,
			"%s %s the car on a backdrop: send one in backgroundImage (a file), backgroundUrl or backgroundAssetId, or leave %s out",
			strings.Join(sent, ", "), carphoto.Agree(sent, "places", "place"), carphoto.Agree(sent, "it", "them"))
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
		c, err := imageops.ParseColour(bg)
		if err != nil {
			return err
		}
		p.Background = &c
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
func parsePlacement(v map[string]string) (*imageops.Placement, error) {
	if sent := sentFields(v, canvasNames); len(sent) > 0 {
		return nil, carphoto.Errorf(carphoto.EInvalidParams,
			"%s %s not apply with a backdrop: the answer is the backdrop at its own size, the car placed on it by floorY, scale and centerX; leave %s out",
			strings.Join(sent, ", "), carphoto.Agree(sent, "does", "do"), strings.Join(sent, ", "))
	}
	var pl imageops.Placement
	err := parseNumbers(v, []number{
		{name: "floorY", to: &pl.FloorY, def: 0.85, lo: 0.1, hi: 1},
		{name: "scale", to: &pl.Scale, def: 0.8, lo: 0.05, hi: 1},
		{name: "centerX", to: &pl.CenterX, def: 0.5, lo: 0, hi: 1},
	})
	return &pl, err
}

// parseOverlay reads logo-overlay's position, scale, opacity and margin,
// filling in the defaults.
func parseOverlay(v map[string]string) (imageops.OverlayOptions, error) {
	o := imageops.OverlayOptions{Position: v["position"]}
	if o.Position == "" {
		o.Position = "bottom-right"
	}
	if !slices.Contains(imageops.Positions, o.Position) {
		return o, carphoto.Errorf(carphoto.EInvalidParams, "position must be one of %s, not %q", strings.Join(imageops.Positions, ", "), o.Position)
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
