package plates

import (
	"image"
	"math"
)

// Slant estimation: a plate seen from an angle, or on a car parked on a
// slope, has its top and bottom edges and its rows of characters tilted.
// The slope is found as in document deskewing: the luminance's vertical
// gradient summed along lines of each candidate slope gives a profile that
// is sharpest (largest sum of squares) when the lines run along the plate's
// edges and the characters' tops and bottoms.
const (
	slantGridH, slantGridW = 32, 80
	maxSlant               = 0.36 // |dy/dx| tried, about 20°
	slantStep              = 0.02
	minSlantWidth          = 32  // plates narrower than this (photo pixels) are left level
	slantGain              = 1.1 // the best slope must beat level by this factor
)

// slant returns the plate's slope dy/dx in photo pixels for the box d
// (photo pixels relative to bounds' origin), or 0 when it is level, too
// small to tell, or unclear.
func slant(px func(x, y int) (r, g, b float32), bounds image.Rectangle, d box) float64 {
	w, h := d.x1-d.x0, d.y1-d.y0
	if w < minSlantWidth || h < 4 {
		return 0
	}
	xs := windowSamples(d.x0, w, slantGridW, bounds.Dx(), bounds.Min.X, 3)
	ys := windowSamples(d.y0, h, slantGridH, bounds.Dy(), bounds.Min.Y, 3)
	var g [slantGridH][slantGridW]float32
	for gy, sy := range ys {
		for gx, sx := range xs {
			var v float32
			for _, py := range sy {
				for _, p := range sx {
					r, gg, b := px(p.at, py.at)
					v += py.weight * p.weight * (0.299*r + 0.587*gg + 0.114*b)
				}
			}
			g[gy][gx] = v
		}
	}
	var grad [slantGridH][slantGridW]float32
	for y := 1; y < slantGridH-1; y++ {
		for x := range slantGridW {
			grad[y][x] = float32(math.Abs(float64(g[y+1][x] - g[y-1][x])))
		}
	}
	// A slope t in photo pixels is t·(h/H)/(w/W) rows per column of the grid.
	toGrid := (slantGridH / h) / (slantGridW / w)
	energy := func(t float64) float64 {
		k := t * toGrid
		var prof [3 * slantGridH]float64
		for x := range slantGridW {
			off := k * (float64(x) - (slantGridW-1)/2.0)
			for y := 1; y < slantGridH-1; y++ {
				// Row y's value lands on profile row y − off, spread linearly.
				r := float64(y) - off + slantGridH
				i := int(math.Floor(r))
				f := r - float64(i)
				v := float64(grad[y][x])
				prof[i] += v * (1 - f)
				prof[i+1] += v * f
			}
		}
		e := 0.0
		for _, v := range prof {
			e += v * v
		}
		return e
	}
	level := energy(0)
	best, bestE := 0.0, level
	for t := -maxSlant; t <= maxSlant+1e-9; t += slantStep {
		// The whole plate must still fit the box at this slope.
		if math.Abs(t)*w > 0.7*h {
			continue
		}
		if e := energy(t); e > bestE {
			best, bestE = t, e
		}
	}
	if bestE < slantGain*level {
		return 0
	}
	return best
}
