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
	"carphoto/imageops/vehicles"
)

// The studio operations, car-shadow and car-cutout, make a listing photo in
// one call: the car cut out of the photo as sent, told when the photo's
// edge cuts it off (Output.CarTruncated, RequireWholeCar), its plates
// hidden on the car's own pixels (Params.Plates), and framed or stood on a
// backdrop never enlarged past shadow.MaxEnlarge (Output.CarScale).

// Plates is what car-shadow and car-cutout do to the plates on the car
// they cut out: keep them (PlatesKeep, the zero value), hide them in the
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

// studioOp is car-shadow or car-cutout: the photo cut out as sent, its
// plates hidden on the car where p asks (studioCar), then framed, or
// stood on the backdrop.
func studioOp(ctx context.Context, in Input, p Params, _ bool) (*Output, error) {
	photo, pl, err := studioPlates(ctx, in, p)
	if err != nil {
		return nil, err
	}
	car, facts, err := studioCar(ctx, photo, p, pl)
	if err != nil {
		return nil, err
	}
	var out *Output
	switch {
	case p.Backdrop != nil:
		out, err = backdropOp(ctx, car, in, p)
	case p.Op == CarShadow:
		out, err = shadowOp(ctx, car, photo, p)
	default:
		out, err = framed(ctx, car, photo, p)
	}
	if err != nil {
		return nil, err
	}
	out.CarTruncated = facts.truncated
	out.CarOccluded = facts.occluded
	out.PlatesFound = len(pl.found)
	if p.Plates == PlatesLogo {
		sure, _ := byConfidence(pl.found) // read in studioPlates
		out.PlatesDesigned = len(sure)
	}
	return out, nil
}

// photoPlates are the plates found on the studio's photo as sent, in its
// coordinates, and, with plates=logo, plate-logo's design for them.
type photoPlates struct {
	found  []plates.Plate
	design image.Image
	// vehicles are the detector's objects on the photo, in its pixels,
	// where the plates needed them (plates=logo). The car is still chosen
	// on the studio's own look at the photo scaled (carOf): choosing it
	// among these moved the listing sample's matte (their boxes come from
	// the blocks' preview), so plates=logo looks twice.
	vehicles []vehicles.Object
}

// studioPlates is the decoded photo and, with p.Plates, the plates
// blur-plates finds on the same photo: a baseline JPEG's from its blocks'
// preview (plates.DetectIn), as blur-plates' block path reads it, any
// other photo's from its pixels; with plates=logo they are read as
// plate-logo reads them (its design goes on the sure ones only), and the
// design is decoded. Nothing is painted yet: the car is cut out of the
// photo as sent (studioCar).
func studioPlates(ctx context.Context, in Input, p Params) (*codec.Photo, photoPlates, error) {
	var pl photoPlates
	if p.Plates == PlatesKeep {
		photo, err := codec.Decode(ctx, in.Photo, in.Limits)
		return photo, pl, err
	}
	// The vehicles decide only the design: plates=blur hides every
	// detection without them, and the car's choice is the photo's one look.
	detected := false
	if src, err := paint.OpenBlockJPEG(ctx, in.Photo, in.Limits); err == nil {
		if p.Plates == PlatesLogo {
			if pl.vehicles, err = plates.VehiclesIn(ctx, src); err != nil {
				return nil, pl, fmt.Errorf("detect plates: %w", err)
			}
		}
		if pl.found, err = plates.DetectInAmong(ctx, src, pl.vehicles); err != nil {
			return nil, pl, fmt.Errorf("detect plates: %w", err)
		}
		detected = true
	} else if ctx.Err() != nil {
		return nil, pl, ctx.Err()
	}
	photo, err := codec.Decode(ctx, in.Photo, in.Limits)
	if err != nil {
		return nil, pl, err
	}
	if !detected {
		if p.Plates == PlatesLogo {
			if pl.vehicles, err = vehicles.Detect(ctx, photo.Image); err != nil {
				return nil, pl, fmt.Errorf("detect vehicles: %w", err)
			}
		}
		if pl.found, err = plates.DetectAmong(ctx, photo.Image, pl.vehicles); err != nil {
			return nil, pl, fmt.Errorf("detect plates: %w", err)
		}
	}
	if p.Plates == PlatesLogo {
		d, err := codec.Decode(ctx, in.Design, in.Limits)
		if err != nil {
			return nil, pl, prefix("logo", err)
		}
		pl.design = d.Image
		if len(pl.found) > 0 {
			if err := plates.ReadPlates(ctx, photo.Image, pl.found); err != nil {
				return nil, pl, fmt.Errorf("detect plates: %w", err)
			}
		}
	}
	return photo, pl, nil
}

