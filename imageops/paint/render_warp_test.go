package paint

import (
	"image"
	"image/draw"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"carphoto/imageops/plates"
)

func TestSquareToQuadMapsCornersBothWays(t *testing.T) {
	for _, sh := range renderShapes {
		m := squareToQuad(sh.quad)
		inv := m.inverse()
		for i, c := range [4][2]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}} {
			x, y, ok := m.apply(c[0], c[1])
			if !ok || math.Hypot(x-sh.quad[i].X, y-sh.quad[i].Y) > 1e-6 {
				t.Errorf("%s: corner %d maps to %.3f,%.3f; want %v", sh.name, i, x, y, sh.quad[i])
			}
			u, v, ok := inv.apply(sh.quad[i].X, sh.quad[i].Y)
			if !ok || math.Hypot(u-c[0], v-c[1]) > 1e-6 {
				t.Errorf("%s: the inverse takes corner %d to %.4f,%.4f; want %v", sh.name, i, u, v, c)
			}
		}
	}
}

func TestOutlineDistance(t *testing.T) {
	p, _ := convexClockwise(renderRect(10, 10, 20, 10))
	o := p.outline()
	for _, tc := range []struct{ x, y, want float64 }{
		{20, 15, -5}, // centre: 5 px from the long edges
		{10, 12, 0},  // on the left edge
		{5, 15, 5},   // left of it
		{33, 24, 5},  // off the bottom-right corner (30,20): 3-4-5
		{20, 4, 6},   // above
		{31, 10, 1},  // right of the top-right corner
	} {
		if got := o.signedDistance(tc.x, tc.y); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("distance at %v,%v = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
	// Reversed or rotated corners give the same polygon, from the top left.
	for _, q := range []plates.Quad{{p[0], p[3], p[2], p[1]}, {p[1], p[2], p[3], p[0]}, {p[3], p[2], p[1], p[0]}} {
		if got, ok := convexClockwise(q); !ok || [4]plates.Point(got) != [4]plates.Point(p) {
			t.Errorf("convexClockwise(%v) = %v, want %v", q, got, p)
		}
	}
	// Growing by 2 moves every edge out by 2.
	if got := p.offset(2).outline(); math.Abs(got.signedDistance(20, 15)+7) > 1e-9 {
		t.Errorf("after offset(2) the centre is %v from the edge, want -7", got.signedDistance(20, 15))
	}
}

func TestBoxBlur3IsGaussianOfSigma(t *testing.T) {
	// A step edge blurred by a Gaussian of σ rises from 15.9% to 84.1% over
	// 2σ; three box passes of radius r promise σ = √(r(r+1)).
	for _, r := range []int{3, 10, 30} {
		img := image.NewRGBA(image.Rect(0, 0, 400, 1))
		for x := 200; x < 400; x++ {
			copy(img.Pix[x*4:], []uint8{255, 255, 255, 255})
		}
		boxBlur3(img, r)
		cross := func(level float64) float64 {
			for x := 1; x < 400; x++ {
				a, b := float64(img.Pix[(x-1)*4]), float64(img.Pix[x*4])
				if a < level && b >= level {
					return float64(x-1) + (level-a)/(b-a)
				}
			}
			return math.NaN()
		}
		rise := cross(0.841*255) - cross(0.159*255)
		sigma := math.Sqrt(float64(r * (r + 1)))
		if math.Abs(rise-2*sigma) > 0.05*2*sigma+1 {
			t.Errorf("r=%d: the edge rises over %.1f px, want 2σ = %.1f", r, rise, 2*sigma)
		}
	}
}

// A wide blur taken on blocks looks like the same blur taken on every
// pixel: large plates (σ 36–90 px, blocks of 2–5 px) on a photo of stripes,
// a sawtooth and noise, blurred both ways, differ by under a grey level on
// average and nowhere by much.
func TestWideBlurOnBlocksMatchesFullResolution(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 1800, 1000))
	rnd := uint32(7)
	for y := range 1000 {
		for x := range 1800 {
			rnd = rnd*1664525 + 1013904223
			v := uint8((x/9%2)*120 + (y/23%2)*60 + int(rnd>>28))
			copy(img.Pix[img.PixOffset(x, y):], []uint8{v, 255 - v, uint8(x), 255})
		}
	}
	for _, h := range []float64{120, 160, 200, 230, 300} {
		s, ok, err := newPlateShape(renderRotated(900, 500, 3*h, h, 9))
		if !ok || err != nil {
			t.Fatal(ok, err)
		}
		sigma := blurSigma * s.h
		if f := boxRadius(sigma) / 16; f < 2 {
			t.Fatalf("plate %.0f px tall: blocks of %d px; the test is for the blocks' path", h, f)
		}
		blocks, full := image.NewRGBA(img.Rect), image.NewRGBA(img.Rect)
		copy(blocks.Pix, img.Pix)
		copy(full.Pix, img.Pix)
		hideBlur(blocks, &s)
		blurAt(full, &s, sigma, 1)
		var sum, worst float64
		changed := 0
		for i := range full.Pix {
			if full.Pix[i] == img.Pix[i] && blocks.Pix[i] == img.Pix[i] {
				continue
			}
			d := math.Abs(float64(blocks.Pix[i]) - float64(full.Pix[i]))
			sum += d
			worst = max(worst, d)
			changed++
		}
		mean := sum / float64(changed)
		t.Logf("σ %.0f px, blocks of %d: mean difference %.2f grey levels over %d values, largest %.0f", sigma, boxRadius(sigma)/16, mean, changed, worst)
		if mean > 1 || worst > 8 {
			t.Errorf("σ %.0f px: blur on blocks differs from the full-resolution blur by %.2f on average, %.0f at most; want ≤ 1 and ≤ 8", sigma, mean, worst)
		}
	}
}

