//go:build ignore

// backdrop.go draws docs/samples/backdrop.jpg, the sample studio backdrop
// that the backdrop examples use: a 1600×1000 photo studio, a pale wall
// curving (a cove) into a floor that darkens towards the viewer, with a
// soft pool of light on the floor where a car stands at the default
// floorY (0.85). Drawn from arithmetic alone, with a fixed dither against
// banding, so it is the same on every machine.
//
//	go run docs/samples/backdrop.go
package main

import (
	"image"
	"image/color"
	"image/jpeg"
	"log"
	"math"
	"os"
)

func main() {
	// Listing size, for the listing sample (docs/samples/listing.jpg,
	// 4000×2672), which stands on it shrunk: the answer is 1600×1000. The
	// small sample car (car.jpg, 600×399) would need 2.1× here; the
	// service enlarges a car at most 1.5× and scales the backdrop down
	// instead (to about 1140×710).
	const w, h = 1600, 1000
	const horizon = 0.56 // where the wall meets the floor, a share of the height
	const cove = 0.18    // the height of the curve between them
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(2463534242)
	noise := func() float64 { // xorshift32, in [-0.5, 0.5)
		seed ^= seed << 13
		seed ^= seed >> 17
		seed ^= seed << 5
		return float64(seed)/(1<<32) - 0.5
	}
	smooth := func(a, b, x float64) float64 {
		t := math.Max(0, math.Min(1, (x-a)/(b-a)))
		return t * t * (3 - 2*t)
	}
	for y := range h {
		fy := (float64(y) + 0.5) / h
		for x := range w {
			fx := (float64(x) + 0.5) / w
			// The wall: lightest in the middle, falling off to the sides
			// and slightly towards the top.
			side := (fx - 0.5) * 2
			wall := 236 - 22*side*side - 10*(1-fy/horizon)
			// The floor: lit where the car stands, darker towards the
			// viewer and the sides.
			d := (fy - horizon) / (1 - horizon)
			pool := math.Exp(-(side*side/0.55 + (fy-0.85)*(fy-0.85)/0.02))
			floor := 228 - 52*d - 30*side*side + 16*pool
			v := wall + (floor-wall)*smooth(horizon-cove/2, horizon+cove/2, fy)
			// A cool grey: a touch more blue than red.
			c := func(k float64) uint8 { return uint8(math.Max(0, math.Min(255, math.Round(v+k+noise())))) }
			img.SetRGBA(x, y, color.RGBA{c(-3), c(-1), c(2), 255})
		}
	}
	f, err := os.Create("docs/samples/backdrop.jpg")
	if err != nil {
		log.Fatal(err)
	}
	if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 90}); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
