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
