package textrec

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/internal/nn"
)

// golden is train/textrec/golden.js's record of onnxruntime's output on a
// crop: each step's five likeliest classes with their probabilities, and
// the greedy reading.
type golden struct {
	Width int
	Steps []struct {
		Classes []int
		P       []float64
	}
	Text string
}

func loadCrop(t *testing.T, path string) (image.Image, golden) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(strings.TrimSuffix(path, ".png") + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return img, g
}

// TestMatchesONNXRuntime runs the Go network on four plate crops (CC0
// photos of plates-web-cc0, cut by train/textrec/ppocr_rec.py --golden)
// and compares every step's five likeliest classes' probabilities with
// onnxruntime's on the original graph (the network in float: its integer
// layers are held to the float network by TestIntReadsMatchFloat; with
// them, crop 0001's largest difference is 0.021), and the readings as
// shipped, integer layers in.
func TestMatchesONNXRuntime(t *testing.T) {
	crops, _ := filepath.Glob("testdata/*.png")
	if len(crops) == 0 {
		t.Fatal("no parity crops in testdata")
	}
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, path := range crops {
		img, g := loadCrop(t, path)
		b := img.Bounds()
		q := Quad{{0, 0}, {float64(b.Dx()), 0}, {float64(b.Dx()), Height}, {0, Height}}
		x := prepare(img, q, b.Dx())
		restore := nn.SetIntegers(false) // the float network is the converted graph
		out, err := n.forward(ctx, x)
		restore()
		nn.Free(x)
		if err != nil {
			t.Fatal(err)
		}
		steps := out.W // each plane's stride: x.W/8 steps, then the padding's
		if b.Dx()/8 != len(g.Steps) || out.C != classes || steps < len(g.Steps) {
			t.Fatalf("%s: %d×%d output (%d steps), want %d×%d", path, out.C, steps, b.Dx()/8, classes, len(g.Steps))
		}
		worst := 0.0
		for i, s := range g.Steps {
			top := float64(out.Data[i])
			for c := range classes {
				top = max(top, float64(out.Data[c*steps+i]))
			}
			sum := 0.0
			for c := range classes {
				sum += math.Exp(float64(out.Data[c*steps+i]) - top)
			}
			for k, c := range s.Classes {
				p := math.Exp(float64(out.Data[c*steps+i])-top) / sum
				worst = max(worst, math.Abs(p-s.P[k]))
			}
		}
		nn.Free(out)
		t.Logf("%s: %d steps, largest probability difference %.4f", filepath.Base(path), len(g.Steps), worst)
		if worst > 0.02 {
			t.Errorf("%s: probabilities differ from onnxruntime's by up to %.4f, want ≤ 0.02", path, worst)
		}
		r, err := ReadPrepared(ctx, img) // as shipped: with the integer layers
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != g.Text {
			t.Errorf("%s: read %q, onnxruntime %q", path, r.Text, g.Text)
		}
	}
}

// TestReadingHidesText: a reading printed by mistake shows no text.
func TestReadingHidesText(t *testing.T) {
	r := Reading{Text: "AB123CD", Conf: []float64{1, 1, 1, 1, 1, 1, 0.5}}
	for _, s := range []string{r.String(), sprint(r), sprint(&r)} {
		if strings.Contains(s, "AB123CD") {
			t.Errorf("printed %q", s)
		}
	}
}

func sprint(v any) string { return fmt.Sprintf("%v %+v %s", v, v, v) }
