package datasets

import (
	"image"
)

// IoU returns the intersection over union of the car in matte (alpha >= 128) and in
// mask (any image, gray >= 128 = car). Both must have the same size; 1 if both are empty.
func IoU(matte *image.Alpha, mask image.Image) float64 {
	p, m := threshold(matte), threshold(mask)
	var inter, union int
	for i := range p {
		if p[i] && m[i] {
			inter++
		}
		if p[i] || m[i] {
			union++
		}
	}
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// BoundaryF returns the boundary F-score of matte against mask: the harmonic mean of
// the share of the matte's outline pixels lying within tol pixels (chessboard distance)
// of the mask's outline, and the share of the mask's outline within tol of the matte's.
// It scores the edges alone, which IoU hardly sees on a large car.
func BoundaryF(matte *image.Alpha, mask image.Image, tol int) float64 {
	b := matte.Bounds()
	w, h := b.Dx(), b.Dy()
	pb, mb := outline(threshold(matte), w, h), outline(threshold(mask), w, h)
	precision, np := hits(pb, dilate(mb, w, h, tol))
	recall, nm := hits(mb, dilate(pb, w, h, tol))
	if np == 0 && nm == 0 {
		return 1
	}
	if precision+recall == 0 {
		return 0
	}
	return 2 * precision * recall / (precision + recall)
}

// threshold thresholds an image's gray (or alpha, for *image.Alpha) at 128.
func threshold(img image.Image) []bool {
	b := img.Bounds()
	out := make([]bool, b.Dx()*b.Dy())
	if a, ok := img.(*image.Alpha); ok {
		for y := 0; y < b.Dy(); y++ {
			row := a.Pix[y*a.Stride : y*a.Stride+b.Dx()]
			for x, v := range row {
				out[y*b.Dx()+x] = v >= 128
			}
		}
		return out
	}
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			out[y*b.Dx()+x] = (r+g+bl)/3 >= 128<<8
		}
	}
	return out
}

// outline marks the set pixels with an unset 4-neighbour (the image border does not count).
func outline(in []bool, w, h int) []bool {
	out := make([]bool, len(in))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if !in[i] {
				continue
			}
			out[i] = (x > 0 && !in[i-1]) || (x < w-1 && !in[i+1]) || (y > 0 && !in[i-w]) || (y < h-1 && !in[i+w])
		}
	}
	return out
}

func dilate(in []bool, w, h, r int) []bool {
	out := make([]bool, len(in))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if !in[y*w+x] {
				continue
			}
			for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
				for xx := max(0, x-r); xx <= min(w-1, x+r); xx++ {
					out[yy*w+xx] = true
				}
			}
		}
	}
	return out
}

// hits returns the share of set pixels of a that are set in b, and their count.
func hits(a, b []bool) (float64, int) {
	n, in := 0, 0
	for i, v := range a {
		if v {
			n++
			if b[i] {
				in++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(in) / float64(n), n
}
