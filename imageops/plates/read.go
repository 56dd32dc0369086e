package plates

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"math"
	"slices"
	"unicode"

	"carphoto/imageops/textrec"
	"carphoto/imageops/vehicles"
)

// A plate is a short line of letters and digits: a text reader answers "is
// this a plate?" better than a window classifier does on plates of designs
// it never saw. The lines that need it are read (imageops/textrec,
// PP-OCRv4's recogniser) and a small learnt judge (readJudge) decides from
// the verifiers' score and the reading: what it says is used for that
// alone, never logged, stored or returned.

// A photo's reads are bounded, best verifier score first: at most maxReads
// candidates, and at most readWidth pixels of line in all once each is
// scaled to the reader's 48-pixel height. With its integer layers a line
// costs about 2.7 ms of one core plus 0.033 ms a pixel of its width
// (BenchmarkRead: 6.7 ms at 96 pixels, 8.0 at 160, 13.3 at 320), so the
// network's part of a photo full of text is at most about 6 × 2.7 + 1,280
// × 0.033 ≈ 58 ms (BenchmarkReads, crops and judge included: the slowest
// of 40 web photos 56 ms).
// On the validation split the bound reads every plate the judge accepts
// with 8 reads and no bound (TestFitReadJudge's candidates: 74 of 74).
const (
	maxReads  = 6
	readWidth = 1280
)

// readFrom is the least verifier probability of a first-stage proposal the
// finder reads: below it the verifiers are sure it is no plate.
const readFrom = 0.25

// minLineHeight is the least height, in photo pixels, of a line worth
// reading: a plate's characters a few pixels high read as noise.
const minLineHeight = 8

// A line's aspect (width ÷ height) must lie in [minAspect, maxAspect].
const (
	minAspect = 1.2
	maxAspect = 12
)

// candidate is a proposal the finder reads: its index among the judged,
// the box read (a text line, or two stacked lines of a two-row plate), the
// lines, and the judge's probability.
type candidate struct {
	at    int
	lines []box
}

// lineQuad is the quad a line is read on: its own, following its slant,
// where the text detector gave one, else its bounds.
func lineQuad(b box) Quad {
	if q, ok := b.slanted(); ok {
		return q
	}
	return Quad{{b.x0, b.y0}, {b.x1, b.y0}, {b.x1, b.y1}, {b.x0, b.y1}}
}

// reading is what the judge sees of a candidate: no text, only counts.
// Beside the characters of each kind: the longest run of digits (a phone
// number's is longer than a plate's), the groups of letters or of digits
// ("AB 123 CD" has three, a model badge's "E220" two) and the lower-case
// letters (a sign's or a watermark's words; plates print capitals).
type reading struct {
	letters, digits, others int
	digitRun, groups, lower int
	mean, least             float64
}

// readOf counts a reading's characters and confidences (the text is
// dropped here).
func readOf(rs []textrec.Reading) reading {
	var r reading
	r.least = 1
	n := 0
	for _, x := range rs {
		i := 0
		kind, run := 0, 0 // the current group's kind (1 letters, 2 digits) and its digits
		for _, c := range x.Text {
			k := 0
			switch {
			case c < unicode.MaxASCII && unicode.IsLetter(c):
				r.letters++
				k = 1
				if unicode.IsLower(c) {
					r.lower++
				}
			case c < unicode.MaxASCII && unicode.IsDigit(c):
				r.digits++
				k = 2
			case unicode.IsSpace(c) || c == '-' || c == '·' || c == '.':
				// separators: neither for nor against
			default:
				r.others++
			}
			if k != 0 && k != kind {
				r.groups++
				run = 0
			}
			if k == 2 {
				run++
				r.digitRun = max(r.digitRun, run)
			}
			kind = k
			if i < len(x.Conf) {
				r.mean += x.Conf[i]
				r.least = min(r.least, x.Conf[i])
				n++
			}
			i++
		}
	}
	if n == 0 {
		r.least = 0
		return r
	}
	r.mean /= float64(n)
	return r
}

