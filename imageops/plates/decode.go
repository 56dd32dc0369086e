package plates

import (
	"carphoto/imageops/internal/nn"
	"image"
	"math"
	"slices"
)

// The first stage's answer decoded: its cells to boxes (decode, fuse),
// and the boxes thinned by non-maximum suppression (suppress, merge).

// merge adds to a's proposals the strongest of b's that do not overlap
// any kept one as much as dc.NMSIoU, at most extra of them.
func (dc Decoding) merge(a, b []box, extra int) []box {
	return dc.suppress(append([]box(nil), a...), b, extra)
}

// suppress appends to keep, in order, the boxes of cands that overlap no
// kept box as much as dc.NMSIoU, at most most of them.
func (dc Decoding) suppress(keep, cands []box, most int) []box {
	added := 0
next:
	for _, g := range cands {
		if added == most {
			break
		}
		for _, k := range keep {
			if g.iou(k) >= dc.NMSIoU {
				continue next
			}
		}
		keep = append(keep, g)
		added++
	}
	return keep
}

// proposals decodes the first stage's output for a photo with bounds b:
// the strongest maxProposals boxes, in photo pixels relative to b.Min.
func (dc Decoding) proposals(out *nn.Tensor, b image.Rectangle, s float64) []box {
	validW := int(math.Ceil(float64(b.Dx())*s/stride)) + 1
	validH := int(math.Ceil(float64(b.Dy())*s/stride)) + 1
	props := dc.decode(out, min(validW, out.W), min(validH, out.H))
	props = props[:min(len(props), maxProposals)]
	for i, d := range props {
		props[i] = box{score: d.score, x0: d.x0 / s, y0: d.y0 / s, x1: d.x1 / s, y1: d.y1 / s}
	}
	return props
}

// inside is the share of a's area that lies inside b.
func (a box) inside(b box) float64 {
	w := min(a.x1, b.x1) - max(a.x0, b.x0)
	h := min(a.y1, b.y1) - max(a.y0, b.y0)
	area := (a.x1 - a.x0) * (a.y1 - a.y0)
	if w <= 0 || h <= 0 || area <= 0 {
		return 0
	}
	return w * h / area
}

// box is a candidate in working pixels.
type box struct {
	score          float64
	x0, y0, x1, y1 float64
	text           bool // a text detector's region (textProposals)
	// line is a text region's own corners, following its slant (photo
	// pixels, as x0…y1); zero for the first stage's boxes.
	line Quad
}

// slanted is the text line's own quad, where the text detector gave one
// turned more than levelSlant from level: a line about level reads on its
// bounds as well (and the read judge learnt from such reads).
func (a box) slanted() (Quad, bool) {
	q := a.line
	if q == (Quad{}) {
		return q, false
	}
	turn := math.Abs(math.Atan2(q[1].Y-q[0].Y, q[1].X-q[0].X))
	return q, turn > levelSlant
}

// levelSlant is the turn, in radians, from which a text line is read on
// its own quad (10°).
const levelSlant = 10 * math.Pi / 180

func (a box) iou(b box) float64 {
	ix := max(0, min(a.x1, b.x1)-max(a.x0, b.x0))
	iy := max(0, min(a.y1, b.y1)-max(a.y0, b.y0))
	i := ix * iy
	u := (a.x1-a.x0)*(a.y1-a.y0) + (b.x1-b.x0)*(b.y1-b.y0) - i
	if u <= 0 {
		return 0
	}
	return i / u
}

// decode turns the head's output into plate boxes. The network fires on
// the middle of a plate, so every cell that clears the threshold and is the
// strongest of its 3×3 neighbourhood proposes one box: the score-weighted
// median of the boxes of the neighbourhood's cells above half its score, so
// one badly regressed cell does not move it. (Connected groups of cells, the
// first design, merge a plate with the grille around it at a permissive
// threshold, and their box then misses the plate.) Boxes that overlap a
// stronger one are dropped.
func (dc Decoding) decode(out *nn.Tensor, validW, validH int) []box {
	logit := float32(math.Log(dc.Threshold / (1 - dc.Threshold)))
	n := out.H * out.W
	cell := func(y, x int) box {
		i := y*out.W + x
		cx := float64(x*stride) + stride/2 - 0.5
		cy := float64(y*stride) + stride/2 - 0.5
		d := func(c int) float64 { return math.Exp(float64(out.Data[c*n+i])) * stride }
		return box{
			score: 1 / (1 + math.Exp(-float64(out.Data[i]))),
			x0:    cx - d(1), y0: cy - d(2), x1: cx + d(3), y1: cy + d(4),
		}
	}
	var peaks []box
	var cells []box
	for y := range validH {
	peak:
		for x := range validW {
			v := out.Data[y*out.W+x]
			if !(v >= logit) { // (a NaN, never expected, proposes nothing)
				continue
			}
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					yy, xx := y+dy, x+dx
					if yy < 0 || yy >= validH || xx < 0 || xx >= validW || (dy == 0 && dx == 0) {
						continue
					}
					// Ties go to the first cell in scan order.
					if w := out.Data[yy*out.W+xx]; w > v || (w == v && (dy < 0 || (dy == 0 && dx < 0))) {
						continue peak
					}
				}
			}
			p := cell(y, x)
			cells = cells[:0]
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					yy, xx := y+dy, x+dx
					if yy < 0 || yy >= validH || xx < 0 || xx >= validW {
						continue
					}
					if c := cell(yy, xx); c.score >= p.score/2 {
						cells = append(cells, c)
					}
				}
			}
			// The peak clears the threshold, and fuse keeps its score.
			peaks = append(peaks, fuse(cells))
		}
	}
	slices.SortFunc(peaks, func(a, b box) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	return dc.suppress(nil, peaks, len(peaks))
}

// fuse returns the per-edge score-weighted median of cells' boxes, with
// the strongest cell's score.
func fuse(cells []box) box {
	var f box
	for _, c := range cells {
		f.score = max(f.score, c.score)
	}
	edge := func(get func(box) float64) float64 {
		vals := make([][2]float64, len(cells))
		total := 0.0
		for i, c := range cells {
			vals[i] = [2]float64{get(c), c.score}
			total += c.score
		}
		slices.SortFunc(vals, func(a, b [2]float64) int {
			switch {
			case a[0] < b[0]:
				return -1
			case a[0] > b[0]:
				return 1
			}
			return 0
		})
		acc := 0.0
		for _, v := range vals {
			acc += v[1]
			if acc >= total/2 {
				return v[0]
			}
		}
		return vals[len(vals)-1][0]
	}
	f.x0 = edge(func(b box) float64 { return b.x0 })
	f.y0 = edge(func(b box) float64 { return b.y0 })
	f.x1 = edge(func(b box) float64 { return b.x1 })
	f.y1 = edge(func(b box) float64 { return b.y1 })
	return f
}
