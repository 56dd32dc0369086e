//go:build measure

package plates

import (
	"context"
	"encoding/json"
	"fmt"
	_ "image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// TestFitReadJudge fits the reading judge (readJudge) on the validation
// split of the sets named by PLATES_FIT_SETS and the training split of
// those named by PLATES_FIT_TRAIN_SETS (folders holding labels.json,
// separated by ':'), never the held-out one: every candidate the finder
// reads is an example, a plate when its box overlaps a labelled plate
// (IoU ≥ 0.2, or either's centre inside the other). The training photos
// bring the lettering, signs and badges the judge must learn to leave, and
// more plates. It prints the weights and, at each threshold, the plates and
// non-plates the judge accepts on the validation photos. Not run by
// default (about 25 minutes of one core for the four sets' validation and
// three sets' training splits):
//
//	PLATES_FIT_SETS=../../../shared/datasets/plates-web-cc0:... PLATES_FIT_TRAIN_SETS=... go test -tags measure ./imageops/plates -run FitReadJudge -v -timeout 2h
//
// PLATES_FIT_DUMP names a file for every example as a JSON line (what was
// read included: our own labelled photos, for the research log's
// cross-validation).
func TestFitReadJudge(t *testing.T) {
	sets := os.Getenv("PLATES_FIT_SETS")
	if sets == "" {
		t.Skip("PLATES_FIT_SETS names no sets")
	}
	ctx := context.Background()
	st, err := networks(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings()
	var dump *os.File
	if name := os.Getenv("PLATES_FIT_DUMP"); name != "" {
		if dump, err = os.Create(name); err != nil {
			t.Fatal(err)
		}
		defer dump.Close()
	}
	type example struct {
		x   []float64
		y   float64
		val bool
	}
	var all []example
	photos := 0 // validation photos
	splits := []struct {
		name string
		sets string
		keep func(string) bool
	}{
		{"validation", sets, datasets.Validation},
		{"training", os.Getenv("PLATES_FIT_TRAIN_SETS"), func(n string) bool { return !datasets.HeldOut(n) && !datasets.Validation(n) }},
	}
	for _, sp := range splits {
		if sp.sets == "" {
			continue
		}
		for _, dir := range strings.Split(sp.sets, ":") {
			raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
			if err != nil {
				t.Fatal(err)
			}
			var labels []struct {
				File   string `json:"file"`
				Plates []Box  `json:"plates"`
			}
			if err := json.Unmarshal(raw, &labels); err != nil {
				t.Fatal(err)
			}
			pos, neg := 0, 0
			for _, l := range labels {
				if !sp.keep(filepath.Base(l.File)) {
					continue
				}
				img := imgtest.DecodeFile(t, filepath.Join(dir, l.File))
				if sp.name == "validation" {
					photos++
				}
				props, err := st.net.proposeAll(ctx, img, 1, img.Bounds().Sub(img.Bounds().Min), subImages(img), s)
				if err != nil {
					t.Fatal(err)
				}
				v := wholeView(img)
				judged, err := st.verify(ctx, v, props, s)
				if err != nil {
					t.Fatal(err)
				}
				cands := s.Judge.candidates(judged)
				rss, err := readCandidates(ctx, v, cands)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range cands {
					f := features(judged[c.at], c, readOf(rss[i]), float64(v.photo.Dy()))
					text := ""
					for _, r := range rss[i] {
						text += r.Text + "|"
					}
					u := union(c.lines)
					y := 0.0
					for _, p := range l.Plates {
						lb := box{x0: p.X, y0: p.Y, x1: p.X + p.W, y1: p.Y + p.H}
						if u.iou(lb) >= 0.2 || centreIn(u, lb) || centreIn(lb, u) {
							y = 1
						}
					}
					if y == 1 {
						pos++
					} else {
						neg++
					}
					all = append(all, example{f, y, sp.name == "validation"})
					if dump != nil {
						line, _ := json.Marshal(map[string]any{"split": sp.name, "set": filepath.Base(dir), "file": l.File, "y": y, "f": f, "text": text, "box": []float64{u.x0, u.y0, u.x1, u.y1}})
						fmt.Fprintf(dump, "%s\n", line)
					}
				}
			}
			t.Logf("%s %s: %d plates, %d non-plates read", filepath.Base(dir), sp.name, pos, neg)
		}
	}
	xs := make([][]float64, len(all))
	ys := make([]float64, len(all))
	for i, e := range all {
		xs[i], ys[i] = e.x, e.y
	}
	w := fitLogistic(xs, ys, 1.0)
	t.Logf("readJudge = %s", goFloats(w))
	for _, th := range []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9} {
		tp, fp, plates := 0, 0, 0
		for _, e := range all {
			if !e.val {
				continue
			}
			if e.y == 1 {
				plates++
			}
			if judgeWith(w, e.x) >= th {
				if e.y == 1 {
					tp++
				} else {
					fp++
				}
			}
		}
		t.Logf("validation at %.1f: %d of %d plates, %d non-plates (%.3f a photo of %d)", th, tp, plates, fp, float64(fp)/float64(photos), photos)
	}
}

// judgeWith is the logistic judge's probability with weights w for inputs x.
func judgeWith(w, x []float64) float64 {
	s := 0.0
	for k, wk := range w {
		s += wk * x[k]
	}
	return 1 / (1 + math.Exp(-s))
}

func centreIn(a, b box) bool {
	cx, cy := (a.x0+a.x1)/2, (a.y0+a.y1)/2
	return cx >= b.x0 && cx <= b.x1 && cy >= b.y0 && cy <= b.y1
}

// fitLogistic fits logistic regression weights to xs (each with a leading
// 1) and ys by Newton's method, an L2 penalty lambda on all but the first.
func fitLogistic(xs [][]float64, ys []float64, lambda float64) []float64 {
	n := len(xs[0])
	w := make([]float64, n)
	for range 50 {
		g := make([]float64, n)
		h := make([][]float64, n)
		for i := range h {
			h[i] = make([]float64, n)
		}
		for i, x := range xs {
			z := 0.0
			for k := range n {
				z += w[k] * x[k]
			}
			p := 1 / (1 + math.Exp(-z))
			for a := range n {
				g[a] += (p - ys[i]) * x[a]
				for b := range n {
					h[a][b] += p * (1 - p) * x[a] * x[b]
				}
			}
		}
		for a := 1; a < n; a++ {
			g[a] += lambda * w[a]
			h[a][a] += lambda
		}
		h[0][0] += 1e-6
		step := solve(h, g)
		for k := range n {
			w[k] -= step[k]
		}
	}
	return w
}

// solve solves a·x = b by Gaussian elimination with partial pivoting.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range m {
		m[i] = append(append([]float64{}, a[i]...), b[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		for r := range n {
			if r == c || m[c][c] == 0 {
				continue
			}
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for i := range n {
		if m[i][i] != 0 {
			x[i] = m[i][n] / m[i][i]
		}
	}
	return x
}

func goFloats(w []float64) string {
	parts := make([]string, len(w))
	for i, v := range w {
		parts[i] = fmt.Sprintf("%.4g", v)
	}
	return "[]float64{" + strings.Join(parts, ", ") + "}"
}