// features are the judge's inputs for a candidate of judged on a photo of
// height ph: the verifiers' log-odds, whether the text detector proposed
// it, the reading's letters, digits and other characters, its mean and
// least confidence, whether it reads like a plate (4 or more letters and
// digits, a digit among them), a long all-digit number (a phone number, a
// date), the line's height (log) and aspect (log), two stacked lines, and
// where it sits (its centre's height in the photo), the plain rule (4
// or more letters and digits with a digit, mean confidence at least 0.6,
// not a long all-digit number), and the shape of what is read: its longest
// run of digits (and whether it is 6 or more: a phone number, a price
// board), 5 to 8 letters and digits (most plates' count), its groups of
// letters or digits, its lower-case letters, and no letter or at most one
// (a fleet number, a year, a model's "E220").
func features(v verified, c candidate, r reading, ph float64) []float64 {
	u := union(c.lines)
	h := max(u.y1-u.y0, 1)
	if len(c.lines) > 1 {
		h = max(c.lines[0].y1-c.lines[0].y0, 1)
	}
	alnum := r.letters + r.digits
	return []float64{
		1,
		clamp(logOdds(v.p), -8, 8),
		b2f(v.text),
		float64(min(r.letters, 12)),
		float64(min(r.digits, 12)),
		float64(min(r.others, 12)),
		r.mean,
		r.least,
		b2f(alnum >= 4 && r.digits >= 1),
		b2f(r.digits >= 9 && r.letters == 0),
		b2f(alnum >= 4 && alnum <= 10),
		math.Log(h),
		math.Log(max(u.x1-u.x0, 1) / max(u.y1-u.y0, 1)),
		b2f(len(c.lines) > 1),
		(u.y0 + u.y1) / 2 / max(ph, 1),
		b2f(alnum >= 4 && r.digits >= 1 && r.mean >= 0.6 && !(r.digits >= 9 && r.letters == 0)),
		float64(min(r.digitRun, 10)),
		b2f(r.digitRun >= 6),
		b2f(alnum >= 5 && alnum <= 8),
		float64(min(r.groups, 6)),
		float64(min(r.lower, 6)),
		b2f(r.letters == 0),
		b2f(r.letters <= 1),
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// union is the bounds of bs.
func union(bs []box) box {
	u := bs[0]
	for _, b := range bs[1:] {
		u = box{x0: min(u.x0, b.x0), y0: min(u.y0, b.y0), x1: max(u.x1, b.x1), y1: max(u.y1, b.y1)}
	}
	return u
}

// candidates picks the proposals of judged to read, best verifier score
// first, at most maxReads: text lines no accepted plate covers, of a
// readable height and a line's aspect, with a line stacked right above or
// below read with them (a two-row plate), and first-stage proposals the
// verifiers are unsure of (readFrom to j.Accept), read on their quad.
func (j Judging) candidates(judged []verified) []candidate {
	var accepted []box
	for _, v := range judged {
		if j.score(v) >= j.Accept && (!v.text || j.score(v) >= j.Text) {
			accepted = append(accepted, v.box)
		}
	}
	covered := func(b box) bool {
		for _, a := range accepted {
			if b.inside(a) >= 0.5 {
				return true
			}
		}
		return false
	}
	order := make([]int, len(judged))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch pa, pb := judged[a].p, judged[b].p; {
		case pa > pb:
			return -1
		case pa < pb:
			return 1
		}
		return 0
	})
	var out []candidate
	used := make([]bool, len(judged))
	width := 0.0 // of the lines to read, at the reader's height
	for _, i := range order {
		if len(out) == maxReads {
			break
		}
		v := judged[i]
		if used[i] || j.score(v) >= j.Accept && (!v.text || j.score(v) >= j.Text) {
			continue
		}
		line := v.prop
		if !v.text {
			if v.p < readFrom {
				continue
			}
			line = v.box
		}
		var row []int // text lines side by side with it: the word groups of one row
		if v.text {
			for grown := true; grown; {
				grown = false
				for k, o := range judged {
					if k != i && !used[k] && o.text && !slices.Contains(row, k) && sameRow(line, o.prop) {
						line = union([]box{line, o.prop})
						row = append(row, k)
						grown = true
					}
				}
			}
		}
		if len(row) > 0 {
			line.line = Quad{} // the row's bounds, not one line's slant
		}
		if h, w := lineSize(line); h < minLineHeight || w < minAspect*h || w > maxAspect*h || covered(line) {
			continue
		}
		c := candidate{at: i, lines: []box{line}}
		take := append(row, i) // the proposals this candidate reads
		if v.text {
			for k, o := range judged {
				if k != i && !used[k] && !slices.Contains(row, k) && o.text && stacked(line, o.prop) {
					c.lines = append(c.lines, o.prop)
					take = append(take, k)
					break
				}
			}
			slices.SortFunc(c.lines, func(a, b box) int { return int(math.Copysign(1, a.y0-b.y0)) })
		}
		w := 0.0
		for _, l := range c.lines {
			h, lw := lineSize(l)
			w += textrec.Height * lw / h
		}
		if width+w > readWidth {
			continue // a narrower line further on may still fit
		}
		for _, k := range take {
			used[k] = true
		}
		width += w
		out = append(out, c)
	}
	return out
}

