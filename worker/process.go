package worker

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"

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
	var buf bytes.Buffer
	if err := imageops.EncodeJPEG(&buf, out, jpegQuality(in), in.ICC); err != nil {
		return nil, fmt.Errorf("encode jpeg: %w", err)
	}
	return &jobs.Result{ContentType: "image/jpeg", PlatesFound: len(found), Body: buf.Bytes()}, nil
}

func shadowOp(ctx context.Context, in *imageops.Photo, p jobs.Params) (*jobs.Result, error) {
	var car *image.NRGBA
	if in.Format != "jpeg" && imageops.HasTransparency(in.Image) {
		// A transparent cut-out is used as it is.
		car = toNRGBA(in.Image)
	} else {
		var err error
		if car, err = cutout.Cut(ctx, in.Image); err != nil {
			return nil, fmt.Errorf("cut out: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := imageops.CarShadow(ctx, car, imageops.ShadowOptions{Reflection: p.Reflection})
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	var buf bytes.Buffer
	if err := imageops.EncodePNG(&buf, out, in.ICC); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return &jobs.Result{ContentType: "image/png", Body: buf.Bytes()}, nil
}

// jpegQuality keeps the output close to the input's quality: re-encoding a
// Q75 photo at Q95 only inflates it, and a Q98 photo at Q80 loses detail.
func jpegQuality(in *imageops.Photo) int {
	if in.Quality == 0 {
		return defaultQuality
	}
	return min(max(in.Quality, minQuality), maxQuality)
}

func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Bounds().Min == (image.Point{}) {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Bounds(), img, b.Min, draw.Src)
	return n
}

// prefix names the field a client error is about.
func prefix(field string, err error) error {
	if e, ok := err.(*carphoto.Error); ok {
		return &carphoto.Error{Code: e.Code, Message: field + ": " + e.Message, Err: e.Err}
	}
	return err
}
