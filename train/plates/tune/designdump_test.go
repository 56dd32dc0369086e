//go:build platestune

package tune

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/internal/testenv/datasets"
	"carphoto/train/plates/labelled"
)

// TestDesignDump writes, for every detection on the validation photos of
// DESIGNS_SETS (all four by default), what the design rule may look at: the
// score, the quad's size, the text lines' bounds, the reading's counts
// (read whatever the score), and the labelled box it lies on, a JSON line
// each, to DESIGNS_DUMP. The rule is chosen from it offline.
//
//	PLATES_EXTRA=~/carphoto-data DESIGNS_DUMP=/tmp/dump.jsonl go test -tags platestune -run TestDesignDump -v -timeout 2h ./train/plates/tune/
func TestDesignDump(t *testing.T) {
	name := os.Getenv("DESIGNS_DUMP")
	if name == "" {
		t.Skip("DESIGNS_DUMP names the output")
	}
	sets := append([]string{"plates-web-cc0", "plates-dashcam-ro"}, labelled.ExtraSets...)
	if s := os.Getenv("DESIGNS_SETS"); s != "" {
		sets = strings.Split(s, ",")
	}
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	enc := json.NewEncoder(out)
	// DESIGNS_FROM=A DESIGNS_MAX=N: the validation photos A to A+N-1 of
	// each set (all by default).
	from, most := 0, 1<<30
	for name, v := range map[string]*int{"DESIGNS_FROM": &from, "DESIGNS_MAX": &most} {
		if s := os.Getenv(name); s != "" {
			var err error
			if *v, err = strconv.Atoi(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, set := range sets {
		photos := labelled.Photos(t, set, datasets.Validation)
		photos = photos[min(from, len(photos)):]
		for _, p := range photos[:min(most, len(photos))] {
			found, err := plates.Detect(t.Context(), p.Img)
			if err != nil {
				t.Fatal(err)
			}
			read := append([]plates.Plate(nil), found...)
			for i := range read {
				read[i].Score = 1 // read every detection, whatever its score
			}
			if err := plates.ReadPlates(t.Context(), p.Img, read); err != nil {
				t.Fatal(err)
			}
			all := append(append([]plates.Box(nil), p.Boxes...), p.Missed...)
			for k, f := range found {
				var lab plates.Box
				best := 0.0
				for _, b := range all {
					if v := b.IoU(f.Quad); v > best {
						best, lab = v, b
					}
				}
				x0, y0, x1, y1, ok := f.Text()
				enc.Encode(map[string]any{
					"set": set, "file": p.File, "k": k, "score": f.Score,
					"quad": f.Quad, "qw": f.Quad.Width(), "qh": f.Quad.Height(),
					"text": ok, "tx0": x0, "ty0": y0, "tx1": x1, "ty1": y1, "th": f.TextHeight,
					"reads": read[k].Reads, "letters": read[k].Printed.Letters, "digits": read[k].Printed.Digits, "mean": read[k].Printed.Mean,
					"iou": best, "label": lab, "on": onLabel(all, f.Quad), "designable": f.Designable(),
				})
			}
		}
		t.Logf("%s done", set)
	}
}
