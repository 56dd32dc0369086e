package bench

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/plates"
)

// writeGreyJPEG writes a plate-less photo and returns its path.
func writeGreyJPEG(tb testing.TB, dir, name string, w, h int) string {
	tb.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(100 + i%7)
	}
	path := filepath.Join(dir, name)
	writeJPEG(tb, path, img, jpeg.DefaultQuality)
	return path
}

func TestRunPlatesJSON(t *testing.T) {
	dir := t.TempDir()
	files := []string{writeGreyJPEG(t, dir, "a.jpg", 320, 200), writeGreyJPEG(t, dir, "b.jpg", 64, 48)}
	var out bytes.Buffer
	if err := FindPlates(context.Background(), append([]string{"--json"}, files...), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(files) {
		t.Fatalf("got %d lines, want one per file (%d):\n%s", len(lines), len(files), out.String())
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, l)
		}
		for _, key := range []string{"file", "width", "height", "plates", "ms"} {
			if _, ok := got[key]; !ok {
				t.Errorf("line %d lacks %q: %s", i, key, l)
			}
		}
		if got["file"] != files[i] {
			t.Errorf("line %d: file %v, want %q as given", i, got["file"], files[i])
		}
		if p, ok := got["plates"].([]any); !ok || len(p) != 0 {
			t.Errorf("line %d: plates %v, want [] for a plate-less photo", i, got["plates"])
		}
	}
	if !strings.Contains(lines[0], `"width":320,"height":200`) {
		t.Errorf("first line %s, want width 320 and height 200", lines[0])
	}
}

func TestRunPlatesOnRealPhoto(t *testing.T) {
	photo := imgtest.SamplePath("car.jpg")
	var out bytes.Buffer
	if err := FindPlates(context.Background(), []string{"--json", photo}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Plates []struct {
			Quad, Hide [4][2]float64
			Score      float64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// The sample's one plate is labelled at x 293..373, y 205..226: the
	// hidden region covers it, and the quad is the plate, not a region
	// around it.
	l := imgtest.SamplePlate
	label := plates.Box{X: float64(l.Min.X), Y: float64(l.Min.Y), W: float64(l.Dx()), H: float64(l.Dy())}
	for _, p := range got.Plates {
		var quad, hide plates.Quad
		for i := range 4 {
			quad[i] = plates.Point{X: p.Quad[i][0], Y: p.Quad[i][1]}
			hide[i] = plates.Point{X: p.Hide[i][0], Y: p.Hide[i][1]}
		}
		if label.CoveredBy([]plates.Plate{{Hide: hide}}) >= 0.95 && label.IoU(quad) >= 0.6 {
			return
		}
	}
	t.Errorf("no plate has a quad on the labelled plate and a hidden region covering it: %s", out.String())
}

func TestRunPlatesErrors(t *testing.T) {
	if err := FindPlates(context.Background(), []string{"--json"}, io.Discard, io.Discard); err == nil {
		t.Error("no files: got no error")
	}
	dir := t.TempDir()
	good := writeGreyJPEG(t, dir, "good.jpg", 320, 200)
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.jpg")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		filepath.Join(dir, "nope.jpg"): "no such file",
		writeText(t, "x.jpg", "hello"): "not a JPEG, PNG or WebP",
		truncated:                      "truncated",
	}
	files := []string{good}
	for f := range bad {
		files = append(files, f)
	}
	files = append(files, good)

	// --json: one line per file, in order; a bad file's line says what is wrong.
	var out bytes.Buffer
	err = FindPlates(context.Background(), append([]string{"--json"}, files...), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "3 of 5 files") {
		t.Errorf("error %v, want one naming 3 of 5 files", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(files) {
		t.Fatalf("got %d lines, want one per file (%d):\n%s", len(lines), len(files), out.String())
	}
	for i, l := range lines {
		var got struct {
			File   string
			Width  int
			Plates []any
			Error  string
		}
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, l)
		}
		if got.File != files[i] {
			t.Errorf("line %d is for %q, want %q", i, got.File, files[i])
		}
		if want, isBad := bad[files[i]]; isBad {
			if !strings.Contains(got.Error, want) {
				t.Errorf("line %d: error %q, want one saying %q", i, got.Error, want)
			}
		} else if got.Error != "" || got.Width != 320 || got.Plates == nil {
			t.Errorf("line %d: %s, want the good photo's plates", i, l)
		}
	}

	// Readable summary: the good photos on stdout, each bad one on stderr.
	var stdout, stderr bytes.Buffer
	if err := FindPlates(context.Background(), files, &stdout, &stderr); err == nil {
		t.Error("summary with bad files: got no error")
	}
	if n := strings.Count(stdout.String(), "good.jpg: 320x200"); n != 2 {
		t.Errorf("stdout names the good photo %d times, want 2:\n%s", n, stdout.String())
	}
	for f, want := range bad {
		if !strings.Contains(stderr.String(), f+": ") || !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %s: %s:\n%s", f, want, stderr.String())
		}
	}
}

