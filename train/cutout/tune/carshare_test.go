//go:build cutouttune

package tune

// The measurement behind cutout.MinCarShare: CarShare of Cut on car photos and on
// images with no car, printed one a line and summarised.
//
//	go test -tags cutouttune -run TestMeasureCarShare -v ./train/cutout/tune/

import (
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"carphoto/imageops/cutout"
)

func TestMeasureCarShare(t *testing.T) {
	root := datasets.Dir()
	ctx := context.Background()
	share := func(img image.Image) float64 {
		car, err := cutout.Cut(ctx, img)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("CARSHARE_FEATURES") != "" {
			fmt.Printf("FEAT %s\n", features(car))
		}
		return cutout.CarShare(car)
	}
	load := func(path string) image.Image {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := jpeg.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	sets := map[string][]float64{}
	add := func(set, name string, s float64) {
		sets[set] = append(sets[set], s)
		fmt.Printf("%-10s %-28s %.4f\n", set, name, s)
	}

	// cars-seg: held-out, validation and training photos, all cars.
	var segs []struct{ File, Split string }
	raw, err := os.ReadFile(filepath.Join(root, "cars-seg", "labels.json"))
	if err != nil {
		t.Skip(err)
	}
	json.Unmarshal(raw, &segs)
	from, _ := strconv.Atoi(os.Getenv("CARSHARE_FROM"))   // resume a stopped run
	every, _ := strconv.Atoi(os.Getenv("CARSHARE_EVERY")) // sample the web set
	every = max(every, 1)
	for i, l := range segs {
		if i < from {
			continue
		}
		set := "seg-" + l.Split
		if datasets.HeldOut(filepath.Base(l.File)) {
			set = "seg-held"
		} else if l.Split == "train" && os.Getenv("CARSHARE_NOTRAIN") != "" {
			continue
		}
		add(set, filepath.Base(l.File), share(load(filepath.Join(root, "cars-seg", l.File))))
	}

	// plates-web-cc0: car photos, and their plate boxes ±20% as close-ups.
	var web []struct {
		File   string
		Plates []struct{ X, Y, W, H float64 }
	}
	raw, _ = os.ReadFile(filepath.Join(root, "plates-web-cc0", "labels.json"))
	json.Unmarshal(raw, &web)
	for i, l := range web {
		if i%every != 0 {
			continue
		}
		img := load(filepath.Join(root, "plates-web-cc0", l.File))
		add("web-car", filepath.Base(l.File), share(img))
		for _, p := range l.Plates {
			r := image.Rect(int(p.X-0.2*p.W), int(p.Y-0.2*p.H), int(p.X+1.2*p.W), int(p.Y+1.2*p.H)).Intersect(img.Bounds())
			if r.Dx() < 8 || r.Dy() < 8 {
				continue
			}
			crop := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
			draw.Draw(crop, crop.Bounds(), img, r.Min, draw.Src)
			add("plate", filepath.Base(l.File), share(crop))
			break
		}
	}

	// Synthetic: uniform colours, gradients, noise.
	for _, c := range []color.NRGBA{{255, 255, 255, 255}, {0, 0, 0, 255}, {128, 128, 128, 255}, {200, 30, 30, 255}, {30, 60, 200, 255}, {240, 230, 200, 255}} {
		img := image.NewNRGBA(image.Rect(0, 0, 640, 480))
		draw.Draw(img, img.Bounds(), &image.Uniform{c}, image.Point{}, draw.Src)
		add("synthetic", fmt.Sprintf("uniform-%v", c), share(img))
	}
	for k := 0; k < 3; k++ {
		img := image.NewNRGBA(image.Rect(0, 0, 640, 480))
		for y := 0; y < 480; y++ {
			for x := 0; x < 640; x++ {
				v := [3]uint8{uint8(x * 255 / 639), uint8(y * 255 / 479), uint8((x + y) * 255 / 1118)}
				img.SetNRGBA(x, y, color.NRGBA{v[k], v[(k+1)%3], v[(k+2)%3], 255})
			}
		}
		add("synthetic", fmt.Sprintf("gradient-%d", k), share(img))
	}
	rng := rand.New(rand.NewSource(1))
	for k, cell := range []int{1, 4, 16} {
		img := image.NewNRGBA(image.Rect(0, 0, 640, 480))
		for y := 0; y < 480; y += cell {
			for x := 0; x < 640; x += cell {
				c := color.NRGBA{uint8(rng.Intn(256)), uint8(rng.Intn(256)), uint8(rng.Intn(256)), 255}
				draw.Draw(img, image.Rect(x, y, x+cell, y+cell), &image.Uniform{c}, image.Point{}, draw.Src)
			}
		}
		add("synthetic", fmt.Sprintf("noise-%d-cell%d", k, cell), share(img))
	}

	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := sets[n]
		sort.Float64s(s)
		below := 0
		for _, v := range s {
			if v < cutout.MinCarShare {
				below++
			}
		}
		q := func(f float64) float64 { return s[int(f*float64(len(s)-1))] }
		fmt.Printf("SUMMARY %-10s n=%3d min=%.4f p5=%.4f p50=%.4f p95=%.4f max=%.4f below %.3f: %d\n",
			n, len(s), s[0], q(0.05), q(0.5), q(0.95), s[len(s)-1], cutout.MinCarShare, below)
	}
}

// features are other measures of a cut-out, for comparing rules: the
// largest blob's share, the share of the photo's border that is car, the
// car's bounding box's share, and the soft pixels (alpha 32..223) per
// confident one.
func features(car *image.NRGBA) string {
	b := car.Bounds()
	w, h := b.Dx(), b.Dy()
	a := func(x, y int) uint8 { return car.Pix[y*car.Stride+4*x+3] }
	conf, soft, border := 0, 0, 0
	x0, y0, x1, y1 := w, h, -1, -1
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := a(x, y)
			if v >= 128 {
				conf++
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
				if x == 0 || y == 0 || x == w-1 || y == h-1 {
					border++
				}
			}
			if v >= 32 && v < 224 {
				soft++
			}
		}
	}
	box := 0.0
	if x1 >= 0 {
		box = float64((x1-x0+1)*(y1-y0+1)) / float64(w*h)
	}
	return fmt.Sprintf("blob=%.4f border=%.4f box=%.4f soft=%.4f", cutout.LargestBlob(car),
		float64(border)/float64(2*(w+h)-4), box, float64(soft)/float64(max(conf, 1)))
}
