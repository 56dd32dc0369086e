package imageops

import (
	"context"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
)

// Op is an operation, named as the API's tool.
type Op string

// The operations Process runs.
const (
	BlurPlates  Op = "blur-plates"
	PlateLogo   Op = "plate-logo"
	CarShadow   Op = "car-shadow"
	CarCutout   Op = "car-cutout"
	LogoOverlay Op = "logo-overlay"
)

// Input is what an operation reads: encoded images, each held to Limits
// from its header before any pixel is decoded.
type Input struct {
	Photo    []byte
	Design   []byte // plate-logo's design, logo-overlay's logo; nil otherwise
	Backdrop []byte // car-shadow's and car-cutout's backdrop, with Params.Backdrop
	Limits   codec.Limits
}

// The parameter types of the rooms that Params carry, named here so that
// the packages outside imageops go through its door.
type (
	Canvas         = shadow.Canvas        // how car-shadow and car-cutout frame the car
	Placement      = shadow.Placement     // where the car stands on a backdrop
	OverlayOptions = paint.OverlayOptions // logo-overlay's position, scale, opacity and margin
)

// Params are the client's choices for an operation, already checked by the
// web side.
type Params struct {
	Op Op
	// Format is the answer's format asked for ("jpeg", "png", "webp");
	// empty keeps the operation's own rule (docs/API.md, "Formats").
	Format string

	// blur-plates and plate-logo.
	Style        paint.Style // blur-plates: how a plate is hidden; empty is blur
	RequirePlate bool        // plate_not_found instead of the photo unchanged

	// car-shadow and car-cutout.
	Reflection bool          // car-shadow: the floor reflection too
	Canvas     shadow.Canvas // how the car is framed
	Background *Colour       // nil for transparent
	// Backdrop, when set, stands the car on Input.Backdrop where it says
	// instead of framing it (Canvas and Background unused).
	Backdrop *shadow.Placement
	// Plates, when not PlatesKeep, has the plates blur-plates finds on
	// the photo hidden (a Style) or given the design in Input.Design
	// (PlatesLogo) on the car cut out of it, its matte unchanged
	// (studio.go).
	Plates Plates
	// RequireWholeCar answers car_truncated instead of a car the photo's
	// edge cuts off (Output.CarTruncated), and car_occluded instead of one
	// a person stands in front of (Output.CarOccluded).
	RequireWholeCar bool

	// logo-overlay.
	Overlay paint.OverlayOptions
}

// Output is an operation's answer.
type Output struct {
	ContentType string // "image/jpeg", "image/png" or "image/webp"
	Body        []byte
	PlatesFound int // blur-plates and plate-logo (car-shadow and car-cutout with Plates): every plate found, sure or not
	// PlatesDesigned is how many of them got plate-logo's design (plate-logo,
	// and car-shadow and car-cutout with plates=logo); the others were hidden.
	PlatesDesigned int
	// CarTruncated are the sides of the photo that cut the car off
	// (from the chosen vehicle's box, boxTruncated; car-shadow and car-cutout on a photo they cut out).
	CarTruncated []string
	// CarOccluded says a person standing in front of the car was cut out
	// of it (car-shadow and car-cutout on a photo they cut out).
	CarOccluded bool
	// CarScale is the car's width as a share of the answer's on a backdrop
	// (shadow.Fit.Scale), 0 without one.
	CarScale float64
	// ICCDropped says the photo's colour profile was left out of the
	// answer for its size (codec.EmbedICC); ICCConverted that its pixels
	// were converted from it to sRGB (else they are as they were: a
	// profile the converter does not read).
	ICCDropped, ICCConverted bool
}

// Process runs one operation on encoded inputs and returns the encoded
// answer. A plate operation on a baseline JPEG works in the file's own
// blocks where it can (see plateOp); everything else decodes the photo,
// works on its pixels and encodes the answer. Errors are *carphoto.Error
// for the client's mistakes; ctx.Err() when ctx ends between steps.
func Process(ctx context.Context, in Input, p Params) (*Output, error) {
	return process(ctx, in, p, true)
}

// process is Process, its plate operations going the block path only
// where blocks is set (the answers check also runs them without).
func process(ctx context.Context, in Input, p Params, blocks bool) (*Output, error) {
	op, ok := operations[p.Op]
	if !ok {
		return nil, carphoto.Errorf(carphoto.EUnknownTool, "unknown tool %q", p.Op)
	}
	return op(ctx, in, p, blocks)
}

// operation is one Op's work: its steps from the encoded inputs to the
// encoded answer. blocks lets a plate operation take the block path.
type operation func(ctx context.Context, in Input, p Params, blocks bool) (*Output, error)

// operations are the one table of what Process runs for each Op.
var operations = map[Op]operation{
	BlurPlates:  plateOp,
	PlateLogo:   plateOp,
	CarShadow:   studioOp,
	CarCutout:   studioOp,
	LogoOverlay: overlayOp,
}
