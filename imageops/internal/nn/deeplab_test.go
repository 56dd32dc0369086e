package nn

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDilated2As5 checks a Depth5 convolution with Dilated2As5's kernels
// against the dilated 3×3 depthwise convolution written out (padding 2),
// on every kernel set, with ReLU6 after it.
func TestDilated2As5(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const c, h, w = 11, 13, 21
	x := NewTensor(c, h, w)
	for i := range x.Data {
		x.Data[i] = rng.Float32()*8 - 4
	}
	w3 := make([]float32, c*9)
	bias := make([]float32, c)
	for i := range w3 {
		w3[i] = rng.Float32()*2 - 1
	}
	for i := range bias {
		bias[i] = rng.Float32() - 0.5
	}
	want := NewTensor(c, h, w)
	for ch := range c {
		for y := range h {
			for xx := range w {
				s := bias[ch]
				for ky := range 3 {
					for kx := range 3 {
						sy, sx := y+2*(ky-1), xx+2*(kx-1)
						if sy >= 0 && sy < h && sx >= 0 && sx < w {
							s += w3[ch*9+ky*3+kx] * x.Data[(ch*h+sy)*w+sx]
						}
					}
				}
				want.Data[(ch*h+y)*w+xx] = min(max(s, 0), 6)
			}
		}
	}
	for _, k := range []string{"portable", "avx2", "avx512"} {
		func() {
			defer SetFloatKernels(k)()
			conv := &Conv{Kind: Depth5, Cin: c, Cout: c, Stride: 1, Act: Act{Kind: ReLU6},
				Weights: Dilated2As5(w3, c), Biases: bias}
			got := conv.Apply(x)
			for i, v := range got.Data {
				if d := math.Abs(float64(v - want.Data[i])); d > 1e-5 {
					t.Fatalf("%s: value %d is %g, want %g", k, i, v, want.Data[i])
				}
			}
		}()
	}
}

// TestResizeAligned checks the corner-aligned bilinear resampling on a
// ramp (which it must reproduce exactly at every size) and a 1×1 input
// (broadcast).
func TestResizeAligned(t *testing.T) {
	x := NewTensor(2, 3, 5)
	for c := range 2 {
		for y := range 3 {
			for xx := range 5 {
				x.Data[(c*3+y)*5+xx] = float32(c*100 + 10*y + xx)
			}
		}
	}
	y := ResizeAligned(x, 7, 9)
	for c := range 2 {
		for oy := range 7 {
			for ox := range 9 {
				want := float64(c*100) + 10*float64(oy)*2/6 + float64(ox)*4/8
				if got := float64(y.Data[(c*7+oy)*9+ox]); math.Abs(got-want) > 1e-4 {
					t.Fatalf("channel %d (%d, %d): %g, want %g", c, ox, oy, got, want)
				}
			}
		}
	}
	one := &Tensor{C: 1, H: 1, W: 1, Data: []float32{3.5}}
	for _, v := range ResizeAligned(one, 4, 6).Data {
		if v != 3.5 {
			t.Fatalf("broadcast gave %g, want 3.5", v)
		}
	}
}

// TestQuantised reads a uint8 tensor with its scale and zero point.
func TestQuantised(t *testing.T) {
	var b []byte
	for _, v := range []uint32{2, 2, 3, math.Float32bits(0.5), 0xffffffff} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = append(b, 0, 1, 2, 3, 254, 255)
	r := NewReader(b)
	got := r.Quantised(2, 3)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []float32{0.5, 1, 1.5, 2, 127.5, 128} // (q + 1)·0.5
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: %g, want %g", i, got[i], want[i])
		}
	}
	if r.Remaining() != 0 {
		t.Errorf("%d bytes left", r.Remaining())
	}
	if NewReader(b[:len(b)-1]).Quantised(2, 3) != nil {
		t.Error("a truncated tensor read")
	}
}
