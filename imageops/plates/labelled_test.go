//go:build platesmine || platestune || platesaudit

package plates

import (
	"context"
	"encoding/json"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto/internal/imgtest"
)

// labelled is a photo of the shared plate sets with its labelled boxes and
// the plates its labels miss, found by review (train/plates/unlabelled.json;
// training and validation photos only).
type labelled struct {
	set, file string
	img       image.Image
	boxes     []Box
	missed    []Box
}

// labelledPhotos decodes the photos of a plate set whose file names keep
// says to read; the others (the held-out split, for the tools) are not
// opened. The sets are read from ../shared/datasets, or from the folder
// PLATES_DATA names (the validation sets with repainted plates that
// train/plates/othersets.py writes, say). PLATES_SCALE=F shrinks every
// photo and its boxes by F first, as `carphoto bench plates --scale F` does,
// so that the sets' plates stand in for smaller ones. PLATES_COPYFREE=1
// leaves out the photos with a copy in another split
// (train/plates/copies.json).
func labelledPhotos(t *testing.T, set string, keep func(name string) bool) []labelled {
	t.Helper()
	tracked()
	root := "../../../shared/datasets"
	if d := os.Getenv("PLATES_DATA"); d != "" {
		root = d
	}
	scale := 1.0
	if s := os.Getenv("PLATES_SCALE"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0 && f <= 1) {
			t.Fatalf("PLATES_SCALE=%q: want a factor in (0, 1]", s)
		}
		scale = f
	}
	dir := filepath.Join(root, set)
	if extra := os.Getenv("PLATES_EXTRA"); extra != "" && slices.Contains(extraSets, set) {
		dir = filepath.Join(extra, set)
	}
	labels := readLabels(t, dir)
	var audit []struct {
		Set, File string
		Box       [4]float64
	}
	data, err := os.ReadFile("../../train/plates/unlabelled.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &audit); err != nil {
		t.Fatal(err)
	}
	copied := copiedElsewhere(t, set)
	var out []labelled
	for _, e := range labels {
		if !keep(e.File) || copied != nil && copied(e.File) {
			continue
		}
		img := imgtest.DecodeFile(t, filepath.Join(dir, e.File))
		var missed []Box
		for _, a := range audit {
			if a.Set == set && a.File == e.File {
				missed = append(missed, Box{X: a.Box[0], Y: a.Box[1], W: a.Box[2] - a.Box[0], H: a.Box[3] - a.Box[1]})
			}
		}
		boxes := e.Plates
		if scale != 1 {
			b := img.Bounds()
			dst := image.NewRGBA(image.Rect(0, 0, max(1, int(math.Round(float64(b.Dx())*scale))), max(1, int(math.Round(float64(b.Dy())*scale)))))
			xdraw.CatmullRom.Scale(dst, dst.Rect, img, b, xdraw.Src, nil)
			img = dst
			boxes = scaled(boxes, scale)
			missed = scaled(missed, scale)
		}
		out = append(out, labelled{set, e.File, img, boxes, missed})
	}
	return out
}

// listedPhotos decodes the photos a list names (train/plates/plateless.json
// and the like: [{"set": ..., "file": ...}], paths inside the shared sets),
// set by set.
func listedPhotos(t *testing.T, list string) []labelled {
	t.Helper()
	data, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct{ Set, File string }
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	files := map[string]map[string]bool{}
	var sets []string
	for _, e := range entries {
		if files[e.Set] == nil {
			files[e.Set] = map[string]bool{}
			sets = append(sets, e.Set)
		}
		files[e.Set][e.File] = true
	}
	var out []labelled
	for _, set := range sets {
		out = append(out, labelledPhotos(t, set, func(name string) bool { return files[set][name] })...)
	}
	if len(out) != len(entries) {
		t.Fatalf("%s: %d photos listed, %d of them in the sets' labels", list, len(entries), len(out))
	}
	return out
}

// scaled returns the boxes times f.
func scaled(boxes []Box, f float64) []Box {
	out := make([]Box, len(boxes))
	for i, b := range boxes {
		out[i] = Box{X: b.X * f, Y: b.Y * f, W: b.W * f, H: b.H * f}
	}
	return out
}

// tuning are the finder's settings the tuning tools run: shipped(), with
// the PLATES_* variables of jury_tune_test.go applied.
var tuning = shipped()

