package plates

import "math"

// Box is an axis-aligned labelled plate, as in the data sets' labels.json:
// top-left corner and size in pixels.
type Box struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// coverageGrid is the number of sample points per side of a box or quad:
// the coverage is exact to about 1/coverageGrid² of its area.
const coverageGrid = 40

// CoveredBy returns the fraction of b's area inside the union of the found
// plates' hidden regions (Hide). The benchmark counts a plate as found when it is at least
// 0.95: a blur must hide the whole plate, not most of it.
func (b Box) CoveredBy(found []Plate) float64 {
	if b.W <= 0 || b.H <= 0 {
		return 1
	}
	return Quad{{b.X, b.Y}, {b.X + b.W, b.Y}, {b.X + b.W, b.Y + b.H}, {b.X, b.Y + b.H}}.CoveredBy(found)
}

// CoveredBy returns the fraction of q's area (corners in order, clockwise
// or not) inside the union of the found plates' hidden regions, sampled on a grid
// spread over q as a box's is over the box.
func (q Quad) CoveredBy(found []Plate) float64 {
	in := 0
	for i := range coverageGrid {
		v := (float64(i) + 0.5) / coverageGrid
		left := lerp(q[0], q[3], v)
		right := lerp(q[1], q[2], v)
		for j := range coverageGrid {
			p := lerp(left, right, (float64(j)+0.5)/coverageGrid)
			for _, f := range found {
				if f.Hide.Contains(p) {
					in++
					break
				}
			}
		}
	}
	return float64(in) / (coverageGrid * coverageGrid)
}

// lerp is the point a fraction t of the way from a to b.
func lerp(a, b Point, t float64) Point {
	return Point{a.X + t*(b.X-a.X), a.Y + t*(b.Y-a.Y)}
}

// Overlaps reports whether q's bounding rectangle shares any area with b.
// A detection that overlaps no labelled plate is a false detection.
func (b Box) Overlaps(q Quad) bool {
	lo, hi := q.extent()
	return lo.X < b.X+b.W && b.X < hi.X && lo.Y < b.Y+b.H && b.Y < hi.Y
}

// Contains reports whether p lies inside the quad (or on its edge). The
// quad must be convex, as every quad Detect returns is.
func (q Quad) Contains(p Point) bool {
	var pos, neg bool
	for i := range q {
		a, b := q[i], q[(i+1)%4]
		c := (b.X-a.X)*(p.Y-a.Y) - (b.Y-a.Y)*(p.X-a.X)
		pos = pos || c > 0
		neg = neg || c < 0
	}
	return !(pos && neg)
}

// Match returns the index in found of the plate whose quad is most like b
// (the highest IoU), and that IoU; -1 when found is empty. A detection that
// covers a labelled plate is scored by its match: its quad against the box,
// its hidden area against the box's.
func (b Box) Match(found []Plate) (int, float64) {
	best, bestIoU := -1, -1.0
	for i, p := range found {
		if v := b.IoU(p.Quad); v > bestIoU {
			best, bestIoU = i, v
		}
	}
	return best, bestIoU
}

// IoU returns the intersection over union of b and the convex quad q:
// how well a detected plate's quad matches a labelled box.
func (b Box) IoU(q Quad) float64 {
	poly := q[:]
	// Clip the quad by each of the box's four half-planes in turn.
	for _, keep := range []func(p Point) float64{
		func(p Point) float64 { return p.X - b.X },
		func(p Point) float64 { return b.X + b.W - p.X },
		func(p Point) float64 { return p.Y - b.Y },
		func(p Point) float64 { return b.Y + b.H - p.Y },
	} {
		var out []Point
		for i, a := range poly {
			c := poly[(i+1)%len(poly)]
			da, dc := keep(a), keep(c)
			if da >= 0 {
				out = append(out, a)
			}
			if da*dc < 0 {
				t := da / (da - dc)
				out = append(out, lerp(a, c, t))
			}
		}
		if poly = out; len(poly) < 3 {
			return 0
		}
	}
	inter := 0.0
	for i, a := range poly {
		c := poly[(i+1)%len(poly)]
		inter += a.X*c.Y - c.X*a.Y
	}
	inter = math.Abs(inter) / 2
	union := b.W*b.H + q.Area() - inter
	if union <= 0 {
		return 0
	}
	return inter / union
}
