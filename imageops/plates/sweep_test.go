//go:build platestune

package plates

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// TestScaleSweep crops the validation photos around each labelled plate at
// least 30 pixels wide so that the plate spans a given fraction of the
// crop's width (4:3 crops, native resolution; framings the photo cannot
// hold are skipped) and prints, for each fraction, the recall and the false
// detections per crop (against the labels and the plates they miss): the
// detector over plate sizes from a far car to a close-up. Held-out photos
// are not read.
//
//	go test -tags platestune -run TestScaleSweep -v ./imageops/plates/
func TestScaleSweep(t *testing.T) {
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelledPhotos(t, set, Validation)
		line := ""
		for _, f := range []float64{0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 0.9, 1} {
			var s score
			crops := 0
			for _, p := range photos {
				all := append(append([]Box(nil), p.boxes...), p.missed...)
				for _, b := range p.boxes {
					img, ok := closeUp(p.img, b, f)
					if b.W < 30 || !ok {
						continue
					}
					crops++
					plates, err := Detect(context.Background(), img)
					if err != nil {
						t.Fatal(err)
					}
					var others []Box
					for _, o := range all {
						if o != b && img.Bounds().Overlaps(image.Rect(int(o.X), int(o.Y), int(o.X+o.W), int(o.Y+o.H))) {
							others = append(others, o)
						}
					}
					// Only the framed plate counts towards recall; a
					// detection on any plate is not false.
					s.add([]Box{b}, plates)
					s.wrong -= countOn(others, plates, b)
				}
			}
			line += fmt.Sprintf("  %.2f: %d/%d %s", f, s.found, s.total, s.format(crops))
		}
		t.Logf("%-18s%s", set, line)
	}
}

// countOn counts the detections that overlap none of the framed plate but
// some other plate: score.add took them for false.
func countOn(others []Box, plates []Plate, framed Box) int {
	n := 0
	for _, pl := range plates {
		if framed.Overlaps(pl.Quad) {
			continue
		}
		for _, o := range others {
			if o.Overlaps(pl.Quad) {
				n++
				break
			}
		}
	}
	return n
}

// closeUp crops img to a 4:3 frame centred on b in which b spans frac of
// the width; ok is false when the photo cannot hold most of that frame.
func closeUp(img image.Image, b Box, frac float64) (image.Image, bool) {
	cw := b.W / frac
	ch := cw * 3 / 4
	cx, cy := b.X+b.W/2, b.Y+b.H/2
	r := image.Rect(int(cx-cw/2), int(cy-ch/2), int(cx+cw/2), int(cy+ch/2)).Intersect(img.Bounds())
	if float64(r.Dx()) < 0.8*cw || float64(r.Dy()) < 0.8*ch {
		return nil, false
	}
	return img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(r), true
}

// TestRotationSweep rotates the validation photos about their centre, as
// a tilted camera would, and prints for each angle the share of the
// labelled plates (rotated with the photo, those that stay inside it) of
// which at least 95% of the area lies inside the detected quads, and the
// detections per photo that touch no plate.
//
//	go test -tags platestune -run TestRotationSweep -v ./imageops/plates/
func TestRotationSweep(t *testing.T) {
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelledPhotos(t, set, Validation)
		line := ""
		for _, deg := range []float64{-20, -10, -5, 0, 5, 10, 20} {
			found, total, wrong := 0, 0, 0
			for _, p := range photos {
				img, turn := rotated(p.img, deg)
				plates, err := Detect(context.Background(), img)
				if err != nil {
					t.Fatal(err)
				}
				var all [][4]Point
				for _, b := range append(append([]Box(nil), p.boxes...), p.missed...) {
					all = append(all, [4]Point{turn(b.X, b.Y), turn(b.X+b.W, b.Y), turn(b.X+b.W, b.Y+b.H), turn(b.X, b.Y+b.H)})
				}
				for i := range p.boxes {
					if !inside(all[i], img.Bounds()) {
						continue
					}
					total++
					if areaCovered(all[i], plates) >= 0.95 {
						found++
					}
				}
			next:
				for _, pl := range plates {
					for _, q := range all {
						for _, c := range q {
							if pl.Quad.Contains(c) {
								continue next
							}
						}
						if Quad(q).Contains(pl.Quad[0]) {
							continue next
						}
					}
					wrong++
				}
			}
			line += fmt.Sprintf("  %+.0f°: %d/%d %.3f/%.2f", deg, found, total, float64(found)/float64(total), float64(wrong)/float64(len(photos)))
		}
		t.Logf("%-18s%s", set, line)
	}
}

// rotated returns img turned by deg degrees (clockwise on screen) about
// its centre, same size, mid-grey where nothing was, and the map from
// img's pixels to the result's.
func rotated(img image.Image, deg float64) (image.Image, func(x, y float64) Point) {
	b := img.Bounds()
	cx, cy := float64(b.Min.X+b.Dx()/2), float64(b.Min.Y+b.Dy()/2)
	sin, cos := math.Sincos(deg * math.Pi / 180)
	turn := func(x, y float64) Point {
		dx, dy := x-cx, y-cy
		return Point{cx + cos*dx - sin*dy, cy + sin*dx + cos*dy}
	}
	dst := image.NewRGBA(b)
	draw.Draw(dst, b, image.NewUniform(color.Gray{128}), image.Point{}, draw.Src)
	m := f64.Aff3{cos, -sin, cx - cos*cx + sin*cy, sin, cos, cy - sin*cx - cos*cy}
	draw.BiLinear.Transform(dst, m, img, b, draw.Over, nil)
	return dst, turn
}

func inside(q [4]Point, b image.Rectangle) bool {
	for _, c := range q {
		if c.X < float64(b.Min.X) || c.Y < float64(b.Min.Y) || c.X > float64(b.Max.X) || c.Y > float64(b.Max.Y) {
			return false
		}
	}
	return true
}

// areaCovered is the share of a grid of points over the quadrilateral q
// (corners in order) that lie inside one of the plates' quads.
func areaCovered(q [4]Point, plates []Plate) float64 {
	const n = 16
	in := 0
	for i := range n {
		for j := range n {
			u, v := (float64(i)+0.5)/n, (float64(j)+0.5)/n
			top := Point{q[0].X + u*(q[1].X-q[0].X), q[0].Y + u*(q[1].Y-q[0].Y)}
			bot := Point{q[3].X + u*(q[2].X-q[3].X), q[3].Y + u*(q[2].Y-q[3].Y)}
			p := Point{top.X + v*(bot.X-top.X), top.Y + v*(bot.Y-top.Y)}
			for _, pl := range plates {
				if pl.Quad.Contains(p) {
					in++
					break
				}
			}
		}
	}
	return float64(in) / n / n
}
