package plates_test

import (
	"math"
	"testing"

	"carphoto/imageops/plates"
)

func TestCoveredBy(t *testing.T) {
	found := []plates.Plate{{Hide: plates.Quad{{X: 0, Y: 0}, {X: 100, Y: 0}, {X: 100, Y: 50}, {X: 0, Y: 50}}}}
	// A plate turned 45° about (50, 25), half its width outside the found quad.
	diamond := plates.Quad{{X: 50, Y: 5}, {X: 70, Y: 25}, {X: 50, Y: 45}, {X: 30, Y: 25}}
	shifted := plates.Quad{{X: 80, Y: 10}, {X: 120, Y: 10}, {X: 120, Y: 30}, {X: 80, Y: 30}}
	for name, tc := range map[string]struct {
		got, want float64
	}{
		"box inside":            {plates.Box{X: 10, Y: 10, W: 30, H: 20}.CoveredBy(found), 1},
		"box half outside":      {plates.Box{X: 80, Y: 10, W: 40, H: 20}.CoveredBy(found), 0.5},
		"box outside":           {plates.Box{X: 200, Y: 10, W: 40, H: 20}.CoveredBy(found), 0},
		"box, nothing found":    {plates.Box{X: 10, Y: 10, W: 30, H: 20}.CoveredBy(nil), 0},
		"quad as its box":       {shifted.CoveredBy(found), plates.Box{X: 80, Y: 10, W: 40, H: 20}.CoveredBy(found)},
		"turned quad inside":    {diamond.CoveredBy(found), 1},
		"turned quad, half out": {diamond.CoveredBy([]plates.Plate{{Hide: plates.Quad{{X: 0, Y: 0}, {X: 50, Y: 0}, {X: 50, Y: 50}, {X: 0, Y: 50}}}}), 0.5},
	} {
		if math.Abs(tc.got-tc.want) > 0.03 {
			t.Errorf("%s: covered %.3f, want %.3f", name, tc.got, tc.want)
		}
	}
}

func TestBoxIoU(t *testing.T) {
	b := plates.Box{X: 0, Y: 0, W: 100, H: 20}
	for name, tc := range map[string]struct {
		q    plates.Quad
		want float64
	}{
		"same":         {plates.Quad{{X: 0, Y: 0}, {X: 100, Y: 0}, {X: 100, Y: 20}, {X: 0, Y: 20}}, 1},
		"half, right":  {plates.Quad{{X: 50, Y: 0}, {X: 150, Y: 0}, {X: 150, Y: 20}, {X: 50, Y: 20}}, 1.0 / 3},
		"inside":       {plates.Quad{{X: 25, Y: 5}, {X: 75, Y: 5}, {X: 75, Y: 15}, {X: 25, Y: 15}}, 0.25},
		"apart":        {plates.Quad{{X: 200, Y: 0}, {X: 300, Y: 0}, {X: 300, Y: 20}, {X: 200, Y: 20}}, 0},
		"anticlock":    {plates.Quad{{X: 0, Y: 0}, {X: 0, Y: 20}, {X: 100, Y: 20}, {X: 100, Y: 0}}, 1},
		"slanted para": {plates.Quad{{X: 0, Y: 0}, {X: 100, Y: 10}, {X: 100, Y: 20}, {X: 0, Y: 10}}, 0.5},
	} {
		if got := b.IoU(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: IoU %.4f, want %.4f", name, got, tc.want)
		}
	}
}

func TestGrowAndHide(t *testing.T) {
	rect := plates.Quad{{X: 10, Y: 10}, {X: 110, Y: 10}, {X: 110, Y: 30}, {X: 10, Y: 30}}
	want := plates.Quad{{X: 8, Y: 8}, {X: 112, Y: 8}, {X: 112, Y: 32}, {X: 8, Y: 32}}
	for name, q := range map[string]plates.Quad{"clockwise": rect, "anticlockwise": {rect[0], rect[3], rect[2], rect[1]}} {
		g := q.Grow(2)
		for _, w := range want {
			found := false
			for _, p := range g {
				found = found || math.Hypot(p.X-w.X, p.Y-w.Y) < 1e-9
			}
			if !found {
				t.Errorf("%s: grown %v lacks corner %v", name, g, w)
			}
		}
	}
	// A slanted plate grows along its own edges: its top edge keeps its slope.
	slanted := plates.Quad{{X: 0, Y: 0}, {X: 200, Y: 40}, {X: 200, Y: 90}, {X: 0, Y: 50}}
	hide := plates.HideOf(slanted)
	d := plates.HideMargin * 50 // the margin rule: a share of the plate's height
	if got := (hide[1].Y - hide[0].Y) / (hide[1].X - hide[0].X); math.Abs(got-0.2) > 1e-9 {
		t.Errorf("hidden top edge slope %.4f, want the plate's 0.2", got)
	}
	// The distance from a plate corner to the hidden region's top edge line.
	a, b := hide[0], hide[1]
	perp := math.Abs((b.X-a.X)*(a.Y-slanted[0].Y)-(a.X-slanted[0].X)*(b.Y-a.Y)) / math.Hypot(b.X-a.X, b.Y-a.Y)
	if math.Abs(perp-d) > 1e-9 {
		t.Errorf("hidden top edge %.3f px from the plate's, want %.3f", perp, d)
	}
	if got, want := hide.Area(), (200+2*d)*(50*math.Cos(math.Atan(0.2))+2*d)/math.Cos(math.Atan(0.2)); math.Abs(got-want) > 1e-6 {
		t.Errorf("hidden area %.1f, want %.1f", got, want)
	}
	// A tiny plate still gets MinHidePx all round.
	tiny := plates.Quad{{X: 0, Y: 0}, {X: 8, Y: 0}, {X: 8, Y: 2}, {X: 0, Y: 2}}
	if got := plates.HideOf(tiny)[0]; math.Abs(got.X+plates.MinHidePx) > 1e-9 || math.Abs(got.Y+plates.MinHidePx) > 1e-9 {
		t.Errorf("tiny plate's hidden top-left corner %v, want (-%g, -%g)", got, plates.MinHidePx, plates.MinHidePx)
	}
}

func TestMatch(t *testing.T) {
	b := plates.Box{X: 0, Y: 0, W: 100, H: 20}
	found := []plates.Plate{
		{Quad: plates.Quad{{X: 300, Y: 0}, {X: 400, Y: 0}, {X: 400, Y: 20}, {X: 300, Y: 20}}},
		{Quad: plates.Quad{{X: 5, Y: 0}, {X: 105, Y: 0}, {X: 105, Y: 20}, {X: 5, Y: 20}}},
		{Quad: plates.Quad{{X: 50, Y: 0}, {X: 150, Y: 0}, {X: 150, Y: 20}, {X: 50, Y: 20}}},
	}
	if i, iou := b.Match(found); i != 1 || math.Abs(iou-95.0/105) > 1e-9 {
		t.Errorf("Match = %d, %.3f; want 1, %.3f", i, iou, 95.0/105)
	}
	if i, _ := b.Match(nil); i != -1 {
		t.Errorf("Match of nothing = %d, want -1", i)
	}
}
