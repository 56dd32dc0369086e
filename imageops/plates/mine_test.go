//go:build platesmine

package plates

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"testing"
)

// TestMine writes, for every photo of the plate sets outside the held-out
// split, the first stage's proposals at workSide (photo pixels), for
// train/plates/verifier.py to learn from (hard negatives) and to tune on
// (validation split): the proposals the shipped verifiers learnt from (the
// coarse look's few additions came later). Held-out photos are not read.
// Then the same for the car photos with no plate in sight that
// train/plates/plateless.json lists (cars-seg training photos), which
// verifier.py --plateless learns from as background.
//
//	PLATES_MINE_OUT=/tmp/plates-candidates.jsonl \
//	    go test -tags platesmine -run TestMine ./imageops/plates/
//
// PLATES_MINE_LOOK=coarse writes the coarse look's proposals instead
// (coarseSide), and
// PLATES_MINE_LOOK=relook the windows the jury's second look judges: the
// refined boxes of every look's proposals the shipped jury does not reject
// (log-odds ≥ relook), each with its proposal's first-stage score, and
// PLATES_MINE_SKIP=FILE leaves out the photos an earlier run's output
// FILE holds (to finish a run that was stopped), and
// PLATES_MINE_LOOK=text the text detector's proposals (textProposals), each
// with its rank's score (1 for the strongest, falling by 0.01 a rank).
func TestMine(t *testing.T) {
	side, second, text := tuning.workSide, false, false
	switch look := os.Getenv("PLATES_MINE_LOOK"); look {
	case "":
	case "coarse":
		side = coarseSide
	case "relook":
		second = true
	case "text":
		text = true
	default:
		t.Fatalf("PLATES_MINE_LOOK=%q: want coarse, relook or text", look)
	}
	out := os.Getenv("PLATES_MINE_OUT")
	if out == "" {
		out = "/tmp/plates-candidates.jsonl"
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	jury, err := embeddedJury()
	if err != nil {
		t.Fatal(err)
	}
	skip := minedBefore(t)
	mine := func(split string, p labelled) {
		if skip[p.set+"/"+p.file] {
			return
		}
		cands := [][5]float64{}
		if text {
			props, err := textProposals(context.Background(), p.img, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range props {
				cands = append(cands, [5]float64{1 - 0.01*float64(i), d.x0, d.y0, d.x1, d.y1})
			}
		} else if second {
			for _, d := range p.proposed(t) {
				if l, b, _ := jury.judge(wholeView(p.img), d); l >= tuning.relook.from {
					cands = append(cands, [5]float64{d.score, b.x0, b.y0, b.x1, b.y1})
				}
			}
		} else {
			props, err := n.proposeAt(context.Background(), p.img, side, tuning.propose)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range props {
				cands = append(cands, [5]float64{d.score, d.x0, d.y0, d.x1, d.y1})
			}
		}
		if err := enc.Encode(map[string]any{"set": p.set, "file": p.file, "split": split, "cands": cands}); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		for _, p := range labelledPhotos(t, set, func(name string) bool { return !HeldOut(name) }) {
			split := "train"
			if Validation(p.file) {
				split = "val"
			}
			mine(split, p)
		}
	}
	// The larger sets built by ../shared/datasets/extra/build.py, read from
	// the folder PLATES_EXTRA names, one photo at a time (they do not fit
	// in memory decoded).
	if root := os.Getenv("PLATES_EXTRA"); root != "" {
		for _, set := range extraSets {
			streamLabelled(t, filepath.Join(root, set), func(name string) bool { return !HeldOut(name) }, func(file string, img image.Image, _ []Box) {
				split := "train"
				if Validation(file) {
					split = "val"
				}
				mine(split, labelled{set: set, file: file, img: img})
			})
		}
	}
	// Car photos with no plate in sight: all their proposals are wheels,
	// windows, lettering and walls.
	for _, p := range listedPhotos(t, "../../train/plates/plateless.json") {
		mine("train", p)
	}
}

// minedBefore reads the photos PLATES_MINE_SKIP's JSON lines name.
func minedBefore(t *testing.T) map[string]bool {
	done := map[string]bool{}
	path := os.Getenv("PLATES_MINE_SKIP")
	if path == "" {
		return done
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var e struct{ Set, File string }
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		done[e.Set+"/"+e.File] = true
	}
	return done
}
