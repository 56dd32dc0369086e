package shadow

import (
	"encoding/binary"
	"image"
	"math"
	"slices"
	"sort"
)

// groundSolidAlpha is the matte value from which a pixel counts as car when
// finding the ground: half coverage, so a soft matte edge neither lifts nor
// lowers the contact by more than half a pixel.
const groundSolidAlpha = 128

// groundPoint is a point in continuous image coordinates: pixel (x, y)
// covers [x, x+1) × [y, y+1); y grows downwards.
type groundPoint struct{ x, y float64 }

// ground is where a car meets the floor, found from its matte alone.
//
// The car's underside is the lowest solid pixel of each column, and its
// lower convex hull is where a rigid floor could touch it. The tyres are
// the local bottoms of the underside that reach that hull (see
// findContacts), and the floor is the polyline through them: a side view
// yields one line through two tyres, a three-quarter view two lines meeting
// at the nearest tyre, a front view one wide line.
type ground struct {
	box      image.Rectangle // solid pixels, relative to the image's Min
	bottom   []float64       // per column of box: y of the underside, NaN where the column has no solid pixel
	hull     []groundPoint   // lower convex hull of the underside, left to right
	contacts []groundPoint   // tyre contact points, left to right; never empty
}

// findGround locates the car's contact with the floor. ok is false when the
// matte has no solid pixel.
func findGround(car *image.NRGBA) (gr ground, ok bool) {
	w := car.Rect.Dx()
	parts := newGroundParts(car)
	low := groundUndersides(car, parts)
	minX, maxX, maxY := w, -1, -1
	for x, b := range low {
		if b > 0 {
			minX, maxX, maxY = min(minX, x), x, max(maxY, b-1)
		}
	}
	if maxX < 0 {
		return ground{}, false
	}
	minY := 0
	for ; minY < maxY && !groundRowHasPart(car, parts, minY); minY++ {
	}
	gr.box = image.Rect(minX, minY, maxX+1, maxY+1)
	gr.bottom = make([]float64, gr.box.Dx())
	pts := make([]groundPoint, 0, len(gr.bottom))
	for i := range gr.bottom {
		if b := low[minX+i]; b > 0 {
			gr.bottom[i] = float64(b)
			pts = append(pts, groundPoint{float64(minX+i) + 0.5, float64(b)})
		} else {
			gr.bottom[i] = math.NaN()
		}
	}
	gr.hull = groundHull(pts)
	gr.contacts = gr.findContacts()
	return gr, true
}

// groundParts marks the parts of the matte that count when finding the
// floor, on a coarse grid: every 8-connected part at least 1/200 the area
// of the largest, grown by a cell. A speck of background left in a matte
// is ignored; a tyre the matte happens to separate from the body is kept.
type groundParts struct {
	cell, w, h int
	keep       []bool
	rows       []bool // a row of cells holds a part that counts
}

// groundGridCells is the coarse grid's size along the image's longer side.
const groundGridCells = 256

func newGroundParts(car *image.NRGBA) *groundParts {
	iw, ih := car.Rect.Dx(), car.Rect.Dy()
	c := max(1, (max(iw, ih)+groundGridCells-1)/groundGridCells)
	p := &groundParts{cell: c, w: (iw + c - 1) / c, h: (ih + c - 1) / c}
	solid := make([]bool, p.w*p.h)
	for j := 0; j < p.h; j++ {
		y := min(j*c+c/2, ih-1)
		for i := 0; i < p.w; i++ {
			x := min(i*c+c/2, iw-1)
			solid[j*p.w+i] = car.Pix[y*car.Stride+4*x+3] >= groundSolidAlpha
		}
	}
	// Label the parts with a flood fill.
	label := make([]int32, len(solid))
	var areas []int
	stack := make([]int, 0, 64)
	for k := range solid {
		if !solid[k] || label[k] != 0 {
			continue
		}
		areas = append(areas, 0)
		id := int32(len(areas))
		label[k] = id
		stack = append(stack[:0], k)
		for len(stack) > 0 {
			q := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			areas[id-1]++
			qi, qj := q%p.w, q/p.w
			for dj := -1; dj <= 1; dj++ {
				for di := -1; di <= 1; di++ {
					i, j := qi+di, qj+dj
					if i < 0 || j < 0 || i >= p.w || j >= p.h {
						continue
					}
					if n := j*p.w + i; solid[n] && label[n] == 0 {
						label[n] = id
						stack = append(stack, n)
					}
				}
			}
		}
	}
	largest := 0
	for _, a := range areas {
		largest = max(largest, a)
	}
	p.keep = make([]bool, len(solid))
	for k, id := range label {
		if id == 0 || areas[id-1]*200 < largest {
			continue
		}
		qi, qj := k%p.w, k/p.w
		for j := max(qj-1, 0); j <= min(qj+1, p.h-1); j++ {
			for i := max(qi-1, 0); i <= min(qi+1, p.w-1); i++ {
				p.keep[j*p.w+i] = true
			}
		}
	}
	// A matte whose solid parts all fall between the samples (a tiny or
	// hair-thin image) is taken whole.
	if largest == 0 {
		for k := range p.keep {
			p.keep[k] = true
		}
	}
	p.rows = make([]bool, p.h)
	for j := range p.rows {
		p.rows[j] = slices.Contains(p.keep[j*p.w:(j+1)*p.w], true)
	}
	return p
}

