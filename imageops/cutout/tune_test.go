//go:build cutouttune

package cutout

// The network's input sizes, the logit bias and the refinement's settings (params)
// were chosen with this sweep over the validation split of cars-seg (not the held-out
// one):
//
//	go test -tags cutouttune -run TestTune -v ./imageops/cutout/
//
// The defaults alone unless the grid is given (comma-separated lists):
//
//	CUTOUT_SIZES=320 CUTOUT_EXTRAS='-;256;256,384;256,416' CUTOUT_BIASES=-0.75,-0.5,0 \
//	CUTOUT_RADII=2,3 CUTOUT_BANDS=1.5,2.5,3.5 CUTOUT_PROJECTS=0,0.5 CUTOUT_PER_IMAGE=1 \
//	    go test -tags cutouttune -run TestTune -v ./imageops/cutout/
//
// CUTOUT_EXTRAS lists sets of further input sizes, separated by semicolons ("-" for
// none); CUTOUT_WEIGHTS=path scores another weights file (a training snapshot);
// CUTOUT_FLIP=0 turns the mirror-image averaging off.

import (
	"context"
	"encoding/json"
	"hash/fnv"
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
	type item struct {
		pix  *image.NRGBA
		c    *coarseMatte
		mask image.Image
	}
	ctx := context.Background()
	flipAverage = os.Getenv("CUTOUT_FLIP") != "0"
	defer func() { flipAverage = true }()
	// CUTOUT_WEIGHTS: another weights file (e.g. a training snapshot) instead of the
	// embedded one.
	if w := os.Getenv("CUTOUT_WEIGHTS"); w != "" {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		net, err := parseNetwork(b)
		if err != nil {
			t.Fatal(err)
		}
		loadOnce.Do(func() {})
		loadedNet, loadNetErr = net, nil
	}
	var pixes []*image.NRGBA
	var masks []image.Image
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
		pixes = append(pixes, toNRGBA(img))
		masks = append(masks, mask)
	}
	perImage := os.Getenv("CUTOUT_PER_IMAGE") != ""
	score := func(items []item, par params) (float64, float64) {
		var iou, bf float64
		var each []string
		for _, it := range items {
			m, err := refine(ctx, it.pix, it.c, par, false)
			if err != nil {
				t.Fatal(err)
			}
			v := IoU(m, it.mask)
			iou += v
			bf += BoundaryF(m, it.mask, 2)
			each = append(each, strconv.FormatFloat(v, 'f', 3, 64))
		}
		if perImage {
			t.Logf("per image: %s", strings.Join(each, " "))
		}
		n := float64(len(items))
		return iou / n, bf / n
	}
	coarseAll := func() []item {
		var items []item
		for i, pix := range pixes {
			c, err := coarse(ctx, pix)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, item{pix, c, masks[i]})
		}
		return items
	}
	// The network's input size (long side), further sizes averaged in and the logit
	// bias (the matte's threshold), with the other settings at their defaults.
	// CUTOUT_SIZES and CUTOUT_BIASES (comma-separated) and CUTOUT_EXTRAS (sets of
	// comma-separated sizes, separated by semicolons; "-" for none) choose the grid;
	// the defaults alone otherwise.
	sizes := floats(t, os.Getenv("CUTOUT_SIZES"), float64(netLong))
	biases := floats(t, os.Getenv("CUTOUT_BIASES"), float64(logitBias))
	extras := [][]int{extraLongs}
	if e := os.Getenv("CUTOUT_EXTRAS"); e != "" {
		extras = nil
		for _, set := range strings.Split(e, ";") {
			var longs []int
			if set != "-" {
				for _, v := range floats(t, set, 0) {
					longs = append(longs, int(v))
				}
			}
			extras = append(extras, longs)
		}
	}
	defer func(n int, e []int, b float32) { netLong, extraLongs, logitBias = n, e, b }(netLong, extraLongs, logitBias)
	for _, sz := range sizes {
		for _, e := range extras {
			for _, b := range biases {
				netLong, extraLongs, logitBias = int(sz), e, float32(b)
				iou, bf := score(coarseAll(), defaults)
				t.Logf("net long side %d and %v, logit bias %+.2f: IoU %.4f boundary F %.4f", netLong, e, b, iou, bf)
			}
		}
	}
	// The rest at the last size and bias of the grid.
	items := coarseAll()
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
	for _, r := range floats(t, os.Getenv("CUTOUT_RADII"), defaults.gfRadius) {
		for _, grow := range floats(t, os.Getenv("CUTOUT_BANDS"), defaults.bandGrow) {
			for _, k := range []float32{3} {
				for _, pr := range floats(t, os.Getenv("CUTOUT_PROJECTS"), float64(defaults.project)) {
					eps := defaults.gfEps
					par := params{gfRadius: r, gfEps: eps, sharpen: k, project: float32(pr), bandGrow: grow}
					iou, bf := score(items, par)
					t.Logf("r %.2f grow %.1f eps %g sharpen %.1f project %.1f: IoU %.4f boundary F %.4f", r, grow, eps, k, pr, iou, bf)
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
