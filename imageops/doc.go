// Package imageops is the pure image work of carphoto. It knows nothing of
// HTTP, Redis or logging; long operations check ctx between steps. Each
// concern has its own package below it: codec (decoding with security
// limits, metadata, orientation, encoding), jpegblock (editing a baseline
// JPEG in its own blocks), plates (finding licence plates), paint (hiding or
// replacing them, overlaying a logo), cutout (separating the car) and shadow
// (the car's ground shadow and its canvas).
package imageops
