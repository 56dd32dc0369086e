//go:build platestune

// Package tune holds the sweeps that chose the plate finder's settings
// (plates.Settings) and measure it on the plate sets' validation photos:
// the second stage's thresholds, the reach of the first stage, photos
// without plates, the edges of the quads, the design threshold, the text
// proposals, spoilt photos, plate sizes, turned photos and mosaics, and
// the list of copies between the splits. Each test's comment gives its
// command line; the variables tuned reads run other networks and
// settings. Held-out photos are never read.
package tune

import (
	"carphoto/internal/testenv/datasets"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/train/plates/labelled"
)

// TestTune prints the validation split's recall and false detections per
// photo for a grid of the second stage's settings (judging), each point
// twice: against the sets' labels, then against them plus the plates they
// miss (train/plates/unlabelled.json). Only validation photos are read; the
// held-out split is never touched.
//
//	go test -tags platestune -run TestTune -v ./train/plates/tune/
func TestTune(t *testing.T) {
	st, tuning := tuned(t)
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := validationJudged(t, st, tuning, set)
		for _, first := range []float64{0, 0.25, 0.5, 1} {
			line := ""
			for _, accept := range []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9} {
				s := tuning
				s.Judge = plates.Judging{Accept: accept, First: first, NMSIoU: tuning.Judge.NMSIoU, Within: tuning.Judge.Within}
				line += fmt.Sprintf("  %.2f: %s", accept, scoreOn(s, photos))
			}
			t.Logf("%-18s first %.2f:%s", set, first, line)
		}
	}
}

// TestTuneAccept prints the validation figures at the shipped settings
// for a fine grid of the acceptance threshold, for choosing a jury's.
//
//	go test -tags platestune -run TestTuneAccept -v ./train/plates/tune/
func TestTuneAccept(t *testing.T) {
	st, tuning := tuned(t)
	sets := []string{"plates-web-cc0", "plates-dashcam-ro"}
	if os.Getenv("PLATES_EXTRA") != "" {
		sets = append(sets, labelled.ExtraSets...)
	}
	for _, set := range sets {
		photos := validationJudged(t, st, tuning, set)
		for k := 6; k < 20; k++ { // 0.30, 0.35, …, 0.95
			s := tuning
			s.Judge.Accept = float64(k) / 20
			t.Logf("%-18s %.2f: %s", set, s.Judge.Accept, scoreOn(s, photos))
		}
	}
}

// judgedPhoto is a validation photo with the jury's judgement of each of
// its proposals, before any threshold.
type judgedPhoto struct {
	labelled.Photo
	judged []plates.Verdict
}

// validationJudged is set's validation photos, judged by st at s.
func validationJudged(t *testing.T, st *plates.Stages, s plates.Settings, set string) []judgedPhoto {
	var photos []judgedPhoto
	for _, p := range labelled.Photos(t, set, datasets.Validation) {
		photos = append(photos, judgedPhoto{p, p.Judged(t, st, s)})
	}
	return photos
}

// scoreOn gives the recall and false detections per photo on photos at
// s, against the labels, then against them plus the plates they miss.
func scoreOn(s plates.Settings, photos []judgedPhoto) string {
	var given, audited score
	for _, p := range photos {
		found := s.Plates(p.judged, p.Img.Bounds())
		given.add(p.Boxes, found)
		audited.add(append(p.Missed, p.Boxes...), found)
	}
	return given.format(len(photos)) + " | " + audited.format(len(photos))
}

// score counts plates found and false detections against a set of boxes,
// and the hidden area ÷ box area of the plates found.
type score struct {
	found, total, wrong int
	areas               []float64
}

func (s *score) add(boxes []plates.Box, found []plates.Plate) {
	for _, b := range boxes {
		s.total++
		if b.CoveredBy(found) >= 0.95 {
			s.found++
			best, _ := b.Match(found)
			s.areas = append(s.areas, found[best].Hide.Area()/(b.W*b.H))
		}
	}
next:
	for _, pl := range found {
		for _, b := range boxes {
			if b.Overlaps(pl.Hide) {
				continue next
			}
		}
		s.wrong++
	}
}

