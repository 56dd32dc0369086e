package bench

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
	"context"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", "grey.jpg"), imgtest.Grey(320, 200), jpeg.DefaultQuality)
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
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", learnt), imgtest.Grey(320, 200), jpeg.DefaultQuality)
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
