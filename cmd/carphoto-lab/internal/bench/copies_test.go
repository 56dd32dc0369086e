package bench

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scene is a smooth 320×200 grey picture, one of a few kinds, brightened
// by lift.
func scene(kind int, lift float64) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, 320, 200))
	for y := range 200 {
		for x := range 320 {
			fx, fy := float64(x), float64(y)
			v := 100 * math.Sin(fx/40) * math.Cos(fy/30)
			if kind == 1 {
				v = 100 * math.Cos(fx/25+fy/60)
			}
			img.SetGray(x, y, color.Gray{uint8(max(0, min(255, 120+v+lift)))})
		}
	}
	return img
}

// heldOutName returns the first of prefix0.jpg, prefix1.jpg, … that is (or is not)
// in the held-out split.
func heldOutName(t *testing.T, prefix string, heldOut bool) string {
	t.Helper()
	for i := range 1000 {
		if n := fmt.Sprintf("%s%d.jpg", prefix, i); datasets.HeldOut(n) == heldOut {
			return n
		}
	}
	t.Fatal("no such name")
	return ""
}

// A held-out photo whose copy is among the training photos is scored
// apart from the held-out photos with none.
func TestRunBenchPlatesCopies(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	copied, unique, train := heldOutName(t, "c", true), heldOutName(t, "u", true), heldOutName(t, "t", false)
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", copied), scene(0, 0), 90)
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", train), scene(0, 20), 60) // the same scene, re-encoded brighter
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", unique), scene(1, 0), 90)
	var labels string
	for i, n := range []string{copied, train, unique} {
		if i > 0 {
			labels += ","
		}
		labels += fmt.Sprintf(`{"file":"images/%s","width":320,"height":200,"plates":[{"x":10,"y":10,"w":40,"h":12}]}`, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "labels.json"), []byte("["+labels+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Plates(context.Background(), []string{"-n", "0", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 photos, 2 plates", "photos with no copy in the other splits (1 of 2;", "): 1 plates, recall 0.000 (0)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// On the held-out split the benchmark counts the plates whose characters
// (from --chars) are hidden and names those left readable; a plate the
// file lacks is an error, not a plate silently skipped.
func TestRunBenchPlatesChars(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "someset")
	if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := heldOutName(t, "g", true)
	imgtest.WriteJPEG(t, filepath.Join(dir, "images", name), scene(0, 0), 90)
	labels := fmt.Sprintf(`[{"file":"images/%s","width":320,"height":200,"plates":[{"x":10,"y":10,"w":40,"h":12},{"x":100,"y":10,"w":12,"h":4}]}]`, name)
	if err := os.WriteFile(filepath.Join(dir, "labels.json"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	chars := writeText(t, "chars.json", fmt.Sprintf(`[{"set":"someset","file":"images/%s","plates":[{"box":[10,10,40,12],"chars":[[[12,12],[48,12],[48,20],[12,20]]],"stand_in":false}]}]`, name))
	var out bytes.Buffer
	if err := Plates(context.Background(), []string{"-n", "0", "--chars", chars, dir}, &out); err != nil {
		t.Fatal(err)
	}
	// A smooth grey scene has no plate to find: the one plate >= 20 px
	// stays readable.
	for _, want := range []string{"characters hidden 0.000 (0 of 1 plates >= 20 px", "text not found on 0", "left readable (1; % of the characters hidden): " + name + " (40x12 at 10,10: 0%)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Plates(context.Background(), []string{"-n", "0", "--split", "all", "--chars", chars, dir}, &out); err != nil {
		t.Fatal(err)
	}
	if want := "characters hidden: not measured (held-out split only)"; !strings.Contains(out.String(), want) {
		t.Errorf("--split all: output lacks %q:\n%s", want, out.String())
	}
	other := writeText(t, "other.json", `[{"set":"someset","file":"images/other.jpg","plates":[]}]`)
	if err := Plates(context.Background(), []string{"-n", "0", "--chars", other, dir}, &out); err == nil || !strings.Contains(err.Error(), "no characters for the plate 40x12") {
		t.Errorf("a plate the characters file lacks: got error %v", err)
	}
}
