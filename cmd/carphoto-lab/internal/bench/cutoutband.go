package bench

import (
	"image"
	"math"
	"slices"
)

// The contact band, where the car meets the ground: from bandAbove of the
// labelled car's height above its lowest row to bandBelow of it below that
// row. Whole-mask IoU hardly sees a slab of road under the car or
// a tyre lost; IoU inside this band does.
const (
	bandAbove = 0.20
	bandBelow = 0.10
)

// contactBand is the contact-band score of one photo.
type contactBand struct {
	IoU float64
	// Extra and Missed are the band's pixels the matte takes beyond the
	// label (ground, shadow, another object) and the label's pixels it
	// leaves out (a tyre, an arch), as shares of the band's union.
	Extra, Missed float64
	// FrameCut says the labelled car touches the left, right or bottom
	// edge of the photo: its contact band is cut by the frame.
	FrameCut bool
}

// contactBandIoU returns the IoU of the car in matte (alpha >= 128) and in
// mask (gray >= 128) over the rows of mask's contact band, and whether the
// labelled car is cut by the frame. Both must have the same size. A mask with
// no car scores 1 when the matte is empty there too.
func contactBandIoU(matte *image.Alpha, mask image.Image) contactBand {
	b := matte.Bounds()
	w, h := b.Dx(), b.Dy()
	lab := bandThreshold(mask)
	top, low := -1, -1
	var cb contactBand
	for y := range h {
		for x := range w {
			if lab[y*w+x] {
				if top < 0 {
					top = y
				}
				low = y
				if x == 0 || x == w-1 || y == h-1 {
					cb.FrameCut = true
				}
			}
		}
	}
	if top < 0 {
		top, low = 0, h-1
	}
	carH := float64(low - top + 1)
	y0 := max(0, int(math.Floor(float64(low)-bandAbove*carH)))
	y1 := min(h-1, int(math.Ceil(float64(low)+bandBelow*carH)))
	var inter, union, extra, missed int
	for y := y0; y <= y1; y++ {
		row := matte.Pix[y*matte.Stride:]
		for x := range w {
			p, m := row[x] >= 128, lab[y*w+x]
			if p && m {
				inter++
			}
			if p || m {
				union++
			}
			if p && !m {
				extra++
			}
			if m && !p {
				missed++
			}
		}
	}
	cb.IoU = 1
	if union > 0 {
		cb.IoU = float64(inter) / float64(union)
		cb.Extra, cb.Missed = float64(extra)/float64(union), float64(missed)/float64(union)
	}
	return cb
}

// bandThreshold marks the pixels of img whose gray is at least 128.
func bandThreshold(img image.Image) []bool {
	b := img.Bounds()
	out := make([]bool, b.Dx()*b.Dy())
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			out[y*b.Dx()+x] = (r+g+bl)/3 >= 128<<8
		}
	}
	return out
}

// quantile returns the q-quantile of xs (0 ≤ q ≤ 1) by linear interpolation
// between order statistics; xs is sorted in place.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (xs[i+1]-xs[i])*(pos-float64(i))
}

// bandOverlay draws, over a copy of the photo, the labelled car's outline in
// green and the matte's in red, and dims the rows outside the contact band:
// what `bench cutout -overlay` writes to look at the labels and the errors
// in the band.
func bandOverlay(photo image.Image, matte *image.Alpha, mask image.Image) *image.NRGBA {
	b := matte.Bounds()
	w, h := b.Dx(), b.Dy()
	lab := bandThreshold(mask)
	pred := make([]bool, w*h)
	for y := range h {
		for x := range w {
			pred[y*w+x] = matte.Pix[y*matte.Stride+x] >= 128
		}
	}
	top, low := -1, -1
	for i, v := range lab {
		if v {
			if top < 0 {
				top = i / w
			}
			low = i / w
		}
	}
	carH := float64(low - top + 1)
	y0, y1 := float64(low)-bandAbove*carH, float64(low)+bandBelow*carH
	edge := func(m []bool, x, y int) bool {
		i := y*w + x
		return m[i] && (x > 0 && !m[i-1] || x < w-1 && !m[i+1] || y > 0 && !m[i-w] || y < h-1 && !m[i+w])
	}
	pb := photo.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		dim := top >= 0 && (float64(y) < y0 || float64(y) > y1)
		for x := range w {
			r, g, bl, _ := photo.At(pb.Min.X+x, pb.Min.Y+y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			if dim {
				c = [3]uint8{c[0] / 3, c[1] / 3, c[2] / 3}
			}
			switch {
			case edge(lab, x, y):
				c = [3]uint8{0, 255, 0}
			case edge(pred, x, y):
				c = [3]uint8{255, 0, 0}
			}
			i := y*out.Stride + 4*x
			out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = c[0], c[1], c[2], 255
		}
	}
	return out
}
