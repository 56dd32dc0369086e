package datasets

import "image"

// MainCar returns the label mask (gray >= 128 = car) with only its main car
// kept: of its 4-connected parts, the one with the largest size times
// centrality (1 at the frame's centre, falling to 0.25 at its corners, by the
// part's centroid), the rule by which the cut-out keeps its one car
// (imageops/cutout's mainBlob). cars-seg labels every car in a photo; the
// cut-out is scored against this car where it keeps one.
func MainCar(mask image.Image) *image.Gray {
	b := mask.Bounds()
	w, h := b.Dx(), b.Dy()
	in := threshold(mask)
	label := make([]int32, w*h)
	var sizes []int
	var sx, sy []float64
	var stack []int
	for start := range in {
		if !in[start] || label[start] != 0 {
			continue
		}
		id := int32(len(sizes) + 1)
		sizes, sx, sy = append(sizes, 0), append(sx, 0), append(sy, 0)
		label[start] = id
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			x, y := i%w, i/w
			sizes[id-1]++
			sx[id-1] += float64(x)
			sy[id-1] += float64(y)
			for _, n := range [4][3]int{{x - 1, y, i - 1}, {x + 1, y, i + 1}, {x, y - 1, i - w}, {x, y + 1, i + w}} {
				if n[0] >= 0 && n[0] < w && n[1] >= 0 && n[1] < h && in[n[2]] && label[n[2]] == 0 {
					label[n[2]] = id
					stack = append(stack, n[2])
				}
			}
		}
	}
	best, bestScore := int32(0), -1.0
	for k, n := range sizes {
		dx := (sx[k]/float64(n) + 0.5 - float64(w)/2) / (float64(w) / 2)
		dy := (sy[k]/float64(n) + 0.5 - float64(h)/2) / (float64(h) / 2)
		if score := float64(n) * (1 - 0.375*(dx*dx+dy*dy)); score > bestScore {
			best, bestScore = int32(k+1), score
		}
	}
	out := image.NewGray(image.Rect(0, 0, w, h))
	for i, l := range label {
		if l != 0 && l == best {
			out.Pix[i] = 255
		}
	}
	return out
}
