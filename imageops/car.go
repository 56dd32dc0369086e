package imageops

import (
	"context"
	"fmt"
	"image"
	"image/color"

	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
	"carphoto/imageops/shadow"
	"carphoto/imageops/vehicles"
)

// shadowOp is car-shadow without a backdrop: the car (carOf, as the
// studio cut it out of in) with its shadow on the ground under it, framed.
func shadowOp(ctx context.Context, car *image.NRGBA, in *codec.Photo, p Params) (*Output, error) {
	out, err := shadow.CarShadow(ctx, car, shadow.ShadowOptions{Reflection: p.Reflection, ReuseCar: true})
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	return framed(ctx, out, in, p)
}

// carFacts is what the studio tells of the car it cut out: the sides of
// the photo that cut it off (boxTruncated, from the vehicle's box), and
// whether a person standing in front of it was cut out of it (carRegion's
// occluded).
type carFacts struct {
	truncated []string
	occluded  bool
}

// carOf is the car of the photo on a transparent background, the photo
// scaled to MaxCanvasPixels first: a transparent PNG or WebP as it is (a
// cut-out the client made: no detector, no gate, no refusal), any other
// photo's chosen vehicle cut out (scene.cutCar), with what the studio
// tells of it (carFacts; car_truncated or car_occluded with
// p.RequireWholeCar). A client's own cut-out is not judged: it may be
// cropped to the car.
func carOf(ctx context.Context, in *codec.Photo, p Params) (*image.NRGBA, carFacts, error) {
	transparent := in.Format != "jpeg" && codec.HasTransparency(in.Image)
	img, err := codec.FitPixels(ctx, in.Image, MaxCanvasPixels)
	if err != nil {
		return nil, carFacts{}, err
	}
	in.Image = nil // the full-size decode is no longer needed: let it go
	if transparent {
		return codec.ToNRGBA(img), carFacts{}, nil
	}
	car, chosen, err := chosenCar(ctx, img)
	if err != nil {
		return nil, carFacts{}, err
	}
	facts := carFacts{truncated: boxTruncated(chosen.Box, img.Bounds()), occluded: chosen.occluded}
	if err := wholeCar(p, facts); err != nil {
		return nil, carFacts{}, err
	}
	return car, facts, nil
}

// chosenVehicle is the studio's chosen vehicle, and whether a person
// standing in front of it was cut out of it.
type chosenVehicle struct {
	vehicles.Object
	occluded bool
}

// chosenCar is img's chosen vehicle cut out (scene.cutCar), and the
// vehicle; car_not_found when there is none or its cut-out holds no car
// (carFound).
func chosenCar(ctx context.Context, img image.Image) (*image.NRGBA, chosenVehicle, error) {
	s, err := detectScene(ctx, img)
	if err != nil {
		return nil, chosenVehicle{}, err
	}
	car, obj, err := s.cutCar(ctx, img)
	chosen := chosenVehicle{Object: obj, occluded: s.region != nil && s.region.occluded}
	if err != nil {
		if RefusalReason(err) != "" {
			return nil, chosen, err
		}
		return nil, chosen, fmt.Errorf("cut out: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, chosen, err
	}
	if err := carFound(car); err != nil {
		return nil, chosen, err
	}
	return car, chosen, nil
}

// sceneryMessage is car_not_found's message for a cut-out that is scenery.
const sceneryMessage = "no car was found in the photo: the cut-out took the scenery (ground, road, buildings or sky from one edge of the photo to another); you were not charged (send a photo with a whole car in view, nearer than the scenery around it)"

// carFound is car_not_found when the cut-out of the chosen vehicle holds no
// car a studio shot can be made of: its confident car (alpha >= 128) covers
// less than cutout.MinCarShare of the photo (a car in the far distance), or
// it is scenery (cutout.Scenery: ground, a road, buildings or sky taken from
// one edge of the photo to another), which would otherwise be stood on the
// dealer's backdrop as a slab. An empty cut-out is never what a client
// wants, so no opt-in, unlike requirePlate. A transparent photo (the
// client's own cut-out) is not judged.
func carFound(car *image.NRGBA) error {
	if cutout.CarShare(car) < cutout.MinCarShare {
		return refuseCar(RefusedTooSmall,
			"no car was found in the photo; you were not charged (send a photo with a whole car in view)")
	}
	if cutout.Scenery(car) {
		return refuseCar(RefusedScenery, sceneryMessage)
	}
	return nil
}

// framed frames a car (with its shadow) as p asks and encodes it: a PNG
// on a transparent background, or flattened on p.Background and then a
// JPEG, unless p.Format asks otherwise. car is the worker's own: framing
// crops it in place where it can, and flattening is done in its pixels.
// The canvas is never larger than MaxCanvasPixels: one that padding or
// aspect would grow past it has the car scaled down to fit (the web
// refuses the canvases far past it before any work).
func framed(ctx context.Context, car *image.NRGBA, in *codec.Photo, p Params) (*Output, error) {
	framed, err := shadow.FrameFit(ctx, car, p.Canvas, MaxCanvasPixels, shadow.CanvasMaxSide)
	if err != nil {
		return nil, fmt.Errorf("frame: %w", err)
	}
	img := image.Image(framed)
	format := "png"
	if p.Background != nil {
		img = codec.FlattenInPlace(framed, color.NRGBA(*p.Background))
		format = "jpeg"
	} else if p.Format == "jpeg" && codec.HasTransparency(framed) {
		img = codec.FlattenInPlace(framed, color.White) // as encode would, without a copy
	}
	return encode(img, in, p.Format, format)
}
