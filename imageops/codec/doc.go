// Package codec reads and writes photos: it sniffs the format, checks the
// security limits from the header before any pixel is decoded, reads the
// metadata (EXIF orientation, ICC profile, JPEG quality), applies the
// orientation, and encodes JPEG, PNG and WebP. It also holds the pixel
// conversions the other image packages share (ToNRGBA, Flatten, FitPixels).
package codec
