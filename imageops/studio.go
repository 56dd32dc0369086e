package imageops

import (
	"context"
	"fmt"
	"image"
	"strings"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
)

// The studio operations, car-shadow and car-cutout, make a listing photo in
// one call: the plates hidden on the photo first (Params.Plates), then the
// car cut out, told when the photo's edge cuts it off (Output.CarTruncated,
// RequireWholeCar), and framed or stood on a backdrop never enlarged past
// shadow.MaxEnlarge (Output.CarScale).

// Plates is what car-shadow and car-cutout do to the photo's plates before
// the cut-out: keep them (PlatesKeep, the zero value), hide them in the
// style Hide, or give them the design (PlatesLogo).
type Plates struct {
	Hide paint.Style // a hiding style; "" when kept or given the design
	Logo bool
}

// The plates choices besides the hiding styles.
var (
	PlatesKeep = Plates{}
	PlatesLogo = Plates{Logo: true}
)

// String is the plates field's value for pl: "" (keep), "logo" or the
// hiding style.
func (pl Plates) String() string {
	if pl.Logo {
		return "logo"
	}
	return string(pl.Hide)
}

// ParsePlates reads the plates field: keep (or empty), a hiding style, or
// logo; anything else is invalid_params.
func ParsePlates(v string) (Plates, error) {
	switch v {
	case "", "keep":
		return PlatesKeep, nil
	case "logo":
		return PlatesLogo, nil
	}
	if st, err := paint.ParseStyle(v); err == nil && v != "" {
		return Plates{Hide: st}, nil
	}
	choices := []string{"keep"}
	for _, st := range paint.Styles {
		choices = append(choices, string(st))
	}
	return PlatesKeep, carphoto.Errorf(carphoto.EInvalidParams, "plates must be one of %s, not %q", strings.Join(append(choices, "logo"), ", "), v)
}

// NeedsDesign reports whether p takes a second image as its design:
// plate-logo's and logo-overlay's, or car-shadow's and car-cutout's with
// plates=logo.
func (p Params) NeedsDesign() bool {
	return p.Op == PlateLogo || p.Op == LogoOverlay || p.Plates == PlatesLogo
}

// PlateOp is the plate operation a call does besides its own, priced
// with it: blur-plates for a hiding style, plate-logo for the design, ""
// for none.
func (p Params) PlateOp() Op {
	switch {
	case p.Op != CarShadow && p.Op != CarCutout, p.Plates == PlatesKeep:
		return ""
	case p.Plates == PlatesLogo:
		return PlateLogo
	}
	return BlurPlates
}

// studioOp is car-shadow or car-cutout: the photo, its plates hidden where
// p asks, cut out and framed, or stood on the backdrop.
func studioOp(ctx context.Context, in Input, p Params) (*Output, error) {
	photo, found, err := studioPhoto(ctx, in, p)
	if err != nil {
		return nil, err
	}
	var out *Output
	switch {
	case p.Backdrop != nil:
		out, err = backdropOp(ctx, photo, in, p)
	case p.Op == CarShadow:
		out, err = shadowOp(ctx, photo, p)
	default:
		out, err = cutoutOp(ctx, photo, p)
	}
	if err != nil {
		return nil, err
	}
	out.PlatesFound = len(found)
	if p.Plates == PlatesLogo {
		sure, _ := byConfidence(found) // read in studioPhoto
		out.PlatesDesigned = len(sure)
	}
	return out, nil
}

// studioPhoto is the decoded photo, with p.Plates its plates hidden, or
// given the design, in its pixels. The plates are those blur-plates finds
// on the same photo: a baseline JPEG's from its blocks' preview
// (plates.DetectIn), as blur-plates' block path reads it, any other
// photo's from its pixels; each is hidden with the same margin rule, and
// plate-logo's design goes on the sure ones only.
func studioPhoto(ctx context.Context, in Input, p Params) (*codec.Photo, []plates.Plate, error) {
	if p.Plates == PlatesKeep {
		photo, err := codec.Decode(ctx, in.Photo, in.Limits)
		return photo, nil, err
	}
	var found []plates.Plate
	detected := false
	if src, err := paint.OpenBlockJPEG(ctx, in.Photo, in.Limits); err == nil {
		if found, err = plates.DetectIn(ctx, src); err != nil {
			return nil, nil, fmt.Errorf("detect plates: %w", err)
		}
		detected = true
	} else if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	photo, err := codec.Decode(ctx, in.Photo, in.Limits)
	if err != nil {
		return nil, nil, err
	}
	if !detected {
		if found, err = plates.Detect(ctx, photo.Image); err != nil {
			return nil, nil, fmt.Errorf("detect plates: %w", err)
		}
	}
	var design image.Image
	if p.Plates == PlatesLogo {
		d, err := codec.Decode(ctx, in.Design, in.Limits)
		if err != nil {
			return nil, nil, prefix("logo", err)
		}
		design = d.Image
	}
	if len(found) == 0 {
		return photo, nil, nil
	}
	if p.Plates == PlatesLogo {
		if err := plates.ReadPlates(ctx, photo.Image, found); err != nil {
			return nil, nil, fmt.Errorf("detect plates: %w", err)
		}
		sure, unsure := byConfidence(found)
		photo.Image, err = paint.PlaceLogoInPlace(ctx, photo.Image, sure, unsure, design)
	} else {
		photo.Image, err = paint.HidePlatesInPlace(ctx, photo.Image, quadsOf(found), p.Plates.Hide)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("plates: %w", err)
	}
	return photo, found, nil
}

// wholeCar is the answer to requireWholeCar=true for a car the photo's
// sides cut off: car_truncated, naming them.
func wholeCar(p Params, sides []string) error {
	if !p.RequireWholeCar || len(sides) == 0 {
		return nil
	}
	return carphoto.Errorf(carphoto.ECarTruncated,
		"the photo's %s %s cut the car off; you were not charged (send a photo with the whole car in view, or requireWholeCar=false to get the answer with the sides named in X-Car-Truncated)",
		strings.Join(sides, " and "), agree(sides, "edge", "edges"))
}
