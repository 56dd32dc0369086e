//go:build cutouttune

package cutout

// The refinement's settings (params) were chosen with this sweep over the validation
// split of cars-seg (not the held-out one):
//
//	go test -tags cutouttune -run TestTune -v ./imageops/cutout/

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
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
	type item struct {
		pix  *image.NRGBA
		c    *coarseMatte
		mask image.Image
	}
	var items []item
	ctx := context.Background()
	flipAverage = os.Getenv("CUTOUT_FLIP") != "0"
	defer func() { flipAverage = true }()
	for _, l := range labels {
		name := filepath.Base(l.File)
		h := fnv.New32a()
		h.Write([]byte(name))
		if HeldOut(name) || h.Sum32()%7 != 3 {
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
		pix := toNRGBA(img)
		c, err := coarse(ctx, pix)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, item{pix, c, mask})
	}
	// Blob removal (on the coarse matte, before refinement).
	for _, keep := range []float64{0, 0.05, 0.15, 0.3, 1} {
		var iou float64
		for _, it := range items {
			p := append([]float32(nil), it.c.raw...)
			clean(p, it.c.lw, it.c.lh, keep)
			c := *it.c
			c.prob = p
			m, err := refine(ctx, it.pix, &c, defaults, false)
			if err != nil {
				t.Fatal(err)
			}
			iou += IoU(m, it.mask)
		}
		t.Logf("keep blobs >= %.2f of the largest: IoU %.4f", keep, iou/float64(len(items)))
	}
	for _, r := range []float64{3} {
		for _, grow := range []float64{2.5} {
			for _, k := range []float32{3} {
				for _, pr := range []float32{0, 0.5, 1} {
					eps := defaults.gfEps
					par := params{gfRadius: r, gfEps: eps, sharpen: k, project: pr, bandGrow: grow}
					var iou, bf float64
					for _, it := range items {
						m, err := refine(ctx, it.pix, it.c, par, false)
						if err != nil {
							t.Fatal(err)
						}
						iou += IoU(m, it.mask)
						bf += BoundaryF(m, it.mask, 2)
					}
					n := float64(len(items))
					t.Logf("r %.2f grow %.1f eps %g sharpen %.1f project %.1f: IoU %.4f boundary F %.4f", r, grow, eps, k, pr, iou/n, bf/n)
				}
			}
		}
	}
}
