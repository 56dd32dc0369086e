//go:build platestune

package tune

import (
	"carphoto/internal/testenv/datasets"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto/internal/testenv/imgtest"
	"carphoto/train/plates/labelled"
)

// TestDegradeSweep spoils the validation photos as customers' cameras and
// uploads would — heavy JPEG, soft focus, motion blur, a dark frame with
// sensor noise, an overexposed one, no colour — and prints for each
// condition the labelled plates the first stage proposes (as TestReach
// counts them), then the recall and the false detections per photo
// (against the labels, then with the plates they miss). The labels stay
// put: every condition keeps the photo's geometry. The dark frame's noise
// is seeded, so runs repeat. Respects PLATES_COPYFREE.
//
//	go test -tags platestune -run TestDegradeSweep -v ./train/plates/tune/
func TestDegradeSweep(t *testing.T) {
	st, tuning := tuned(t)
	conditions := []struct {
		name  string
		spoil func(image.Image) image.Image
	}{
		{"as is", func(img image.Image) image.Image { return img }},
		{"jpeg q20", func(img image.Image) image.Image { return imgtest.JPEGRoundTrip(t, img, 20) }},
		{"soft (½ and back)", soft},
		{"motion 9 px", func(img image.Image) image.Image { return motion(img, 9) }},
		{"dark, noisy", func(img image.Image) image.Image {
			r := rand.New(rand.NewPCG(1, 2))
			return perPixel(img, func(v float64) float64 { return 0.3*v + 6*r.NormFloat64() })
		}},
		{"overexposed", func(img image.Image) image.Image {
			return perPixel(img, func(v float64) float64 { return 1.3 * 255 * math.Sqrt(v/255) })
		}},
		{"greyscale", grey},
	}
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelled.Photos(t, set, datasets.Validation)
		for _, c := range conditions {
			var given, audited score
			proposed := 0
			for _, p := range photos {
				p.Img = c.spoil(p.Img)
				props := p.Proposed(t, st, tuning)
				for _, b := range p.Boxes {
					if labelled.ReachedBy(props, b) {
						proposed++
					}
				}
				found, err := st.Detect(t.Context(), p.Img, tuning)
				if err != nil {
					t.Fatal(err)
				}
				given.add(p.Boxes, found)
				audited.add(append(p.Missed, p.Boxes...), found)
			}
			t.Logf("%-18s %-18s %d proposed; %s | %s", set, c.name, proposed, given.format(len(photos)), audited.format(len(photos)))
		}
	}
}

// soft halves the photo's resolution and enlarges it back: a soft lens or
// a photo resized on the way.
func soft(img image.Image) image.Image {
	b := img.Bounds()
	half := image.NewRGBA(image.Rect(0, 0, max(1, b.Dx()/2), max(1, b.Dy()/2)))
	xdraw.ApproxBiLinear.Scale(half, half.Rect, img, b, xdraw.Src, nil)
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	xdraw.BiLinear.Scale(out, out.Rect, half, half.Rect, xdraw.Src, nil)
	return out
}

// motion averages n horizontally shifted copies: a camera panning.
func motion(img image.Image, n int) image.Image {
	src := rgba(img)
	b := src.Rect
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var s [3]int
			for k := -n / 2; k <= n/2; k++ {
				xx := min(max(x+k, b.Min.X), b.Max.X-1)
				i := src.PixOffset(xx, y)
				for c := range s {
					s[c] += int(src.Pix[i+c])
				}
			}
			i := out.PixOffset(x, y)
			for c := range s {
				out.Pix[i+c] = uint8(s[c] / (n/2*2 + 1))
			}
			out.Pix[i+3] = 255
		}
	}
	return out
}

// perPixel maps every channel of every pixel through f, clamped to a byte.
func perPixel(img image.Image, f func(v float64) float64) image.Image {
	out := rgba(img)
	for i := 0; i < len(out.Pix); i += 4 {
		for c := range 3 {
			out.Pix[i+c] = uint8(min(255, max(0, math.Round(f(float64(out.Pix[i+c]))))))
		}
	}
	return out
}

// grey returns img without colour: every pixel its luma.
func grey(img image.Image) image.Image {
	out := rgba(img)
	for i := 0; i < len(out.Pix); i += 4 {
		y := color.GrayModel.Convert(color.RGBA{out.Pix[i], out.Pix[i+1], out.Pix[i+2], 255}).(color.Gray).Y
		out.Pix[i], out.Pix[i+1], out.Pix[i+2] = y, y, y
	}
	return out
}

// rgba returns a fresh RGBA copy of img.
func rgba(img image.Image) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(b)
	xdraw.Draw(out, b, img, b.Min, xdraw.Src)
	return out
}