// stacked reports whether the text lines a and b lie one right above the
// other, as the two rows of a plate do: they overlap across at least half
// the narrower one's width, the gap between them is under half the taller
// one's height, and their heights are within a factor of 2.5.
func stacked(a, b box) bool {
	ha, hb := a.y1-a.y0, b.y1-b.y0
	if ha <= 0 || hb <= 0 || max(ha, hb) > 2.5*min(ha, hb) {
		return false
	}
	ov := min(a.x1, b.x1) - max(a.x0, b.x0)
	if ov < 0.5*min(a.x1-a.x0, b.x1-b.x0) {
		return false
	}
	gap := max(a.y0, b.y0) - min(a.y1, b.y1)
	return gap > -0.3*min(ha, hb) && gap < 0.5*max(ha, hb)
}

// sameRow reports whether the text lines a and b are parts of one row, as
// the detector splits a plate's groups of characters ("TN 02 BL 1234")
// when the gaps between them are wide: heights within a factor of 1.6,
// overlapping over at least 60% of the lower one's height, and a gap
// between them under the taller one's height.
func sameRow(a, b box) bool {
	ha, hb := a.y1-a.y0, b.y1-b.y0
	if ha <= 0 || hb <= 0 || max(ha, hb) > 1.6*min(ha, hb) {
		return false
	}
	if min(a.y1, b.y1)-max(a.y0, b.y0) < 0.6*min(ha, hb) {
		return false
	}
	return max(a.x0, b.x0)-min(a.x1, b.x1) < max(ha, hb)
}

// readLine reads the line b (photo pixels relative to the bounds' origin)
// of the photo v, rectified on its own quad where it has one.
func readLine(ctx context.Context, v view, b box) (textrec.Reading, error) {
	return readQuad(ctx, v, lineQuad(b))
}

// readQuad reads the text in the quad q (photo pixels relative to the
// bounds' origin) of the photo v, rectified.
func readQuad(ctx context.Context, v view, q Quad) (textrec.Reading, error) {
	o := v.photo.Min
	var tq textrec.Quad
	for i, p := range q {
		tq[i] = textrec.Point{X: p.X + float64(o.X), Y: p.Y + float64(o.Y)}
	}
	if v.src == nil {
		return textrec.Read(ctx, v.img, tq)
	}
	// A Source's region, reduced as far as the text keeps 48 pixels high.
	lo, hi := q.extent()
	most := 1
	for s := q.Height() / textrec.Height; float64(most*2) <= s; {
		most *= 2
	}
	r := image.Rect(int(math.Floor(lo.X))-1, int(math.Floor(lo.Y))-1, int(math.Ceil(hi.X))+2, int(math.Ceil(hi.Y))+2)
	img, g := v.src.Region(r.Add(o).Intersect(v.photo), most)
	for i := range tq {
		tq[i].X /= float64(g)
		tq[i].Y /= float64(g)
	}
	return textrec.Read(ctx, img, tq)
}

// readAll reads the candidates of judged on v and returns, for each, the
// judge's inputs.
func readAll(ctx context.Context, v view, judged []verified, cands []candidate) ([][]float64, error) {
	rss, err := readCandidates(ctx, v, cands)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(cands))
	for i, c := range cands {
		out[i] = features(judged[c.at], c, readOf(rss[i]), float64(v.photo.Dy()))
	}
	return out, nil
}

// readCandidates reads each candidate's lines on v.
func readCandidates(ctx context.Context, v view, cands []candidate) ([][]textrec.Reading, error) {
	out := make([][]textrec.Reading, len(cands))
	for i, c := range cands {
		out[i] = make([]textrec.Reading, len(c.lines))
		for k, l := range c.lines {
			r, err := readLine(ctx, v, l)
			if err != nil {
				return nil, err
			}
			out[i][k] = r
		}
	}
	return out, nil
}

// judgeRead is the judge's probability that a candidate with inputs f is a
// plate: logistic regression, its weights readJudge fit on the validation
// split (TestFitReadJudge).
func judgeRead(f []float64) float64 {
	s := 0.0
	for i, w := range readJudge {
		s += w * f[i]
	}
	return 1 / (1 + math.Exp(-s))
}

// readAccept is the judge's probability from which a candidate is a plate.
// On the validation split (web, dash-cam, Open Images, open-lpr;
// TestFitReadJudge, its training split's lines in the fit too) it accepts
// 116 of the 218 plates among the lines read for 48 that are not, 0.049 a
// photo (at 0.4: 132 for 64; at 0.6: 89 for 32); the judge before the
// shape features and the training lines accepted 75 for 25.
const readAccept = 0.5