// rowHas reports whether row y has any pixel in a part that counts: rows
// without one are not read.
func (p *groundParts) rowHas(y int) bool { return p.rows[y/p.cell] }

// has reports whether pixel (x, y) lies in a part that counts.
func (p *groundParts) has(x, y int) bool {
	return p.keep[(y/p.cell)*p.w+x/p.cell]
}

// groundRowHasPart reports whether row y has a solid pixel in a part that
// counts.
func groundRowHasPart(car *image.NRGBA, parts *groundParts, y int) bool {
	row := car.Pix[y*car.Stride : y*car.Stride+4*car.Rect.Dx()]
	if !parts.rowHas(y) || !groundRowHasSolid(row) {
		return false
	}
	for x := 0; x < car.Rect.Dx(); x++ {
		if row[4*x+3] >= groundSolidAlpha && parts.has(x, y) {
			return true
		}
	}
	return false
}

// groundUndersides returns, per column, the lowest solid row + 1 (0 for a
// column without car), looking only at the parts that count and ignoring
// solid runs shorter than 1/150 of the image height with transparency above
// them: a sliver of road left in a matte is not a tyre. It walks up from
// the bottom and stops testing a column once found, so on a 12 MP cut-out
// it reads the rows under the car and only the columns beside it above
// that. An image too small for any such run is taken as it is.
func groundUndersides(car *image.NRGBA, parts *groundParts) []int {
	minRun := max(2, car.Rect.Dy()/150)
	low := groundUndersidesRun(car, parts, minRun)
	for _, b := range low {
		if b > 0 {
			return low
		}
	}
	return groundUndersidesRun(car, parts, 1)
}

func groundUndersidesRun(car *image.NRGBA, parts *groundParts, minRun int) []int {
	w, h := car.Rect.Dx(), car.Rect.Dy()
	low := make([]int, w)
	runLow := make([]int, w) // lowest row of the current solid run
	runTop := make([]int, w) // its highest row so far
	open := make([]int, w)   // columns not yet found
	for x := range open {
		open[x] = x
		runTop[x] = -2
	}
	for y := h - 1; y >= 0 && len(open) > 0; y-- {
		row := car.Pix[y*car.Stride : y*car.Stride+4*w]
		if !parts.rowHas(y) || !groundRowHasSolid(row) {
			continue
		}
		n := 0
		for _, x := range open {
			if row[4*x+3] >= groundSolidAlpha && parts.has(x, y) {
				if runTop[x] != y+1 {
					runLow[x] = y
				}
				runTop[x] = y
				if runLow[x]-y+1 >= minRun {
					low[x] = runLow[x] + 1
					continue
				}
			}
			open[n] = x
			n++
		}
		open = open[:n]
	}
	return low
}

// groundRowHasSolid reports whether a row of NRGBA pixels has a pixel with
// alpha ≥ 128, testing two pixels' alpha top bits per 64-bit word.
func groundRowHasSolid(row []byte) bool {
	i := 0
	for ; i+8 <= len(row); i += 8 {
		if binary.LittleEndian.Uint64(row[i:])&0x8000000080000000 != 0 {
			return true
		}
	}
	for ; i < len(row); i += 4 {
		if row[i+3] >= groundSolidAlpha {
			return true
		}
	}
	return false
}

// groundHull returns the vertices of the lowest convex chain over pts (sorted
// by x): the floor a rigid ruler would rest on from below.
func groundHull(pts []groundPoint) []groundPoint {
	hull := make([]groundPoint, 0, 16)
	for _, p := range pts {
		for n := len(hull); n >= 2; n = len(hull) {
			o, a := hull[n-2], hull[n-1]
			// Drop a when it lies on or above the chord o–p (y grows down).
			if (a.x-o.x)*(p.y-o.y)-(a.y-o.y)*(p.x-o.x) < 0 {
				break
			}
			hull = hull[:n-1]
		}
		hull = append(hull, p)
	}
	return hull
}

