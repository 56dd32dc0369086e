//go:build ignore

// design.go draws docs/samples/plate-design.png, the sample plate design
// the printed curl lines and examples use: a 520×110 plate-shaped panel in
// a dealer's colours (navy, a white rim, a yellow band with a notch), no
// text and no font, so it is the same on every machine.
//
//	go run docs/samples/design.go
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

func main() {
	const w, h, rim, radius = 520, 110, 6, 12
	navy := color.NRGBA{16, 42, 96, 255}
	white := color.NRGBA{250, 250, 250, 255}
	yellow := color.NRGBA{250, 200, 20, 255}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	// inside reports whether (x, y) lies in the w×h rectangle inset by d
	// with corners rounded by r.
	inside := func(x, y, d, r float64) bool {
		x0, y0, x1, y1 := d+r, d+r, w-d-r, h-d-r
		cx, cy := math.Max(x0, math.Min(x, x1)), math.Max(y0, math.Min(y, y1))
		return math.Hypot(x-cx, y-cy) <= r
	}
	for y := range h {
		for x := range w {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			var c color.NRGBA
			switch {
			case !inside(fx, fy, 0, radius):
				continue // transparent outside the rounded plate
			case !inside(fx, fy, rim, radius-rim):
				c = white
			default:
				c = navy
				// A yellow band across the middle third, with a navy
				// notch in its centre.
				if fy > h/3 && fy < 2*h/3 {
					c = yellow
					dx := math.Abs(fy-h/2) * 1.2
					if fx > w/2-30+dx && fx < w/2+dx {
						c = navy
					}
				}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	f, err := os.Create("docs/samples/plate-design.png")
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
