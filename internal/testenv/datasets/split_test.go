package datasets

import (
	"fmt"
	"image"
	"image/color"
	"testing"
)

// ramp is a 300×200 picture darker on the left and top, brightened by
// lift; mirrored, it runs the other way.
func ramp(lift int, mirrored bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for y := range 200 {
		for x := range 300 {
			sx := x
			if mirrored {
				sx = 299 - x
			}
			v := uint8(min(255, sx/2+y/3+lift))
			img.Set(x, y, color.RGBA{v, v / 2, 255 - v, 255})
		}
	}
	return img
}

func TestFingerprintFindsCopies(t *testing.T) {
	a := FingerprintOf(ramp(0, false))
	if !a.Copies(FingerprintOf(ramp(30, false))) {
		t.Error("a brightened copy is not taken for a copy")
	}
	other := FingerprintOf(ramp(0, true))
	if a.Copies(other) || a.CopiedIn([]*Fingerprint{other}) {
		t.Error("the mirrored picture is taken for a copy")
	}
	if !a.CopiedIn([]*Fingerprint{other, a}) {
		t.Error("CopiedIn misses the copy among others")
	}
}

func TestSplitsShareOutEveryPhoto(t *testing.T) {
	counts := map[string]int{}
	for i := range 1000 {
		name := fmt.Sprintf("plates-web-cc0-%04d.jpg", i)
		in := 0
		for split, f := range map[string]func(string) bool{"heldout": HeldOut, "val": Validation, "train": Training} {
			if f(name) {
				counts[split]++
				in++
			}
		}
		if in != 1 {
			t.Fatalf("%s is in %d splits, want 1", name, in)
		}
	}
	// A fifth held out, a fifth for tuning, the rest to learn from.
	if counts["heldout"] < 150 || counts["heldout"] > 250 || counts["val"] < 150 || counts["val"] > 250 {
		t.Errorf("splits of 1000 names: %v, want about 200 / 200 / 600", counts)
	}
}
