package nn

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// weights encodes tensors the way the training programs export them.
func weights(tensors ...[]uint32) []byte {
	var b []byte
	for _, t := range tensors {
		for _, v := range t {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	return b
}

func TestReaderChecksShapes(t *testing.T) {
	one := math.Float32bits(1)
	good := weights([]uint32{2, 1, 2, one, one})
	if got := NewReader(good).Floats(1, 2); len(got) != 2 || got[1] != 1 {
		t.Errorf("Floats(1,2) = %v", got)
	}
	for name, data := range map[string][]byte{
		"wrong rank":  weights([]uint32{1, 2, one, one}),
		"wrong dim":   weights([]uint32{2, 1, 3, one, one, one}),
		"truncated":   good[:len(good)-2],
		"empty input": nil,
	} {
		r := NewReader(data)
		r.Floats(1, 2)
		if r.Err() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Convolutions are cross-correlations, as in torch: an impulse at the
// centre comes out as the kernel reversed.
func TestDepthwiseMatchesCorrelation(t *testing.T) {
	x := NewTensor(1, 3, 3)
	x.Data[4] = 1 // centre
	c := &Conv{Kind: Depth3, Cin: 1, Cout: 1, Stride: 1, Weights: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, Biases: []float32{0.5}}
	y := c.Apply(x)
	// Output (i,j) = sum k[a][b]·x[i+a-1][j+b-1]: with only the centre set,
	// output (i,j) = k[2-i][2-j].
	want := []float32{9, 8, 7, 6, 5, 4, 3, 2, 1}
	for i, w := range want {
		if y.Data[i] != w+0.5 {
			t.Fatalf("output %v, want kernel reversed plus bias: %v", y.Data, want)
		}
	}
}

// naive is the textbook 3×3 cross-correlation (padding 1) of x with c.
func naive(c *Conv, x *Tensor) *Tensor {
	oh, ow := x.H, x.W
	if c.Stride == 2 {
		oh, ow = (x.H+1)/2, (x.W+1)/2
	}
	y := NewTensor(c.Cout, oh, ow)
	for co := range c.Cout {
		for oy := range oh {
			for ox := range ow {
				s := float64(c.Biases[co])
				for ci := range c.Cin {
					plane, k := ci, (co*c.Cin+ci)*9
					if c.Kind == Depth3 {
						if ci != co {
							continue
						}
						k = co * 9
					}
					for ky := range 3 {
						for kx := range 3 {
							iy, ix := oy*c.Stride-1+ky, ox*c.Stride-1+kx
							if iy < 0 || iy >= x.H || ix < 0 || ix >= x.W {
								continue
							}
							s += float64(c.Weights[k+ky*3+kx]) * float64(x.Plane(plane)[iy*x.W+ix])
						}
					}
				}
				if c.ReLU {
					s = max(s, 0)
				}
				y.Plane(co)[oy*ow+ox] = float32(s)
			}
		}
	}
	return y
}

// kernels runs test once with the portable loops and, where this machine
// has them, once with the AVX2 kernels.
func kernels(t *testing.T, test func(t *testing.T)) {
	saved, saved512 := use.avx2, use.avx512
	defer func() { use.avx2, use.avx512 = saved, saved512 }()
	use.avx2, use.avx512 = false, false
	t.Run("portable", test)
	if saved {
		use.avx2 = true
		t.Run("avx2", test)
	} else {
		t.Log("no AVX2 on this machine or in this build: only the portable loops tested")
	}
	if saved && saved512 {
		use.avx512 = true
		t.Run("avx512", test)
	}
}

// random returns a generator of reproducible values in [-0.5, 0.5).
func random() func() float32 {
	rnd := uint32(1)
	return func() float32 {
		rnd = rnd*1664525 + 1013904223
		return float32(rnd>>8)/float32(1<<24) - 0.5
	}
}

// The fast 3×3 paths agree with the textbook convolution on every shape
// the edges treat differently: one pixel, odd and even sides, both strides,
// rows shorter and longer than a vector and not a whole number of them.
func TestConv3MatchesNaive(t *testing.T) { kernels(t, testConv3) }

func testConv3(t *testing.T) {
	next := random()
	for _, kind := range []Kind{Full3, Depth3} {
		for _, stride := range []int{1, 2} {
			for _, hw := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {2, 3}, {3, 2}, {5, 7}, {8, 8}, {7, 9}, {16, 33}, {4, 10}, {3, 18}, {5, 19}, {6, 40}} {
				c := &Conv{Kind: kind, Cin: 3, Cout: 3, Stride: stride, ReLU: stride == 1}
				n := 9 * 3
				if kind == Full3 {
					n = 9 * 3 * 3
				}
				c.Weights, c.Biases = make([]float32, n), make([]float32, 3)
				for i := range c.Weights {
					c.Weights[i] = next()
				}
				for i := range c.Biases {
					c.Biases[i] = next()
				}
				x := NewTensor(3, hw[0], hw[1])
				for i := range x.Data {
					x.Data[i] = next()
				}
				got, want := c.Apply(x), naive(c, x)
				for i := range want.Data {
					if d := got.Data[i] - want.Data[i]; d > 1e-5 || d < -1e-5 {
						t.Fatalf("kind %d stride %d %dx%d: value %d is %v, want %v", kind, stride, hw[0], hw[1], i, got.Data[i], want.Data[i])
					}
				}
			}
		}
	}
}

// The pointwise paths agree with the textbook sum over channels for channel
// counts around the kernels' blocks of 4 and 8 and pixel counts around
// their vectors and chunks, a fully connected layer (one pixel) among them.
func TestPointwiseMatchesNaive(t *testing.T) { kernels(t, testPointwise) }

func testPointwise(t *testing.T) {
	next := random()
	for _, cin := range []int{1, 3, 4, 8, 13} {
		for _, cout := range []int{1, 5, 8, 12, 16, 17} {
			for _, hw := range [][2]int{{1, 1}, {1, 7}, {2, 4}, {3, 5}, {1, 256}, {17, 19}, {9, 64}} {
				c := &Conv{Kind: Point, Cin: cin, Cout: cout, Stride: 1, ReLU: cout%2 == 1}
				c.Weights, c.Biases = make([]float32, cin*cout), make([]float32, cout)
				for i := range c.Weights {
					c.Weights[i] = next()
				}
				for i := range c.Biases {
					c.Biases[i] = next()
				}
				x := NewTensor(cin, hw[0], hw[1])
				for i := range x.Data {
					x.Data[i] = next()
				}
				got := c.Apply(x)
				n := hw[0] * hw[1]
				for co := range cout {
					for i := range n {
						s := float64(c.Biases[co])
						for ci := range cin {
							s += float64(c.Weights[co*cin+ci]) * float64(x.Data[ci*n+i])
						}
						if c.ReLU {
							s = max(s, 0)
						}
						if d := float64(got.Data[co*n+i]) - s; d > 1e-5 || d < -1e-5 {
							t.Fatalf("%d→%d channels, %dx%d: output %d pixel %d is %v, want %v", cin, cout, hw[0], hw[1], co, i, got.Data[co*n+i], s)
						}
					}
				}
			}
		}
	}
}

// BenchmarkPointwise times the 1×1 convolution on the plate finder's
// largest layers (24 and 32 channels at a 640×480 photo's stride 4),
// with the portable loops and, where the machine has them, the AVX2 kernel.
func BenchmarkPointwise(b *testing.B) {
	saved := use.avx2
	defer func() { use.avx2 = saved }()
	next := random()
	for _, ch := range []int{24, 32} {
		c := &Conv{Kind: Point, Cin: ch, Cout: ch, Stride: 1, ReLU: true, Weights: make([]float32, ch*ch), Biases: make([]float32, ch)}
		for i := range c.Weights {
			c.Weights[i] = next()
		}
		x := NewTensor(ch, 120, 160)
		for i := range x.Data {
			x.Data[i] = next()
		}
		for _, avx := range []bool{false, true} {
			if avx && !saved {
				continue
			}
			use.avx2 = avx
			b.Run(fmt.Sprintf("%dch/avx2=%v", ch, avx), func(b *testing.B) {
				for b.Loop() {
					Free(c.Apply(x))
				}
			})
		}
	}
}
