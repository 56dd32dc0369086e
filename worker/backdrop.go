package worker

import (
	"context"
	"fmt"

	"carphoto/imageops/codec"
	"carphoto/imageops/shadow"
	"carphoto/jobs"
)

// backdropOp is car-cutout or car-shadow on a backdrop (p.Backdrop): the
// car cut out of the photo (car_not_found as without one), stood on the
// backdrop as p places it, with car-shadow's shadow and reflection on the
// backdrop's floor. The answer is the backdrop's size, a PNG unless
// p.Format asks otherwise, in the backdrop's colour profile and, as a
// JPEG, at its quality.
func backdropOp(ctx context.Context, op string, in *codec.Photo, backdrop []byte, p jobs.Params, lim codec.Limits) (*jobs.Result, error) {
	car, err := carOf(ctx, in)
	if err != nil {
		return nil, err
	}
	// The web held the backdrop to MAX_BACKDROP_PIXELS, at most the
	// largest answer; held to that again here before it is decoded.
	if lim.MaxPixels <= 0 || lim.MaxPixels > shadow.CanvasMaxPixels {
		lim.MaxPixels = shadow.CanvasMaxPixels // zero would be DefaultMaxPixels, larger
	}
	bd, err := codec.Decode(ctx, backdrop, lim)
	if err != nil {
		return nil, prefix("backdrop", err)
	}
	img := bd.Image
	bd.Image = nil // OnBackdrop draws it first and lets it go; bd keeps the profile and quality
	out, err := shadow.OnBackdrop(ctx, car, img, shadow.BackdropOptions{
		Placement:  shadow.Placement{FloorY: p.FloorY, Scale: p.Scale, CenterX: p.CenterX},
		Shadow:     op == jobs.OpCarShadow,
		Reflection: p.Reflection && op == jobs.OpCarShadow,
	})
	if err != nil {
		return nil, fmt.Errorf("backdrop: %w", err)
	}
	return encode(out, bd, p.Format, "png")
}
