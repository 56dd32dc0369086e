//go:build platestune || platesaudit || platesmine

// Package labelled reads the plate sets' labelled photos for the research
// tools of train/plates (tune, mine, audit) and runs the finder's stages
// on them (plates.Stages). Its paths are relative to a tool's folder,
// train/plates/TOOL, where go test runs it.
package labelled

import (
	"carphoto/internal/testenv/datasets"
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

	"carphoto/imageops/plates"
	"carphoto/internal/testenv/imgtest"
)

// Paths from a tool's folder, train/plates/TOOL.
const (
	// Train is train/plates, whose lists (unlabelled.json,
	// plateless.json, ...) the tools read and write.
	Train = ".."
	// PlatesTestdata is imageops/plates/testdata, whose lists the
	// product's tests read too (copies.json, heldout-chars.json,
	// cars-seg-plates.json).
	PlatesTestdata = "../../../imageops/plates/testdata"
)

// Photo is a photo of the shared plate sets with its labelled boxes and
// the plates its labels miss, found by review (train/plates/unlabelled.json;
// training and validation photos only).
type Photo struct {
	Set, File string
	Img       image.Image
	Boxes     []plates.Box
	Missed    []plates.Box
}

// Dir is the folder of the plate set named set: under PLATES_EXTRA for
// the extra sets (ExtraSets) where it is given, else under PLATES_DATA, or
// the shared data sets.
func Dir(set string) string {
	if extra := os.Getenv("PLATES_EXTRA"); extra != "" && slices.Contains(ExtraSets, set) {
		return filepath.Join(extra, set)
	}
	root := datasets.Dir()
	if d := os.Getenv("PLATES_DATA"); d != "" {
		root = d
	}
	return filepath.Join(root, set)
}

