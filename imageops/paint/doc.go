// Package paint paints over licence plates found by package plates: it hides
// them (blur, pixelate, white, black) or replaces them with a design, on a
// decoded photo, in place on a decoder's buffer, or on a baseline JPEG's own
// blocks (BlockJPEG); and it overlays a logo on a photo.
package paint
