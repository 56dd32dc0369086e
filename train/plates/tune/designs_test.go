//go:build platestune

package tune

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/internal/testenv/datasets"
	"carphoto/train/plates/labelled"
)

// TestDesigns counts, on the validation photos, where plate-logo would put
// a design (plates.Plate.Designable) and where it would hide instead:
// designs on labelled plates (or plates the labels miss, by review), on
// nothing labelled, and the sure detections hidden instead (a word or a
// number read on them, or no plate's shape). DESIGNS_DIR=D writes each design
// on nothing labelled there (the photo around it) to be looked at by eye.
//
//	PLATES_EXTRA=~/carphoto-data DESIGNS_DIR=/tmp/designs go test -tags platestune -run TestDesigns -v -timeout 1h ./train/plates/tune/
func TestDesigns(t *testing.T) {
	sets := []string{"plates-web-cc0", "plates-dashcam-ro"}
	if os.Getenv("PLATES_EXTRA") != "" {
		sets = append(sets, labelled.ExtraSets...)
	}
	if s := os.Getenv("DESIGNS_SETS"); s != "" {
		sets = strings.Split(s, ",")
	}
	dir := os.Getenv("DESIGNS_DIR")
	var dump *os.File // DESIGNS_DUMP=F: each sure plate's heights, a JSON line each
	if name := os.Getenv("DESIGNS_DUMP"); name != "" {
		var err error
		if dump, err = os.Create(name); err != nil {
			t.Fatal(err)
		}
		defer dump.Close()
	}
	for _, set := range sets {
		var onPlate, onNothing, tooTall, sure int
		photos := labelled.Photos(t, set, datasets.Validation)
		for _, p := range photos {
			found, err := plates.Detect(t.Context(), p.Img)
			if err != nil {
				t.Fatal(err)
			}
			if err := plates.ReadPlates(t.Context(), p.Img, found); err != nil {
				t.Fatal(err)
			}
			all := append(append([]plates.Box(nil), p.Boxes...), p.Missed...)
			for k, f := range found {
				if f.Score < plates.DesignConfidence {
					continue
				}
				sure++
				if dump != nil {
					lh := 0.0 // the height of the labelled box it lies on best
					best := 0.0
					for _, b := range all {
						if v := b.IoU(f.Quad); v > best {
							best, lh = v, b.H
						}
					}
					fmt.Fprintf(dump, "{\"set\":%q,\"file\":%q,\"quad\":%.1f,\"text\":%.1f,\"label\":%.1f,\"iou\":%.3f,\"reads\":%v,\"score\":%.4f,\"k\":%d}\n", set, p.File, f.Quad.Height(), f.TextHeight, lh, best, f.Reads, f.Score, k)
				}
				if !f.Designable() {
					tooTall++
					save(t, dir, "tall-", p, k, f)
					continue
				}
				if onLabel(all, f.Quad) {
					onPlate++
					continue
				}
				onNothing++
				save(t, dir, "", p, k, f)
			}
		}
		t.Logf("%-18s %d photos: %d sure plates, %d hidden (a word or a number read on it, or no plate's shape), designs on %d labelled plates and %d on nothing labelled (%.2f%% of designs)",
			set, len(photos), sure, tooTall, onPlate, onNothing, 100*float64(onNothing)/float64(max(onPlate+onNothing, 1)))
	}
}

// save writes, where dir is set, the photo around the plate f (the k-th
// found on p) with its quad outlined, named prefix + the photo's name.
func save(t *testing.T, dir, prefix string, p labelled.Photo, k int, f plates.Plate) {
	if dir != "" {
		writeOutlined(t, filepath.Join(dir, fmt.Sprintf("%s%s-%d.jpg", prefix, filepath.Base(p.File), k)), p.Img, f)
	}
}

// writeOutlined writes the photo img around the plate f, its quad
// outlined, to the file name: a PNG or, named .jpg, a JPEG.
func writeOutlined(t *testing.T, name string, img image.Image, f plates.Plate) {
	b := f.Quad.Bounds()
	r := b.Inset(-max(b.Dx(), b.Dy())).Intersect(img.Bounds())
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	encode := png.Encode
	if strings.HasSuffix(name, ".jpg") {
		encode = func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, nil) }
	}
	if err := encode(out, outlined(img, r, f.Quad)); err != nil {
		t.Fatal(err)
	}
}

// onLabel reports whether the quad q lies on one of the boxes: IoU at
// least 0.2, or its centre inside one.
func onLabel(boxes []plates.Box, q plates.Quad) bool {
	c := q.Bounds()
	cx, cy := float64(c.Min.X+c.Max.X)/2, float64(c.Min.Y+c.Max.Y)/2
	for _, b := range boxes {
		if b.IoU(q) >= 0.2 || cx >= b.X && cx <= b.X+b.W && cy >= b.Y && cy <= b.Y+b.H {
			return true
		}
	}
	return false
}

// outlined is the region r of img with the quad q drawn on it in red.
func outlined(img image.Image, r image.Rectangle, q plates.Quad) image.Image {
	out := image.NewRGBA(r)
	draw.Draw(out, r, img, r.Min, draw.Src)
	for i := range q {
		a, b := q[i], q[(i+1)%4]
		n := int(max(abs(b.X-a.X), abs(b.Y-a.Y))) + 1
		for k := 0; k <= n; k++ {
			t := float64(k) / float64(n)
			out.Set(int(a.X+t*(b.X-a.X)), int(a.Y+t*(b.Y-a.Y)), color.RGBA{255, 0, 0, 255})
		}
	}
	return out
}

func abs(v float64) float64 { return max(v, -v) }
