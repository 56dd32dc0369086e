package nn

import (
	"fmt"
	"math"
	"testing"
)

// randomTensor returns a c×h×w tensor of next's values.
func randomTensor(next func() float32, c, h, w int) *Tensor {
	x := NewTensor(c, h, w)
	for i := range x.Data {
		x.Data[i] = 4 * next()
	}
	return x
}

// close fails t unless got and want agree within tol everywhere.
func close(t *testing.T, what string, got, want *Tensor, tol float64) {
	t.Helper()
	if got.C != want.C || got.H != want.H || got.W != want.W {
		t.Fatalf("%s: shape %dx%dx%d, want %dx%dx%d", what, got.C, got.H, got.W, want.C, want.H, want.W)
	}
	for i := range want.Data {
		if d := math.Abs(float64(got.Data[i] - want.Data[i])); !(d <= tol) {
			t.Fatalf("%s: value %d is %v, want %v", what, i, got.Data[i], want.Data[i])
		}
	}
}

// naiveDepth is the textbook k×k depthwise cross-correlation (padding k/2)
// of x with c, followed by c's activations.
func naiveDepth(c *Conv, k int, x *Tensor) *Tensor {
	oh, ow := (x.H+c.Stride-1)/c.Stride, (x.W+c.Stride-1)/c.Stride
	y := NewTensor(c.Cout, oh, ow)
	for ch := range c.Cout {
		for oy := range oh {
			for ox := range ow {
				s := float64(c.Biases[ch])
				for ky := range k {
					for kx := range k {
						iy, ix := oy*c.Stride-k/2+ky, ox*c.Stride-k/2+kx
						if iy < 0 || iy >= x.H || ix < 0 || ix >= x.W {
							continue
						}
						s += float64(c.Weights[(ch*k+ky)*k+kx]) * float64(x.Plane(ch)[iy*x.W+ix])
					}
				}
				y.Plane(ch)[oy*ow+ox] = float32(naiveAct(c, s))
			}
		}
	}
	return y
}

// naiveAct applies c's activations to one value, in float64.
func naiveAct(c *Conv, s float64) float64 {
	if c.ReLU {
		s = max(s, 0)
	}
	a, b := float64(c.Act.A), float64(c.Act.B)
	switch c.Act.Kind {
	case HardSwish:
		s = s*min(max(s+3, 0), 6)/6*a + b
	case HardSigmoid:
		s = min(max(a*s+b, 0), 1)
	}
	return s
}

// The depthwise 3×3 and 5×5 paths agree with the textbook convolution at
// both strides on sides around the kernel's reach and the vectors' width
// (8, and 64 for the AVX-512 blocks), with each activation.
func TestDepthwiseMatchesNaive(t *testing.T) { kernels(t, testDepthwise) }

func testDepthwise(t *testing.T) {
	next := random()
	acts := []Act{{}, {Kind: HardSwish, A: 0.7, B: -0.2}, {Kind: HardSigmoid, A: 0.2, B: 0.5}}
	for _, kind := range []Kind{Depth3, Depth5} {
		k := 3
		if kind == Depth5 {
			k = 5
		}
		for _, stride := range []int{1, 2} {
			for i, hw := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {2, 3}, {3, 4}, {5, 7}, {8, 8}, {7, 9}, {16, 33}, {4, 10}, {3, 18}, {5, 19}, {6, 40}, {9, 21}, {3, 150}, {4, 203}} {
				c := &Conv{Kind: kind, Cin: 3, Cout: 3, Stride: stride, Act: acts[i%3]}
				c.Weights, c.Biases = make([]float32, 3*k*k), make([]float32, 3)
				for i := range c.Weights {
					c.Weights[i] = next()
				}
				for i := range c.Biases {
					c.Biases[i] = next()
				}
				x := randomTensor(next, 3, hw[0], hw[1])
				close(t, fmt.Sprintf("%d×%d stride %d %dx%d", k, k, stride, hw[0], hw[1]), c.Apply(x), naiveDepth(c, k, x), 1e-5)
			}
		}
	}
}

// The pointwise paths apply hard-swish and hard sigmoid as the textbook
// does, on pixel counts the AVX2 kernel and the portable loops share.
func TestPointwiseActivations(t *testing.T) { kernels(t, testPointwiseActs) }

