package service

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/internal/testenv/imgtest"
)

// jpegFile writes img to dir/name as a JPEG and returns its path.
func jpegFile(t *testing.T, dir, name string, img image.Image) string {
	t.Helper()
	path := filepath.Join(dir, name)
	imgtest.WriteJPEG(t, path, img, jpeg.DefaultQuality)
	return path
}

// textFile writes text to dir/name and returns its path.
func textFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunPlatesJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := []string{jpegFile(t, dir, "a.jpg", imgtest.Grey(320, 200)), jpegFile(t, dir, "b.jpg", imgtest.Grey(64, 48))}
	var out bytes.Buffer
	if err := runPlates(context.Background(), append([]string{"--json"}, files...), &out, io.Discard); err != nil {
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
	t.Parallel()
	photo := imgtest.SamplePath("car.jpg")
	var out bytes.Buffer
	if err := runPlates(context.Background(), []string{"--json", photo}, &out, io.Discard); err != nil {
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
	t.Parallel()
	if err := runPlates(context.Background(), []string{"--json"}, io.Discard, io.Discard); err == nil {
		t.Error("no files: got no error")
	}
	dir := t.TempDir()
	good := jpegFile(t, dir, "good.jpg", imgtest.Grey(320, 200))
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.jpg")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		filepath.Join(dir, "nope.jpg"):     "no such file",
		textFile(t, dir, "x.jpg", "hello"): "not a JPEG, PNG or WebP",
		truncated:                          "truncated",
	}
	files := []string{good}
	for f := range bad {
		files = append(files, f)
	}
	files = append(files, good)

	// --json: one line per file, in order; a bad file's line says what is wrong.
	var out bytes.Buffer
	err = runPlates(context.Background(), append([]string{"--json"}, files...), &out, io.Discard)
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
	if err := runPlates(context.Background(), files, &stdout, &stderr); err == nil {
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

func TestRunCutoutWritesSameSizePNG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := jpegFile(t, dir, "car.jpg", imgtest.BoxScene(300, 200))
	outDir := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	if err := runCutout(context.Background(), []string{"-o", outDir, in}, &stdout, io.Discard); err != nil {
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
	t.Parallel()
	for name, args := range map[string][]string{
		"no output dir": {"x.jpg"},
		"no files":      {"-o", t.TempDir()},
		"missing file":  {"-o", t.TempDir(), filepath.Join(t.TempDir(), "absent.jpg")},
	} {
		if err := runCutout(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A file that cannot be read is reported and skipped: the photos after it
// are still cut out, and the command fails at the end.
func TestRunCutoutSkipsBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	absent := filepath.Join(dir, "absent.jpg")
	junk := textFile(t, dir, "junk.jpg", "not a photo")
	in := jpegFile(t, dir, "car.jpg", imgtest.BoxScene(120, 80))
	outDir := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	err := runCutout(context.Background(), []string{"-o", outDir, absent, junk, in}, &stdout, &stderr)
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
