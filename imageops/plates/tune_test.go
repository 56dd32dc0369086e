//go:build platestune

package plates

import (
	"fmt"
	"testing"
)

// TestTune prints the validation split's recall and false detections per
// photo for a grid of the second stage's settings (judging), each point
// twice: against the sets' labels, then against them plus the plates they
// miss (train/plates/unlabelled.json). Only validation photos are read; the
// held-out split is never touched.
//
//	go test -tags platestune -run TestTune -v ./imageops/plates/
func TestTune(t *testing.T) {
	type photo struct {
		labelled
		judged []verified
	}
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		var photos []photo
		for _, p := range labelledPhotos(t, set, Validation) {
			photos = append(photos, photo{p, p.judged(t)})
		}
		for _, m := range [][3]float64{{0.5, 0.15, 0}, {0.6, 0.2, 0}, {0.6, 0.2, 0.25}, {0.6, 0.2, 0.5}, {0.6, 0.2, 1}} {
			line := ""
			for _, accept := range []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9} {
				j := judging{accept: accept, first: m[2], nmsIoU: tuned.nmsIoU, marginH: m[0], marginW: m[1], acceptFine: tuned.acceptFine}
				var given, audited score
				for _, p := range photos {
					plates := j.plates(append([]verified(nil), p.judged...), p.img.Bounds(), pixelReader(p.img))
					given.add(p.boxes, plates)
					audited.add(append(p.missed, p.boxes...), plates)
				}
				line += fmt.Sprintf("  %.2f: %s | %s", accept, given.format(len(photos)), audited.format(len(photos)))
			}
			t.Logf("%-18s margin %.2f/%.2f first %.2f:%s", set, m[0], m[1], m[2], line)
		}
	}
}

// score counts plates found and false detections against a set of boxes.
type score struct{ found, total, wrong int }

func (s *score) add(boxes []Box, plates []Plate) {
	for _, b := range boxes {
		s.total++
		if b.CoveredBy(plates) >= 0.95 {
			s.found++
		}
	}
next:
	for _, pl := range plates {
		for _, b := range boxes {
			if b.Overlaps(pl.Quad) {
				continue next
			}
		}
		s.wrong++
	}
}

// format gives the recall and the false detections per photo.
func (s score) format(photos int) string {
	return fmt.Sprintf("%.3f/%.2f", float64(s.found)/float64(s.total), float64(s.wrong)/float64(photos))
}