func testPointwiseActs(t *testing.T) {
	next := random()
	for _, act := range []Act{{Kind: HardSwish, A: 1, B: 0}, {Kind: HardSwish, A: 1.3, B: -0.4}, {Kind: HardSigmoid, A: 1.0 / 6, B: 0.5}} {
		for _, n := range []int{1, 13, 300} {
			c := &Conv{Kind: Point, Cin: 5, Cout: 11, Stride: 1, Act: act}
			c.Weights, c.Biases = make([]float32, 55), make([]float32, 11)
			for i := range c.Weights {
				c.Weights[i] = next()
			}
			x := randomTensor(next, 5, 1, n)
			want := NewTensor(11, 1, n)
			for co := range 11 {
				for i := range n {
					s := float64(c.Biases[co])
					for ci := range 5 {
						s += float64(c.Weights[co*5+ci]) * float64(x.Data[ci*n+i])
					}
					want.Data[co*n+i] = float32(naiveAct(c, s))
				}
			}
			close(t, fmt.Sprintf("act %d, %d pixels", act.Kind, n), c.Apply(x), want, 1e-5)
		}
	}
}

// Squeeze-excite scales each channel by the hard sigmoid of the two small
// layers applied to the channel means, or by one more than it.
func TestSEMatchesNaive(t *testing.T) {
	next := random()
	for _, residual := range []bool{false, true} {
		x := randomTensor(next, 8, 5, 7)
		s := &SE{
			Reduce:   &Conv{Kind: Point, Cin: 8, Cout: 2, Stride: 1, ReLU: true, Weights: make([]float32, 16), Biases: []float32{0.1, -0.1}},
			Expand:   &Conv{Kind: Point, Cin: 2, Cout: 8, Stride: 1, Act: Act{Kind: HardSigmoid, A: 0.2, B: 0.5}, Weights: make([]float32, 16), Biases: make([]float32, 8)},
			Residual: residual,
		}
		for i := range 16 {
			s.Reduce.Weights[i], s.Expand.Weights[i] = 3*next(), 3*next()
		}
		want := NewTensor(8, 5, 7)
		var means, mid [8]float64
		for c := range 8 {
			for _, v := range x.Plane(c) {
				means[c] += float64(v) / 35
			}
		}
		for j := range 2 {
			v := float64(s.Reduce.Biases[j])
			for c := range 8 {
				v += float64(s.Reduce.Weights[j*8+c]) * means[c]
			}
			mid[j] = max(v, 0)
		}
		for c := range 8 {
			g := float64(s.Expand.Biases[c])
			for j := range 2 {
				g += float64(s.Expand.Weights[c*2+j]) * mid[j]
			}
			g = min(max(0.2*g+0.5, 0), 1)
			if residual {
				g++
			}
			for i, v := range x.Plane(c) {
				want.Plane(c)[i] = float32(float64(v) * g)
			}
		}
		close(t, fmt.Sprintf("residual %v", residual), s.Apply(x), want, 1e-5)
	}
}

// The transposed 2×2 stride-2 convolution puts, at output (2y+dy, 2x+dx),
// the input pixel (y, x) weighted by the kernel's tap (dy, dx).
func TestDeconv2MatchesNaive(t *testing.T) { kernels(t, testDeconv2) }

func testDeconv2(t *testing.T) {
	next := random()
	for _, shape := range [][4]int{{3, 1, 2, 3}, {24, 24, 5, 9}, {24, 1, 4, 16}} {
		cin, cout, h, w := shape[0], shape[1], shape[2], shape[3]
		d := &Deconv2{Cin: cin, Cout: cout, ReLU: cout > 1, Weights: make([]float32, cin*cout*4), Biases: make([]float32, cout)}
		for i := range d.Weights {
			d.Weights[i] = next()
		}
		for i := range d.Biases {
			d.Biases[i] = next()
		}
		x := randomTensor(next, cin, h, w)
		want := NewTensor(cout, 2*h, 2*w)
		for co := range cout {
			for oy := range 2 * h {
				for ox := range 2 * w {
					s := float64(d.Biases[co])
					for ci := range cin {
						s += float64(d.Weights[((ci*cout+co)*2+oy%2)*2+ox%2]) * float64(x.Plane(ci)[oy/2*w+ox/2])
					}
					if d.ReLU {
						s = max(s, 0)
					}
					want.Plane(co)[oy*2*w+ox] = float32(s)
				}
			}
		}
		close(t, fmt.Sprintf("%d→%d %dx%d", cin, cout, h, w), d.Apply(x), want, 1e-5)
	}
}

