package imageops

import (
	"image"
	"math"
)

// solidAlpha is the matte value from which a pixel counts as car when
// finding the ground: half coverage, so a soft matte edge neither lifts nor
// lowers the contact by more than half a pixel.
const solidAlpha = 128

// groundPoint is a point in continuous image coordinates: pixel (x, y)
// covers [x, x+1) × [y, y+1); y grows downwards.
type groundPoint struct{ x, y float64 }

// ground is where a car meets the floor, found from its matte alone.
//
// The car's underside is the lowest solid pixel of each column. The floor
// line cannot pass above any of it, so it follows the lower convex hull of
// that profile; the tyres are the hull vertices where the profile rises on
// both sides (a round or flat-bottomed tyre, not the end of a bumper). A
// side view yields one line through two tyres, a three-quarter view two
// lines meeting at the nearest tyre, a front view one wide line.
type ground struct {
	box      image.Rectangle // solid pixels, relative to the image's Min
	bottom   []float64       // per column of box: y of the underside, NaN where the column has no solid pixel
	hull     []groundPoint   // lower convex hull of the underside, left to right
	contacts []groundPoint   // tyre contact points, left to right; never empty
}

// findGround locates the car's contact with the floor. ok is false when the
// matte has no solid pixel.
func findGround(car *image.NRGBA) (gr ground, ok bool) {
	w, h := car.Rect.Dx(), car.Rect.Dy()
	low := make([]int, w) // lowest solid row + 1 per column, 0 for none
	minY, maxY, minX, maxX := h, -1, w, -1
	for y := 0; y < h; y++ {
		row := car.Pix[y*car.Stride : y*car.Stride+4*w]
		any := false
		for x := 0; x < w; x++ {
			if row[4*x+3] >= solidAlpha {
				low[x] = y + 1
				any = true
				if x < minX {
					minX = x
				}
				if x > maxX {
					maxX = x
				}
			}
		}
		if any {
			if y < minY {
				minY = y
			}
			maxY = y
		}
	}
	if maxY < 0 {
		return ground{}, false
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
	gr.hull = lowerHull(pts)
	gr.contacts = gr.findContacts()
	return gr, true
}

// lowerHull returns the vertices of the lowest convex chain over pts (sorted
// by x): the floor a rigid ruler would rest on from below.
func lowerHull(pts []groundPoint) []groundPoint {
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

// findContacts picks the hull vertices that are tyres: within a tyre's
// width on either side the underside rises above the vertex (or the car
// ends). A bumper end fails this on its inner side, where the profile runs
// level or falls towards the wheel. Without any such vertex (a car cut off
// by the image's bottom edge) the lowest hull vertices are used.
func (gr *ground) findContacts() []groundPoint {
	hc := float64(gr.box.Dy())
	reach := int(math.Max(2, 0.14*hc))
	rise := math.Max(1, 0.015*hc)
	var out []groundPoint
	for _, v := range gr.hull {
		c := int(v.x) - gr.box.Min.X
		if gr.risesWithin(c, -1, reach, v.y-rise) && gr.risesWithin(c, +1, reach, v.y-rise) {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	lowest := gr.hull[0].y
	for _, v := range gr.hull {
		lowest = math.Max(lowest, v.y)
	}
	for _, v := range gr.hull {
		if v.y >= lowest-0.5 {
			out = append(out, v)
		}
	}
	return out
}

// risesWithin reports whether, walking from column c in direction dir for
// up to reach columns, the underside climbs to level or above, a column has
// no car, or the car ends.
func (gr *ground) risesWithin(c, dir, reach int, level float64) bool {
	for k := 1; k <= reach; k++ {
		i := c + dir*k
		if i < 0 || i >= len(gr.bottom) {
			return true
		}
		if b := gr.bottom[i]; math.IsNaN(b) || b <= level {
			return true
		}
	}
	return false
}

// at returns the floor's y at horizontal position x: the polyline through
// the tyre contacts, continued past the outer tyres along the end segments
// (slope limited to 45°, one contact gives a level floor), and never above
// the car's underside.
func (gr *ground) at(x float64) float64 {
	c := gr.contacts
	var y float64
	switch {
	case len(c) == 1:
		y = c[0].y
	case x <= c[0].x:
		y = c[0].y + groundSlope(c[0], c[1])*(x-c[0].x)
	case x >= c[len(c)-1].x:
		a, b := c[len(c)-2], c[len(c)-1]
		y = b.y + groundSlope(a, b)*(x-b.x)
	default:
		i := 1
		for c[i].x < x {
			i++
		}
		a, b := c[i-1], c[i]
		y = a.y + (b.y-a.y)*(x-a.x)/(b.x-a.x)
	}
	return math.Max(y, gr.hullAt(x))
}

// groundSlope is the slope of the floor line a–b, limited to ±1.
func groundSlope(a, b groundPoint) float64 {
	return math.Max(-1, math.Min(1, (b.y-a.y)/(b.x-a.x)))
}

// hullAt interpolates the lower hull at x; -Inf outside the car's columns.
func (gr *ground) hullAt(x float64) float64 {
	h := gr.hull
	if x < h[0].x || x > h[len(h)-1].x {
		return math.Inf(-1)
	}
	i := 1
	for i < len(h) && h[i].x < x {
		i++
	}
	if i == len(h) {
		return h[len(h)-1].y
	}
	a, b := h[i-1], h[i]
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
