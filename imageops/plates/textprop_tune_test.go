//go:build platestune

package plates

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestTextProposals compares, on the validation photos, the first stage's
// proposals alone with the text detector's added (textProposals), for a
// few thresholds a text proposal's score must clear (judging.text) and with text proposals that repeat a first-stage
// one dropped or kept, each judged by the jury at the shipped settings.
// Recall is counted twice: the labelled box ≥ 95% hidden, and its
// characters (the text regions at least half inside it, else its central
// 60%) ≥ 95% hidden, as `carphoto bench plates` does.
//
//	PLATES_EXTRA=~/carphoto-data go test -tags platestune -run TestTextProposals -v ./imageops/plates/
//
// PLATES_ACCEPT=P judges every proposal at the threshold P instead of the
// shipped one (a retrained verifier is calibrated differently).
func TestTextProposals(t *testing.T) {
	vs, err := embeddedJury()
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"plates-web-cc0", "plates-dashcam-ro"}
	if os.Getenv("PLATES_EXTRA") != "" {
		sets = append(sets, extraSets...)
	}
	type variant struct {
		name   string
		accept float64 // the score a text proposal needs
		dedup  bool
		text   bool
	}
	variants := []variant{{"first stage", 0, false, false}}
	for _, accept := range []float64{0.5, 0.6, 0.75, 0.85, 0.95} {
		variants = append(variants, variant{fmt.Sprintf("+text ≥%.2f", accept), accept, false, true})
		variants = append(variants, variant{fmt.Sprintf("+text ≥%.2f dedup", accept), accept, true, true})
	}
	ctx := context.Background()
	for _, set := range sets {
		boxS, audS := make([]score, len(variants)), make([]score, len(variants))
		chars, total := make([]int, len(variants)), 0
		photos := labelledPhotos(t, set, Validation)
		for _, p := range photos {
			props := p.proposed(t)
			text, err := textProposals(ctx, p.img, 1)
			if err != nil {
				t.Fatal(err)
			}
			view := wholeView(p.img)
			jf, err := vs.verify(ctx, view, props, tuning)
			if err != nil {
				t.Fatal(err)
			}
			jt, err := vs.verify(ctx, view, text, tuning)
			if err != nil {
				t.Fatal(err)
			}
			regs := text
			all := append(append([]Box(nil), p.missed...), p.boxes...)
			for i, v := range variants {
				judged := append([]verified(nil), jf...)
				if v.text {
				next:
					for k, tv := range jt {
						if v.dedup {
							for _, d := range props {
								if text[k].iou(d) >= tuning.propose.nmsIoU {
									continue next
								}
							}
						}
						judged = append(judged, tv)
					}
				}
				j := tuning.judge
				j.text = v.accept
				if a := os.Getenv("PLATES_ACCEPT"); a != "" {
					fmt.Sscan(a, &j.accept)
				}
				found := j.plates(judged, p.img.Bounds())
				boxS[i].add(wide(p.boxes), found)
				audS[i].add(all, found)
				for _, b := range wide(p.boxes) {
					if i == 0 {
						total++
					}
					if charsHidden(b, regs, found) {
						chars[i]++
					}
				}
			}
		}
		for i, v := range variants {
			t.Logf("%-18s %-20s chars %.3f (%d/%d)  box %s | audited %s", set, v.name,
				float64(chars[i])/float64(total), chars[i], total, boxS[i].format(len(photos)), audS[i].format(len(photos)))
		}
	}
}

// wide keeps the boxes at least 20 px wide.
func wide(bs []Box) []Box {
	var out []Box
	for _, b := range bs {
		if b.W >= 20 {
			out = append(out, b)
		}
	}
	return out
}

// charsHidden approximates the bench's characters-hidden rule: the text
// boxes lying at least half inside b, clipped to b (else b's central 60%),
// hidden for ≥ 95% of their area.
func charsHidden(b Box, regs []box, found []Plate) bool {
	g := box{x0: b.X, y0: b.Y, x1: b.X + b.W, y1: b.Y + b.H}
	var parts []Box
	for _, r := range regs {
		if r.inside(g) < 0.5 {
			continue
		}
		x0, y0 := max(r.x0, g.x0), max(r.y0, g.y0)
		x1, y1 := min(r.x1, g.x1), min(r.y1, g.y1)
		parts = append(parts, Box{X: x0, Y: y0, W: x1 - x0, H: y1 - y0})
	}
	if len(parts) == 0 {
		parts = []Box{{X: b.X + 0.2*b.W, Y: b.Y + 0.2*b.H, W: 0.6 * b.W, H: 0.6 * b.H}}
	}
	var in, all float64
	for _, c := range parts {
		a := c.W * c.H
		in += a * c.CoveredBy(found)
		all += a
	}
	return all > 0 && in/all >= 0.95
}