// Photos decodes the photos of a plate set whose file names keep says to
// read; the others (the held-out split, for the tools) are not opened. The
// sets are read from datasets.Dir() (CARPHOTO_DATASETS, else ../shared/datasets beside the repository), or
// from the folder PLATES_DATA names (the validation sets with repainted
// plates that train/plates/othersets.py writes, say). PLATES_SCALE=F
// shrinks every photo and its boxes by F first, as `carphoto-lab bench plates
// --scale F` does, so that the sets' plates stand in for smaller ones.
// PLATES_COPYFREE=1 leaves out the photos with a copy in another split
// (imageops/plates/testdata/copies.json).
func Photos(tb testing.TB, set string, keep func(name string) bool) []Photo {
	tb.Helper()
	scale := 1.0
	if s := os.Getenv("PLATES_SCALE"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0 && f <= 1) {
			tb.Fatalf("PLATES_SCALE=%q: want a factor in (0, 1]", s)
		}
		scale = f
	}
	dir := Dir(set)
	datasets.CheckShipped(tb, set, dir)
	labels := readLabels(tb, dir)
	var audit []struct {
		Set, File string
		Box       [4]float64
	}
	data, err := os.ReadFile(filepath.Join(Train, "unlabelled.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, &audit); err != nil {
		tb.Fatal(err)
	}
	copied := copiedElsewhere(tb, set)
	var out []Photo
	for _, e := range labels {
		if !keep(e.File) || copied != nil && copied(e.File) {
			continue
		}
		img := imgtest.DecodeFile(tb, filepath.Join(dir, e.File))
		var missed []plates.Box
		for _, a := range audit {
			if a.Set == set && a.File == e.File {
				missed = append(missed, plates.Box{X: a.Box[0], Y: a.Box[1], W: a.Box[2] - a.Box[0], H: a.Box[3] - a.Box[1]})
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
		out = append(out, Photo{set, e.File, img, boxes, missed})
	}
	return out
}

// Listed decodes the photos a list names (train/plates/plateless.json and
// the like: [{"set": ..., "file": ...}], paths inside the shared sets), set
// by set.
func Listed(tb testing.TB, list string) []Photo {
	tb.Helper()
	data, err := os.ReadFile(list)
	if err != nil {
		tb.Fatal(err)
	}
	var entries []struct{ Set, File string }
	if err := json.Unmarshal(data, &entries); err != nil {
		tb.Fatal(err)
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
	var out []Photo
	for _, set := range sets {
		out = append(out, Photos(tb, set, func(name string) bool { return files[set][name] })...)
	}
	if len(out) != len(entries) {
		tb.Fatalf("%s: %d photos listed, %d of them in the sets' labels", list, len(entries), len(out))
	}
	return out
}

// scaled returns the boxes times f.
func scaled(boxes []plates.Box, f float64) []plates.Box {
	out := make([]plates.Box, len(boxes))
	for i, b := range boxes {
		out[i] = plates.Box{X: b.X * f, Y: b.Y * f, W: b.W * f, H: b.H * f}
	}
	return out
}

// Proposed runs the first stage of st at s on p's photo: its proposals
// from both looks, photo pixels.
func (p Photo) Proposed(tb testing.TB, st *plates.Stages, s plates.Settings) []plates.Proposal {
	tb.Helper()
	props, err := st.Propose(context.Background(), p.Img, s)
	if err != nil {
		tb.Fatal(err)
	}
	return props
}

// Judged runs both stages of st at s on p's photo: the jury's judgement of
// each of the first stage's proposals, before any threshold.
func (p Photo) Judged(tb testing.TB, st *plates.Stages, s plates.Settings) []plates.Verdict {
	tb.Helper()
	j, err := st.Verify(context.Background(), p.Img, p.Proposed(tb, st, s), s)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

// Reaches reports whether proposal d reaches the labelled plate b: they
// overlap with IoU ≥ 0.3, or d's centre lies on b.
func Reaches(d plates.Proposal, b plates.Box) bool {
	g := asProposal(b)
	cx, cy := (d.X0+d.X1)/2, (d.Y0+d.Y1)/2
	return d.IoU(g) >= 0.3 || (cx >= g.X0 && cx <= g.X1 && cy >= g.Y0 && cy <= g.Y1)
}

// ReachedBy reports whether any of the proposals props reaches b.
func ReachedBy(props []plates.Proposal, b plates.Box) bool {
	for _, d := range props {
		if Reaches(d, b) {
			return true
		}
	}
	return false
}

// asProposal is the labelled box b as a proposal of no score.
func asProposal(b plates.Box) plates.Proposal {
	return plates.Proposal{X0: b.X, Y0: b.Y, X1: b.X + b.W, Y1: b.Y + b.H}
}

// copiedElsewhere returns, for PLATES_COPYFREE=1, a test of whether a
// photo of set has a copy in another split (imageops/plates/testdata/copies.json);
// otherwise nil.
func copiedElsewhere(tb testing.TB, set string) func(file string) bool {
	tb.Helper()
	if os.Getenv("PLATES_COPYFREE") != "1" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(PlatesTestdata, "copies.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var groups []struct {
		Set   string
		Files []string
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		tb.Fatal(err)
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
	case datasets.HeldOut(file):
		return "heldout"
	case datasets.Validation(file):
		return "val"
	}
	return "train"
}

// ExtraSets are the sets ../shared/datasets/extra/build.py builds, read
// from the folder PLATES_EXTRA names.
var ExtraSets = []string{"plates-openimages", "plates-openlpr"}

// Stream decodes the photos of the set in dir whose file names keep says
// to read, one at a time, and hands each, with its labels' file name and
// boxes, to f.
func Stream(tb testing.TB, dir string, keep func(name string) bool, f func(file string, img image.Image, boxes []plates.Box)) {
	tb.Helper()
	labels := readLabels(tb, dir)
	for _, e := range labels {
		if !keep(e.File) {
			continue
		}
		img := imgtest.DecodeFile(tb, filepath.Join(dir, e.File))
		f(e.File, img, e.Plates)
	}
}

// labelEntry is a photo's entry in a set's labels.json.
type labelEntry struct {
	File   string       `json:"file"`
	Plates []plates.Box `json:"plates"`
}

// readLabels reads dir/labels.json.
func readLabels(tb testing.TB, dir string) []labelEntry {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var labels []labelEntry
	if err := json.Unmarshal(data, &labels); err != nil {
		tb.Fatal(err)
	}
	return labels
}
