package imageops

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/internal/testenv/datasets"
)

// noCarJPEG is a photo with no car in it: a sky-like gradient.
func noCarJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 480, 320))
	for y := range 320 {
		for x := range 480 {
			img.Set(x, y, color.RGBA{uint8(100 + y/4), uint8(140 + y/5), uint8(200 - y/3 + x/40), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// car-cutout and car-shadow refuse a photo whose cut-out holds no car with
// car_not_found: an empty cut-out, a car under 1% of the frame
// (cutout.MinCarShare; cars-seg-0137, a distant car at 0.65%) and a cut-out
// that is scenery (cutout.Scenery; dash-cam frame 0000, where the network
// takes the night sky and the buildings from the top edge down the right
// side); they answer a real car photo and a small car (cars-seg-0124, 3%).
func TestCarNotFound(t *testing.T) {
	photos, _ := cutoutSet(t, 1)
	photos = append(photos, datasets.ReadFile(t, "cars-seg", "images/cars-seg-0124.jpg"))
	ctx := context.Background()
	lim := codec.Limits{}
	refused := []struct {
		name, why string
		photo     []byte
	}{
		{"a photo with no car", "no car was found", noCarJPEG(t)},
		{"a car at 0.65% of the frame", "no car was found", datasets.ReadFile(t, "cars-seg", "images/cars-seg-0137.jpg")},
		{"a street at night whose cut-out is sky and buildings", "the cut-out took the scenery",
			datasets.ReadFile(t, "plates-dashcam-ro", "images/plates-dashcam-ro-0000.jpg")},
	}
	for _, op := range []Op{CarCutout, CarShadow} {
		for i, photo := range photos {
			res, err := Process(ctx, Input{Photo: photo, Limits: lim}, Params{Op: op})
			if err != nil || len(res.Body) == 0 {
				t.Errorf("%s of car photo %d: %v; want the answer", op, i, err)
			}
		}
		for _, r := range refused {
			_, err := Process(ctx, Input{Photo: r.photo, Limits: lim}, Params{Op: op})
			if code := carphoto.ErrorCode(err); code != carphoto.ECarNotFound || !strings.Contains(err.Error(), r.why) {
				t.Errorf("%s of %s: error %v; want code %q saying %q", op, r.name, err, carphoto.ECarNotFound, r.why)
			}
		}
	}
}