// decide reads the candidates of judged on v and marks those the judge
// accepts: their quad grown to the lines read where it does not hold them.
func (j Judging) decide(ctx context.Context, v view, judged []verified) error {
	cands := j.candidates(judged)
	fs, err := readAll(ctx, v, judged, cands)
	if err != nil {
		return err
	}
	for i, c := range cands {
		p := judgeRead(fs[i])
		if p < readAccept {
			continue
		}
		d := &judged[c.at]
		d.read = p
		d.quad = holding(d.quad, union(append(c.lines, continuing(c.lines, judged)...)))
		lo, hi := d.quad.extent()
		d.box = box{x0: lo.X, y0: lo.Y, x1: hi.X, y1: hi.Y}
	}
	return nil
}

// continuing is the text lines of judged that continue one of lines along
// its own slant: the detector splits a turned plate's characters at a gap
// ("5511 | GYL"), and the row merge (sameRow), on level bounds, does not
// join the parts. A line continues another when its centre lies within
// half the other's height across it and within its height beyond either
// end along it.
func continuing(lines []box, judged []verified) []box {
	var out []box
	for _, l := range lines {
		q, ok := l.slanted()
		if !ok {
			continue
		}
		h, w := lineSize(l)
		ux, uy := q[1].X-q[0].X, q[1].Y-q[0].Y
		n := math.Hypot(ux, uy)
		if n == 0 || h <= 0 {
			continue
		}
		ux, uy = ux/n, uy/n
		cx, cy := (q[0].X+q[2].X)/2, (q[0].Y+q[2].Y)/2
		for _, v := range judged {
			o := v.prop
			if !v.text || o == l {
				continue
			}
			dx, dy := (o.x0+o.x1)/2-cx, (o.y0+o.y1)/2-cy
			along, across := dx*ux+dy*uy, -dx*uy+dy*ux
			if math.Abs(across) <= h/2 && math.Abs(along) <= w/2+h {
				out = append(out, o)
			}
		}
	}
	return out
}

// holding returns q, or where q does not hold the lines' bounds u, the
// rectangle that holds both.
func holding(q Quad, u box) Quad {
	lo, hi := q.extent()
	if u.x0 >= lo.X && u.y0 >= lo.Y && u.x1 <= hi.X && u.y1 <= hi.Y {
		return q
	}
	lo = Point{min(lo.X, u.x0), min(lo.Y, u.y0)}
	hi = Point{max(hi.X, u.x1), max(hi.Y, u.y1)}
	return Quad{lo, {hi.X, lo.Y}, hi, {lo.X, hi.Y}}
}

// readJudge are the judge's weights, in the order of features (fit by
// TestFitReadJudge on the validation split and the training split's lines).
var readJudge = []float64{-7.907, 0.4349, 0.1765, -0.2522, -0.2935, -0.4646, 1.098, -1.218, 0.9178, -0.8539, -0.3934, 1.365, 0.3132, 1.056, 2.859, 1.607, 0.2783, -1.616, 0.366, 0.3174, -0.4155, -0.1329, -0.7736}

// DetectUnread is Detect without the reader (Settings.Judge.Read off):
// bench plates compares the two for the reader's part.
func DetectUnread(ctx context.Context, img image.Image) ([]Plate, error) {
	s := DefaultSettings()
	s.Judge.Read = false
	vs, err := vehicles.Detect(ctx, img)
	if err != nil {
		return nil, fmt.Errorf("find vehicles: %w", err)
	}
	return detect(ctx, img, vs, nil, s)
}

// printedOf is what a reading holds, counted.
func printedOf(r reading) Printed {
	return Printed{Letters: r.letters, Digits: r.digits, Others: r.others, Lower: r.lower, Mean: r.mean}
}

// plateLike reports whether a reading reads like a plate: 4 or more
// letters and digits, a digit among them, mean confidence at least 0.5,
// and not a long number alone (a phone number painted on a van).
func plateLike(r reading) bool {
	return r.letters+r.digits >= 4 && r.digits >= 1 && r.mean >= 0.5 && !(r.digits >= 9 && r.letters == 0)
}

// textLines is the text lines of judged at least half inside q's bounds,
// top first, and the height of their bounds (0 for none).
func textLines(judged []verified, q Quad) ([]box, float64) {
	lo, hi := q.extent()
	qb := box{x0: lo.X, y0: lo.Y, x1: hi.X, y1: hi.Y}
	var lines []box
	for _, v := range judged {
		if v.text && v.prop.inside(qb) >= 0.5 {
			lines = append(lines, v.prop)
		}
	}
	if len(lines) == 0 {
		return nil, 0
	}
	slices.SortFunc(lines, func(a, b box) int { return cmp.Compare(a.y0, b.y0) })
	u := union(lines)
	return lines, u.y1 - u.y0
}
