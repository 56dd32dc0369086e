// Package benchphoto makes the large photos the benchmarks and the
// command-line tools measure on from the small real photos of the data
// sets: enlarged, and grained so they code as densely as a camera's.
package benchphoto

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"math"
	"math/rand/v2"

	xdraw "golang.org/x/image/draw"

	"carphoto/imageops/codec"
)

// Enlarge decodes photo data, resamples it (Catmull-Rom) to about mp
// megapixels with its aspect kept (mp 0: its own size), adds deterministic
// noise of ±grain levels to every channel (0: none), and encodes it once
// at quality 90. An enlarged photo alone codes in a fraction of a
// camera's bytes and flatters every codec; a grain of about 6 levels makes
// a 12 MP photo 2–3 MB, as a camera's.
func Enlarge(ctx context.Context, data []byte, mp float64, grain int) ([]byte, error) {
	ph, err := codec.Decode(ctx, data, codec.Limits{MaxPixels: 1 << 30})
	if err != nil {
		return nil, err
	}
	b := ph.Image.Bounds()
	var img *image.RGBA
	if mp > 0 {
		f := math.Sqrt(mp * 1e6 / float64(b.Dx()*b.Dy()))
		img = image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*f), int(float64(b.Dy())*f)))
		xdraw.CatmullRom.Scale(img, img.Rect, ph.Image, b, xdraw.Src, nil)
	} else {
		img = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(img, img.Rect, ph.Image, b.Min, draw.Src)
	}
	if grain > 0 {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < len(img.Pix); i += 4 {
			d := rng.IntN(2*grain+1) - grain
			for k := range 3 {
				img.Pix[i+k] = uint8(min(255, max(0, int(img.Pix[i+k])+d)))
			}
		}
	}
	var out bytes.Buffer
	if err := codec.EncodeJPEG(&out, img, 90, nil); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
