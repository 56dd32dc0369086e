//go:build platesmine

// Package mine writes the windows the plate verifier learns from: the
// first stage's proposals on the plate sets' photos outside the held-out
// split (train/plates/verifier.py).
package mine

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/train/plates/labelled"
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
//	    go test -tags platesmine -run TestMine ./train/plates/mine/
//
// PLATES_MINE_LOOK=coarse writes the coarse look's proposals instead
// (plates.CoarseSide), and
// PLATES_MINE_LOOK=relook the windows the jury's second look judges: the
// refined boxes of every look's proposals the shipped jury does not reject
// (log-odds ≥ relook), each with its proposal's first-stage score, and
// PLATES_MINE_SKIP=FILE leaves out the photos an earlier run's output
// FILE holds (to finish a run that was stopped), and
// PLATES_MINE_LOOK=text the text detector's proposals (TextProposals), each
// with its rank's score (1 for the strongest, falling by 0.01 a rank).
func TestMine(t *testing.T) {
	st, err := plates.NewStages(plates.Networks{})
	if err != nil {
		t.Fatal(err)
	}
	s := plates.DefaultSettings()
	side, second, text := s.WorkSide, false, false
	switch look := os.Getenv("PLATES_MINE_LOOK"); look {
	case "":
	case "coarse":
		side = plates.CoarseSide
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
	skip := minedBefore(t)
	mine := func(split string, p labelled.Photo) {
		if skip[p.Set+"/"+p.File] {
			return
		}
		cands := [][5]float64{}
		if text {
			props, err := plates.TextProposals(t.Context(), p.Img)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range props {
				cands = append(cands, [5]float64{1 - 0.01*float64(i), d.X0, d.Y0, d.X1, d.Y1})
			}
		} else if second {
			for _, d := range p.Proposed(t, st, s) {
				if l, b := st.Look(p.Img, d); l >= s.Relook.From {
					cands = append(cands, [5]float64{d.Score, b.X0, b.Y0, b.X1, b.Y1})
				}
			}
		} else {
			props, err := st.ProposeAt(t.Context(), p.Img, side, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range props {
				cands = append(cands, [5]float64{d.Score, d.X0, d.Y0, d.X1, d.Y1})
			}
		}
		if err := enc.Encode(map[string]any{"set": p.Set, "file": p.File, "split": split, "cands": cands}); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		for _, p := range labelled.Photos(t, set, func(name string) bool { return !datasets.HeldOut(name) }) {
			split := "train"
			if datasets.Validation(p.File) {
				split = "val"
			}
			mine(split, p)
		}
	}
	// The larger sets built by ../shared/datasets/extra/build.py, read from
	// the folder PLATES_EXTRA names, one photo at a time (they do not fit
	// in memory decoded).
	if root := os.Getenv("PLATES_EXTRA"); root != "" {
		for _, set := range labelled.ExtraSets {
			labelled.Stream(t, filepath.Join(root, set), func(name string) bool { return !datasets.HeldOut(name) }, func(file string, img image.Image, _ []plates.Box) {
				split := "train"
				if datasets.Validation(file) {
					split = "val"
				}
				mine(split, labelled.Photo{Set: set, File: file, Img: img})
			})
		}
	}
	// Car photos with no plate in sight: all their proposals are wheels,
	// windows, lettering and walls.
	for _, p := range labelled.Listed(t, filepath.Join(labelled.Train, "plateless.json")) {
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