// boxPass, with its reciprocal instead of a division, gives the plain
// division's samples: lines shorter and longer than the box, radii from 1
// to the largest a 12 MP photo's plate asks, sums up to the largest a
// line of 255s makes (so every answer of the blur stays the same).
func TestBoxPassDividesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, r := range []int{1, 2, 3, 7, 16, 31, 100, 257, 1000, 4000, 20000} {
		for _, n := range []int{1, 2, 5, 40, 333, 2*r + 3} {
			src := make([]int32, 4*n)
			for i := range src {
				switch rng.IntN(3) {
				case 0:
					src[i] = 255
				case 1:
					src[i] = 0
				default:
					src[i] = rng.Int32N(256)
				}
			}
			got, want := make([]int32, 4*n), make([]int32, 4*n)
			boxPass(src, got, n, r)
			boxPassDiv(src, want, n, r)
			if !slices.Equal(got, want) {
				t.Fatalf("r=%d n=%d: the reciprocal's means differ from the division's", r, n)
			}
		}
	}
	// Every sum a pass can hold, each radius up to 300: the reciprocal
	// against the division itself.
	for r := 1; r <= 300; r++ {
		div := int64(2*r + 1)
		m := (uint64(1)<<40 + uint64(div) - 1) / uint64(div)
		for v := int64(0); v < 256*div; v++ {
			if int64(uint64(v)*m>>40) != v/div {
				t.Fatalf("r=%d: %d/%d gives %d", r, v, div, uint64(v)*m>>40)
			}
		}
	}
}

// boxBlur3 (rows, then every column at once with reciprocals) gives the
// same pixels as the plain form: each row and then each column alone,
// divided (boxBlurPlain): images of one row or column, radii past their
// size, a crop's stride wider than its rows.
func TestBoxBlur3SameAsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []struct{ w, h, r int }{{1, 1, 1}, {1, 9, 2}, {9, 1, 3}, {40, 30, 5}, {7, 60, 20}, {320, 170, 15}, {100, 80, 40}} {
		full := image.NewRGBA(image.Rect(0, 0, s.w+3, s.h))
		for i := range full.Pix {
			full.Pix[i] = uint8(rng.IntN(256))
		}
		got := full.SubImage(image.Rect(1, 0, s.w+1, s.h)).(*image.RGBA)
		want := image.NewRGBA(image.Rect(0, 0, s.w, s.h))
		draw.Draw(want, want.Rect, got, got.Rect.Min, draw.Src)
		boxBlur3(got, s.r)
		boxBlurPlain(want, s.r)
		for y := range s.h {
			g := got.Pix[y*got.Stride : y*got.Stride+4*s.w]
			if !slices.Equal(g, want.Pix[y*want.Stride:y*want.Stride+4*s.w]) {
				t.Fatalf("%v: row %d differs from the plain blur's", s, y)
			}
		}
	}
}

// boxBlurPlain is boxBlur3 one line at a time with boxPassDiv.
func boxBlurPlain(img *image.RGBA, r int) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	n := max(w, h)
	line, tmp := make([]int32, n*4), make([]int32, n*4)
	blur := func(n int, get func(i int) *uint8) {
		for i := range n * 4 {
			line[i] = int32(*get(i))
		}
		for range 3 {
			boxPassDiv(line[:n*4], tmp[:n*4], n, r)
			line, tmp = tmp, line
		}
		for i := range n * 4 {
			*get(i) = uint8(line[i])
		}
	}
	for y := range h {
		blur(w, func(i int) *uint8 { return &img.Pix[y*img.Stride+i] })
	}
	for x := range w {
		blur(h, func(i int) *uint8 { return &img.Pix[(i/4)*img.Stride+x*4+i%4] })
	}
}
