// Package plates finds licence plates in a photo.
package plates

import "image"

// Point is a position in pixels of the displayed (EXIF-oriented) photo.
type Point struct{ X, Y float64 }

// Quad is a plate's four corners, clockwise from the top-left corner, in
// pixels of the displayed photo. It follows the plate's perspective.
type Quad [4]Point

// Bounds returns the smallest integer rectangle that holds the quad.
func (q Quad) Bounds() image.Rectangle {
	minX, minY, maxX, maxY := q[0].X, q[0].Y, q[0].X, q[0].Y
	for _, p := range q[1:] {
		minX, maxX = min(minX, p.X), max(maxX, p.X)
		minY, maxY = min(minY, p.Y), max(maxY, p.Y)
	}
	return image.Rect(int(minX), int(minY), int(maxX+0.999999), int(maxY+0.999999))
}

// Plate is one detected plate with the detector's confidence in [0, 1].
type Plate struct {
	// Quad is the region to hide: the plate plus a safety margin, so a
	// blur covers the whole plate even when the estimate is a little off.
	Quad Quad
	// Tight is the detector's estimate of the plate itself, without the
	// margin: where a replacement design goes.
	Tight Quad
	Score float64
}
