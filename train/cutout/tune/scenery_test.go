//go:build cutouttune

package tune

// The measurement behind cutout.MinCarShare (1%) and cutout.Scenery, on the
// alphas TestDumpAlpha and TestDumpSceneryAlpha wrote: per set and split,
// how many cut-outs the size rule and the scenery rule refuse, the refused
// named. The rule was chosen on the validation split (and the scenery
// crops); the held-out split is reported only.
//
//	SCENERY_OUT=~/carphoto-train/alpha go test -tags cutouttune -run TestMeasureScenery -v ./train/cutout/tune/
//
// SCENERY_FULL and SCENERY_OTHER sweep the rule's FullSide and OtherSide.

import (
	"carphoto/internal/testenv/datasets"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"carphoto/imageops/cutout"
)

func TestMeasureScenery(t *testing.T) {
	out := os.Getenv("SCENERY_OUT")
	if out == "" {
		t.Skip("SCENERY_OUT names the folder TestDumpAlpha wrote")
	}
	excluded := map[string]bool{}
	if raw, err := os.ReadFile(filepath.Join(out, "crops", "scenery-excluded.txt")); err == nil {
		for _, l := range strings.Fields(string(raw)) {
			excluded[l] = true
		}
	}
	base := cutout.DefaultScenery()
	fulls := floats(t, os.Getenv("SCENERY_FULL"), base.FullSide)
	others := floats(t, os.Getenv("SCENERY_OTHER"), base.OtherSide)
	sets, _ := filepath.Glob(filepath.Join(out, "*"))
	sort.Strings(sets)
	for _, dir := range sets {
		set := filepath.Base(dir)
		if set == "crops" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.png"))
		cars := map[string][]*image.NRGBA{}
		names := map[string][]string{}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".png")
			if excluded[name] || excluded[strings.TrimPrefix(set, "scenery-")+"-"+name] {
				continue
			}
			split := "validation"
			if datasets.HeldOut(name + ".jpg") {
				split = "held-out"
			} else if !datasets.Validation(name + ".jpg") {
				continue
			}
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			g := img.(*image.Gray)
			car := image.NewNRGBA(g.Rect)
			for i, a := range g.Pix {
				car.Pix[4*i+3] = a
			}
			cars[split] = append(cars[split], car)
			names[split] = append(names[split], name)
		}
		for _, split := range []string{"validation", "held-out"} {
			for _, full := range fulls {
				for _, other := range others {
					rule := cutout.SceneryRule{FullSide: full, OtherSide: other}
					var small, scenery []string
					for i, car := range cars[split] {
						if cutout.CarShare(car) < cutout.MinCarShare {
							small = append(small, names[split][i])
						} else if rule.Is(car) {
							scenery = append(scenery, names[split][i])
						}
					}
					n := len(cars[split])
					fmt.Printf("%-18s %-10s full %.2f other %.2f: n=%3d under %.0f%%: %3d, scenery: %3d, refused %3d (%.1f%%)\n",
						set, split, full, other, n, 100*cutout.MinCarShare, len(small), len(scenery),
						len(small)+len(scenery), 100*float64(len(small)+len(scenery))/float64(max(n, 1)))
					if len(fulls)*len(others) == 1 && !strings.HasPrefix(set, "scenery") {
						fmt.Printf("    small: %s\n    scenery: %s\n", strings.Join(small, " "), strings.Join(scenery, " "))
					}
				}
			}
		}
	}
}
