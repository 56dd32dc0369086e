package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
	"carphoto/imageops/jpegblock"
	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
	"carphoto/imageops/shadow"
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
func Process(ctx context.Context, op string, photo, logo []byte, p jobs.Params, lim codec.Limits) (*jobs.Result, error) {
	var found []plates.Plate // when the block path found them and handed over
	if op == jobs.OpBlurPlates || op == jobs.OpPlateLogo {
		res, ok, f, err := plateOpBlocks(ctx, op, photo, logo, p, lim)
		if ok {
			return res, err
		}
		found = f
	}
	in, err := codec.Decode(ctx, photo, lim)
	if err != nil {
		return nil, err
	}
	if p.Backdrop && (op == jobs.OpCarShadow || op == jobs.OpCarCutout) {
		return backdropOp(ctx, op, in, logo, p, lim) // logo: the second image, here the backdrop
	}
	switch op {
	case jobs.OpBlurPlates, jobs.OpPlateLogo:
		return plateOp(ctx, op, in, logo, p, lim, found)
	case jobs.OpCarShadow:
		return shadowOp(ctx, in, p)
	case jobs.OpCarCutout:
		return cutoutOp(ctx, in, p)
	case jobs.OpLogo:
		return logoOp(ctx, in, logo, p, lim)
	}
	return nil, carphoto.Errorf(carphoto.EUnknownTool, "unknown tool %q", op)
}

// ProcessFull is Process without the block path: every photo decoded and
// encoded again in full, as before it. For benchmarks and comparisons.
func ProcessFull(ctx context.Context, op string, photo, logo []byte, p jobs.Params, lim codec.Limits) (*jobs.Result, error) {
	in, err := codec.Decode(ctx, photo, lim)
	if err != nil {
		return nil, err
	}
	if op == jobs.OpBlurPlates || op == jobs.OpPlateLogo {
		return plateOp(ctx, op, in, logo, p, lim, nil)
	}
	return Process(ctx, op, photo, logo, p, lim)
}

// plateOp finds the plates in the decoded photo, unless found holds them
// already, and hides or replaces them.
func plateOp(ctx context.Context, op string, in *codec.Photo, logo []byte, p jobs.Params, lim codec.Limits, found []plates.Plate) (*jobs.Result, error) {
	var design image.Image
	if op == jobs.OpPlateLogo {
		d, err := codec.Decode(ctx, logo, lim)
		if err != nil {
			return nil, prefix("logo", err)
		}
		design = d.Image
	}
	var err error
	if found == nil {
		if found, err = plates.Detect(ctx, in.Image); err != nil {
			return nil, fmt.Errorf("detect plates: %w", err)
		}
	}
	if err := required(op, found, p); err != nil {
		return nil, err
	}
	// Every style covers the plate's quad grown by the margin rule
	// (plates.HideOf); a design goes on the quad itself.
	quads := quadsOf(found)
	// A transparent PNG or WebP keeps its format (and so its alpha); any
	// other photo is answered as JPEG, as the contract says.
	format := "jpeg"
	if in.Format != "jpeg" && codec.HasTransparency(in.Image) {
		format = in.Format
	}
	// The decoded photo is this task's own: the plates are painted on it
	// where it is, no copy of the whole frame.
	out := in.Image
	if len(quads) > 0 {
		if op == jobs.OpPlateLogo {
			sure, unsure := byConfidence(found)
			out, err = paint.PlaceLogoInPlace(ctx, in.Image, sure, unsure, design)
		} else {
			out, err = paint.HidePlatesInPlace(ctx, in.Image, quads, paint.Style(p.Style))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	res, err := encode(out, in, p.Format, format)
	if err != nil {
		return nil, err
	}
	res.PlatesFound = len(found)
	return res, nil
}

// plateOpBlocks runs a plate operation in a baseline JPEG's own blocks
// (paint.BlockJPEG): the finder reads a preview built from the
// coefficients, only the MCUs a hidden plate changes are coded again, and
// the rest of the photo comes back bit for bit (EXIF orientation kept as an
// orientation-only EXIF, ICC kept, other metadata dropped). ok is false
// when the full path must answer instead: a JPEG it does not edit
// (progressive, arithmetic, CMYK), a PNG or WebP, another format asked
// for, or a damaged file, whose 400 (or lenient decode) is the full path's;
// or plates so large that the full path is faster, in which case found
// hands over the plates it found.
func plateOpBlocks(ctx context.Context, op string, photo, logo []byte, p jobs.Params, lim codec.Limits) (res *jobs.Result, ok bool, found []plates.Plate, err error) {
	if p.Format != "" && p.Format != "jpeg" {
		return nil, false, nil, nil
	}
	src, err := paint.OpenBlockJPEG(ctx, photo, lim)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true, nil, ctx.Err()
		}
		return nil, false, nil, nil
	}
	var design image.Image
	if op == jobs.OpPlateLogo {
		d, err := codec.Decode(ctx, logo, lim)
		if err != nil {
			return nil, true, nil, prefix("logo", err)
		}
		design = d.Image
	}
	found, err = plates.DetectIn(ctx, src)
	if err != nil {
		return nil, true, nil, fmt.Errorf("detect plates: %w", err)
	}
	if err := required(op, found, p); err != nil {
		return nil, true, nil, err
	}
	if src.EditShare(quadsOf(found)) > maxBlockEditShare {
		return nil, false, found, nil
	}
	var body []byte
	if op == jobs.OpPlateLogo {
		sure, unsure := byConfidence(found)
		body, err = src.PlaceLogo(ctx, sure, unsure, design)
	} else {
		body, err = src.HidePlates(ctx, quadsOf(found), paint.Style(p.Style))
	}
	if errors.Is(err, jpegblock.ErrUnsupported) {
		// The file's Huffman tables cannot code the edit: decode it in full.
		return nil, false, found, nil
	}
	if err != nil {
		return nil, true, nil, fmt.Errorf("%s: %w", op, err)
	}
	return &jobs.Result{ContentType: "image/jpeg", Body: body, PlatesFound: len(found)}, true, found, nil
}

