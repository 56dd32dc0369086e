package imageops

import (
	"context"
	"fmt"
	"image"

	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
)

// The frame operation: video-blur's frames go through the same plate finder
// and the same hide (styles, margin rule) as blur-plates' photos, one frame
// at a time; the video package decides which frames are looked at and
// carries the plates between looks.

// Quad is a plate's four corners in a frame, following its slant.
type Quad = plates.Quad

// Point is a corner of a Quad.
type Point = plates.Point

// Style is how a plate is hidden: blur, pixelate, white or black.
type Style = paint.Style

// The hiding styles.
const (
	StyleBlur     = paint.StyleBlur
	StylePixelate = paint.StylePixelate
	StyleWhite    = paint.StyleWhite
	StyleBlack    = paint.StyleBlack
)

// Styles are the hiding styles, the one list of them.
var Styles = paint.Styles

// ParseStyle maps a request's style field (empty means blur) to a Style;
// anything else is a *carphoto.Error with code carphoto.EInvalidParams.
func ParseStyle(s string) (Style, error) { return paint.ParseStyle(s) }

// FindPlates is the plate finder's look at one frame: the quads of every
// plate found, sure or not, as blur-plates hides them (without the
// vehicles, which decide only the design).
func FindPlates(ctx context.Context, frame image.Image) ([]Quad, error) {
	found, err := plates.DetectAmong(ctx, frame, nil)
	if err != nil {
		return nil, fmt.Errorf("detect plates: %w", err)
	}
	return quadsOf(found), nil
}

// HideFrameInPlace hides the plates at quads in frame itself, a decoder's
// YCbCr frame, each quad grown by the same margin rule as a photo's: each plate painted on an RGBA crop
// around it, and the pixels the hide changed written back in Y, Cb and Cr
// (the rest of the frame is neither copied nor converted).
func HideFrameInPlace(ctx context.Context, frame *image.YCbCr, quads []Quad, style Style) error {
	_, err := paint.HidePlatesInPlace(ctx, frame, quads, style)
	return err
}
