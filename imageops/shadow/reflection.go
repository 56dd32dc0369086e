package shadow

import (
	"image"
	"math"
)

// Reflection shape, as fractions of the car's size unit.
const (
	reflectionStrength = 0.40  // opacity right at the floor line
	reflectionDepth    = 0.32  // gone entirely this far below the floor
	reflectionCell     = 0.004 // cell size of the blurred copy
	reflectionSpread   = 0.15  // horizontal blur radius per unit of depth, as on a glossy floor
)

// reflection is the car mirrored about its floor line: a coarse,
// premultiplied copy of the car's lowest part in floor-relative coordinates
// (row j holds the car at height j·cell above the floor), so that reading it
// at depth v below the floor mirrors the car column by column about a
// slanted or bent floor line. The coarse grid is the blur.
type reflection struct {
	x0    int // image column of grid column 0
	w, h  int
	cell  float64
	depth float64
	rgba  []float32 // premultiplied, 4 per cell
}

// newReflection samples the car above the floor into the grid and grows the
// layout's canvas to hold the reflection.
func newReflection(car *image.NRGBA, gr *ground, lay *shadowLayout) *reflection {
	u := lay.unit
	rf := &reflection{x0: gr.box.Min.X, depth: reflectionDepth * u}
	rf.cell = math.Max(1, reflectionCell*u)
	rf.w = int(math.Ceil(float64(gr.box.Dx()) / rf.cell))
	rf.h = int(math.Ceil(rf.depth/rf.cell)) + 1
	rf.rgba = make([]float32, 4*rf.w*rf.h)
	count := make([]float32, rf.w*rf.h)
	// The cells average several pixels each, so every step-th pixel of
	// every step-th row is enough; rows are read in order, for the cache.
	inv := 1 / rf.cell
	step := max(1, int(rf.cell/3))
	top, low := math.Inf(1), math.Inf(-1)
	for x := gr.box.Min.X; x < gr.box.Max.X; x++ {
		top, low = math.Min(top, lay.floorAt(x)), math.Max(low, lay.floorAt(x))
	}
	y0 := max(int(math.Floor(top-rf.depth)), 0)
	y1 := min(int(math.Ceil(low)), car.Rect.Dy())
	for y := y0; y < y1; y += step {
		row := car.Pix[y*car.Stride:]
		cy := float64(y) + 0.5
		for x := gr.box.Min.X; x < gr.box.Max.X; x += step {
			h := lay.floorAt(x) - cy // height above the floor
			if h < 0 || h >= rf.depth {
				continue
			}
			k := int(h*inv)*rf.w + int(float64(x-rf.x0)*inv)
			count[k]++
			p := row[4*x : 4*x+4 : 4*x+4]
			if p[3] == 0 {
				continue
			}
			a := float32(p[3]) / (255 * 255)
			c := rf.rgba[4*k : 4*k+4 : 4*k+4]
			c[0] += float32(p[0]) * a
			c[1] += float32(p[1]) * a
			c[2] += float32(p[2]) * a
			c[3] += float32(p[3]) / 255
		}
	}
	for k, n := range count {
		if n > 0 {
			c := rf.rgba[4*k : 4*k+4]
			c[0], c[1], c[2], c[3] = c[0]/n, c[1]/n, c[2]/n, c[3]/n
		}
	}
	rf.blurWithDepth()

	bottom := 0
	for x := gr.box.Min.X; x < gr.box.Max.X; x++ {
		bottom = max(bottom, int(math.Ceil(lay.floorAt(x)+rf.depth)))
	}
	lay.grow(gr, image.Rect(gr.box.Min.X, 0, gr.box.Max.X, bottom))
	return rf
}

// blurWithDepth blurs each row of the grid along the floor, the more the
// deeper it is mirrored: sharp where the tyres touch, soft further down.
func (rf *reflection) blurWithDepth() {
	src := make([]float32, 4*rf.w)
	for j := 0; j < rf.h; j++ {
		r := int(float64(j) * reflectionSpread)
		if r == 0 {
			continue
		}
		row := rf.rgba[4*j*rf.w : 4*(j+1)*rf.w]
		copy(src, row)
		inv := 1 / float32(2*r+1)
		for c := 0; c < 4; c++ {
			var sum float32
			for i := 0; i <= r && i < rf.w; i++ {
				sum += src[4*i+c]
			}
			for i := 0; i < rf.w; i++ {
				row[4*i+c] = sum * inv
				if i+r+1 < rf.w {
					sum += src[4*(i+r+1)+c]
				}
				if i-r >= 0 {
					sum -= src[4*(i-r)+c]
				}
			}
		}
	}
}

// sampleColumn returns the premultiplied reflection at depth v below the
// floor, faded with depth, in the column between grid columns i and i+1
// (weight tx on i+1).
func (rf *reflection) sampleColumn(i int, tx, v float32) (r, g, b, a float32) {
	depth := float32(rf.depth)
	if v >= depth {
		return 0, 0, 0, 0
	}
	fy := max(v/float32(rf.cell)-0.5, 0)
	j := int(fy) // j+1 < rf.h since v < depth
	ty := fy - float32(j)
	t := 1 - v/depth
	f := float32(reflectionStrength) * t * t
	if i >= 0 && i < rf.w {
		k := 4 * (j*rf.w + i)
		c0 := rf.rgba[k : k+4 : k+4]
		c1 := rf.rgba[k+4*rf.w : k+4*rf.w+4 : k+4*rf.w+4]
		w0, w1 := (1-tx)*(1-ty)*f, (1-tx)*ty*f
		r += c0[0]*w0 + c1[0]*w1
		g += c0[1]*w0 + c1[1]*w1
		b += c0[2]*w0 + c1[2]*w1
		a += c0[3]*w0 + c1[3]*w1
	}
	if i+1 >= 0 && i+1 < rf.w {
		k := 4 * (j*rf.w + i + 1)
		c0 := rf.rgba[k : k+4 : k+4]
		c1 := rf.rgba[k+4*rf.w : k+4*rf.w+4 : k+4*rf.w+4]
		w0, w1 := tx*(1-ty)*f, tx*ty*f
		r += c0[0]*w0 + c1[0]*w1
		g += c0[1]*w0 + c1[1]*w1
		b += c0[2]*w0 + c1[2]*w1
		a += c0[3]*w0 + c1[3]*w1
	}
	return r, g, b, a
}
