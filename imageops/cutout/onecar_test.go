package cutout

import "testing"

// With the one-car setting the clean-up keeps the car in the middle of the
// frame and drops a second car of the same size at its edge, and a larger one
// only when it is much larger; the older setting keeps both.
func TestCleanCarKeepsOneCar(t *testing.T) {
	const w, h = 120, 90
	rect := func(p []float32, x0, y0, x1, y1 int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				p[y*w+x] = 1
			}
		}
	}
	for _, tc := range []struct {
		name         string
		edgeW        int // width of the second car, at the frame's left edge
		keep         float64
		middle, edge bool // kept
	}{
		{"same size, one car", 30, oneCarKeep, true, false},
		{"same size, every car", 30, 0.3, true, true},
		{"edge car three times larger, one car", 90, oneCarKeep, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := make([]float32, w*h)
			rect(p, 45, 35, 75, 55)      // the car in the middle, 30×20
			rect(p, 0, 60, tc.edgeW, 80) // another at the bottom-left edge
			if tc.edgeW > 30 {
				clear(p[35*w : 55*w]) // the middle car moves up out of its way
				rect(p, 45, 10, 75, 30)
			}
			cleanCar(p, w, h, tc.keep, 2)
			midY := 45
			if tc.edgeW > 30 {
				midY = 20
			}
			if got := p[midY*w+60] >= 0.5; got != tc.middle {
				t.Errorf("middle car kept: %v, want %v", got, tc.middle)
			}
			if got := p[70*w+5] >= 0.5; got != tc.edge {
				t.Errorf("edge car kept: %v, want %v", got, tc.edge)
			}
		})
	}
}
