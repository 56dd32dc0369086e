//go:build cutouttune

package tune

// The studio sheet's photos (issue 70, item 6), fixed before any training
// on new data: 8 photos from the held-out split of each of three sets the
// cut-out never learnt from or was tuned on (plates-web-cc0, CC0; and the
// extra sets plates-openimages, CC BY, and plates-openlpr, Apache-2.0, built
// by ../shared/datasets/extra/build.py), in the order of fnv32a of the file
// name, keeping a photo when it is at least 400 px wide, no plate close-up
// (no labelled plate wider than 30% of it, the rule of
// train/shadow/studiosheet) and no copy of one picked before. The cut-out
// plays no part in the choice.
//
//	go test -tags cutouttune -run TestPickStudioSheet -v ./train/cutout/tune/ | grep -v '^[=-]' > train/cutout/heldout.txt

import (
	"carphoto/internal/testenv/datasets"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image/jpeg"
	"os"
	"path"
	"path/filepath"
	"sort"
	"testing"
)

func TestPickStudioSheet(t *testing.T) {
	hash := func(name string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(path.Base(name)))
		return h.Sum32()
	}
	var picked []*datasets.Fingerprint
	fmt.Println("# the studio sheet's 24 held-out photos (issue 70): see train/cutout/tune/heldout_test.go")
	for _, set := range []string{"plates-web-cc0", "plates-openimages", "plates-openlpr"} {
		dir := filepath.Join(datasets.Dir(), set)
		if set != "plates-web-cc0" {
			dir = datasets.Extra(t, set)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
		if err != nil {
			t.Fatal(err)
		}
		var labels []struct {
			File   string
			Width  int
			Plates []struct{ W float64 }
		}
		if err := json.Unmarshal(raw, &labels); err != nil {
			t.Fatal(err)
		}
		sort.Slice(labels, func(i, j int) bool { return hash(labels[i].File) < hash(labels[j].File) })
		n := 0
		for _, l := range labels {
			if n == 8 {
				break
			}
			if !datasets.HeldOut(l.File) || l.Width < 400 {
				continue
			}
			closeUp := false
			for _, p := range l.Plates {
				closeUp = closeUp || p.W > 0.3*float64(l.Width)
			}
			if closeUp {
				continue
			}
			f, err := os.Open(filepath.Join(dir, l.File))
			if err != nil {
				t.Fatal(err)
			}
			img, err := jpeg.Decode(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			fp := datasets.FingerprintOf(img)
			if fp.CopiedIn(picked) {
				continue
			}
			picked = append(picked, fp)
			n++
			fmt.Printf("%s/%s\n", set, l.File)
		}
	}
}
