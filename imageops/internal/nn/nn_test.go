package nn

import (
	"encoding/binary"
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

// The fast 3×3 paths agree with the textbook convolution on every shape
// the edges treat differently: one pixel, odd and even sides, both strides.
func TestConv3MatchesNaive(t *testing.T) {
	rnd := uint32(1)
	next := func() float32 {
		rnd = rnd*1664525 + 1013904223
		return float32(rnd>>8)/float32(1<<24) - 0.5
	}
	for _, kind := range []Kind{Full3, Depth3} {
		for _, stride := range []int{1, 2} {
			for _, hw := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {2, 3}, {3, 2}, {5, 7}, {8, 8}, {7, 9}, {16, 33}} {
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
