package imageops

import (
	"carphoto/imageops/codec"
	"carphoto/imageops/shadow"
)

// Limits bounds every input image (photo, design, backdrop), checked from
// its header before any pixel is decoded; a zero field takes its default.
type Limits = codec.Limits

// The limits' defaults and the largest answer, for the configuration that
// sets them (MAX_PIXELS, MAX_IMAGE_SIDE, MAX_IMAGE_ASPECT,
// MAX_BACKDROP_PIXELS).
const (
	DefaultMaxPixels = codec.DefaultMaxPixels
	DefaultMaxSide   = codec.DefaultMaxSide
	DefaultMaxAspect = codec.DefaultMaxAspect
	// MaxCanvasPixels is the largest canvas car-cutout and car-shadow
	// answer: a larger canvas is scaled down to it, and a backdrop may be
	// no larger.
	MaxCanvasPixels = shadow.CanvasMaxPixels
)
