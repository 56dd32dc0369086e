package nn

import (
	"math"
	"testing"
)

// TestAttentionMatchesTextbook compares Attention with softmax(q·kᵀ·scale)·v
// computed head by head in float64.
func TestAttentionMatchesTextbook(t *testing.T) {
	next := random()
	const d, heads, steps = 24, 4, 11
	qkv := randomTensor(next, 3*d, 1, steps)
	got := Attention(qkv, heads, 0.3)
	want := NewTensor(d, 1, steps)
	dh := d / heads
	at := func(c, i int) float64 { return float64(qkv.Data[c*steps+i]) }
	for h := range heads {
		for i := range steps {
			w := make([]float64, steps)
			sum := 0.0
			for j := range steps {
				s := 0.0
				for c := range dh {
					s += at(h*dh+c, i) * at(d+h*dh+c, j)
				}
				w[j] = math.Exp(0.3 * s)
				sum += w[j]
			}
			for c := range dh {
				acc := 0.0
				for j := range steps {
					acc += w[j] / sum * at(2*d+h*dh+c, j)
				}
				want.Data[(h*dh+c)*steps+i] = float32(acc)
			}
		}
	}
	close(t, "attention", got, want, 1e-4)
}

// TestLayerNorm: each step normalised over its channels, then scaled.
func TestLayerNorm(t *testing.T) {
	x := randomTensor(random(), 6, 1, 5)
	gain := []float32{1, 2, 3, 4, 5, 6}
	offset := []float32{0, 1, 0, 1, 0, 1}
	got := LayerNorm(x, gain, offset, 1e-5)
	want := NewTensor(6, 1, 5)
	for i := range 5 {
		mean, v := 0.0, 0.0
		for c := range 6 {
			mean += float64(x.Data[c*5+i]) / 6
		}
		for c := range 6 {
			d := float64(x.Data[c*5+i]) - mean
			v += d * d / 6
		}
		for c := range 6 {
			want.Data[c*5+i] = float32((float64(x.Data[c*5+i])-mean)/math.Sqrt(v+1e-5))*gain[c] + offset[c]
		}
	}
	close(t, "layer norm", got, want, 1e-5)
}

// TestStridesPoolShifts checks Subsample, AvgPool and Shifts on small
// tensors written out by hand.
func TestStridesPoolShifts(t *testing.T) {
	x := &Tensor{C: 1, H: 3, W: 4, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	close(t, "subsample 2,1", Subsample(x, 2, 1), &Tensor{C: 1, H: 2, W: 4, Data: []float32{1, 2, 3, 4, 9, 10, 11, 12}}, 0)
	close(t, "subsample 1,2", Subsample(x, 1, 2), &Tensor{C: 1, H: 3, W: 2, Data: []float32{1, 3, 5, 7, 9, 11}}, 0)
	close(t, "avgpool 3,2", AvgPool(x, 3, 2), &Tensor{C: 1, H: 1, W: 2, Data: []float32{5.5, 7.5}}, 1e-6)
	row := &Tensor{C: 2, H: 1, W: 3, Data: []float32{1, 2, 3, 4, 5, 6}}
	close(t, "shifts", Shifts(row), &Tensor{C: 6, H: 1, W: 3, Data: []float32{
		0, 1, 2, 0, 4, 5, // shifted right: step t reads t−1
		1, 2, 3, 4, 5, 6,
		2, 3, 0, 5, 6, 0, // shifted left: step t reads t+1
	}}, 0)
	sw := Swish(&Tensor{C: 1, H: 1, W: 2, Data: []float32{0, 2}})
	close(t, "swish", sw, &Tensor{C: 1, H: 1, W: 2, Data: []float32{0, float32(2 / (1 + math.Exp(-2)))}}, 1e-6)
}
