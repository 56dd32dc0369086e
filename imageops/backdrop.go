package imageops

import (
	"context"
	"fmt"
	"image"

	"carphoto/imageops/codec"
	"carphoto/imageops/shadow"
)

// backdropOp is car-cutout or car-shadow on a backdrop (p.Backdrop): the
// car the studio cut out of the photo (carOf: car_not_found as without
// one), stood on the backdrop as p places it, with car-shadow's shadow and reflection on the
// backdrop's floor. The answer is the backdrop's size (scaled down where
// the car would otherwise be enlarged past shadow.MaxEnlarge), a PNG unless
// p.Format asks otherwise, in the backdrop's colour profile and, as a
// JPEG, at its quality.
func backdropOp(ctx context.Context, car *image.NRGBA, in Input, p Params) (*Output, error) {
	// The web held the backdrop to MAX_BACKDROP_PIXELS, at most the
	// largest answer; held to that again here before it is decoded.
	lim := in.Limits
	lim.MaxPixels = backdropMaxPixels(lim.MaxPixels) // zero would be DefaultMaxPixels, larger
	bd, err := codec.Decode(ctx, in.Backdrop, lim)
	if err != nil {
		return nil, prefix("backdrop", err)
	}
	img := bd.Image
	bd.Image = nil // OnBackdrop draws it first and lets it go; bd keeps the profile and quality
	out, fit, err := shadow.Stand(ctx, car, img, shadow.BackdropOptions{
		Placement:  *p.Backdrop,
		Shadow:     p.Op == CarShadow,
		Reflection: p.Reflection && p.Op == CarShadow,
		MaxEnlarge: shadow.MaxEnlarge,
	})
	if err != nil {
		return nil, fmt.Errorf("backdrop: %w", err)
	}
	res, err := encode(out, bd, p.Format, "png")
	if err != nil {
		return nil, err
	}
	res.CarScale = fit.Scale
	return res, nil
}
