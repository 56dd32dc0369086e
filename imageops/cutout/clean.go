package cutout

// The coarse matte made a car's: its regions (components), thin
// attachments opened off and small blobs dropped (cleanCar).

// components labels the 4-connected regions of pixels where in(i) holds; label -1
// elsewhere. It returns the labels and each region's size.
func components(w, h int, in func(i int) bool) ([]int32, []int) {
	labels := make([]int32, w*h)
	for i := range labels {
		labels[i] = -1
	}
	var sizes []int
	var stack []int
	for start := range labels {
		if labels[start] >= 0 || !in(start) {
			continue
		}
		l := int32(len(sizes))
		size := 0
		labels[start] = l
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			size++
			x, y := i%w, i/w
			for _, n := range [4][3]int{{x - 1, y, i - 1}, {x + 1, y, i + 1}, {x, y - 1, i - w}, {x, y + 1, i + w}} {
				if n[0] < 0 || n[0] >= w || n[1] < 0 || n[1] >= h {
					continue
				}
				if j := n[2]; labels[j] < 0 && in(j) {
					labels[j] = l
					stack = append(stack, j)
				}
			}
		}
		sizes = append(sizes, size)
	}
	return labels, sizes
}

// cleanCar keeps the car in U²-Net-p's probabilities p (w×h), in place: the mask
// (p >= 0.5) is opened by a square of radius open, so parts joined to the car by a
// neck narrower than the square come apart; blobs of the opened mask smaller than
// keep times the largest are dropped (with keep >= oneCarKeep, every blob but the
// main one, mainBlob), and so is everything farther than open+1 from the blobs
// kept. Holes inside the car are filled.
func cleanCar(p []float32, w, h int, keep float64, open int) {
	fg := make([]bool, len(p))
	for i, v := range p {
		fg[i] = v >= 0.5
	}
	core := fg
	if open > 0 {
		core = erode(fg, w, h, open)
		core = dilateBox(dilateBox(core, h, w, open, w, 1), w, h, open, 1, w)
	}
	labels, sizes := components(w, h, func(i int) bool { return core[i] })
	largest := 0
	for _, s := range sizes {
		largest = max(largest, s)
	}
	if largest == 0 {
		fill(p, 0)
		return
	}
	kept := make([]bool, len(p))
	if keep >= oneCarKeep {
		car := int32(mainBlob(labels, sizes, w, h))
		for i, l := range labels {
			kept[i] = l == car
		}
	} else {
		for i, l := range labels {
			kept[i] = l >= 0 && float64(sizes[l]) >= keep*float64(largest)
		}
	}
	near := dilateBox(dilateBox(kept, h, w, open+1, w, 1), w, h, open+1, 1, w)
	for i := range p {
		if !near[i] {
			p[i] = 0
		}
	}
	// Holes: background regions that do not reach the border.
	bgLabels, bgSizes := components(w, h, func(i int) bool { return p[i] < 0.5 })
	touches := make([]bool, len(bgSizes))
	for i, l := range bgLabels {
		x, y := i%w, i/w
		if l >= 0 && (x == 0 || y == 0 || x == w-1 || y == h-1) {
			touches[l] = true
		}
	}
	for i, l := range bgLabels {
		if l >= 0 && !touches[l] {
			p[i] = 1
		}
	}
}

// erode returns the pixels of in (w×h) whose square neighbourhood of radius r lies
// wholly inside in (the image's border counts as inside).
func erode(in []bool, w, h, r int) []bool {
	out := make([]bool, len(in))
	for i, v := range in {
		out[i] = !v
	}
	out = dilateBox(dilateBox(out, h, w, r, w, 1), w, h, r, 1, w)
	for i, v := range out {
		out[i] = !v
	}
	return out
}
