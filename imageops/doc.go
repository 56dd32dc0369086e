// Package imageops is the pure image work of carphoto: decoding with
// security limits, orientation and colour metadata, hiding and replacing
// licence plates, and the car's ground shadow. It knows nothing of HTTP,
// Redis or logging; long operations check ctx between steps.
//
// Plate finding lives in imageops/plates and the car cut-out in
// imageops/cutout; this package composes their results into pixels.
package imageops