// findContacts picks the tyres: columns where the underside is locally
// lowest (it rises on both sides within a tyre's width before going any
// lower, or the car ends) and that reach down to the hull, give or take a
// little (a tyre beside a low bumper corner), or whose bump holds a hull
// vertex (a far tyre whose lowest point sits just above the hull). The
// contacts are the lower convex chain of those; a flat-bottomed tyre gives
// both ends of its flat. Without any (a car cut off by the image's bottom
// edge) the lowest hull vertices are used.
func (gr *ground) findContacts() []groundPoint {
	hc := float64(gr.box.Dy())
	reach := int(math.Max(2, 0.14*hc))
	rise := math.Max(1, 0.015*hc)
	tol := math.Max(1.5, 0.04*hc)
	b := gr.bottom
	var cand []groundPoint
	for a := 0; a < len(b); {
		if math.IsNaN(b[a]) {
			a++
			continue
		}
		// The plateau a…z at this height.
		z := a
		for z+1 < len(b) && b[z+1] == b[a] {
			z++
		}
		y := b[a]
		if gr.risesWithin(a, -1, reach, y, y-rise) && gr.risesWithin(z, +1, reach, y, y-rise) {
			x0 := float64(gr.box.Min.X+a) + 0.5
			x1 := float64(gr.box.Min.X+z) + 0.5
			if y >= gr.hullAt(x0)-tol || gr.hullVertexNear(x0-float64(reach/3), x1+float64(reach/3), y-rise) {
				cand = append(cand, groundPoint{x0, y})
				if z > a {
					cand = append(cand, groundPoint{x1, y})
				}
			}
		}
		a = z + 1
	}
	if len(cand) > 0 {
		return groundHull(cand)
	}
	lowest := gr.hull[0].y
	for _, v := range gr.hull {
		lowest = math.Max(lowest, v.y)
	}
	var out []groundPoint
	for _, v := range gr.hull {
		if v.y >= lowest-0.5 {
			out = append(out, v)
		}
	}
	return out
}

// hullVertexNear reports whether a hull vertex with x in [x0, x1] lies at
// or below level.
func (gr *ground) hullVertexNear(x0, x1, level float64) bool {
	for _, v := range gr.hull {
		if v.x >= x0 && v.x <= x1 && v.y >= level {
			return true
		}
	}
	return false
}

// risesWithin reports whether, walking from column c in direction dir for
// up to reach columns, the underside climbs to level or above (a column
// without car, or the car's end, counts) before it drops below floor.
func (gr *ground) risesWithin(c, dir, reach int, floor, level float64) bool {
	for k := 1; k <= reach; k++ {
		i := c + dir*k
		if i < 0 || i >= len(gr.bottom) {
			return true
		}
		b := gr.bottom[i]
		switch {
		case math.IsNaN(b) || b <= level:
			return true
		case b > floor:
			return false
		}
	}
	return false
}

// at returns the floor's y at horizontal position x: the polyline through
// the tyre contacts, continued past the outer tyres (see endSlope), and
// never more than a little above the car's underside.
func (gr *ground) at(x float64) float64 {
	c := gr.contacts
	var y float64
	switch {
	case x <= c[0].x:
		y = c[0].y + gr.endSlope(false)*(x-c[0].x)
	case x >= c[len(c)-1].x:
		y = c[len(c)-1].y + gr.endSlope(true)*(x-c[len(c)-1].x)
	default:
		y = groundInterpolate(c, x)
	}
	return math.Max(y, gr.hullAt(x)-math.Max(1.5, 0.025*float64(gr.box.Dy())))
}

// endSlope is the slope of the floor beyond the rightmost (right) or
// leftmost contact, from the line to the nearest contact at least a
// tyre's width away (at most 0.6); level when every contact is on one tyre.
func (gr *ground) endSlope(right bool) float64 {
	c := gr.contacts
	minDX := 0.25 * float64(gr.box.Dy())
	end := c[0]
	if right {
		end = c[len(c)-1]
	}
	for k := range c {
		o := c[k]
		if right {
			o = c[len(c)-1-k]
		}
		if math.Abs(o.x-end.x) >= minDX {
			// Outwards the floor rises as steeply as the last line, never
			// falls: past the nearest tyre of a three-quarter view the
			// hidden side's line climbs away like the visible one, and a
			// side view's line is nearly level either way.
			rise := math.Min(0.6, math.Abs((end.y-o.y)/(end.x-o.x)))
			if right {
				return -rise
			}
			return rise
		}
	}
	return 0
}

// hullAt interpolates the lower hull at x; -Inf outside the car's columns.
func (gr *ground) hullAt(x float64) float64 {
	h := gr.hull
	if x < h[0].x || x > h[len(h)-1].x {
		return math.Inf(-1)
	}
	return groundInterpolate(h, x)
}

// groundInterpolate interpolates the polyline pts (x increasing) at x,
// which lies within its span.
func groundInterpolate(pts []groundPoint, x float64) float64 {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].x >= x })
	if i == 0 {
		return pts[0].y
	}
	if i == len(pts) {
		return pts[len(pts)-1].y
	}
	a, b := pts[i-1], pts[i]
	return a.y + (b.y-a.y)*(x-a.x)/(b.x-a.x)
}

// gap returns how far column c of the image (relative to Min) has its
// underside above the floor; NaN where the column has no solid pixel.
func (gr *ground) gap(c int, floor float64) float64 {
	i := c - gr.box.Min.X
	if i < 0 || i >= len(gr.bottom) {
		return math.NaN()
	}
	return floor - gr.bottom[i]
}
