package imageops

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"carphoto"
	"carphoto/imageops/codec"
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
// car_not_found (cutout.MinCarShare), and answer a real car photo and the
// smallest car in cars-seg (0137, a distant car: 0.65% of the photo).
func TestCarNotFound(t *testing.T) {
	photos, _ := cutoutSet(t, 1)
	small := datasets.ReadFile(t, "cars-seg", "images/cars-seg-0137.jpg")
	photos = append(photos, small)
	ctx := context.Background()
	lim := codec.Limits{}
	for _, op := range []Op{CarCutout, CarShadow} {
		for i, photo := range photos {
			res, err := Process(ctx, Input{Photo: photo, Limits: lim}, Params{Op: op})
			if err != nil || len(res.Body) == 0 {
				t.Errorf("%s of car photo %d: %v; want the answer", op, i, err)
			}
		}
		_, err := Process(ctx, Input{Photo: noCarJPEG(t), Limits: lim}, Params{Op: op})
		if code := carphoto.ErrorCode(err); code != carphoto.ECarNotFound {
			t.Errorf("%s of a photo with no car: error %v; want code %q", op, err, carphoto.ECarNotFound)
		}
	}
}