// format gives the recall and the false detections per photo, then the
// counts: plates found of all, false detections.
func (s score) format(photos int) string {
	slices.Sort(s.areas)
	area := math.NaN()
	if len(s.areas) > 0 {
		area = s.areas[len(s.areas)/2]
	}
	return fmt.Sprintf("%.3f/%.2f (%d/%d, %d) area %.2f", float64(s.found)/float64(s.total), float64(s.wrong)/float64(photos), s.found, s.total, s.wrong, area)
}

// TestReach splits the validation plates by labelled width and counts, for
// each band, those the first stage proposes (a proposal with IoU ≥ 0.3, or
// whose centre lies on the plate) and those the detector finds: whether a
// band's misses are the first stage's or the verifiers'. With PLATES_SCALE
// it measures shrunk photos.
//
//	go test -tags platestune -run TestReach -v ./train/plates/tune/
func TestReach(t *testing.T) {
	st, tuning := tuned(t)
	bands := []float64{0, 20, 40, 80}
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		total, reached, found := make([]int, len(bands)), make([]int, len(bands)), make([]int, len(bands))
		for _, p := range labelled.Photos(t, set, datasets.Validation) {
			props := p.Proposed(t, st, tuning)
			judged, err := st.Verify(t.Context(), p.Img, props, tuning)
			if err != nil {
				t.Fatal(err)
			}
			detected := tuning.Plates(judged, p.Img.Bounds())
			for _, b := range p.Boxes {
				k := len(bands) - 1
				for k > 0 && b.W < bands[k] {
					k--
				}
				total[k]++
				if labelled.ReachedBy(props, b) {
					reached[k]++
				}
				if b.CoveredBy(detected) >= 0.95 {
					found[k]++
				}
			}
		}
		line := ""
		for k, lo := range bands {
			line += fmt.Sprintf("  ≥%g px: %d plates, %d proposed, %d found;", lo, total[k], reached[k], found[k])
		}
		t.Logf("%-18s%s", set, line)
	}
}

// TestPlateless counts the detections on car photos with no plate in sight
// (by eye): the cars-seg set's validation photos that
// train/plates/plateless-valid.json lists, mostly side views of parked
// cars, studio shots and advertisements. Every detection there is false.
// The set's training photos so listed (plateless.json) are background for
// verifier.py; these are not.
//
//	go test -tags platestune -run TestPlateless -v ./train/plates/tune/
func TestPlateless(t *testing.T) {
	st, tuning := tuned(t)
	photos, false_ := 0, 0
	for _, p := range labelled.Listed(t, filepath.Join(labelled.Train, "plateless-valid.json")) {
		found := tuning.Plates(p.Judged(t, st, tuning), p.Img.Bounds())
		photos++
		false_ += len(found)
		for _, pl := range found {
			t.Logf("%s: %v", p.File, pl)
		}
	}
	t.Logf("%d photos with no plate, %d detections (%.2f a photo)", photos, false_, float64(false_)/float64(photos))
}

// TestEdgeErrors prints, for the validation plates a detection matches
// (quad IoU ≥ 0.3), where the quad's bounds lie against the labelled box,
// edge by edge, in units of the label's height: positive when the quad
// reaches past the label (covers it), negative when it falls short. A
// median far from zero on one edge is a bias the margin rule pays for.
//
//	go test -tags platestune -run TestEdgeErrors -v ./train/plates/tune/
func TestEdgeErrors(t *testing.T) {
	st, tuning := tuned(t)
	sets := []string{"plates-web-cc0", "plates-dashcam-ro"}
	if os.Getenv("PLATES_EXTRA") != "" {
		sets = append(sets, labelled.ExtraSets...)
	}
	for _, set := range sets {
		var edges [4][]float64 // left, right, top, bottom
		for _, p := range validationJudged(t, st, tuning, set) {
			found := tuning.Plates(p.judged, p.Img.Bounds())
			for _, b := range p.Boxes {
				i, iou := b.Match(found)
				if i < 0 || iou < 0.3 {
					continue
				}
				lo, hi := extent(found[i].Quad)
				edges[0] = append(edges[0], (b.X-lo.X)/b.H)
				edges[1] = append(edges[1], (hi.X-b.X-b.W)/b.H)
				edges[2] = append(edges[2], (b.Y-lo.Y)/b.H)
				edges[3] = append(edges[3], (hi.Y-b.Y-b.H)/b.H)
			}
		}
		line := ""
		for k, name := range []string{"left", "right", "top", "bottom"} {
			e := edges[k]
			slices.Sort(e)
			if len(e) == 0 {
				continue
			}
			line += fmt.Sprintf("  %s median %+.3f p10 %+.3f p90 %+.3f;", name, e[len(e)/2], e[len(e)/10], e[len(e)*9/10])
		}
		t.Logf("%-18s %d plates:%s", set, len(edges[0]), line)
	}
}

