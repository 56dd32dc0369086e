package bench

import (
	"bytes"
	"carphoto/internal/testenv/imgtest"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunBenchCutoutReportsScores(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "images"), 0o755)
	os.MkdirAll(filepath.Join(dir, "masks"), 0o755)
	// cars-seg-0001.jpg is in the held-out split (fnv32a % 5 == 0).
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", "cars-seg-0001.jpg"), imgtest.BoxScene(96, 64), jpeg.DefaultQuality)
	mask := image.NewGray(image.Rect(0, 0, 96, 64))
	for y := 22; y < 48; y++ {
		for x := 20; x < 76; x++ {
			mask.SetGray(x, y, color.Gray{255})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, mask)
	os.WriteFile(filepath.Join(dir, "masks", "cars-seg-0001.png"), buf.Bytes(), 0o644)
	labels := `[{"file": "images/cars-seg-0001.jpg", "mask": "masks/cars-seg-0001.png", "split": "train", "width": 96, "height": 64}]`
	os.WriteFile(filepath.Join(dir, "labels.json"), []byte(labels), 0o644)

	var stdout bytes.Buffer
	if err := Cutout(context.Background(), []string{dir, "-n", "0"}, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"split heldout: 1 images", "mean IoU", "boundary F-score"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if err := Cutout(context.Background(), []string{"-split", "val", dir}, &bytes.Buffer{}); err == nil {
		t.Error("a split with no images: no error")
	}
}
