package plates

import (
	"carphoto/imageops/internal/nn"
	"context"
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// TestForwardMatchesTorch runs the network on the training program's fixed
// test input and compares every output with what torch computed
// (testdata/parity.bin, written by train/plates/train.py with the weights).
func TestForwardMatchesTorch(t *testing.T) {
	data, err := os.ReadFile("testdata/parity.bin")
	if err != nil {
		t.Fatal(err)
	}
	c := int(binary.LittleEndian.Uint32(data))
	h := int(binary.LittleEndian.Uint32(data[4:]))
	w := int(binary.LittleEndian.Uint32(data[8:]))
	want := make([]float32, c*h*w)
	for i := range want {
		want[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[12+4*i:]))
	}

	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	x := nn.NewTensor(3, 4*h, 4*w)
	for y := range x.H {
		for xx := range x.W {
			fx, fy := float64(xx), float64(y)
			i := y*x.W + xx
			x.Data[i] = float32(math.Sin(fx*0.37 + fy*0.11))
			x.Data[x.H*x.W+i] = float32(math.Cos(fx*0.05 - fy*0.29))
			x.Data[2*x.H*x.W+i] = float32(math.Sin(fx * fy * 0.013))
		}
	}
	got, err := n.forward(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if got.C != c || got.H != h || got.W != w {
		t.Fatalf("output %dx%dx%d, want %dx%dx%d", got.C, got.H, got.W, c, h, w)
	}
	worst := 0.0
	for i := range want {
		d := math.Abs(float64(got.Data[i] - want[i]))
		worst = max(worst, d/(1+math.Abs(float64(want[i]))))
	}
	if worst > 1e-3 {
		t.Errorf("largest relative difference from torch %.2g, want <= 1e-3", worst)
	}
}

func TestParseNetRejectsDamagedWeights(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":     nil,
		"bad magic": append([]byte("XXXX"), weightsBin[4:]...),
		"truncated": weightsBin[:len(weightsBin)-4],
		"trailing":  append(append([]byte{}, weightsBin...), 0, 0, 0, 0),
	} {
		if _, err := parseNet(data); err == nil {
			t.Errorf("%s: parseNet succeeded, want an error", name)
		}
	}
}
