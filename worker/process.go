package worker

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"

	"carphoto"
	"carphoto/imageops"
	"carphoto/imageops/cutout"
	"carphoto/imageops/plates"
	"carphoto/jobs"
)

// JPEG output quality follows the input's, within these bounds; inputs that
// were not JPEG get defaultQuality.
const (
	minQuality     = 70
	maxQuality     = 95
	defaultQuality = 90
)

// Process runs one operation on encoded inputs and returns the encoded
// result. Errors are *carphoto.Error for the client's mistakes.
func Process(ctx context.Context, op string, photo, logo []byte, p jobs.Params, lim imageops.Limits) (*jobs.Result, error) {
	in, err := imageops.Decode(ctx, photo, lim)
	if err != nil {
		return nil, err
	}
	switch op {
	case jobs.OpBlurPlates, jobs.OpPlateLogo:
		return plateOp(ctx, op, in, logo, p, lim)
	case jobs.OpCarShadow:
		return shadowOp(ctx, in, p)
	case jobs.OpCarCutout:
		return cutoutOp(ctx, in, p)
	case jobs.OpLogo:
		return logoOp(ctx, in, logo, p, lim)
	}
	return nil, carphoto.Errorf(carphoto.EUnknownTool, "unknown tool %q", op)
}

func plateOp(ctx context.Context, op string, in *imageops.Photo, logo []byte, p jobs.Params, lim imageops.Limits) (*jobs.Result, error) {
	var design image.Image
	if op == jobs.OpPlateLogo {
		d, err := imageops.Decode(ctx, logo, lim)
		if err != nil {
			return nil, prefix("logo", err)
		}
		design = d.Image
	}
	found, err := plates.Detect(ctx, in.Image)
	if err != nil {
		return nil, fmt.Errorf("detect plates: %w", err)
	}
	if len(found) == 0 && p.RequirePlate {
		return nil, carphoto.Errorf(carphoto.EPlateNotFound,
			"no licence plate was found in the photo; you were not charged (send requirePlate=false to get the photo back unchanged)")
	}
	// Every style covers the plate's quad grown by the margin rule
	// (plates.HideOf); a design goes on the quad itself.
	quads := make([]plates.Quad, len(found))
	for i, f := range found {
		quads[i] = f.Quad
	}
	out := in.Image
	if len(quads) > 0 {
		if op == jobs.OpPlateLogo {
			out, err = imageops.PlaceLogo(ctx, in.Image, quads, design)
		} else {
			out, err = imageops.HidePlates(ctx, in.Image, quads, imageops.Style(p.Style))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	// A transparent PNG or WebP keeps its format (and so its alpha); any
	// other photo is answered as JPEG, as the contract says.
	format := "jpeg"
	if in.Format != "jpeg" && imageops.HasTransparency(in.Image) {
		format = in.Format
	}
	res, err := encode(out, in, p.Format, format)
	if err != nil {
		return nil, err
	}
	res.PlatesFound = len(found)
	return res, nil
}

// ShadowMaxPixels is the largest car-shadow or car-cutout answer: a larger
// photo is scaled down to it first (area filter), so that the cut-out, the
// shadow and the PNG of a 60-megapixel photo fit in the worker's memory
// budget and its deadline on one core (docs/BENCHMARKS.md). A listing
// shows a photo at a few megapixels.
const ShadowMaxPixels = 16_000_000

func shadowOp(ctx context.Context, in *imageops.Photo, p jobs.Params) (*jobs.Result, error) {
	car, err := carOf(ctx, in)
	if err != nil {
		return nil, err
	}
	out, err := imageops.CarShadow(ctx, car, imageops.ShadowOptions{Reflection: p.Reflection})
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	return framed(out, in, p)
}

func cutoutOp(ctx context.Context, in *imageops.Photo, p jobs.Params) (*jobs.Result, error) {
	car, err := carOf(ctx, in)
	if err != nil {
		return nil, err
	}
	return framed(car, in, p)
}

// carOf is the car of the photo on a transparent background, the photo
// scaled to ShadowMaxPixels first: a transparent PNG or WebP as it is (a
// cut-out the client made), any other photo cut out.
func carOf(ctx context.Context, in *imageops.Photo) (*image.NRGBA, error) {
	transparent := in.Format != "jpeg" && imageops.HasTransparency(in.Image)
	img, err := imageops.FitPixels(ctx, in.Image, ShadowMaxPixels)
	if err != nil {
		return nil, err
	}
	in.Image = nil // the full-size decode is no longer needed: let it go
	if transparent {
		return imageops.ToNRGBA(img), nil
	}
	car, err := cutout.Cut(ctx, img)
	if err != nil {
		return nil, fmt.Errorf("cut out: %w", err)
	}
	return car, ctx.Err()
}

// framed frames a car (with its shadow) as p asks and encodes it: a PNG
// on a transparent background, or flattened on p.Background and then a
// JPEG, unless p.Format asks otherwise.
func framed(car *image.NRGBA, in *imageops.Photo, p jobs.Params) (*jobs.Result, error) {
	img := image.Image(imageops.Frame(car, imageops.Canvas{
		Crop: p.Crop, Padding: p.Padding, PaddingShare: p.PaddingShare, Aspect: p.Aspect,
	}))
	format := "png"
	if p.Background != "" {
		bg, err := imageops.ParseColour(p.Background)
		if err != nil {
			return nil, err
		}
		img = imageops.Flatten(img, bg)
		format = "jpeg"
	}
	return encode(img, in, p.Format, format)
}

func logoOp(ctx context.Context, in *imageops.Photo, logo []byte, p jobs.Params, lim imageops.Limits) (*jobs.Result, error) {
	d, err := imageops.Decode(ctx, logo, lim)
	if err != nil {
		return nil, prefix("logo", err)
	}
	out, _, err := imageops.Overlay(ctx, in.Image, d.Image, imageops.OverlayOptions{
		Position: p.Position, Scale: p.Scale, Opacity: p.Opacity, Margin: p.Margin,
	})
	if err != nil {
		return nil, err
	}
	format := "jpeg"
	if in.Format != "jpeg" && imageops.HasTransparency(in.Image) {
		format = in.Format
	}
	return encode(out, in, p.Format, format)
}

// encode writes the answer in the format the client asked for, else in
// format: a JPEG at the input's quality (flattened on white where the
// image is transparent), a PNG, or a lossy WebP with its alpha.
func encode(img image.Image, in *imageops.Photo, asked, format string) (*jobs.Result, error) {
	if asked != "" {
		format = asked
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		if imageops.HasTransparency(img) {
			img = imageops.Flatten(img, color.White)
		}
		err = imageops.EncodeJPEG(&buf, img, jpegQuality(in), in.ICC)
	case "png":
		err = imageops.EncodePNG(&buf, img, in.ICC)
	case "webp":
		err = imageops.EncodeWebP(&buf, img, jpegQuality(in))
	default:
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "format must be jpeg, png or webp, not %q", format)
	}
	if err != nil {
		return nil, err
	}
	return &jobs.Result{ContentType: "image/" + format, Body: buf.Bytes()}, nil
}

// jpegQuality keeps the output close to the input's quality: re-encoding a
// Q75 photo at Q95 only inflates it, and a Q98 photo at Q80 loses detail.
func jpegQuality(in *imageops.Photo) int {
	if in.Quality == 0 {
		return defaultQuality
	}
	return min(max(in.Quality, minQuality), maxQuality)
}

// prefix names the field a client error is about.
func prefix(field string, err error) error {
	if e, ok := err.(*carphoto.Error); ok {
		return &carphoto.Error{Code: e.Code, Message: field + ": " + e.Message, Err: e.Err}
	}
	return err
}