// required is the answer to requirePlate=true: plate_not_found when no
// plate was found or, for plate-logo, none sure enough to carry the
// design (plates.DesignConfidence; a doubtful one is blurred instead).
func required(op string, found []plates.Plate, p jobs.Params) error {
	if !p.RequirePlate {
		return nil
	}
	if len(found) == 0 {
		return carphoto.Errorf(carphoto.EPlateNotFound,
			"no licence plate was found in the photo; you were not charged (send requirePlate=false to get the photo back unchanged)")
	}
	if sure, _ := byConfidence(found); op == jobs.OpPlateLogo && len(sure) == 0 {
		return carphoto.Errorf(carphoto.EPlateNotFound,
			"no licence plate was found in the photo sure enough to carry the design; you were not charged (send requirePlate=false to get the photo back, anything that may be a plate blurred)")
	}
	return nil
}

// quadsOf is the quads of the plates found.
func quadsOf(found []plates.Plate) []plates.Quad {
	quads := make([]plates.Quad, len(found))
	for i, f := range found {
		quads[i] = f.Quad
	}
	return quads
}

// byConfidence parts the plates found into those that get plate-logo's
// design (a score of at least plates.DesignConfidence) and the doubtful
// ones, which are blurred: a design on a grille badge shows, a blur
// hardly does.
func byConfidence(found []plates.Plate) (sure, unsure []plates.Quad) {
	for _, f := range found {
		if f.Score >= plates.DesignConfidence {
			sure = append(sure, f.Quad)
		} else {
			unsure = append(unsure, f.Quad)
		}
	}
	return sure, unsure
}

// maxBlockEditShare is the largest share of the photo the block path
// decodes and codes again around the plates: a close-up's plates cover
// so much of it that the block path, whose cost grows with that area, is
// slower than decoding and encoding the whole photo.
const maxBlockEditShare = 0.15

// ShadowMaxPixels is the largest car-shadow or car-cutout answer: a larger
// photo is scaled down to it first (area filter), so that the cut-out, the
// shadow and the PNG of a 60-megapixel photo fit in the worker's memory
// budget and its deadline on one core (docs/BENCHMARKS.md), and a canvas
// that crop, padding and aspect grow past it is scaled down to it
// (shadow.FrameFit). A listing shows a photo at a few megapixels.
const ShadowMaxPixels = shadow.CanvasMaxPixels

func shadowOp(ctx context.Context, in *codec.Photo, p jobs.Params) (*jobs.Result, error) {
	car, err := carOf(ctx, in)
	if err != nil {
		return nil, err
	}
	out, err := shadow.CarShadow(ctx, car, shadow.ShadowOptions{Reflection: p.Reflection, ReuseCar: true})
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	return framed(ctx, out, in, p)
}

