package jpegblock

// This file is the geometry of the EXIF Orientation tag (1..8), the one
// place it is written down: the block path maps displayed pixels to stored
// ones with ToStored, and codec turns whole decoded images with
// ToDisplayed. Any other value is taken as 1, the identity.

// ToStored maps displayed pixel (x, y) to stored pixel coordinates for
// EXIF orientation o, the stored image being w×h.
func ToStored(o, x, y, w, h int) (int, int) {
	switch o {
	case 2: // mirror left-right
		return w - 1 - x, y
	case 3: // half turn
		return w - 1 - x, h - 1 - y
	case 4: // mirror top-bottom
		return x, h - 1 - y
	case 5: // transpose
		return y, x
	case 6: // quarter turn clockwise
		return y, h - 1 - x
	case 7: // transverse
		return w - 1 - y, h - 1 - x
	case 8: // quarter turn anticlockwise
		return w - 1 - y, x
	}
	return x, y
}

// ToDisplayed maps stored pixel (x, y) of a w×h stored image to displayed
// coordinates for EXIF orientation o: the inverse of ToStored. Every
// orientation is its own inverse but the quarter turns, 6 and 8, which
// undo each other; the image they undo is the displayed one, h×w.
func ToDisplayed(o, x, y, w, h int) (int, int) {
	switch o {
	case 5, 7:
		w, h = h, w
	case 6:
		o, w, h = 8, h, w
	case 8:
		o, w, h = 6, h, w
	}
	return ToStored(o, x, y, w, h)
}
