// Package platechars judges the plate finder as a reader would: a plate is
// hidden when its characters are, not when most of its box is. The
// characters of every labelled plate of the held-out photos were found
// once by a text detector that is not the product's (PP-OCRv4's, at 960 px;
// train/plates/chars.py writes imageops/plates/testdata/heldout-chars.json), so that
// `carphoto-lab bench plates` and the held-out tests measure against the same
// regions and never against the product's own output.
package platechars

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"carphoto/imageops/plates"
)

// HiddenShare is the least share of a plate's character area that must lie
// inside what is hidden for the plate to count as unreadable.
const HiddenShare = 0.95

// Plate is one labelled plate with its characters: polygons in photo
// pixels, each a text region lying at least half inside the box, clipped
// to it. StandIn marks a plate where the text detector found nothing and
// the central 60% of the box (of its width and of its height) stands in.
type Plate struct {
	Box     plates.Box
	Chars   [][]plates.Point
	StandIn bool
}

// Set holds a labelled set's plates with characters, by photo file (as in
// the set's labels.json), in the order of the labels' plates at least
// 20 px wide.
type Set map[string][]Plate

// Load reads a file train/plates/chars.py wrote: the sets it covers, by
// set name (the set's folder name).
func Load(path string) (map[string]Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var photos []struct {
		Set, File string
		Plates    []struct {
			Box     [4]float64
			Chars   [][][2]float64
			StandIn bool `json:"stand_in"`
		}
	}
	if err := json.Unmarshal(data, &photos); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sets := map[string]Set{}
	for _, ph := range photos {
		if sets[ph.Set] == nil {
			sets[ph.Set] = Set{}
		}
		var ps []Plate
		for _, p := range ph.Plates {
			pl := Plate{Box: plates.Box{X: p.Box[0], Y: p.Box[1], W: p.Box[2], H: p.Box[3]}, StandIn: p.StandIn}
			for _, poly := range p.Chars {
				pts := make([]plates.Point, len(poly))
				for i, c := range poly {
					pts[i] = plates.Point{X: c[0], Y: c[1]}
				}
				pl.Chars = append(pl.Chars, pts)
			}
			ps = append(ps, pl)
		}
		sets[ph.Set][ph.File] = ps
	}
	return sets, nil
}

// Of returns the characters of the labelled plate b of photo file, and
// whether the set holds them (a photo or plate it lacks: labels changed
// since train/plates/chars.py ran, or a plate under 20 px wide).
func (s Set) Of(file string, b plates.Box) (Plate, bool) {
	for _, p := range s[file] {
		if math.Abs(p.Box.X-b.X)+math.Abs(p.Box.Y-b.Y)+math.Abs(p.Box.W-b.W)+math.Abs(p.Box.H-b.H) < 0.01 {
			return p, true
		}
	}
	return Plate{}, false
}

// Scaled returns p with its box and characters times f, for a photo
// shrunk by f.
func (p Plate) Scaled(f float64) Plate {
	out := Plate{Box: plates.Box{X: p.Box.X * f, Y: p.Box.Y * f, W: p.Box.W * f, H: p.Box.H * f}, StandIn: p.StandIn}
	for _, poly := range p.Chars {
		pts := make([]plates.Point, len(poly))
		for i, c := range poly {
			pts[i] = plates.Point{X: c.X * f, Y: c.Y * f}
		}
		out.Chars = append(out.Chars, pts)
	}
	return out
}

// grid is the number of sample points per side of the characters'
// bounding rectangle: the share is exact to about 1/grid² of it.
const grid = 64

// Hidden returns the share of p's character area (the union of its
// polygons) inside the union of the found plates' hidden regions.
func (p Plate) Hidden(found []plates.Plate) float64 {
	lo := plates.Point{X: math.Inf(1), Y: math.Inf(1)}
	hi := plates.Point{X: math.Inf(-1), Y: math.Inf(-1)}
	for _, poly := range p.Chars {
		for _, c := range poly {
			lo = plates.Point{X: min(lo.X, c.X), Y: min(lo.Y, c.Y)}
			hi = plates.Point{X: max(hi.X, c.X), Y: max(hi.Y, c.Y)}
		}
	}
	pieces := p.pieces()
	in, hidden := 0, 0
	for i := range grid {
		y := lo.Y + (float64(i)+0.5)/grid*(hi.Y-lo.Y)
		for j := range grid {
			pt := plates.Point{X: lo.X + (float64(j)+0.5)/grid*(hi.X-lo.X), Y: y}
			if !inAny(pieces, pt) {
				continue
			}
			in++
			for _, f := range found {
				if f.Hide.Contains(pt) {
					hidden++
					break
				}
			}
		}
	}
	if in == 0 {
		return 0
	}
	return float64(hidden) / float64(in)
}

// pieces cuts p's character polygons (convex: rectangles clipped to the
// box) into quads, a fan from each polygon's first corner, two triangles a
// quad (a triangle is a quad with its last corner twice).
func (p Plate) pieces() []plates.Quad {
	var out []plates.Quad
	for _, poly := range p.Chars {
		for i := 1; i+1 < len(poly); i += 2 {
			last := poly[min(i+2, len(poly)-1)]
			out = append(out, plates.Quad{poly[0], poly[i], poly[i+1], last})
		}
	}
	return out
}

func inAny(quads []plates.Quad, pt plates.Point) bool {
	for _, q := range quads {
		if q.Contains(pt) {
			return true
		}
	}
	return false
}
