//go:build platesaudit

// Package audit draws the sheets for reviewing by eye what the plate
// finder finds where the labels have no plate, and the plates it misses.
package audit

import (
	"carphoto/internal/testenv/datasets"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"carphoto/imageops/plates"
	"carphoto/train/plates/labelled"
)

// The sheets for reviewing by eye what the detector finds where the labels
// have no plate (train/plates/README.md, "Plates the labels miss"). Each
// detection is cut out with its surroundings, outlined and numbered; the
// JSON beside the sheets lists the same numbers with file and box, for the
// reviewer's verdicts.
//
// Training and validation photos, detections at score ≥ PLATES_AUDIT_MIN
// (default 0.3) that overlap neither a label nor a plate already in
// train/plates/unlabelled.json:
//
//	PLATES_AUDIT_OUT=/tmp/audit go test -tags platesaudit -run TestAuditSheets ./train/plates/audit/
//
// Held-out photos, the shipped detector's false detections by the labels
// (for reporting only, after the held-out figures are taken; the verdicts
// are docs/plates-heldout-audit.json):
//
//	PLATES_AUDIT_OUT=/tmp/audit go test -tags platesaudit -run TestHeldOutSheets ./train/plates/audit/

func TestAuditSheets(t *testing.T) {
	st, s := shipped(t)
	low := s
	low.Judge.Accept = 0.3
	if v := os.Getenv("PLATES_AUDIT_MIN"); v != "" {
		var err error
		if low.Judge.Accept, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	var a audit
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		for _, p := range labelled.Photos(t, set, func(name string) bool { return !datasets.HeldOut(name) }) {
			a.add(p, low.Plates(p.Judged(t, st, s), p.Img.Bounds()), append(p.Missed, p.Boxes...))
		}
	}
	a.write(t, "audit")
}

func TestHeldOutSheets(t *testing.T) {
	st, s := shipped(t)
	var a audit
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		for _, p := range labelled.Photos(t, set, datasets.HeldOut) {
			found, err := st.Detect(t.Context(), p.Img, s)
			if err != nil {
				t.Fatal(err)
			}
			a.add(p, found, p.Boxes)
		}
	}
	// The larger sets, where PLATES_EXTRA names the folder they were built in.
	if root := os.Getenv("PLATES_EXTRA"); root != "" {
		for _, set := range labelled.ExtraSets {
			labelled.Stream(t, filepath.Join(root, set), datasets.HeldOut, func(file string, img image.Image, boxes []plates.Box) {
				found, err := st.Detect(t.Context(), img, s)
				if err != nil {
					t.Fatal(err)
				}
				a.add(labelled.Photo{Set: set, File: file, Img: img, Boxes: boxes}, found, boxes)
			})
		}
	}
	a.write(t, "heldout")
}

// TestMissSheets cuts out, for review, every labelled plate of the
// validation photos (PLATES_AUDIT_SPLIT=train: the training photos) that
// the detector does not find at its threshold, each captioned with its
// width and height, and the best score of a proposal that reached it (a
// proposal with IoU ≥ 0.3 or its centre on the plate) or "not proposed":
// whether the first stage or the jury lost it. The detections' quads are
// outlined in red, and the caption gives the share of the label inside
// them. Respects PLATES_COPYFREE; with PLATES_EXTRA the two larger sets
// too, PLATES_AUDIT_SET=name only that set.
//
//	PLATES_AUDIT_OUT=/tmp/audit go test -tags platesaudit -run TestMissSheets ./train/plates/audit/
func TestMissSheets(t *testing.T) {
	st, s := shipped(t)
	keep := datasets.Validation
	if os.Getenv("PLATES_AUDIT_SPLIT") == "train" {
		keep = datasets.Training
	}
	var a audit
	sets := []string{"plates-web-cc0", "plates-dashcam-ro"}
	if os.Getenv("PLATES_EXTRA") != "" {
		sets = append(sets, labelled.ExtraSets...)
	}
	if only := os.Getenv("PLATES_AUDIT_SET"); only != "" {
		sets = []string{only}
	}
	for _, set := range sets {
		for _, p := range labelled.Photos(t, set, keep) {
			props := p.Proposed(t, st, s)
			judged, err := st.Verify(t.Context(), p.Img, props, s)
			if err != nil {
				t.Fatal(err)
			}
			found := s.Plates(judged, p.Img.Bounds())
			var quads []image.Rectangle
			for _, pl := range found {
				quads = append(quads, pl.Hide.Bounds())
			}
			for _, b := range p.Boxes {
				covered := b.CoveredBy(found)
				if covered >= 0.95 {
					continue
				}
				best := -1.0
				for i, d := range props {
					if labelled.Reaches(d, b) {
						best = max(best, s.Score(judged[i]))
					}
				}
				caption := fmt.Sprintf("%d %.0fx%.0f not proposed", len(a.list), b.W, b.H)
				if best >= 0 {
					caption = fmt.Sprintf("%d %.0fx%.0f best %.2f in %.0f%%", len(a.list), b.W, b.H, best, 100*covered)
				}
				r := image.Rect(int(b.X), int(b.Y), int(b.X+b.W), int(b.Y+b.H))
				a.list = append(a.list, auditEntry{p.Set, p.File, [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y}, best})
				a.tiles = append(a.tiles, tile(p.Img, r, caption, quads...))
			}
		}
	}
	a.write(t, "missed")
}

