// Package imageops is the pure image work of carphoto, behind one entry:
// Process runs an operation on encoded images and returns the encoded
// answer, one function per operation (process.go, plate.go, car.go,
// overlay.go, backdrop.go), each a straight line of steps; video-blur's
// frames go through its frame operation (frame.go: FindPlates, HideFrameInPlace);
// the command-line tools on photo files go through tools.go.
// It knows nothing of HTTP, Redis or logging; long operations check ctx
// between steps.
//
// Each concern has its own package below it: codec (decoding with
// security limits, metadata, orientation, encoding), jpegblock (the JPEG
// owner: a baseline JPEG edited in its own blocks, the JPEG writer, the
// quantisation tables), plates (finding licence plates), paint (hiding or
// replacing them, overlaying a logo), textdet (PP-OCRv4's text detector,
// whose lines the plate finder takes as proposals), cutout (separating the
// car) and shadow (the car's ground shadow, its canvas and the studio
// backdrop), all running their networks on internal/nn.
package imageops