func TestUpsampleRepeatsPixels(t *testing.T) {
	next := random()
	x := randomTensor(next, 2, 3, 5)
	for _, f := range []int{2, 4, 8} {
		y := Upsample(x, f)
		want := NewTensor(2, 3*f, 5*f)
		for c := range 2 {
			for yy := range 3 * f {
				for xx := range 5 * f {
					want.Plane(c)[yy*5*f+xx] = x.Plane(c)[yy/f*5+xx/f]
				}
			}
		}
		close(t, fmt.Sprintf("×%d", f), y, want, 0)
	}
}

// A dilated convolution of smaller tensors stacked with a larger one reads
// them enlarged as it copies its input: the same bits as on their enlarged
// copies stacked, in float and on integers (the text detector's head).
func TestDil3EnlargesSmallerInputs(t *testing.T) {
	next := random()
	a, b, c := randomTensor(next, 2, 3, 5), randomTensor(next, 1, 6, 10), randomTensor(next, 3, 12, 20)
	stacked := Concat(Upsample(a, 4), Upsample(b, 2), c)
	for _, integers := range []bool{false, true} {
		d := &Dil3{Cin: 6, Cout: 5, D: 1, ReLU: true, Weights: make([]float32, 5*6*9), Biases: []float32{0.5, -1, 2, 0, 0.25}}
		for i := range d.Weights {
			d.Weights[i] = next()
		}
		if integers {
			d.InRange = []Range{{Lo: -2, Hi: 2}}
		}
		saved := use.integers
		use.integers = integers
		close(t, fmt.Sprintf("integers %v", integers), d.Apply(a, b, c), d.Apply(stacked), 0)
		use.integers = saved
	}
}

// exp32 agrees with math.Exp to a few parts in 10⁷ over the range a
// sigmoid meets, and saturates beyond it.
func TestExp32(t *testing.T) {
	for v := -87.0; v <= 88; v += 0.001 {
		got, want := float64(exp32(float32(v))), math.Exp(float64(float32(v)))
		if math.Abs(got-want) > 4e-7*want {
			t.Fatalf("exp32(%v) = %v, want %v", v, got, want)
		}
	}
	if exp32(-100) != 0 || !math.IsInf(float64(exp32(100)), 1) {
		t.Errorf("exp32(-100) = %v, exp32(100) = %v; want 0, +Inf", exp32(-100), exp32(100))
	}
}

// BenchmarkDepthwise times the text detector's depthwise layers at a
// 960×736 input: 3×3 on 16 channels at stride 2 (its largest) and from
// stride 2 to 4 on 32, 5×5 on 192 at stride 16; then narrow ones, whose
// rows end short of a vector: a plate verifier's (ReLU, 12×24 and 6×12,
// run about 60 times a 12 MP photo) and the reader's 5×5 on a line of 30
// steps.
func BenchmarkDepthwise(b *testing.B) {
	next := random()
	for _, l := range []struct {
		kind       Kind
		c, stride  int
		h, w, taps int
		act        ActKind
	}{{Depth3, 16, 1, 368, 480, 9, HardSwish}, {Depth3, 32, 2, 368, 480, 9, HardSwish}, {Depth5, 192, 1, 46, 60, 25, HardSwish},
		{Depth3, 24, 1, 12, 24, 9, Linear}, {Depth3, 48, 2, 6, 12, 9, Linear}, {Depth5, 240, 1, 12, 30, 25, HardSwish}} {
		c := &Conv{Kind: l.kind, Cin: l.c, Cout: l.c, Stride: l.stride, Act: Act{Kind: l.act, A: 1}, ReLU: l.act == Linear, Weights: make([]float32, l.c*l.taps), Biases: make([]float32, l.c)}
		x := randomTensor(next, l.c, l.h, l.w)
		b.Run(fmt.Sprintf("%d×%dch%d/stride%d", l.h, l.w, l.c, l.stride), func(b *testing.B) {
			for b.Loop() {
				Free(c.Apply(x))
			}
		})
	}
}

