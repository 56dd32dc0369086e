package plates_test

import (
	"math"
	"testing"

	"carphoto/imageops/plates"
)

func TestCoveredBy(t *testing.T) {
	found := []plates.Plate{{Quad: plates.Quad{{X: 0, Y: 0}, {X: 100, Y: 0}, {X: 100, Y: 50}, {X: 0, Y: 50}}}}
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
		"turned quad, half out": {diamond.CoveredBy([]plates.Plate{{Quad: plates.Quad{{X: 0, Y: 0}, {X: 50, Y: 0}, {X: 50, Y: 50}, {X: 0, Y: 50}}}}), 0.5},
	} {
		if math.Abs(tc.got-tc.want) > 0.03 {
			t.Errorf("%s: covered %.3f, want %.3f", name, tc.got, tc.want)
		}
	}
}
