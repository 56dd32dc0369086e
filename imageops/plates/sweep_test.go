//go:build platestune

package plates

import (
	"context"
	"fmt"
	"image"
	"testing"
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
