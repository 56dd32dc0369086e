// Package plates finds licence plates in a photo.
package plates

import (
	"image"
	"math"
)

// Point is a position in pixels of the displayed (EXIF-oriented) photo.
type Point struct{ X, Y float64 }

// Quad is a plate's four corners, clockwise from the top-left corner, in
// pixels of the displayed photo. It follows the plate's perspective.
type Quad [4]Point

// Bounds returns the smallest integer rectangle that holds the quad.
func (q Quad) Bounds() image.Rectangle {
	lo, hi := q.extent()
	return image.Rect(int(lo.X), int(lo.Y), int(hi.X+0.999999), int(hi.Y+0.999999))
}

// extent returns the least and the greatest x and y of the quad's corners.
func (q Quad) extent() (lo, hi Point) {
	lo, hi = q[0], q[0]
	for _, p := range q[1:] {
		lo = Point{min(lo.X, p.X), min(lo.Y, p.Y)}
		hi = Point{max(hi.X, p.X), max(hi.Y, p.Y)}
	}
	return lo, hi
}

// Plate is one detected plate with the detector's confidence in [0, 1].
type Plate struct {
	// Quad is the plate itself: its four corners as the detector sees
	// them, following the plate's slant and perspective. A replacement
	// design goes here.
	Quad Quad
	// Hide is the region a hiding style covers: Quad grown by the margin
	// rule (HideMargin, MinHidePx), the same for every style.
	Hide  Quad
	Score float64
	// TextHeight is the height of the text lines the text detector found
	// on the plate (the bounds of those at least half inside its quad), 0
	// where it found none: the plate's true height, which a quad that
	// reaches past the plate onto the grille exceeds (Designable).
	TextHeight float64
	// Reads is whether those lines read like a plate (ReadPlates; only
	// plate-logo reads them).
	Reads bool
	// Printed counts what ReadPlates read on it (its quad, else its text
	// lines): letters, digits and the mean confidence. Never the text.
	Printed Printed
	lines   []box // the text lines on it, in the finder's working frame
	origin  Point // where the working frame's (0, 0) lies in the photo
	// own is its reading on its own quad, rectified, kept with the view it
	// was read on: the lettering rule reads the plates the verifiers are
	// unsure of during detection, and ReadPlates reuses that reading where
	// it reads the same photo (ownReading).
	own ownReading
	// The vehicle rules (vehicle.go): looked is whether the finder had the
	// photo's vehicles, inView whether there were any, onVehicle whether
	// p sits on one, atSpot whether where a plate sits on it.
	looked, inView, onVehicle, atSpot bool
}

// Printed is what a plate's reading holds, counted: no text.
type Printed struct {
	Letters, Digits int
	// Others counts the characters that are neither a letter, a digit nor
	// a separator (a currency sign, a slash, a colon: a price or a date);
	// Lower the letters read in lower case (lettering; a plate's are
	// capitals).
	Others, Lower int
	Mean          float64
}

// Text returns the bounds of the text lines the text detector found on the
// plate (the union of those at least half inside its quad), in the
// photo's pixels, and false where it found none.
func (p Plate) Text() (x0, y0, x1, y1 float64, ok bool) {
	if len(p.lines) == 0 {
		return 0, 0, 0, 0, false
	}
	u := union(p.lines)
	return u.x0 + p.origin.X, u.y0 + p.origin.Y, u.x1 + p.origin.X, u.y1 + p.origin.Y, true
}

// The margin rule. Every edge of the plate's quad is moved outwards, in
// the plate's own plane, by HideMargin × the plate's height (the mean
// length of its left and right edges), at least MinHidePx: the strip
// covers a quad that falls a little short of the plate's edge or its last
// character, and leaves the grille, badge and bumper around it as they
// are. Chosen on the validation splits' recall-versus-tightness curve
// (docs/research/benchmarks-log.md): from 0.12 to 0.15 the recall of the dash-cam and
// open-lpr sets rose by about 9 points for a few hundredths more area.
const (
	HideMargin = 0.15
	MinHidePx  = 1.5
)

