package datasets

import (
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
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

// The samples that ship in docs/samples are in no held-out or validation
// split of their set, whatever their names' hash says; a set built so that
// a sample has another file name fails where it is read.
func TestShippedSamplesInNoEvaluationSplit(t *testing.T) {
	if len(Shipped) < 2 {
		t.Fatalf("Shipped lists %d samples, want car.jpg and listing.jpg", len(Shipped))
	}
	for _, s := range Shipped {
		if _, err := os.Stat(filepath.Join(repoRoot(), s.Sample)); err != nil {
			t.Errorf("%s: %v", s.Sample, err)
		}
		if HeldOut(s.File) || Validation(s.File) {
			t.Errorf("%s (%s %s) is in the held-out or validation split", s.Sample, s.Set, s.File)
		}
		if !Training(s.File) {
			t.Errorf("%s (%s %s) left the training split: its name's hash put it there", s.Sample, s.Set, s.File)
		}
	}
	// Both samples' names hash to the training split, so the lines above
	// hold without the exclusion: it is tested on names that hash to the
	// held-out and the validation split, shipped for the test's length.
	saved := Shipped
	defer func() { Shipped = saved }()
	for class := range uint32(2) {
		name := ""
		for i := 0; name == ""; i++ {
			if n := fmt.Sprintf("plates-openimages-%04d.jpg", i); splitHash(n)%5 == class {
				name = n
			}
		}
		if !HeldOut(name) && !Validation(name) {
			t.Fatalf("%s: hash class %d but in neither split", name, class)
		}
		Shipped = append(saved, Sample{"docs/samples/listing.jpg", "plates-openimages", "images/" + name, "x"})
		if HeldOut(name) || Validation(name) || HeldOut("images/"+name) {
			t.Errorf("%s, shipped, is still in the held-out or validation split", name)
		}
		Shipped = saved
	}

	// The sets on this machine, where they are: the samples under the
	// names Shipped gives.
	for _, dir := range []string{filepath.Join(Dir(), "plates-web-cc0"), filepath.Join(ExtraDir(), "plates-openimages")} {
		if _, err := os.Stat(filepath.Join(dir, "labels.json")); err != nil {
			t.Logf("%s not on this machine: its names are checked where a test reads it", dir)
			continue
		}
		CheckShipped(t, filepath.Base(dir), dir)
	}

	// A set built otherwise: the listing photo under another name.
	dir := t.TempDir()
	labels := `[{"file": "images/plates-openimages-1499.jpg", "source_file": "` + Shipped[1].Source + `"}]`
	if err := os.WriteFile(filepath.Join(dir, "labels.json"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	ft := &fatalRecorder{T: t}
	func() {
		defer func() { recover() }()
		CheckShipped(ft, "plates-openimages", dir)
	}()
	if !ft.failed {
		t.Error("CheckShipped passed a set whose shipped photo has another name")
	}
	// Another photo under the sample's name.
	labels = `[{"file": "` + Shipped[1].File + `", "source_file": "LP_Detection/train/another.jpg"}]`
	if err := os.WriteFile(filepath.Join(dir, "labels.json"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	ft = &fatalRecorder{T: t}
	func() {
		defer func() { recover() }()
		CheckShipped(ft, "plates-openimages", dir)
	}()
	if !ft.failed {
		t.Error("CheckShipped passed a set with another photo under the shipped photo's name")
	}
	// As built: passes.
	labels = `[{"file": "` + Shipped[1].File + `", "source_file": "` + Shipped[1].Source + `"}]`
	if err := os.WriteFile(filepath.Join(dir, "labels.json"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	CheckShipped(t, "plates-openimages", dir)
}

// fatalRecorder records a Fatalf instead of ending the test.
type fatalRecorder struct {
	*testing.T
	failed bool
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.failed = true
	panic("fatal")
}
