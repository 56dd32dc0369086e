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
	defer nn.SetIntegers(false)() // torch's figures are float's
	got, err := n.forward(context.Background(), parityInput(4*h, 4*w))
	if err != nil {
		t.Fatal(err)
	}
	if got.C != c || got.H != h || got.W != w {
		t.Fatalf("output %dx%dx%d, want %dx%dx%d", got.C, got.H, got.W, c, h, w)
	}
	checkParity(t, got.Data, want)
}

// TestVerifierMatchesTorch does the same for the second stage's verifiers
// (testdata/verifier-parity.bin, written by train/plates/verifier.py).
func TestVerifierMatchesTorch(t *testing.T) {
	j, err := embeddedJury()
	if err != nil {
		t.Fatal(err)
	}
	defer nn.SetIntegers(false)()
	for i, file := range []string{"testdata/verifier-parity.bin"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, binary.LittleEndian.Uint32(data))
		for k := range want {
			want[k] = math.Float32frombits(binary.LittleEndian.Uint32(data[4+4*k:]))
		}
		got := j[i].forward(parityInput(inH, inW))
		checkParity(t, got[:], want)
	}
}

// parityInput is the training programs' fixed test input (parity_input in
// train/plates/train.py).
func parityInput(h, w int) *nn.Tensor {
	x := nn.NewTensor(3, h, w)
	for y := range x.H {
		for xx := range x.W {
			fx, fy := float64(xx), float64(y)
			i := y*x.W + xx
			x.Data[i] = float32(math.Sin(fx*0.37 + fy*0.11))
			x.Data[x.H*x.W+i] = float32(math.Cos(fx*0.05 - fy*0.29))
			x.Data[2*x.H*x.W+i] = float32(math.Sin(fx * fy * 0.013))
		}
	}
	return x
}

func checkParity(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		d := math.Abs(float64(got[i] - want[i]))
		worst = max(worst, d/(1+math.Abs(float64(want[i]))))
	}
	if worst > 1e-3 {
		t.Errorf("largest relative difference from torch %.2g, want <= 1e-3", worst)
	}
}

func TestParseRejectsDamagedWeights(t *testing.T) {
	for _, f := range []struct {
		name  string
		data  []byte
		parse func([]byte) error
	}{
		{"detector", weightsBin, func(b []byte) error { _, err := parseNet(b); return err }},
		{"verifier", verifierBin, func(b []byte) error { _, err := parseVerifier(b); return err }},
	} {
		for name, data := range map[string][]byte{
			"empty":     nil,
			"bad magic": append([]byte("XXXX"), f.data[4:]...),
			"truncated": f.data[:len(f.data)-4],
			"trailing":  append(append([]byte{}, f.data...), 0, 0, 0, 0),
		} {
			if err := f.parse(data); err == nil {
				t.Errorf("%s, %s: parse succeeded, want an error", f.name, name)
			}
		}
	}
}

// fakeWeights writes a weights file for layers under magic, every value
// small and none zero, as train/plates/write_tensors lays it out.
func fakeWeights(magic string, layers []*nn.Conv) []byte {
	var tensors [][]int
	for _, c := range layers {
		tensors = append(tensors, c.WeightShape(), []int{c.Cout})
	}
	data := []byte(magic)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(tensors)))
	for i, shape := range tensors {
		data = binary.LittleEndian.AppendUint32(data, uint32(len(shape)))
		n := 1
		for _, d := range shape {
			data = binary.LittleEndian.AppendUint32(data, uint32(d))
			n *= d
		}
		for k := range n {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32((i+k)%7-3)/50))
		}
	}
	return data
}

// finite reports whether no value of xs is NaN or infinite.
func finite(xs []float32) bool {
	for _, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// TestNetWidths writes a weights file for each of the first stage's widths
// (train.py's LAYOUTS) and reads it back: the magic picks the widths, a file
// of one under another's magic is refused, and the network read runs on an
// image.
func TestNetWidths(t *testing.T) {
	for _, w := range netWidths {
		data := fakeWeights(w.magic, newNet(w).layers())
		n, err := parseNet(data)
		if err != nil {
			t.Fatalf("%s: %v", w.magic, err)
		}
		if n.b32b.pw.Cout != w.c32 || n.head.Cin != w.f4 {
			t.Errorf("%s: read %d and %d channels, want %d and %d", w.magic, n.b32b.pw.Cout, n.head.Cin, w.c32, w.f4)
		}
		out, err := n.forward(context.Background(), parityInput(64, 96))
		if err != nil {
			t.Fatalf("%s: %v", w.magic, err)
		}
		if out.C != 5 || out.H != 16 || out.W != 24 || !finite(out.Data) {
			t.Errorf("%s: forward gave %d×%d×%d, finite %v; want 5×16×24 of finite values", w.magic, out.C, out.H, out.W, finite(out.Data))
		}
		for _, other := range netWidths {
			if other.magic != w.magic {
				if _, err := parseNet(append([]byte(other.magic), data[4:]...)); err == nil {
					t.Errorf("a %s file read as %s", w.magic, other.magic)
				}
			}
		}
	}
}

// TestVerifierLayouts writes a weights file for each verifier layout
// (verifier.py's LAYOUTS) and reads it back: the magic picks the layout, a
// file of one layout under another's magic is refused, and the network
// read runs on a window.
func TestVerifierLayouts(t *testing.T) {
	for _, l := range layouts {
		data := fakeWeights(l.magic, newVerifier(l).layers())
		v, err := parseVerifier(data)
		if err != nil {
			t.Fatalf("%s: %v", l.magic, err)
		}
		if len(v.blocks) != len(l.blocks) {
			t.Errorf("%s: %d blocks read, want %d", l.magic, len(v.blocks), len(l.blocks))
		}
		if out := v.forward(parityInput(inH, inW)); !finite(out[:]) {
			t.Errorf("%s: forward gave %v", l.magic, out)
		}
		for _, other := range layouts {
			if other.magic != l.magic {
				if _, err := parseVerifier(append([]byte(other.magic), data[4:]...)); err == nil {
					t.Errorf("a %s file read as %s", l.magic, other.magic)
				}
			}
		}
	}
}
