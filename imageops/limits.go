package imageops

import "carphoto/imageops/codec"

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
	// answer, the one definition of it: their photo is scaled down to it
	// first (area filter), so that the cut-out, the shadow and the PNG of a
	// 60-megapixel photo fit in the worker's memory budget and its deadline
	// on one core (docs/research/benchmarks-log.md); a canvas that crop, padding and
	// aspect grow past it is scaled down to it (shadow.FrameFit), never
	// allocated at the size asked for; and a backdrop, whose size is the
	// answer's, may be no larger (backdropMaxPixels). A listing shows a car
	// at a few megapixels.
	MaxCanvasPixels = 16_000_000
)

// backdropMaxPixels is the most pixels a backdrop may have under the
// configured cap limit (MAX_BACKDROP_PIXELS): limit, or MaxCanvasPixels
// where limit is zero or larger.
func backdropMaxPixels(limit int) int {
	if limit <= 0 || limit > MaxCanvasPixels {
		return MaxCanvasPixels
	}
	return limit
}
