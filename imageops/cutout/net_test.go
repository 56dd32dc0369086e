package cutout

import (
	"encoding/binary"
	"math"
	"os"
	"slices"
	"testing"

	"carphoto/imageops/internal/imgtest"
)

// syntheticInput mirrors synthetic_input in train/cutout/train.py: a fixed pattern
// the training program ran the exported network on (testdata/golden.bin).
func syntheticInput(h, w int) *plane {
	p := newPlane(3, h, w)
	for c := 0; c < 3; c++ {
		d := p.ch(c)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				fx, fy, fc := float64(x), float64(y), float64(c)
				v := 0.5 + 0.4*math.Sin(fx*(0.07+0.02*fc)+fy*0.05*(fc+1))*math.Cos(fy*0.03-fc)
				dx, dy := fx-float64(w)*0.5, fy-float64(h)*0.55
				if dx*dx/math.Pow(float64(w)*0.3, 2)+dy*dy/math.Pow(float64(h)*0.2, 2) < 1 {
					v = v*0.3 + 0.1*fc
				}
				d[y*w+x] = (float32(v) - inMean) / inStd
			}
		}
	}
	return p
}

// TestForwardMatchesTorch checks the hand-written inference against PyTorch's output
// for the same weights: a wrong layer order or padding would show as large errors.
func TestForwardMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/golden.bin")
	if err != nil {
		t.Fatal(err)
	}
	h, w := int(binary.LittleEndian.Uint32(raw)), int(binary.LittleEndian.Uint32(raw[4:]))
	net, err := model()
	if err != nil {
		t.Fatal(err)
	}
	got := net.forward(syntheticInput(h, w))
	if got.h != h/2 || got.w != w/2 {
		t.Fatalf("output %dx%d, want %dx%d", got.w, got.h, w/2, h/2)
	}
	var worst float64
	for i, v := range got.d {
		want := math.Float32frombits(binary.LittleEndian.Uint32(raw[8+4*i:]))
		worst = max(worst, math.Abs(float64(v-want)))
	}
	if worst > 1e-3 {
		t.Errorf("largest logit difference from torch %.5f, want <= 0.001", worst)
	}
}

// TestForwardConcurrent runs the network side by side, as a worker does: the
// inference kit's storage pools are shared with the plate networks (nn.Free),
// and no run may see another's.
func TestForwardConcurrent(t *testing.T) {
	net, err := model()
	if err != nil {
		t.Fatal(err)
	}
	sizes := [][2]int{{64, 96}, {96, 128}, {128, 128}, {160, 96}}
	inputs := make([]*plane, len(sizes))
	want := make([][]float32, len(sizes))
	for i, s := range sizes {
		inputs[i] = syntheticInput(s[0], s[1])
		want[i] = net.forward(inputs[i]).d
	}
	imgtest.SideBySide(len(inputs), func(i int) {
		if got := net.forward(inputs[i]).d; !slices.Equal(got, want[i]) {
			t.Errorf("%dx%d: side by side the logits differ from alone", sizes[i][1], sizes[i][0])
		}
	})
}

func TestParseNetworkRejectsBadFiles(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("NOPE0000"),
		"truncated": weightsBin[:len(weightsBin)/2],
		"trailing":  append(append([]byte{}, weightsBin...), 0),
	} {
		if _, err := parseNetwork(b); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}