// UpConv3 adds what a 3×3 convolution of the enlarged tensor gives.
func TestUpConv3MatchesEnlargedConvolution(t *testing.T) {
	next := random()
	for _, f := range []int{2, 3, 4, 8} {
		for _, hw := range [][2]int{{1, 1}, {2, 3}, {5, 4}} {
			u := &UpConv3{Cin: 5, Cout: 3, F: f, Weights: make([]float32, 3*5*9)}
			for i := range u.Weights {
				u.Weights[i] = next()
			}
			x := randomTensor(next, 5, hw[0], hw[1])
			d := &Dil3{Cin: 5, Cout: 3, D: 1, Weights: u.Weights, Biases: []float32{0.5, -1, 2}}
			want := d.Apply(Upsample(x, f))
			got := NewTensor(3, f*hw[0], f*hw[1])
			for co := range 3 {
				fill(got.Plane(co), d.Biases[co])
			}
			u.AddTo(got, x)
			close(t, fmt.Sprintf("×%d %dx%d", f, hw[0], hw[1]), got, want, 1e-5)
		}
	}
}

// UpAdd adds each small pixel to the 2×2 big pixels over it, the last
// column and row of an odd big side reading the small tensor's last.
func TestUpAddMatchesNaive(t *testing.T) {
	next := random()
	for _, hw := range [][2]int{{4, 6}, {5, 7}, {1, 1}} {
		big, small := randomTensor(next, 2, hw[0], hw[1]), randomTensor(next, 2, (hw[0]+1)/2, (hw[1]+1)/2)
		want := NewTensor(2, hw[0], hw[1])
		for c := range 2 {
			for y := range hw[0] {
				for x := range hw[1] {
					want.Plane(c)[y*hw[1]+x] = big.Plane(c)[y*hw[1]+x] + small.Plane(c)[y/2*small.W+x/2]
				}
			}
		}
		close(t, fmt.Sprintf("%dx%d", hw[0], hw[1]), UpAdd(big, small), want, 0)
	}
}

// The dense stride-2 path with a multiple of 8 outputs writes straight into
// its output; it agrees with the textbook convolution too.
func TestFull3Stride2Blocks(t *testing.T) { kernels(t, testFull3s2) }

func testFull3s2(t *testing.T) {
	next := random()
	for _, hw := range [][2]int{{5, 7}, {16, 100}, {33, 97}} {
		c := &Conv{Kind: Full3, Cin: 3, Cout: 16, Stride: 2, Act: Act{Kind: HardSwish, A: 0.5, B: 0.1}, Weights: make([]float32, 16*27), Biases: make([]float32, 16)}
		for i := range c.Weights {
			c.Weights[i] = next()
		}
		for i := range c.Biases {
			c.Biases[i] = next()
		}
		x := randomTensor(next, 3, hw[0], hw[1])
		want := naive(&Conv{Kind: Full3, Cin: 3, Cout: 16, Stride: 2, Weights: c.Weights, Biases: c.Biases}, x)
		for i, v := range want.Data {
			want.Data[i] = float32(naiveAct(c, float64(v)))
		}
		close(t, fmt.Sprintf("%dx%d", hw[0], hw[1]), c.Apply(x), want, 1e-5)
	}
}

// Sigmoid agrees with the float64 logistic function to a few parts in 10⁷
// over the range a network's logits take and saturates beyond it.
func TestSigmoid(t *testing.T) { kernels(t, testSigmoid) }

func testSigmoid(t *testing.T) {
	x := NewTensor(1, 1, 0)
	for v := -100.0; v <= 100; v += 0.0137 {
		x.Data = append(x.Data, float32(v))
	}
	x.W = len(x.Data)
	in := append([]float32(nil), x.Data...)
	Sigmoid(x)
	for i, v := range in {
		want := 1 / (1 + math.Exp(-float64(v)))
		if d := math.Abs(float64(x.Data[i]) - want); d > 4e-7*want+1e-30 {
			t.Fatalf("Sigmoid(%v) = %v, want %v", v, x.Data[i], want)
		}
	}
}