// DesignConfidence is the least score at which plate-logo puts the
// dealer's design on a detection whatever is read on it (but a word or a
// long number: Plate.Designable); below it a detection gets the design
// only where what is printed on it reads as a plate's, and is otherwise
// hidden as blur-plates hides a plate (blurred), since a design on a
// grille badge, a lamp or lettering shows where a blur hardly does. Chosen
// on the validation photos of the web and dash-cam sets (TestTuneDesign,
// docs/research/measurements.md "Which detections get a design"): the
// lowest score at which at most 2% of the detections kept overlap no
// plate, labelled or found missing by review; it keeps 84% of the plates.
// A detection not designed still counts as a plate found, but does not
// satisfy requirePlate for plate-logo.
const DesignConfidence = 0.94

// HideOf returns the region hidden for a plate quad q: q grown by the
// margin rule.
func HideOf(q Quad) Quad { return q.Grow(max(HideMargin*q.Height(), MinHidePx)) }

// Height is the mean length of the quad's left and right edges.
func (q Quad) Height() float64 { return (dist(q[0], q[3]) + dist(q[1], q[2])) / 2 }

// Width is the mean length of the quad's top and bottom edges.
func (q Quad) Width() float64 { return (dist(q[0], q[1]) + dist(q[3], q[2])) / 2 }

func dist(a, b Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }

// Grow returns q with every edge moved outwards by d pixels along its
// normal; the new corners are where neighbouring moved edges meet. A
// corner whose edges are (nearly) parallel, in a degenerate quad, moves
// along the bisector instead. q may run clockwise or not.
func (q Quad) Grow(d float64) Quad {
	// Outwards is to the left of each edge for a counter-clockwise quad
	// in image coordinates (y down) and to the right for a clockwise one.
	s := 0.0
	for i := range q {
		a, b := q[i], q[(i+1)%4]
		s += a.X*b.Y - b.X*a.Y
	}
	sign := 1.0
	if s < 0 {
		sign = -1
	}
	type line struct{ p, dir Point } // a point on the moved edge and its direction
	var lines [4]line
	for i := range q {
		a, b := q[i], q[(i+1)%4]
		l := dist(a, b)
		if l == 0 {
			return q.boundsGrown(d)
		}
		dx, dy := (b.X-a.X)/l, (b.Y-a.Y)/l
		// For a clockwise quad on screen (s > 0), outwards is (dy, -dx).
		n := Point{sign * dy, -sign * dx}
		lines[i] = line{Point{a.X + d*n.X, a.Y + d*n.Y}, Point{dx, dy}}
	}
	var out Quad
	for i := range q {
		p, r := lines[(i+3)%4], lines[i] // the edges into and out of corner i
		den := p.dir.X*r.dir.Y - p.dir.Y*r.dir.X
		if math.Abs(den) < 1e-9 {
			return q.boundsGrown(d)
		}
		t := ((r.p.X-p.p.X)*r.dir.Y - (r.p.Y-p.p.Y)*r.dir.X) / den
		out[i] = Point{p.p.X + t*p.dir.X, p.p.Y + t*p.dir.Y}
	}
	return out
}

// boundsGrown is q's bounding rectangle grown by d on every side: the
// region to hide for a quad too degenerate to grow along its edges.
func (q Quad) boundsGrown(d float64) Quad {
	lo, hi := q.extent()
	return Quad{{lo.X - d, lo.Y - d}, {hi.X + d, lo.Y - d}, {hi.X + d, hi.Y + d}, {lo.X - d, hi.Y + d}}
}

// Area is the quad's area in square pixels (of a simple quad).
func (q Quad) Area() float64 {
	s := 0.0
	for i := range q {
		a, b := q[i], q[(i+1)%4]
		s += a.X*b.Y - b.X*a.Y
	}
	return math.Abs(s) / 2
}
