//go:build cutouttune

package cutout

// The network's input size, the clean-up (openRadius, keepBlobs) and the
// refinement's settings (params) were chosen with this sweep over the cars-seg
// images that are not held out, with U²-Net-p's original weights (which never saw
// any of them; the fine-tuned ones learnt all but the validation split's):
//
//	GOMAXPROCS=1 go test -tags cutouttune -run TestTune -v ./imageops/cutout/
//
// The defaults alone unless the grid is given (comma-separated lists):
//
//	CUTOUT_SIZES=320x240,256x256 CUTOUT_OPENS=0,2 CUTOUT_KEEPS=0.05,0.3 \
//	CUTOUT_RADII=1.5,3 CUTOUT_BANDS=1.5,2.5 CUTOUT_PROJECTS=0,0.5 \
//	    go test -tags cutouttune -run TestTune -v ./imageops/cutout/
//
// A size is used as it is (u2Exact), not adapted to the photo's proportions.

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestTune(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "datasets", "cars-seg")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Skip(err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	var pixes []*rows
	var masks []image.Image
	for _, l := range labels {
		if HeldOut(filepath.Base(l.File)) {
			continue
		}
		f, _ := os.Open(filepath.Join(dir, l.File))
		img, err := jpeg.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		f, _ = os.Open(filepath.Join(dir, l.Mask))
		mask, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		pixes = append(pixes, newRows(img))
		masks = append(masks, mask)
	}
	ctx := context.Background()
	defer func(w, h int, o int, k float64) { u2W, u2H, u2Exact, openRadius, keepBlobs = w, h, false, o, k }(u2W, u2H, openRadius, keepBlobs)
	sizes := []string{fmt.Sprintf("%dx%d", u2W, u2H)}
	if s := os.Getenv("CUTOUT_SIZES"); s != "" {
		sizes = strings.Split(s, ",")
		u2Exact = true
	}
	for _, size := range sizes {
		if _, err := fmt.Sscanf(size, "%dx%d", &u2W, &u2H); err != nil {
			t.Fatal(err)
		}
		// The network once per photo; clean-up and refinement swept on its output.
		var raws []*coarseMatte
		for _, pix := range pixes {
			c, err := coarse(ctx, pix)
			if err != nil {
				t.Fatal(err)
			}
			raws = append(raws, c)
		}
		for _, open := range floats(t, os.Getenv("CUTOUT_OPENS"), float64(openRadius)) {
			for _, keep := range floats(t, os.Getenv("CUTOUT_KEEPS"), keepBlobs) {
				for _, r := range floats(t, os.Getenv("CUTOUT_RADII"), defaults.gfRadius) {
					for _, grow := range floats(t, os.Getenv("CUTOUT_BANDS"), defaults.bandGrow) {
						for _, pr := range floats(t, os.Getenv("CUTOUT_PROJECTS"), float64(defaults.project)) {
							par := defaults
							par.gfRadius, par.bandGrow, par.project = r, grow, float32(pr)
							var iou, bf float64
							for i, c := range raws {
								p := append([]float32(nil), c.raw...)
								cleanCar(p, c.lw, c.lh, keep, int(open))
								cc := *c
								cc.prob = p
								m := image.NewAlpha(pixes[i].b)
								if err := refine(ctx, pixes[i], &cc, par, m); err != nil {
									t.Fatal(err)
								}
								iou += IoU(m, masks[i])
								bf += BoundaryF(m, masks[i], 2)
							}
							n := float64(len(raws))
							t.Logf("size %s open %.0f keep %.2f radius %.1f band %.1f project %.1f: IoU %.4f boundary F %.4f",
								size, open, keep, r, grow, pr, iou/n, bf/n)
						}
					}
				}
			}
		}
	}
}

// floats parses a comma-separated list of numbers; def alone when s is empty.
func floats(t *testing.T, s string, def float64) []float64 {
	if s == "" {
		return []float64{def}
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