// extent is q's bounds: its least and greatest corner coordinates.
func extent(q plates.Quad) (lo, hi plates.Point) {
	lo, hi = q[0], q[0]
	for _, p := range q[1:] {
		lo = plates.Point{X: min(lo.X, p.X), Y: min(lo.Y, p.Y)}
		hi = plates.Point{X: max(hi.X, p.X), Y: max(hi.Y, p.Y)}
	}
	return lo, hi
}

// TestTuneDesign prints, for the validation split of the web and dash-cam
// sets, how the detections the service reports (score ≥ Settings.Judge.Accept)
// split by score: for each threshold, how many detections at or above it
// are plates (quad IoU ≥ 0.3 with a labelled box, or one of the plates the
// labels miss, train/plates/unlabelled.json), how many overlap none
// (false: badges, lamps, lettering), and the share of the plates kept.
// plate-logo puts a design only on a plate scoring at least
// DesignConfidence; this is the curve it was chosen on. Every detection
// is also listed with its score and class, for the figures in
// docs/research/measurements.md.
//
//	go test -tags platestune -run TestTuneDesign -v ./train/plates/tune/
func TestTuneDesign(t *testing.T) {
	st, tuning := tuned(t)
	var all []designDet
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		var dets []designDet
		for _, p := range labelled.Photos(t, set, datasets.Validation) {
			found := tuning.Plates(p.Judged(t, st, tuning), p.Img.Bounds())
			boxes := append(append([]plates.Box(nil), p.Boxes...), p.Missed...)
			for _, f := range found {
				d := designDet{score: f.Score, fake: true}
				for _, b := range boxes {
					if b.IoU(f.Quad) >= 0.3 {
						d.plate = true
					}
					if b.Overlaps(f.Hide) {
						d.fake = false
					}
				}
				if !d.plate {
					t.Logf("%s %s: %v (fake %v)", set, p.File, f, d.fake)
				}
				dets = append(dets, d)
			}
		}
		all = append(all, dets...)
		designCurve(t, set, dets)
	}
	designCurve(t, "both", all)
}

// designDet is one detection of TestTuneDesign: its score, whether it
// matches a plate, and whether it overlaps none (else it is a part of one).
type designDet struct {
	score       float64
	plate, fake bool
}

// designCurve logs, for each threshold, the detections at or above it:
// plates, parts of plates, false; false share; plates kept.
func designCurve(t *testing.T, name string, dets []designDet) {
	plates := 0
	for _, d := range dets {
		if d.plate {
			plates++
		}
	}
	for k := 0; k <= 24; k++ {
		th := 0.75 + float64(k)*0.01
		var kept, plate, fake int
		for _, d := range dets {
			if d.score < th {
				continue
			}
			kept++
			switch {
			case d.plate:
				plate++
			case d.fake:
				fake++
			}
		}
		t.Logf("%-18s ≥%.2f: %3d detections, %3d plates (%.3f of %d), %2d parts, %2d false (%.3f of kept)",
			name, th, kept, plate, float64(plate)/float64(max(plates, 1)), plates, kept-plate-fake, fake, float64(fake)/float64(max(kept, 1)))
	}
}
