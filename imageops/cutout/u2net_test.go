package cutout

import (
	"carphoto/imageops/internal/nn"
	"encoding/binary"
	"math"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"carphoto/internal/testenv/imgtest"
)

// syntheticU2 mirrors synthetic in train/cutout/u2netp.py: a car-like shape on a
// graded backdrop, normalised as the network's input.
func syntheticU2(h, w int) *plane {
	v := make([]float64, 3*h*w)
	colours := [3][3]float64{{0.8, 0.1, 0.12}, {0.15, 0.18, 0.22}, {0.05, 0.05, 0.05}}
	sq := func(a float64) float64 { return a * a }
	top := 0.0
	for c := range 3 {
		for y := range h {
			for x := range w {
				fx, fy := float64(x)/float64(w), float64(y)/float64(h)
				val := 0.85 - 0.25*fy + 0.03*math.Sin(float64(x)*(0.3+0.1*float64(c)))*math.Cos(float64(y)*0.2)
				if sq((fx-0.48)/0.2)+sq((fy-0.45)/0.14) < 1 {
					val = colours[1][c]
				}
				if sq((fx-0.5)/0.36)+sq((fy-0.6)/0.16) < 1 {
					val = colours[0][c]
				}
				if sq((fx-0.3)/0.07)+sq((fy-0.74)/0.09) < 1 || sq((fx-0.7)/0.07)+sq((fy-0.74)/0.09) < 1 {
					val = colours[2][c]
				}
				v[(c*h+y)*w+x] = val
				top = max(top, val)
			}
		}
	}
	p := newPlane(3, h, w)
	for i, val := range v {
		c := i / (h * w)
		p.d[i] = float32((val/top - u2Mean[c]) / u2Std[c])
	}
	return p
}

// TestU2MatchesReference checks the Go U²-Net-p against the ONNX graph run by
// PyTorch (train/cutout/u2netp.py, itself checked against OpenCV's ONNX importer)
// with the same float16-rounded weights, on three input sizes (two odd ones, which
// exercise ceil-mode pooling and resizing to odd sizes). All in float: the
// integer layers are held to the float network by TestIntMatteMatchesFloat.
func TestU2MatchesReference(t *testing.T) {
	defer nn.SetIntegers(false)()
	raw, err := os.ReadFile("testdata/u2netp-golden.bin")
	if err != nil {
		t.Fatal(err)
	}
	net, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(raw))
	off := 4
	for range n {
		h, w := int(binary.LittleEndian.Uint32(raw[off:])), int(binary.LittleEndian.Uint32(raw[off+4:]))
		off += 8
		got := net.forward(syntheticU2(h, w))
		if got.h != h || got.w != w {
			t.Fatalf("output %dx%d, want %dx%d", got.w, got.h, w, h)
		}
		var worst float64
		for i, v := range got.d {
			want := math.Float32frombits(binary.LittleEndian.Uint32(raw[off+4*i:]))
			worst = max(worst, math.Abs(float64(v-want)))
		}
		off += 4 * h * w
		t.Logf("%dx%d: largest difference %.2g", w, h, worst)
		if worst > 1e-4 {
			t.Errorf("%dx%d: largest probability difference from the reference %.2g, want <= 1e-4", w, h, worst)
		}
	}
}

// TestU2Concurrent runs the network side by side, as a worker does.
func TestU2Concurrent(t *testing.T) {
	net, err := u2model()
	if err != nil {
		t.Fatal(err)
	}
	sizes := [][2]int{{48, 64}, {37, 53}, {60, 80}, {33, 33}}
	inputs := make([]*plane, len(sizes))
	want := make([][]float32, len(sizes))
	for i, s := range sizes {
		inputs[i] = syntheticU2(s[0], s[1])
		want[i] = net.forward(inputs[i]).d
	}
	imgtest.SideBySide(len(inputs), 3, func(i int) {
		if got := net.forward(inputs[i]).d; !slices.Equal(got, want[i]) {
			t.Errorf("%dx%d: side by side the output differs from alone", sizes[i][1], sizes[i][0])
		}
	})
}

func TestParseU2RejectsBadFiles(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("NOPE0000"),
		"truncated": u2netBin[:len(u2netBin)/2],
		"trailing":  append(append([]byte{}, u2netBin...), 0),
	} {
		if _, err := parseU2(b); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

// BenchmarkU2 times one forward pass at the cut-out's input size, with
// the integer layers (int) and all in float (float), one after the other;
// cpu-ms/op is the process's CPU time an operation (run with -cpu 1).
func BenchmarkU2(b *testing.B) {
	net, err := u2model()
	if err != nil {
		b.Fatal(err)
	}
	x := syntheticU2(DefaultSettings().NetH, DefaultSettings().NetW)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "float", true: "int"}[on], func(b *testing.B) {
			defer nn.SetIntegers(on)()
			start := cpuTime()
			for b.Loop() {
				net.forward(x)
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
