//go:build cutouttune

// Package tune holds the sweeps that chose the cut-out's settings
// (cutout.Settings) and the car-not-found rule (cutout.MinCarShare).
package tune

// The network's input size, the clean-up (OpenRadius, KeepBlobs) and the
// refinement's settings of cutout.Settings were chosen with this sweep over the cars-seg
// images that are not held out, with U²-Net-p's original weights (which never saw
// any of them; the fine-tuned ones learnt all but the validation split's):
//
//	GOMAXPROCS=1 go test -tags cutouttune -run TestTune -v ./train/cutout/tune/
//
// The defaults alone unless the grid is given (comma-separated lists):
//
//	CUTOUT_SIZES=320x240,256x256 CUTOUT_OPENS=0,2 CUTOUT_KEEPS=0.05,0.3 \
//	CUTOUT_RADII=1.5,3 CUTOUT_BANDS=1.5,2.5 CUTOUT_PROJECTS=0,0.5 \
//	    go test -tags cutouttune -run TestTune -v ./train/cutout/tune/
//
// A size is used as it is (NetExact), not adapted to the photo's proportions.

import (
	"carphoto/internal/testenv/datasets"
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

	"carphoto/imageops/cutout"
)

func TestTune(t *testing.T) {
	dir := datasets.Set(t, "cars-seg")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	var imgs, masks []image.Image
	for _, l := range labels {
		if datasets.HeldOut(filepath.Base(l.File)) {
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
		imgs = append(imgs, img)
		masks = append(masks, mask)
	}
	ctx := context.Background()
	base := cutout.DefaultSettings()
	sizes := []string{fmt.Sprintf("%dx%d", base.NetW, base.NetH)}
	if s := os.Getenv("CUTOUT_SIZES"); s != "" {
		sizes = strings.Split(s, ",")
		base.NetExact = true
	}
	for _, size := range sizes {
		s := base
		if _, err := fmt.Sscanf(size, "%dx%d", &s.NetW, &s.NetH); err != nil {
			t.Fatal(err)
		}
		// The network once per photo; clean-up and refinement swept on its output.
		var passes []*cutout.Coarse
		for _, img := range imgs {
			c, err := cutout.NetworkPass(ctx, img, s)
			if err != nil {
				t.Fatal(err)
			}
			passes = append(passes, c)
		}
		for _, open := range floats(t, os.Getenv("CUTOUT_OPENS"), float64(base.OpenRadius)) {
			for _, keep := range floats(t, os.Getenv("CUTOUT_KEEPS"), base.KeepBlobs) {
				for _, r := range floats(t, os.Getenv("CUTOUT_RADII"), base.GuidedRadius) {
					for _, grow := range floats(t, os.Getenv("CUTOUT_BANDS"), base.BandGrow) {
						for _, pr := range floats(t, os.Getenv("CUTOUT_PROJECTS"), float64(base.Project)) {
							s.OpenRadius, s.KeepBlobs = int(open), keep
							s.GuidedRadius, s.BandGrow, s.Project = r, grow, float32(pr)
							var iou, bf float64
							for i, c := range passes {
								m, err := c.Matte(ctx, s)
								if err != nil {
									t.Fatal(err)
								}
								iou += datasets.IoU(m, masks[i])
								bf += datasets.BoundaryF(m, masks[i], 2)
							}
							n := float64(len(passes))
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