func cutoutOp(ctx context.Context, in *codec.Photo, p jobs.Params) (*jobs.Result, error) {
	car, err := carOf(ctx, in)
	if err != nil {
		return nil, err
	}
	return framed(ctx, car, in, p)
}

// carOf is the car of the photo on a transparent background, the photo
// scaled to ShadowMaxPixels first: a transparent PNG or WebP as it is (a
// cut-out the client made), any other photo cut out.
func carOf(ctx context.Context, in *codec.Photo) (*image.NRGBA, error) {
	transparent := in.Format != "jpeg" && codec.HasTransparency(in.Image)
	img, err := codec.FitPixels(ctx, in.Image, ShadowMaxPixels)
	if err != nil {
		return nil, err
	}
	in.Image = nil // the full-size decode is no longer needed: let it go
	if transparent {
		return codec.ToNRGBA(img), nil
	}
	car, err := cutout.Cut(ctx, img)
	if err != nil {
		return nil, fmt.Errorf("cut out: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := carFound(car); err != nil {
		return nil, err
	}
	return car, nil
}

// carFound is car_not_found when the cut-out holds no car: its confident
// car (alpha >= 128) covers less than cutout.MinCarShare of the photo, as
// on a photo of a plain wall or sky. An empty cut-out is never what a client
// wants, so no opt-in, unlike requirePlate. A transparent photo (the client's own cut-out) is not
// judged.
func carFound(car *image.NRGBA) error {
	if cutout.CarShare(car) >= cutout.MinCarShare {
		return nil
	}
	return carphoto.Errorf(carphoto.ECarNotFound,
		"no car was found in the photo; you were not charged (send a photo with a whole car in view)")
}

// framed frames a car (with its shadow) as p asks and encodes it: a PNG
// on a transparent background, or flattened on p.Background and then a
// JPEG, unless p.Format asks otherwise. car is the worker's own: framing
// crops it in place where it can, and flattening is done in its pixels.
// The canvas is never larger than ShadowMaxPixels: one that padding or
// aspect would grow past it has the car scaled down to fit (the web
// refuses the canvases far past it before any work).
func framed(ctx context.Context, car *image.NRGBA, in *codec.Photo, p jobs.Params) (*jobs.Result, error) {
	framed, err := shadow.FrameFit(ctx, car, shadow.Canvas{
		Crop: p.Crop, Padding: p.Padding, PaddingShare: p.PaddingShare, Aspect: p.Aspect,
	}, ShadowMaxPixels, shadow.CanvasMaxSide)
	if err != nil {
		return nil, fmt.Errorf("frame: %w", err)
	}
	img := image.Image(framed)
	format := "png"
	if p.Background != "" {
		bg, err := shadow.ParseColour(p.Background)
		if err != nil {
			return nil, err
		}
		img = codec.FlattenInPlace(framed, bg)
		format = "jpeg"
	} else if p.Format == "jpeg" && codec.HasTransparency(framed) {
		img = codec.FlattenInPlace(framed, color.White) // as encode would, without a copy
	}
	return encode(img, in, p.Format, format)
}

func logoOp(ctx context.Context, in *codec.Photo, logo []byte, p jobs.Params, lim codec.Limits) (*jobs.Result, error) {
	d, err := codec.Decode(ctx, logo, lim)
	if err != nil {
		return nil, prefix("logo", err)
	}
	out, _, err := paint.Overlay(ctx, in.Image, d.Image, paint.OverlayOptions{
		Position: p.Position, Scale: p.Scale, Opacity: p.Opacity, Margin: p.Margin,
	})
	if err != nil {
		return nil, err
	}
	format := "jpeg"
	if in.Format != "jpeg" && codec.HasTransparency(in.Image) {
		format = in.Format
	}
	return encode(out, in, p.Format, format)
}

// encode writes the answer in the format the client asked for, else in
// format: a JPEG at the input's quality (flattened on white where the
// image is transparent), a PNG, or a lossy WebP with its alpha.
func encode(img image.Image, in *codec.Photo, asked, format string) (*jobs.Result, error) {
	if asked != "" {
		format = asked
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		if codec.HasTransparency(img) {
			img = codec.Flatten(img, color.White)
		}
		err = codec.EncodeJPEG(&buf, img, jpegQuality(in), in.ICC)
	case "png":
		err = codec.EncodePNG(&buf, img, in.ICC)
	case "webp":
		err = codec.EncodeWebP(&buf, img, jpegQuality(in))
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
func jpegQuality(in *codec.Photo) int {
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
