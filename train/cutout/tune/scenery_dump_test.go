//go:build cutouttune

package tune

// The cut-outs behind the scenery rule (cutout.Scenery, issue 70 item 4):
// Cut's alpha of the held-out and validation photos of the named sets (the
// photos as sent: all are under imageops.MaxCanvasPixels), written as a grey
// PNG to $SCENERY_OUT/<set>/<name>.png, skipping those already there (a
// stopped run resumes). The rule is then chosen on the validation split's
// PNGs without the network, and reported on the held-out split's:
//
//	SCENERY_OUT=~/carphoto-train/alpha SCENERY_SETS=cars-seg,plates-web-cc0,plates-dashcam-ro \
//	    go test -tags cutouttune -run TestDumpAlpha -timeout 10h -v ./train/cutout/tune/

import (
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/cutout"
)

func TestDumpAlpha(t *testing.T) {
	out := os.Getenv("SCENERY_OUT")
	if out == "" {
		t.Skip("SCENERY_OUT names the folder to write the alphas to")
	}
	ctx := context.Background()
	for _, set := range strings.Split(os.Getenv("SCENERY_SETS"), ",") {
		dir := filepath.Join(datasets.Dir(), set)
		if _, err := os.Stat(dir); err != nil {
			dir = filepath.Join(datasets.ExtraDir(), set)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
		if err != nil {
			t.Fatal(err)
		}
		var labels []struct{ File string }
		if err := json.Unmarshal(raw, &labels); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(out, set), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, l := range labels {
			if !datasets.HeldOut(l.File) && !datasets.Validation(l.File) {
				continue
			}
			dst := filepath.Join(out, set, strings.TrimSuffix(filepath.Base(l.File), filepath.Ext(l.File))+".png")
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			f, err := os.Open(filepath.Join(dir, l.File))
			if err != nil {
				t.Fatal(err)
			}
			img, err := jpeg.Decode(f)
			f.Close()
			if err != nil {
				t.Logf("%s: %v", l.File, err)
				continue
			}
			car, err := cutout.Cut(ctx, img)
			if err != nil {
				t.Fatal(err)
			}
			b := car.Bounds()
			a := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
			for y := range b.Dy() {
				for x := range b.Dx() {
					a.Pix[y*a.Stride+x] = car.Pix[y*car.Stride+4*x+3]
				}
			}
			w, err := os.Create(dst + ".tmp")
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(w, a); err != nil {
				t.Fatal(err)
			}
			w.Close()
			os.Rename(dst+".tmp", dst)
		}
	}
}

// TestDumpSceneryAlpha writes, beside TestDumpAlpha's, Cut's alpha of
// scenery with no car in it, cut from the dash-cam set's held-out and
// validation frames (1280×720): "sky", the top 250 rows (buildings, trees,
// street lights, sky), and "road", rows 500-700 (the bottom 20 show the bonnet) of
// frames whose lowest labelled plate is above row 400 (the road ahead, no
// near car). The crops themselves go to $SCENERY_OUT/crops/, to be looked
// at: a crop that shows a car is listed in scenery-excluded.txt there by
// hand and left out of the measure.
func TestDumpSceneryAlpha(t *testing.T) {
	out := os.Getenv("SCENERY_OUT")
	if out == "" {
		t.Skip("SCENERY_OUT names the folder to write the alphas to")
	}
	ctx := context.Background()
	dir := filepath.Join(datasets.Dir(), "plates-dashcam-ro")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct {
		File   string
		Plates []struct{ X, Y, W, H float64 }
	}
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"scenery-sky", "scenery-road", "crops"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range labels {
		if !datasets.HeldOut(l.File) && !datasets.Validation(l.File) {
			continue
		}
		low := 0.0
		for _, p := range l.Plates {
			low = max(low, p.Y+p.H)
		}
		crops := map[string]image.Rectangle{"sky": image.Rect(0, 0, 1280, 250)}
		if low < 400 {
			crops["road"] = image.Rect(0, 500, 1280, 700)
		}
		f, err := os.Open(filepath.Join(dir, l.File))
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(l.File), filepath.Ext(l.File))
		for kind, r := range crops {
			dst := filepath.Join(out, "scenery-"+kind, base+".png")
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			crop := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
			for y := range r.Dy() {
				for x := range r.Dx() {
					crop.Set(x, y, img.At(r.Min.X+x, r.Min.Y+y))
				}
			}
			cf, err := os.Create(filepath.Join(out, "crops", kind+"-"+base+".jpg"))
			if err != nil {
				t.Fatal(err)
			}
			jpeg.Encode(cf, crop, &jpeg.Options{Quality: 85})
			cf.Close()
			car, err := cutout.Cut(ctx, crop)
			if err != nil {
				t.Fatal(err)
			}
			b := car.Bounds()
			a := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
			for y := range b.Dy() {
				for x := range b.Dx() {
					a.Pix[y*a.Stride+x] = car.Pix[y*car.Stride+4*x+3]
				}
			}
			w, err := os.Create(dst)
			if err != nil {
				t.Fatal(err)
			}
			png.Encode(w, a)
			w.Close()
		}
	}
}
