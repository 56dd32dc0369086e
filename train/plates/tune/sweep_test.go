//go:build platestune

package tune

import (
	"carphoto/internal/testenv/datasets"
	"fmt"
	"image"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/internal/testenv/imgtest"
	"carphoto/train/plates/labelled"
)

// TestScaleSweep crops the validation photos around each labelled plate at
// least 30 pixels wide so that the plate spans a given fraction of the
// crop's width (4:3 crops, native resolution; framings the photo cannot
// hold are skipped) and prints, for each fraction, the recall and the false
// detections per crop (against the labels and the plates they miss): the
// detector over plate sizes from a far car to a close-up. Held-out photos
// are not read.
//
//	go test -tags platestune -run TestScaleSweep -v ./train/plates/tune/
func TestScaleSweep(t *testing.T) {
	st, tuning := tuned(t)
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelled.Photos(t, set, datasets.Validation)
		line := ""
		for _, f := range []float64{0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 0.9, 1} {
			var s score
			crops := 0
			for _, p := range photos {
				all := append(append([]plates.Box(nil), p.Boxes...), p.Missed...)
				for _, b := range p.Boxes {
					img, ok := imgtest.CloseUp(p.Img, b.X, b.Y, b.W, b.H, f)
					if b.W < 30 || !ok {
						continue
					}
					crops++
					found, err := st.Detect(t.Context(), img, tuning)
					if err != nil {
						t.Fatal(err)
					}
					var others []plates.Box
					for _, o := range all {
						if o != b && img.Bounds().Overlaps(image.Rect(int(o.X), int(o.Y), int(o.X+o.W), int(o.Y+o.H))) {
							others = append(others, o)
						}
					}
					// Only the framed plate counts towards recall; a
					// detection on any plate is not false.
					s.add([]plates.Box{b}, found)
					s.wrong -= countOn(others, found, b)
				}
			}
			line += fmt.Sprintf("  %.2f: %s", f, s.format(crops))
		}
		t.Logf("%-18s%s", set, line)
	}
}

// countOn counts the detections that overlap none of the framed plate but
// some other plate: score.add took them for false.
func countOn(others []plates.Box, found []plates.Plate, framed plates.Box) int {
	n := 0
	for _, pl := range found {
		if framed.Overlaps(pl.Hide) {
			continue
		}
		for _, o := range others {
			if o.Overlaps(pl.Hide) {
				n++
				break
			}
		}
	}
	return n
}

// TestRotationSweep rotates the validation photos about their centre, as
// a tilted camera would, and prints for each angle the share of the
// labelled plates (rotated with the photo, those that stay inside it) of
// which at least 95% of the area lies inside the detected quads, and the
// detections per photo that touch no plate.
//
//	go test -tags platestune -run TestRotationSweep -v ./train/plates/tune/
func TestRotationSweep(t *testing.T) {
	st, tuning := tuned(t)
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelled.Photos(t, set, datasets.Validation)
		line := ""
		for _, deg := range []float64{-20, -10, -5, 0, 5, 10, 20} {
			found, total, wrong := 0, 0, 0
			for _, p := range photos {
				img, turn := imgtest.Rotated(p.Img, deg)
				detected, err := st.Detect(t.Context(), img, tuning)
				if err != nil {
					t.Fatal(err)
				}
				var all []plates.Quad
				for i, b := range append(append([]plates.Box(nil), p.Boxes...), p.Missed...) {
					var q plates.Quad
					inside := true
					for k, c := range [4][2]float64{{b.X, b.Y}, {b.X + b.W, b.Y}, {b.X + b.W, b.Y + b.H}, {b.X, b.Y + b.H}} {
						q[k].X, q[k].Y = turn(c[0], c[1])
						inside = inside && imgtest.Inside(img.Bounds(), q[k].X, q[k].Y)
					}
					all = append(all, q)
					if i >= len(p.Boxes) || !inside {
						continue // only labelled plates the photo still holds count towards recall
					}
					total++
					if q.CoveredBy(detected) >= 0.95 {
						found++
					}
				}
			next:
				for _, pl := range detected {
					for _, q := range all {
						for _, c := range q {
							if pl.Quad.Contains(c) {
								continue next
							}
						}
						if q.Contains(pl.Quad[0]) {
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

// TestMosaic lays the validation photos side by side at their own
// resolution, n×n to a mosaic (each in a cell as large as the group's
// largest photo, the rest grey), and prints for each n the recall and the
// false detections per mosaic (against the labels, then with the plates
// they miss): the sets' plates as a smaller part of a larger photo, as in a
// wide shot of a dealer's lot or a 12 MP photo of a car further away. The
// sets hold no photo whose plates are narrower than 3.8% of its long side.
//
//	go test -tags platestune -run TestMosaic -v ./train/plates/tune/
func TestMosaic(t *testing.T) {
	st, tuning := tuned(t)
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelled.Photos(t, set, datasets.Validation)
		line := ""
		for _, n := range []int{1, 2, 3} {
			var given, audited score
			mosaics := 0
			for i := 0; i+n*n <= len(photos); i += n * n {
				img, boxes, missed := mosaic(photos[i:i+n*n], n)
				found, err := st.Detect(t.Context(), img, tuning)
				if err != nil {
					t.Fatal(err)
				}
				given.add(boxes, found)
				audited.add(append(missed, boxes...), found)
				mosaics++
			}
			line += fmt.Sprintf("  %d×%d (%d): %s | %s", n, n, mosaics, given.format(mosaics), audited.format(mosaics))
		}
		t.Logf("%-18s%s", set, line)
	}
}

// mosaic lays photos (n×n of them) out with imgtest.Mosaic, their boxes
// and missed plates moved along.
func mosaic(photos []labelled.Photo, n int) (image.Image, []plates.Box, []plates.Box) {
	imgs := make([]image.Image, len(photos))
	for k, p := range photos {
		imgs[k] = p.Img
	}
	img, at := imgtest.Mosaic(imgs, n)
	var boxes, missed []plates.Box
	for k, p := range photos {
		for _, b := range p.Boxes {
			boxes = append(boxes, plates.Box{X: b.X + float64(at[k].X), Y: b.Y + float64(at[k].Y), W: b.W, H: b.H})
		}
		for _, b := range p.Missed {
			missed = append(missed, plates.Box{X: b.X + float64(at[k].X), Y: b.Y + float64(at[k].Y), W: b.W, H: b.H})
		}
	}
	return img, boxes, missed
}
