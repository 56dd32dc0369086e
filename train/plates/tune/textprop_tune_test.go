//go:build platestune

package tune

import (
	"carphoto/internal/testenv/datasets"
	"fmt"
	"os"
	"testing"

	"carphoto/imageops/plates"
	"carphoto/train/plates/labelled"
)

// TestTextProposals compares, on the validation photos, the first stage's
// proposals alone with the text detector's added (TextProposals), for a
// few thresholds a text proposal's score must clear (Judging.Text) and with text proposals that repeat a first-stage
// one dropped or kept, each judged by the jury at the shipped settings.
// Recall is counted twice: the labelled box ≥ 95% hidden, and its
// characters (the text regions at least half inside it, else its central
// 60%) ≥ 95% hidden, as `carphoto-lab bench plates` does.
//
//	PLATES_EXTRA=~/carphoto-data go test -tags platestune -run TestTextProposals -v ./train/plates/tune/
//
// PLATES_ACCEPT=P judges every proposal at the threshold P instead of the
// shipped one (a retrained verifier is calibrated differently).
func TestTextProposals(t *testing.T) {
	st, tuning := tuned(t)
	sets := []string{"plates-web-cc0", "plates-dashcam-ro"}
	if os.Getenv("PLATES_EXTRA") != "" {
		sets = append(sets, labelled.ExtraSets...)
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
	ctx := t.Context()
	for _, set := range sets {
		boxS, audS := make([]score, len(variants)), make([]score, len(variants))
		chars, total := make([]int, len(variants)), 0
		photos := labelled.Photos(t, set, datasets.Validation)
		for _, p := range photos {
			props := p.Proposed(t, st, tuning)
			text, err := plates.TextProposals(ctx, p.Img)
			if err != nil {
				t.Fatal(err)
			}
			jf, err := st.Verify(ctx, p.Img, props, tuning)
			if err != nil {
				t.Fatal(err)
			}
			jt, err := st.Verify(ctx, p.Img, text, tuning)
			if err != nil {
				t.Fatal(err)
			}
			regs := text
			all := append(append([]plates.Box(nil), p.Missed...), p.Boxes...)
			for i, v := range variants {
				judged := append([]plates.Verdict(nil), jf...)
				if v.text {
				next:
					for k, tv := range jt {
						if v.dedup {
							for _, d := range props {
								if text[k].IoU(d) >= tuning.Propose.NMSIoU {
									continue next
								}
							}
						}
						judged = append(judged, tv)
					}
				}
				s := tuning
				s.Judge.Text = v.accept
				if a := os.Getenv("PLATES_ACCEPT"); a != "" {
					fmt.Sscan(a, &s.Judge.Accept)
				}
				found := s.Plates(judged, p.Img.Bounds())
				boxS[i].add(wide(p.Boxes), found)
				audS[i].add(all, found)
				for _, b := range wide(p.Boxes) {
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
func wide(bs []plates.Box) []plates.Box {
	var out []plates.Box
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
func charsHidden(b plates.Box, regs []plates.Proposal, found []plates.Plate) bool {
	g := plates.Proposal{X0: b.X, Y0: b.Y, X1: b.X + b.W, Y1: b.Y + b.H}
	var parts []plates.Box
	for _, r := range regs {
		if r.Inside(g) < 0.5 {
			continue
		}
		x0, y0 := max(r.X0, g.X0), max(r.Y0, g.Y0)
		x1, y1 := min(r.X1, g.X1), min(r.Y1, g.Y1)
		parts = append(parts, plates.Box{X: x0, Y: y0, W: x1 - x0, H: y1 - y0})
	}
	if len(parts) == 0 {
		parts = []plates.Box{{X: b.X + 0.2*b.W, Y: b.Y + 0.2*b.H, W: 0.6 * b.W, H: 0.6 * b.H}}
	}
	var in, all float64
	for _, c := range parts {
		a := c.W * c.H
		in += a * c.CoveredBy(found)
		all += a
	}
	return all > 0 && in/all >= 0.95
}
