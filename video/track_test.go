package video

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"carphoto/imageops"
)

// texturedFrame is a w×h luma frame of random blobs, the same for the
// same seed, shifted by (dx, dy): frame(x, y) = pattern(x-dx, y-dy).
func texturedFrame(w, h, dx, dy int, seed uint64) *image.YCbCr {
	pat := func(x, y int) uint8 {
		r := rand.New(rand.NewPCG(seed, uint64((x/4)*7919+(y/4))))
		return uint8(40 + r.IntN(180))
	}
	m := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			m.Y[y*m.YStride+x] = pat(x-dx+1000, y-dy+1000)
		}
	}
	return m
}

func rectQuad(r image.Rectangle) imageops.Quad {
	return imageops.Quad{{X: float64(r.Min.X), Y: float64(r.Min.Y)}, {X: float64(r.Max.X), Y: float64(r.Min.Y)},
		{X: float64(r.Max.X), Y: float64(r.Max.Y)}, {X: float64(r.Min.X), Y: float64(r.Max.Y)}}
}

// A plate's quad follows the picture's move between two frames (a move
// past the search's reach found around the last move), a frame of other
// content is a weak match, and a scene cut is told from a pan.
func TestFollow(t *testing.T) {
	a := texturedFrame(320, 180, 0, 0, 1)
	q := rectQuad(image.Rect(120, 80, 200, 100))
	for _, c := range []struct{ mv, guess image.Point }{{image.Pt(7, -3), image.Point{}}, {image.Pt(-5, 6), image.Point{}},
		{image.Pt(0, 0), image.Point{}}, {image.Pt(-22, 9), image.Pt(-20, 8)}} {
		mv := c.mv
		b := texturedFrame(320, 180, mv.X, mv.Y, 1)
		m := follow(a, b, q, imageops.Point{X: float64(c.guess.X), Y: float64(c.guess.Y)})
		if !m.ok {
			t.Errorf("move %v: no match", mv)
			continue
		}
		for i := range q {
			if math.Abs(m.quad[i].X-q[i].X-float64(mv.X)) > 0.5 || math.Abs(m.quad[i].Y-q[i].Y-float64(mv.Y)) > 0.5 {
				t.Errorf("move %v: corner %d went from %v to %v", mv, i, q[i], m.quad[i])
			}
		}
	}
	other := texturedFrame(320, 180, 0, 0, 2)
	if m := follow(a, other, q, imageops.Point{}); m.ok {
		t.Errorf("another picture matched: %v", m.quad)
	}
	// The next shot: a bright sky over a dark road.
	shot := image.NewYCbCr(a.Rect, image.YCbCrSubsampleRatio420)
	for y := range 180 {
		for x := range 320 {
			shot.Y[y*shot.YStride+x] = uint8(230 - y)
		}
	}
	ta, tb, tc := thumb(a, nil), thumb(texturedFrame(320, 180, 6, 2, 1), nil), thumb(shot, nil)
	if cut(ta, tb) {
		t.Error("a pan of 6 px taken for a scene cut")
	}
	if !cut(ta, tc) {
		t.Error("another picture not taken for a scene cut")
	}
}
