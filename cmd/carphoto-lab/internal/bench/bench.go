// Package bench holds the command-line tools that try and measure the image
// work on files: carphoto plates and cutout, and carphoto bench plates,
// cutout and codec. They are tools for people tuning the vision, not part
// of the service.
package bench

import (
	"context"
	"image"
	"math"
	"os"
	"slices"
	"syscall"
	"time"

	xdraw "golang.org/x/image/draw"

	"carphoto/imageops/codec"
	"carphoto/internal/testenv/benchphoto"
)

// CPUTime is the CPU time this process has used, user plus system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resized returns img resampled (Catmull-Rom) to w×h pixels: the tools'
// enlarged and shrunk test photos.
func resized(img image.Image, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Rect, img, img.Bounds(), xdraw.Src, nil)
	return dst
}

// toolLimits caps the photos the command-line tools read: the service's default.
var toolLimits = codec.Limits{MaxPixels: codec.DefaultMaxPixels}

// decodeFile reads and decodes a photo file, in displayed orientation.
func decodeFile(ctx context.Context, path string) (*codec.Photo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return codec.Decode(ctx, data, toolLimits)
}

// Enlarge scales a photo up to mp megapixels and encodes it as a camera
// would (bench service --scale-to-mp).
func Enlarge(ctx context.Context, data []byte, mp float64) ([]byte, error) {
	return benchphoto.Enlarge(ctx, data, mp, 0)
}

// ImageSize is a photo file's width and height in displayed orientation,
// from its header, whatever its size.
func ImageSize(data []byte) (w, h int, err error) {
	_, w, h, err = codec.DecodeConfig(data, codec.Limits{MaxPixels: 1 << 31})
	return w, h, err
}

// Millis is d in milliseconds.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Percentile returns the p-th percentile (nearest rank) of xs.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(i, 0)]
}
