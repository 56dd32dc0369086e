package nn

import (
	"image"
	"math"
	"testing"
)

// The unrolled reader of 4:2:0 photos shrunk with 4 samples a column gives
// the general loop's tensor bit for bit (an odd origin, odd sizes, and a
// shrink of a photo 4.2 times the output).
func TestUnrolledPrepareMatchesGeneral(t *testing.T) {
	m := image.NewYCbCr(image.Rect(3, 5, 3+1011, 5+757), image.YCbCrSubsampleRatio420)
	seed := uint32(1)
	next := func() uint8 { seed = seed*1664525 + 1013904223; return uint8(seed >> 24) }
	for _, p := range [][]uint8{m.Y, m.Cb, m.Cr} {
		for i := range p {
			p[i] = next()
		}
	}
	got := Photo(m, 240, 180, [3]float32{1, 1, 1}, [3]float32{})
	unrollFour = false
	want := Photo(m, 240, 180, [3]float32{1, 1, 1}, [3]float32{})
	unrollFour = true
	for i := range want.Data {
		if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
			t.Fatalf("value %d: unrolled %v, general %v", i, got.Data[i], want.Data[i])
		}
	}
}
