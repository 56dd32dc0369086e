package textdet

import (
	"math"
	"sort"
)

// Regions returns the map's text regions by the region rule (Threshold,
// MinScore, Unclip, MinSide), strongest first.
func (m *Map) Regions() []Region {
	var out []Region
	for _, c := range m.components() {
		if c.sum/float64(c.n) < MinScore {
			continue
		}
		r, ok := minAreaRect(c.hull())
		if !ok || min(r.w, r.h) < MinSide {
			continue
		}
		d := r.w * r.h * Unclip / (2 * (r.w + r.h))
		r.w, r.h = r.w+2*d, r.h+2*d
		out = append(out, Region{Quad: m.toPhoto(r.corners()), Score: c.sum / float64(c.n)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// component is one 8-connected region of pixels above Threshold: its pixel
// count, probability sum, and each of its rows' first and last pixel.
type component struct {
	n     int
	sum   float64
	spans map[int][2]int // row → first, last column
}

// components labels the map's pixels above Threshold, by flood fill.
func (m *Map) components() []*component {
	seen := make([]bool, len(m.P))
	var out []*component
	var stack []int
	for start, p := range m.P {
		if seen[start] || p <= Threshold {
			continue
		}
		c := &component{spans: map[int][2]int{}}
		seen[start] = true
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			x, y := i%m.W, i/m.W
			c.n++
			c.sum += float64(m.P[i])
			if s, ok := c.spans[y]; ok {
				c.spans[y] = [2]int{min(s[0], x), max(s[1], x)}
			} else {
				c.spans[y] = [2]int{x, x}
			}
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= m.W || ny >= m.H {
						continue
					}
					j := ny*m.W + nx
					if !seen[j] && m.P[j] > Threshold {
						seen[j] = true
						stack = append(stack, j)
					}
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// hull returns the convex hull of the component's pixel centres,
// anticlockwise in image coordinates (Andrew's monotone chain over each
// row's end pixels, which hold every hull vertex).
func (c *component) hull() []Point {
	pts := make([]Point, 0, 2*len(c.spans))
	for y, s := range c.spans {
		pts = append(pts, Point{float64(s[0]) + 0.5, float64(y) + 0.5})
		if s[1] != s[0] {
			pts = append(pts, Point{float64(s[1]) + 0.5, float64(y) + 0.5})
		}
	}
	sort.Slice(pts, func(i, j int) bool {
		if pts[i].X != pts[j].X {
			return pts[i].X < pts[j].X
		}
		return pts[i].Y < pts[j].Y
	})
	if len(pts) < 3 {
		return pts
	}
	cross := func(o, a, b Point) float64 { return (a.X-o.X)*(b.Y-o.Y) - (a.Y-o.Y)*(b.X-o.X) }
	h := make([]Point, 0, 2*len(pts))
	for _, p := range pts {
		for len(h) >= 2 && cross(h[len(h)-2], h[len(h)-1], p) <= 0 {
			h = h[:len(h)-1]
		}
		h = append(h, p)
	}
	lower := len(h) + 1
	for i := len(pts) - 2; i >= 0; i-- {
		p := pts[i]
		for len(h) >= lower && cross(h[len(h)-2], h[len(h)-1], p) <= 0 {
			h = h[:len(h)-1]
		}
		h = append(h, p)
	}
	return h[:len(h)-1]
}

// rect is a rotated rectangle: its centre, its side w along the unit
// direction (ux, uy) and its side h across it.
type rect struct {
	cx, cy, ux, uy, w, h float64
}

// minAreaRect returns the smallest-area rectangle holding the convex
// polygon hull: one of its sides lies along an edge of the hull. It
// reports false for fewer than three points (a line has no area).
func minAreaRect(hull []Point) (rect, bool) {
	if len(hull) < 3 {
		return rect{}, false
	}
	best, area := rect{}, math.Inf(1)
	for i := range hull {
		a, b := hull[i], hull[(i+1)%len(hull)]
		dx, dy := b.X-a.X, b.Y-a.Y
		l := math.Hypot(dx, dy)
		if l == 0 {
			continue
		}
		ux, uy := dx/l, dy/l
		lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{math.Inf(-1), math.Inf(-1)}
		for _, p := range hull {
			s, t := p.X*ux+p.Y*uy, -p.X*uy+p.Y*ux
			lo = [2]float64{min(lo[0], s), min(lo[1], t)}
			hi = [2]float64{max(hi[0], s), max(hi[1], t)}
		}
		if a := (hi[0] - lo[0]) * (hi[1] - lo[1]); a < area {
			ms, mt := (lo[0]+hi[0])/2, (lo[1]+hi[1])/2
			area = a
			best = rect{cx: ms*ux - mt*uy, cy: ms*uy + mt*ux, ux: ux, uy: uy, w: hi[0] - lo[0], h: hi[1] - lo[1]}
		}
	}
	return best, area < math.Inf(1)
}

// corners returns r's corners clockwise on screen (y down) from the one
// nearest the top-left.
func (r rect) corners() Quad {
	var q Quad
	for i, s := range [4][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
		a, b := s[0]*r.w/2, s[1]*r.h/2
		q[i] = Point{r.cx + a*r.ux - b*r.uy, r.cy + a*r.uy + b*r.ux}
	}
	// Clockwise on screen by angle around the centre, then the corner
	// with the least x+y first.
	sort.Slice(q[:], func(i, j int) bool {
		return math.Atan2(q[i].Y-r.cy, q[i].X-r.cx) < math.Atan2(q[j].Y-r.cy, q[j].X-r.cx)
	})
	first := 0
	for i, p := range q {
		if p.X+p.Y < q[first].X+q[first].Y {
			first = i
		}
	}
	var out Quad
	for i := range 4 {
		out[i] = q[(first+i)%4]
	}
	return out
}

// toPhoto maps a quad in working pixels to the photo's, clipped to it.
func (m *Map) toPhoto(q Quad) Quad {
	for i, p := range q {
		q[i] = Point{
			X: float64(m.Origin.X) + min(max(p.X*m.Sx, 0), float64(m.W)*m.Sx),
			Y: float64(m.Origin.Y) + min(max(p.Y*m.Sy, 0), float64(m.H)*m.Sy),
		}
	}
	return q
}
