package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomDil3 returns a dilated convolution with random weights and an
// input for it whose values lie in [lo, hi).
func randomDil3(rng *rand.Rand, cin, cout, d, h, w int, lo, hi float32) (*Dil3, *Tensor) {
	c := &Dil3{Cin: cin, Cout: cout, D: d, ReLU: true,
		Weights: make([]float32, cout*cin*9), Biases: make([]float32, cout)}
	for i := range c.Weights {
		c.Weights[i] = float32(rng.NormFloat64()) / float32(3*cin)
	}
	for i := range c.Biases {
		c.Biases[i] = float32(rng.NormFloat64()) * 0.1
	}
	x := NewTensor(cin, h, w)
	for i := range x.Data {
		x.Data[i] = lo + (hi-lo)*rng.Float32()
	}
	return c, x
}

// eachIntKernel returns f's outputs with each integer kernel this CPU runs.
func eachIntKernel(t *testing.T, f func() *Tensor) map[int]*Tensor {
	out := map[int]*Tensor{}
	for _, k := range IntKernels() {
		restore, err := SetIntKernel(k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = f()
		restore()
	}
	return out
}

// TestIntKernelsGiveTheSameIntegers runs integer layers of several shapes
// (dilations, widths not a multiple of the tile, channels not a multiple
// of 4, a last block of fewer than 8 outputs) with each kernel: the
// outputs are the same bits; and they are within the quantisation's error
// of the float layer.
func TestIntKernelsGiveTheSameIntegers(t *testing.T) {
	if len(IntKernels()) < 2 {
		t.Log("only the portable integer loop runs on this CPU")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ cin, cout, d, h, w int }{
		{3, 8, 1, 7, 9}, {16, 16, 1, 20, 50}, {13, 11, 2, 17, 31}, {24, 40, 4, 9, 100}, {64, 8, 8, 21, 20}, {9, 5, 1, 1, 1},
		// The text detector's head: 96 stacked channels to 24 at stride 4.
		{96, 24, 1, 45, 61},
	} {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			c, x := randomDil3(rng, s.cin, s.cout, s.d, s.h, s.w, -0.5, 2)
			want := c.Apply(x)
			c.InRange = []Range{{-0.5, 2}}
			outs := eachIntKernel(t, func() *Tensor { return c.Apply(x) })
			ref := outs[IntKernelGo]
			for k, y := range outs {
				if !slices.Equal(y.Data, ref.Data) {
					t.Errorf("kernel %d differs from the portable loop", k)
				}
			}
			// Error: relative to the output's spread.
			var spread, worst float64
			for i, v := range want.Data {
				spread = max(spread, math.Abs(float64(v)))
				worst = max(worst, math.Abs(float64(v-ref.Data[i])))
			}
			t.Logf("worst %.4g of %.4g", worst, spread)
			if worst > 0.03*spread {
				t.Errorf("integer output off the float one by %.4g (outputs up to %.4g)", worst, spread)
			}
		})
	}
	t.Run("pointwise", func(t *testing.T) {
		for _, s := range []struct{ cin, cout, h, w int }{{16, 24, 30, 41}, {7, 9, 5, 5}, {96, 24, 12, 40}} {
			c := &Conv{Kind: Point, Cin: s.cin, Cout: s.cout, Stride: 1, Act: Act{Kind: HardSwish, A: 1.0 / 6, B: 0.5},
				Weights: make([]float32, s.cin*s.cout), Biases: make([]float32, s.cout)}
			for i := range c.Weights {
				c.Weights[i] = float32(rng.NormFloat64()) / float32(s.cin)
			}
			x := NewTensor(s.cin, s.h, s.w)
			for i := range x.Data {
				x.Data[i] = -0.3 + 3*rng.Float32()
			}
			want := c.Apply(x)
			c.InRange = []Range{{-0.3, 2.7}}
			outs := eachIntKernel(t, func() *Tensor { return c.Apply(x) })
			ref := outs[IntKernelGo]
			for k, y := range outs {
				if !slices.Equal(y.Data, ref.Data) {
					t.Errorf("%v: kernel %d differs from the portable loop", s, k)
				}
			}
			var spread, worst float64
			for i, v := range want.Data {
				spread = max(spread, math.Abs(float64(v)))
				worst = max(worst, math.Abs(float64(v-ref.Data[i])))
			}
			if worst > 0.03*spread {
				t.Errorf("%v: integer output off the float one by %.4g (outputs up to %.4g)", s, worst, spread)
			}
		}
	})
}

// BenchmarkDil3Int is BenchmarkDil3's layer (128 → 64 channels at
// 320×240) in float and with each integer kernel; GMAC/s counts the
// multiply-adds of the convolution.
func BenchmarkDil3Int(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	c, x := randomDil3(rng, 128, 64, 1, 240, 320, 0, 2)
	macs := float64(128 * 64 * 9 * 240 * 320)
	run := func(b *testing.B) {
		for b.Loop() {
			Free(c.Apply(x))
		}
		b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
	}
	b.Run("float", run)
	names := []string{"go", "avx2", "vnni"}
	for _, k := range IntKernels() {
		b.Run(names[k], func(b *testing.B) {
			restore, _ := SetIntKernel(k)
			defer restore()
			c = &Dil3{Cin: c.Cin, Cout: c.Cout, D: c.D, ReLU: c.ReLU, Weights: c.Weights, Biases: c.Biases, InRange: []Range{{0, 2}}}
			run(b)
		})
	}
}

// TestQuantPairSameOnEveryKernel quantises values in, at the edges of and
// far outside a layer's range, at lengths that leave every kernel a tail
// (not a multiple of 8 or 16), with each integer kernel this CPU runs (the
// AVX2 and AVX-512 quantisers beside the portable loop): the same integers.
func TestQuantPairSameOnEveryKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	q := newQconv([]Range{{-0.7, 2.3}, {-5, 0.25}}, make([]float32, 2), nil, 2, 1, 1)
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range n {
			a[i] = -3 + 8*rng.Float32()
			b[i] = -9 + 12*rng.Float32()
		}
		// Edges: the range's ends, zero, signed zero, the largest floats.
		edges := []float32{-0.7, 2.3, 0, float32(math.Copysign(0, -1)), -5, 0.25, 1e30, -1e30}
		for i := range min(n, len(edges)) {
			a[i], b[n-1-i] = edges[i], edges[len(edges)-1-i]
		}
		var ref []int16
		for _, k := range IntKernels() {
			restore, err := SetIntKernel(k)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]int16, 2*n)
			q.quantPair(dst, a, b, 0)
			restore()
			if k == IntKernelGo {
				ref = dst
				continue
			}
			if !slices.Equal(dst, ref) {
				t.Errorf("n=%d: kernel %d quantises differently from the portable loop:\n%v\n%v", n, k, dst, ref)
			}
		}
	}
}
