package bench

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTestPhoto writes a w×h JPEG of a dark box on a light floor and wall, and
// returns its path.
func writeTestPhoto(t *testing.T, dir, name string, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{220, 220, 225, 255}
			if y > h*2/3 {
				c = color.RGBA{180, 180, 180, 255}
			}
			if x > w/5 && x < w*4/5 && y > h/3 && y < h*3/4 {
				c = color.RGBA{30, 40, 90, 255}
			}
			img.Set(x, y, c)
		}
	}
	path := filepath.Join(dir, name)
	writeJPEG(t, path, img, jpeg.DefaultQuality)
	return path
}

func TestRunCutoutWritesSameSizePNG(t *testing.T) {
	dir := t.TempDir()
	in := writeTestPhoto(t, dir, "car.jpg", 300, 200)
	outDir := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	if err := CutCars(context.Background(), []string{"-o", outDir, in}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(outDir, "car.png"))
	if err != nil {
		t.Fatalf("no car.png written: %v (stdout %q)", err, stdout.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, 300, 200) {
		t.Errorf("cut-out is %v, want the input's 300x200", got)
	}
	// The corners are wall and floor, far from anything car-like: transparent.
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Errorf("top-left corner alpha %d, want 0 (transparent)", a>>8)
	}
}

func TestRunCutoutUsage(t *testing.T) {
	for name, args := range map[string][]string{
		"no output dir": {"x.jpg"},
		"no files":      {"-o", t.TempDir()},
		"missing file":  {"-o", t.TempDir(), filepath.Join(t.TempDir(), "absent.jpg")},
	} {
		if err := CutCars(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A file that cannot be read is reported and skipped: the photos after it
// are still cut out, and the command fails at the end.
func TestRunCutoutSkipsBadFiles(t *testing.T) {
	dir := t.TempDir()
	absent := filepath.Join(dir, "absent.jpg")
	junk := writeText(t, "junk.jpg", "not a photo")
	in := writeTestPhoto(t, dir, "car.jpg", 120, 80)
	outDir := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	err := CutCars(context.Background(), []string{"-o", outDir, absent, junk, in}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 3 files") {
		t.Errorf("error %v, want one naming 2 of 3 files", err)
	}
	if _, err := os.Stat(filepath.Join(outDir, "car.png")); err != nil {
		t.Errorf("the good photo after two bad ones was not cut out: %v (stdout %q)", err, stdout.String())
	}
	for _, f := range []string{absent, junk} {
		if !strings.Contains(stderr.String(), f+": ") {
			t.Errorf("stderr does not name %s:\n%s", f, stderr.String())
		}
	}
}

func TestRunBenchCutoutReportsScores(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "images"), 0o755)
	os.MkdirAll(filepath.Join(dir, "masks"), 0o755)
	// cars-seg-0001.jpg is in the held-out split (fnv32a % 5 == 0).
	writeTestPhoto(t, filepath.Join(dir, "images"), "cars-seg-0001.jpg", 96, 64)
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
