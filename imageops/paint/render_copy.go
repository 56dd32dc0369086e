package paint

import (
	"image"
	"image/draw"
	"runtime"
	"sync"
)

// copyForRender returns img as a new *image.RGBA with bounds starting at
// 0,0. A decoded JPEG (*image.YCbCr), *image.RGBA and *image.NRGBA take the
// standard library's direct pixel loops rather than one At call per pixel
// (which allocates a color.Color each time), and the rows are split between
// the CPUs: a 12 MP photo is copied in tens of milliseconds.
func copyForRender(img image.Image) *image.RGBA {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if src, ok := img.(*image.RGBA); ok {
		for y := range b.Dy() {
			copy(dst.Pix[y*dst.Stride:y*dst.Stride+b.Dx()*4], src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):])
		}
		return dst
	}
	strips := min(runtime.GOMAXPROCS(0), max(1, b.Dy()/64))
	var wg sync.WaitGroup
	for i := range strips {
		r := image.Rect(0, b.Dy()*i/strips, b.Dx(), b.Dy()*(i+1)/strips)
		wg.Go(func() {
			draw.Draw(dst, r, img, b.Min.Add(r.Min), draw.Src)
		})
	}
	wg.Wait()
	return dst
}