// shipped are the embedded networks and the settings the product runs.
func shipped(tb testing.TB) (*plates.Stages, plates.Settings) {
	tb.Helper()
	st, err := plates.NewStages(plates.Networks{})
	if err != nil {
		tb.Fatal(err)
	}
	return st, plates.DefaultSettings()
}

// audit collects the numbered tiles and their list.
type audit struct {
	tiles []image.Image
	list  []auditEntry
}

type auditEntry struct {
	Set   string  `json:"set"`
	File  string  `json:"file"`
	Box   [4]int  `json:"box"`
	Score float64 `json:"score"`
}

// add cuts out each of found that overlaps none of known.
func (a *audit) add(p labelled.Photo, found []plates.Plate, known []plates.Box) {
next:
	for _, pl := range found {
		for _, b := range known {
			if b.Overlaps(pl.Hide) {
				continue next
			}
		}
		r := pl.Quad.Bounds()
		a.list = append(a.list, auditEntry{p.Set, p.File, [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y}, pl.Score})
		a.tiles = append(a.tiles, tile(p.Img, r, fmt.Sprintf("%d %.2f", len(a.list)-1, pl.Score)))
	}
}

// tile is a 300×200 view of r's surroundings (three times its width),
// r outlined in green, the others (detections, say) in red, the caption in
// the corner.
func tile(img image.Image, r image.Rectangle, caption string, others ...image.Rectangle) image.Image {
	const tw, th = 300, 200
	cw := max(r.Dx()*3/2, 40)
	c := r.Min.Add(r.Size().Div(2))
	src := image.Rect(c.X-cw, c.Y-cw*th/tw, c.X+cw, c.Y+cw*th/tw)
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.Gray{40}), image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, src, draw.Over, nil)
	s := float64(tw) / float64(src.Dx())
	at := func(p image.Point) image.Point {
		return image.Pt(int(float64(p.X-src.Min.X)*s), int(float64(p.Y-src.Min.Y)*s))
	}
	outline := func(r image.Rectangle, c color.Color, pad int) {
		lo, hi := at(r.Min).Sub(image.Pt(pad, pad)), at(r.Max).Add(image.Pt(pad, pad))
		for x := lo.X; x <= hi.X; x++ {
			dst.Set(x, lo.Y, c)
			dst.Set(x, hi.Y, c)
		}
		for y := lo.Y; y <= hi.Y; y++ {
			dst.Set(lo.X, y, c)
			dst.Set(hi.X, y, c)
		}
	}
	for _, o := range others {
		outline(o, color.RGBA{255, 0, 0, 255}, 0)
	}
	outline(r, color.RGBA{0, 255, 0, 255}, 2)
	d := font.Drawer{Dst: dst, Src: image.NewUniform(color.RGBA{255, 255, 0, 255}), Face: basicfont.Face7x13, Dot: fixed.P(4, 14)}
	d.DrawString(caption)
	return dst
}

// write puts the tiles, 30 to a sheet, and the list in $PLATES_AUDIT_OUT.
func (a *audit) write(t *testing.T, name string) {
	dir := os.Getenv("PLATES_AUDIT_OUT")
	if dir == "" {
		dir = "/tmp/audit"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const cols, per = 5, 30
	for s := 0; s*per < len(a.tiles); s++ {
		part := a.tiles[s*per : min(len(a.tiles), (s+1)*per)]
		sheet := image.NewRGBA(image.Rect(0, 0, cols*304, (len(part)+cols-1)/cols*204))
		for i, tl := range part {
			draw.Draw(sheet, tl.Bounds().Add(image.Pt(i%cols*304, i/cols*204)), tl, image.Point{}, draw.Src)
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%02d.png", name, s)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, sheet); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	b, err := json.MarshalIndent(a.list, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d detections to review: %s/%s-*.png", len(a.list), dir, name)
}