// studioCar is the car of photo (carOf: cut out of the photo as sent)
// with the plates of pl hidden, or given the design, on the car's own
// pixels (hidePlatesOnCar), and what the studio tells of it (carFacts).
func studioCar(ctx context.Context, photo *codec.Photo, p Params, pl photoPlates) (*image.NRGBA, carFacts, error) {
	b := photo.Image.Bounds()
	car, facts, err := carOf(ctx, photo, p)
	if err != nil {
		return nil, carFacts{}, err
	}
	if err := hidePlatesOnCar(ctx, car, b, p, pl); err != nil {
		return nil, carFacts{}, err
	}
	return car, facts, nil
}

// hidePlatesOnCar hides the plates found on the photo of bounds from on its
// cut-out car (the photo scaled to car's size, MaxCanvasPixels): each with
// blur-plates' margin rule in p.Plates' style, or plate-logo's design on
// the sure ones and the others blurred, painted on the car's pixels by
// their matte (paint.HidePlatesOnCar): the cut-out's alpha is the same as
// with the plates kept, and nothing is painted where it is transparent.
func hidePlatesOnCar(ctx context.Context, car *image.NRGBA, from image.Rectangle, p Params, pl photoPlates) error {
	if p.Plates == PlatesKeep || len(pl.found) == 0 {
		return nil
	}
	sx := float64(car.Rect.Dx()) / float64(from.Dx())
	sy := float64(car.Rect.Dy()) / float64(from.Dy())
	onCar := func(qs []plates.Quad) []plates.Quad {
		out := make([]plates.Quad, len(qs))
		for i, q := range qs {
			for k, pt := range q {
				out[i][k] = plates.Point{X: (pt.X - float64(from.Min.X)) * sx, Y: (pt.Y - float64(from.Min.Y)) * sy}
			}
		}
		return out
	}
	var err error
	if p.Plates == PlatesLogo {
		sure, unsure := byConfidence(pl.found)
		err = paint.PlaceLogoOnCar(ctx, car, onCar(sure), onCar(unsure), pl.design)
	} else {
		err = paint.HidePlatesOnCar(ctx, car, onCar(quadsOf(pl.found)), p.Plates.Hide)
	}
	if err != nil {
		return fmt.Errorf("plates: %w", err)
	}
	return nil
}

// wholeCar is the answer to requireWholeCar=true for a car that is not
// whole: car_truncated naming the photo's sides that cut it off, or
// car_occluded for a person standing in front of it.
func wholeCar(p Params, facts carFacts) error {
	if !p.RequireWholeCar {
		return nil
	}
	if sides := facts.truncated; len(sides) > 0 {
		return carphoto.Errorf(carphoto.ECarTruncated,
			"the photo's %s %s cut the car off; you were not charged (send a photo with the whole car in view, or requireWholeCar=false to get the answer with the sides named in X-Car-Truncated)",
			strings.Join(sides, " and "), carphoto.Agree(sides, "edge", "edges"))
	}
	if facts.occluded {
		return carphoto.Errorf(carphoto.ECarOccluded,
			"a person stands in front of the car and hides part of it; you were not charged (send a photo with nothing in front of the car, or requireWholeCar=false to get the answer with the person cut out of the car, said in X-Car-Occluded)")
	}
	return nil
}