func writeText(tb testing.TB, name, text string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestRunBenchPlates(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeGreyJPEG(t, filepath.Join(dir, "images"), "grey.jpg", 320, 200)
	labels := `[{"file":"images/grey.jpg","width":320,"height":200,"plates":[{"x":10,"y":10,"w":40,"h":12}]}]`
	if err := os.WriteFile(filepath.Join(dir, "labels.json"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Plates(context.Background(), []string{"--split", "all", "-n", "0", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 photos, 1 plates", "recall 0.000 (0 of 1 found", "<20 px 0/0, 20-40 px 0/0, 40-80 px 0/1, >=80 px 0/0",
		"recall of plates >= 20 px wide 0.000 (0 of 1); narrower 0 of 0", "hidden area / plate box area", "margin curve",
		"false detections 0.000 per photo", "detection p50"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Shrunk to half, the 40-pixel plate is 20 pixels wide.
	out.Reset()
	if err := Plates(context.Background(), []string{"--split", "all", "-n", "0", "--scale", "0.5", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shrunk to 0.5: 1 photos, 1 plates", "<20 px 0/0, 20-40 px 0/1, 40-80 px 0/0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--scale 0.5: output lacks %q:\n%s", want, out.String())
		}
	}
	// Laid out 2×2, four copies of the photo are one photo twice as wide
	// and high, each plate moved with its copy; three are too few.
	four := writeText(t, "four.json", `[`+strings.Repeat(`{"file":"images/grey.jpg","width":320,"height":200,"plates":[{"x":10,"y":10,"w":40,"h":12}]},`, 3)+
		`{"file":"images/grey.jpg","width":320,"height":200,"plates":[{"x":10,"y":10,"w":40,"h":12}]}]`)
	out.Reset()
	if err := Plates(context.Background(), []string{"--split", "all", "-n", "0", "--mosaic", "2", "-v", "--labels", four, dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"laid out 2×2: 1 photos, 4 plates", "40-80 px 0/4", "plate 40x12 at (10,10)", "plate 40x12 at (330,210)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--mosaic 2: output lacks %q:\n%s", want, out.String())
		}
	}
	if err := Plates(context.Background(), []string{"--split", "all", "-n", "0", "--mosaic", "3", "--labels", four, dir}, &out); err == nil {
		t.Error("--mosaic 3 of 4 photos: got no error")
	}
	// Labels from another file score the same photos against its plates:
	// here none, so the photos are counted and no plate is.
	other := writeText(t, "other.json", `[{"file":"images/grey.jpg","width":320,"height":200,"plates":[]}]`)
	out.Reset()
	if err := Plates(context.Background(), []string{"--split", "all", "-n", "0", "--labels", other, dir}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 photos, 0 plates") {
		t.Errorf("--labels: output lacks %q:\n%s", "1 photos, 0 plates", out.String())
	}
	// --split train scores only the photos whose names fall in the split the
	// networks learn from: here one of the two.
	if datasets.Training("grey.jpg") {
		t.Fatal("grey.jpg is a training photo: pick another name for the photo outside the split")
	}
	learnt := "grey-0.jpg"
	for i := 1; !datasets.Training(learnt); i++ {
		learnt = fmt.Sprintf("grey-%d.jpg", i)
	}
	writeGreyJPEG(t, filepath.Join(dir, "images"), learnt, 320, 200)
	two := writeText(t, "two.json", `[{"file":"images/grey.jpg","width":320,"height":200,"plates":[]},
		{"file":"images/`+learnt+`","width":320,"height":200,"plates":[{"x":10,"y":10,"w":40,"h":12}]}]`)
	out.Reset()
	if err := Plates(context.Background(), []string{"--split", "train", "-n", "0", "--labels", two, dir}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 photos, 1 plates") {
		t.Errorf("--split train: output lacks %q:\n%s", "1 photos, 1 plates", out.String())
	}
	for _, args := range [][]string{{"--split", "sideways", dir}, {"--scale", "0", dir}, {"--scale", "2", dir}, {"--mosaic", "0", dir}, {"--mosaic", "9", dir},
		{"--labels", filepath.Join(dir, "missing.json"), dir}, {"--labels", writeText(t, "bad.json", "{"), dir}} {
		if err := Plates(context.Background(), args, &out); err == nil {
			t.Errorf("%q: got no error", args)
		}
	}
}
