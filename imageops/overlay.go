package imageops

import (
	"context"

	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
)

// overlayOp is logo-overlay: the design drawn on the photo as a watermark.
func overlayOp(ctx context.Context, in Input, p Params, _ bool) (*Output, error) {
	photo, err := codec.Decode(ctx, in.Photo, in.Limits)
	if err != nil {
		return nil, err
	}
	d, err := codec.Decode(ctx, in.Design, in.Limits)
	if err != nil {
		return nil, prefix("logo", err)
	}
	out, _, err := paint.Overlay(ctx, photo.Image, d.Image, p.Overlay)
	if err != nil {
		return nil, err
	}
	format := "jpeg"
	if photo.Format != "jpeg" && codec.HasTransparency(photo.Image) {
		format = photo.Format
	}
	return encode(out, photo, p.Format, format)
}