// proposed runs the first stage on p's photo: its proposals from both
// looks, photo pixels.
func (p labelled) proposed(t *testing.T) []box {
	t.Helper()
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	props, err := n.propose(context.Background(), p.img, tuning)
	if err != nil {
		t.Fatal(err)
	}
	return props
}

// reaches reports whether proposal d reaches the labelled plate b: they
// overlap with IoU ≥ 0.3, or d's centre lies on b.
func reaches(d box, b Box) bool {
	g := box{x0: b.X, y0: b.Y, x1: b.X + b.W, y1: b.Y + b.H}
	cx, cy := (d.x0+d.x1)/2, (d.y0+d.y1)/2
	return d.iou(g) >= 0.3 || (cx >= g.x0 && cx <= g.x1 && cy >= g.y0 && cy <= g.y1)
}

// reachedBy reports whether any of the proposals props reaches b.
func reachedBy(props []box, b Box) bool {
	for _, d := range props {
		if reaches(d, b) {
			return true
		}
	}
	return false
}

// judged runs both stages on p's photo: the jury's judgement of each
// proposal, before any threshold.
func (p labelled) judged(t *testing.T) []verified {
	t.Helper()
	vs, err := embeddedJury()
	if err != nil {
		t.Fatal(err)
	}
	j, err := vs.verify(context.Background(), wholeView(p.img), p.proposed(t), tuning)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// copiedElsewhere returns, for PLATES_COPYFREE=1, a test of whether a
// photo of set has a copy in another split (train/plates/copies.json);
// otherwise nil.
func copiedElsewhere(t *testing.T, set string) func(file string) bool {
	t.Helper()
	if os.Getenv("PLATES_COPYFREE") != "1" {
		return nil
	}
	data, err := os.ReadFile("../../train/plates/copies.json")
	if err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		Set   string
		Files []string
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, g := range groups {
		if g.Set != set {
			continue
		}
		splits := map[string]bool{}
		for _, f := range g.Files {
			splits[splitOf(f)] = true
		}
		if len(splits) > 1 {
			for _, f := range g.Files {
				copied[f] = true
			}
		}
	}
	return func(file string) bool { return copied[file] }
}

func splitOf(file string) string {
	switch {
	case HeldOut(file):
		return "heldout"
	case Validation(file):
		return "val"
	}
	return "train"
}

// extraSets are the sets ../shared/datasets/extra/build.py builds.
var extraSets = []string{"plates-openimages", "plates-openlpr"}

// streamLabelled decodes the photos of the set in dir whose file names
// keep says to read, one at a time, and hands each, with its labels' file
// name and boxes, to f.
func streamLabelled(t *testing.T, dir string, keep func(name string) bool, f func(file string, img image.Image, boxes []Box)) {
	t.Helper()
	labels := readLabels(t, dir)
	for _, e := range labels {
		if !keep(e.File) {
			continue
		}
		img := imgtest.DecodeFile(t, filepath.Join(dir, e.File))
		f(e.File, img, e.Plates)
	}
}

// labelEntry is a photo's entry in a set's labels.json.
type labelEntry struct {
	File   string `json:"file"`
	Plates []Box  `json:"plates"`
}

// readLabels reads dir/labels.json.
func readLabels(t *testing.T, dir string) []labelEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []labelEntry
	if err := json.Unmarshal(data, &labels); err != nil {
		t.Fatal(err)
	}
	return labels
}

// tuneEnv names every variable the tuning tools' init reads (jury_tune_test.go).
var tuneEnv = []string{"PLATES_ACCEPT", "PLATES_PROPOSE", "PLATES_RELOOK", "PLATES_RELOOK_MODE", "PLATES_FLIP", "PLATES_WORKSIDE", "PLATES_RELOOKS", "PLATES_WITHIN",
	"PLATES_CONTEXT", "PLATES_CONTEXT_WEIGHT", "PLATES_CONTEXT_FROM", "PLATES_JURY", "PLATES_WEIGHTS"}

// tracked reads them again from within a test: go test records only the
// variables read while a test runs (not in init) in its cache key, and
// without this a run with another PLATES_JURY answers from the cache.
func tracked() {
	for _, name := range tuneEnv {
		os.Getenv(name)
	}
}
