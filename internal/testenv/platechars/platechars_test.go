package platechars

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"carphoto/imageops/plates"
)

// poly returns the points x0, y0, x1, y1, ...
func poly(xy ...float64) []plates.Point {
	out := make([]plates.Point, len(xy)/2)
	for i := range out {
		out[i] = plates.Point{X: xy[2*i], Y: xy[2*i+1]}
	}
	return out
}

func rect(x0, y0, x1, y1 float64) plates.Quad {
	return plates.Quad(poly(x0, y0, x1, y0, x1, y1, x0, y1))
}

func TestHidden(t *testing.T) {
	// Characters 100×20 at (10,10); a pentagon (the rectangle with a corner
	// cut off) beside them.
	chars := poly(10, 10, 110, 10, 110, 30, 10, 30)
	pentagon := poly(200, 10, 240, 10, 240, 20, 230, 30, 200, 30)
	for _, tc := range []struct {
		name  string
		chars [][]plates.Point
		hide  []plates.Quad
		want  float64
	}{
		{"all hidden", [][]plates.Point{chars}, []plates.Quad{rect(0, 0, 120, 40)}, 1},
		{"nothing hidden", [][]plates.Point{chars}, nil, 0},
		{"left half", [][]plates.Point{chars}, []plates.Quad{rect(0, 0, 60, 40)}, 0.5},
		{"two halves", [][]plates.Point{chars}, []plates.Quad{rect(0, 0, 60, 40), rect(60, 0, 120, 40)}, 1},
		{"top strip", [][]plates.Point{chars}, []plates.Quad{rect(0, 0, 120, 15)}, 0.25},
		// The pentagon's area is 40×20 − 50 = 750, 400 of it left of x = 220.
		{"pentagon", [][]plates.Point{pentagon}, []plates.Quad{rect(190, 0, 220, 40)}, 400.0 / 750},
		// Overlapping polygons count once: the union's area.
		{"overlap", [][]plates.Point{chars, poly(60, 10, 110, 10, 110, 30, 60, 30)}, []plates.Quad{rect(0, 0, 60, 40)}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var found []plates.Plate
			for _, q := range tc.hide {
				found = append(found, plates.Plate{Quad: q, Hide: q})
			}
			got := Plate{Chars: tc.chars}.Hidden(found)
			if math.Abs(got-tc.want) > 0.02 {
				t.Errorf("got %.3f, want %.3f", got, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chars.json")
	data := `[{"set":"plates-web-cc0","file":"images/a.jpg","plates":[{"box":[10,20,100,30],"chars":[[[12,22],[98,22],[98,48],[12,48]]],"stand_in":false}]}]`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sets, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	set := sets["plates-web-cc0"]
	p, ok := set.Of("images/a.jpg", plates.Box{X: 10, Y: 20, W: 100, H: 30})
	if !ok || len(p.Chars) != 1 || p.Chars[0][2] != (plates.Point{X: 98, Y: 48}) {
		t.Fatalf("got %+v, %v; want the plate with its one polygon", p, ok)
	}
	if _, ok := set.Of("images/a.jpg", plates.Box{X: 11, Y: 20, W: 100, H: 30}); ok {
		t.Error("another box of the photo is taken for the plate")
	}
	if s := p.Scaled(0.5); s.Box.W != 50 || s.Chars[0][2] != (plates.Point{X: 49, Y: 24}) {
		t.Errorf("scaled by 0.5: got %+v", s)
	}
}
