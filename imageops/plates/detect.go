package plates

import (
	"carphoto/imageops/internal/nn"
	"cmp"
	"context"
	"fmt"
	"image"
	"math"
	"slices"
)

// workSide is the long side, in pixels, of the image the network sees. A
// 12-megapixel photo is shrunk to 640×480, a 400-pixel web photo enlarged:
// the network was trained at this scale (train/plates/train.py, WORK).
const workSide = 640

// Settings are what an experiment varies in the finder (the tuning tools
// of train/plates and their PLATES_* variables); Detect and DetectIn run
// DefaultSettings(). A setting is a value passed down, never a package
// variable.
type Settings struct {
	WorkSide int       // the first stage's look, as workSide
	Propose  Decoding  // how the first stage's cells become proposals
	Judge    Judging   // the score that reports a plate, and the NMS
	Relook   Relooking // the second look at a proposal
	// A proposal scoring at least ContextFrom after the jury gets
	// ContextWeight of its log-odds from the context verifiers' mean
	// (Networks.Context; the product runs none).
	ContextWeight, ContextFrom float64
}

// DefaultSettings are the settings the product runs.
func DefaultSettings() Settings {
	return Settings{
		WorkSide: workSide,
		// Proposing is deliberately permissive: at this threshold one of
		// the 24 strongest proposals at workSide lies on 95.6% of the web
		// plates and 99.2% of the dash-cam plates of the validation photos
		// (IoU ≥ 0.3 or centre inside), and the verifiers sort them.
		Propose: Decoding{Threshold: 0.08, NMSIoU: 0.35},
		// Judging was set on the validation split (train/plates/README.md),
		// never on held-out photos.
		Judge:         Judging{Accept: 0.75, First: 0.25, NMSIoU: 0.3, Text: 0.95, Within: 0.5, Read: true},
		Relook:        Relooking{From: -1.5, Mean: true, Flip: true, Times: 1},
		ContextWeight: 1.0 / 3,
		ContextFrom:   0.3,
	}
}

// stride is the network's output cell size in working pixels.
const stride = 4

// Decoding holds the first stage's settings: how the network's cells
// become proposals.
type Decoding struct {
	Threshold float64 // a peak cell's plate probability to propose a box
	NMSIoU    float64 // boxes overlapping a stronger one this much are dropped
}

// Judging holds the second stage's settings.
type Judging struct {
	Accept float64 // the combined probability (score) to report a plate
	First  float64 // the weight of the first stage's log-odds in the score
	NMSIoU float64 // refined boxes overlapping a stronger one this much are dropped
	// Text is the score a text detector's proposal needs: the verifiers
	// learnt from the first stage's proposals, and judge text that is no
	// plate (signs, badges, captions) less surely.
	Text float64
	// Within is the share of a weaker detection's box lying inside a
	// stronger one's that makes it part of that plate, not a plate of its
	// own: the dealer's text on a plate's frame, a character group of a
	// large plate. Its IoU with the plate is small, so the NMS alone kept
	// it, and plate-logo painted a second design over the first.
	Within float64
	// Read has the lines that need it read and judged (read.go): a
	// proposal the judge accepts is a plate whatever Accept and Text say.
	Read bool
}

// Detect finds every licence plate in img (displayed orientation) and
// returns each as a perspective quad, clockwise from top-left, with the
// region to hide around it and a score in [0,1]. An image with no plate
// gives an empty slice.
//
// Two stages: a small fully-convolutional network on the photo resized to
// workSide, and again to coarseSide for close-ups, proposes boxes
// generously, then the verifiers (a jury) look at each of the strongest
// proposals again in a window cut from the full-resolution photo, reject
// what is not a plate and give the plate's four corners.
func Detect(ctx context.Context, img image.Image) ([]Plate, error) {
	return detect(ctx, img, nil, DefaultSettings())
}

// detect is Detect with the networks st (nil: the embedded ones) and
// settings s.
func detect(ctx context.Context, img image.Image, st *Stages, s Settings) ([]Plate, error) {
	b := img.Bounds()
	if b.Empty() {
		return []Plate{}, nil
	}
	st, err := networks(ctx, st)
	if err != nil {
		return nil, err
	}
	props, err := st.net.proposeAll(ctx, img, 1, s)
	if err != nil {
		return nil, err
	}
	v := wholeView(img)
	judged, err := st.verify(ctx, v, props, s)
	if err != nil {
		return nil, err
	}
	if s.Judge.Read {
		if err := s.Judge.decide(ctx, v, judged); err != nil {
			return nil, err
		}
	}
	return s.Judge.plates(judged, b), nil
}

// Stages are the networks the finder runs: the first stage, the jury of
// verifiers and any context verifiers (the product runs none). The
// product's are embedded and loaded once; NewStages loads others for
// research and is the only way to make a Stages (stages.go).
type Stages struct {
	net     *net
	jury    jury
	context []*verifier
}

// networks returns st, or when st is nil the embedded networks, unless
// ctx is done.
func networks(ctx context.Context, st *Stages) (*Stages, error) {
	if st == nil {
		n, err := embeddedNet()
		if err != nil {
			return nil, err
		}
		j, err := embeddedJury()
		if err != nil {
			return nil, err
		}
		st = &Stages{net: n, jury: j}
	}
	return st, ctx.Err()
}

// coarseSide is the long side, in pixels, of a second, coarse look at the
// photo. A plate that fills much of the frame (a close-up) is larger at
// workSide than any the network learnt from and it proposes parts of it; at
// this size it is of a size the network knows. On validation photos cropped
// so that a plate spans 60–100% of the frame's width this raised recall
// from 0.18–0.84 to 0.86–0.98, with the uncropped photos' figures unchanged
// (docs/BENCHMARKS.md).
const coarseSide = 192

// coarseExtra is the most proposals the coarse look adds.
const coarseExtra = 4

// propose runs the first stage on img at s.WorkSide and at coarseSide: the
// strongest proposals, in photo pixels relative to the bounds' origin.
// (A third, fine look at 960 px for photos under workSide found one more
// of 89 validation web plates and cost a quarter of such a photo's time:
// dropped, docs/research/plates.md.)
func (n *net) propose(ctx context.Context, img image.Image, s Settings) ([]box, error) {
	props, err := n.proposeAt(ctx, img, s.WorkSide, s.Propose)
	if err != nil {
		return nil, err
	}
	coarse, err := n.proposeAt(ctx, img, coarseSide, s.Propose)
	if err != nil {
		return nil, err
	}
	return s.Propose.merge(props, coarse, coarseExtra), nil
}

// proposeAt runs the network on img resized to a long side of side pixels,
// its cells decoded into proposals as dec says.
func (n *net) proposeAt(ctx context.Context, img image.Image, side int, dec Decoding) ([]box, error) {
	x, s := prepare(img, side)
	out, err := n.forward(ctx, x)
	nn.Free(x)
	if err != nil {
		return nil, err
	}
	defer nn.Free(out)
	return dec.proposals(out, img.Bounds(), s), nil
}

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

// score is a verified proposal's probability of being a plate: the
// verifiers' averaged log-odds plus, weighted by j.First, the first
// stage's, so that a window the verifiers like but the first stage barely
// proposed needs more of their confidence.
func (j Judging) score(v verified) float64 {
	return 1 / (1 + math.Exp(-(logOdds(v.p) + j.First*logOdds(v.first))))
}

func logOdds(p float64) float64 {
	p = clamp(p, 1e-6, 1-1e-6)
	return math.Log(p / (1 - p))
}

// plates keeps the proposals whose score clears j.Accept (j.Text for a
// text proposal), strongest first, the first stage's before the text's,
// drops refined boxes that overlap a stronger one, and maps the rest to
// plates, their quads the corners the jury gave.
func (j Judging) plates(judged []verified, b image.Rectangle) []Plate {
	type scored struct {
		verified
		score float64
	}
	all := make([]scored, len(judged))
	for i, v := range judged {
		all[i] = scored{v, j.score(v)}
	}
	// The first stage's plates come first: a text proposal only fills a
	// gap they leave. On the same plate its window, centred on the
	// characters, gives a quad that reaches the plate's edges less often.
	slices.SortStableFunc(all, func(a, b scored) int {
		if a.text != b.text {
			return cmp.Compare(b2i(a.text), b2i(b.text))
		}
		return cmp.Compare(b.score, a.score)
	})
	found := []Plate{}
	var kept []box
next:
	for _, v := range all {
		if v.read == 0 && (v.score < j.Accept || v.text && v.score < j.Text) || v.box.x1 <= v.box.x0 || v.box.y1 <= v.box.y0 {
			continue
		}
		for _, k := range kept {
			if v.box.iou(k) >= j.NMSIoU || v.box.inside(k) >= j.Within {
				continue next
			}
		}
		kept = append(kept, v.box)
		p := plateOf(v.quad, v.score, b)
		p.lines, p.TextHeight = textLines(judged, v.quad)
		p.origin = Point{float64(b.Min.X), float64(b.Min.Y)}
		found = append(found, p)
	}
	return found
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
}

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

// plateOf maps the corners the jury gave (photo pixels relative to b.Min)
// and its score to a Plate. Corners that do not make a convex quad
// clockwise from the top-left (a confused network) give way to their
// bounding rectangle.
func plateOf(q Quad, score float64, b image.Rectangle) Plate {
	for i := range q {
		q[i].X += float64(b.Min.X)
		q[i].Y += float64(b.Min.Y)
	}
	if !clockwiseConvex(q) {
		lo, hi := q.extent()
		q = Quad{lo, {hi.X, lo.Y}, hi, {lo.X, hi.Y}}
	}
	return Plate{Quad: clampQuad(q, b), Hide: clampQuad(HideOf(q), b), Score: score}
}

// clockwiseConvex reports whether q turns the same way, clockwise on
// screen (y down), at every corner.
func clockwiseConvex(q Quad) bool {
	for i := range q {
		a, c, d := q[i], q[(i+1)%4], q[(i+2)%4]
		if (c.X-a.X)*(d.Y-c.Y)-(c.Y-a.Y)*(d.X-c.X) <= 0 {
			return false
		}
	}
	return true
}

// clampQuad moves q's corners into the rectangle r.
func clampQuad(q Quad, r image.Rectangle) Quad {
	for i, p := range q {
		q[i] = Point{clamp(p.X, float64(r.Min.X), float64(r.Max.X)), clamp(p.Y, float64(r.Min.Y), float64(r.Max.Y))}
	}
	return q
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(v, hi)) }

// prepare resizes img so its long side is side pixels (box filter when
// shrinking, bilinear when enlarging), pads it to a multiple of 32 with
// mid-grey, and normalises it as the training program does. It returns the
// tensor and the scale from photo to working pixels.
func prepare(img image.Image, side int) (*nn.Tensor, float64) {
	b := img.Bounds()
	s := float64(side) / float64(max(b.Dx(), b.Dy()))
	nw := max(1, int(math.Round(float64(b.Dx())*s)))
	nh := max(1, int(math.Round(float64(b.Dy())*s)))
	t := nn.NewTensor(3, (nh+31)/32*32, (nw+31)/32*32)
	xs := windowSamples(0, float64(b.Dx()), nw, b.Dx(), b.Min.X, 2)
	ys := windowSamples(0, float64(b.Dy()), nh, b.Dy(), b.Min.Y, 2)
	r, g, bl := t.Plane(0), t.Plane(1), t.Plane(2)
	if m, ok := img.(*image.YCbCr); ok && s < 1 && len(xs[0]) == 2 && len(ys[0]) == 2 {
		shrinkYCbCr2(t, m, xs, ys, nw, nh)
		return t, s
	}
	if m, ok := img.(*image.YCbCr); ok {
		// Average luma and chroma, then convert once per working pixel.
		// Offsets are separable in x and y for every subsampling ratio.
		o := m.Rect.Min
		yx, cx := make([][2]int, 0, 3*nw), make([]int, nw+1)
		for ox := range nw {
			cx[ox] = len(yx)
			for _, p := range xs[ox] {
				yx = append(yx, [2]int{m.YOffset(p.at, o.Y) - m.YOffset(o.X, o.Y), m.COffset(p.at, o.Y) - m.COffset(o.X, o.Y)})
			}
		}
		cx[nw] = len(yx)
		type row struct {
			y, c   int
			weight float32
		}
		var rows []row
		for oy := range nh {
			rows = rows[:0]
			for _, py := range ys[oy] {
				rows = append(rows, row{m.YOffset(o.X, py.at), m.COffset(o.X, py.at), py.weight})
			}
			for ox := range nw {
				var sy, scb, scr, sw float32
				if s < 1 {
					// Shrinking: the samples weigh alike; sum in integers.
					var iy, icb, icr int
					for _, py := range rows {
						for _, off := range yx[cx[ox]:cx[ox+1]] {
							ci := py.c + off[1]
							iy += int(m.Y[py.y+off[0]])
							icb += int(m.Cb[ci])
							icr += int(m.Cr[ci])
						}
					}
					sy, scb, scr, sw = float32(iy), float32(icb), float32(icr), float32(len(rows)*(cx[ox+1]-cx[ox]))
				} else {
					for _, py := range rows {
						for k, off := range yx[cx[ox]:cx[ox+1]] {
							wt := xs[ox][k].weight * py.weight
							ci := py.c + off[1]
							sy += wt * float32(m.Y[py.y+off[0]])
							scb += wt * float32(m.Cb[ci])
							scr += wt * float32(m.Cr[ci])
							sw += wt
						}
					}
				}
				yy, cb, cr := sy/sw, scb/sw-128, scr/sw-128
				i := oy*t.W + ox
				r[i] = norm(yy + 1.402*cr)
				g[i] = norm(yy - 0.344136*cb - 0.714136*cr)
				bl[i] = norm(yy + 1.772*cb)
			}
		}
		return t, s
	}
	px := pixelReader(img)
	for oy := range nh {
		for ox := range nw {
			var sr, sg, sb, sw float32
			for _, sy := range ys[oy] {
				for _, sx := range xs[ox] {
					cr, cg, cb := px(sx.at, sy.at)
					wt := sx.weight * sy.weight
					sr += wt * cr
					sg += wt * cg
					sb += wt * cb
					sw += wt
				}
			}
			i := oy*t.W + ox
			r[i], g[i], bl[i] = norm(sr/sw), norm(sg/sw), norm(sb/sw)
		}
	}
	return t, s
}

// shrinkYCbCr2 is prepare's shrink of a YCbCr image read at 2×2 samples a
// working pixel (every photo whose long side is 1–2 times side, as a JPEG's
// coefficient preview of a 12-megapixel photo is): the same sums as the
// general loop, with the samples' plane offsets laid out flat.
func shrinkYCbCr2(t *nn.Tensor, m *image.YCbCr, xs, ys [][]sample, nw, nh int) {
	o := m.Rect.Min
	y0, c0 := m.YOffset(o.X, o.Y), m.COffset(o.X, o.Y)
	xy, xc := make([]int, 2*nw), make([]int, 2*nw)
	for ox, ss := range xs {
		for j, p := range ss {
			xy[2*ox+j], xc[2*ox+j] = m.YOffset(p.at, o.Y)-y0, m.COffset(p.at, o.Y)-c0
		}
	}
	r, g, bl := t.Plane(0), t.Plane(1), t.Plane(2)
	for oy, ss := range ys {
		ya, yb := m.YOffset(o.X, ss[0].at), m.YOffset(o.X, ss[1].at)
		ca, cb := m.COffset(o.X, ss[0].at), m.COffset(o.X, ss[1].at)
		yRowA, yRowB := m.Y[ya:], m.Y[yb:]
		cbA, cbB, crA, crB := m.Cb[ca:], m.Cb[cb:], m.Cr[ca:], m.Cr[cb:]
		out := oy * t.W
		for ox := range nw {
			x0, x1, k0, k1 := xy[2*ox], xy[2*ox+1], xc[2*ox], xc[2*ox+1]
			iy := int(yRowA[x0]) + int(yRowA[x1]) + int(yRowB[x0]) + int(yRowB[x1])
			icb := int(cbA[k0]) + int(cbA[k1]) + int(cbB[k0]) + int(cbB[k1])
			icr := int(crA[k0]) + int(crA[k1]) + int(crB[k0]) + int(crB[k1])
			yy, u, v := float32(iy)/4, float32(icb)/4-128, float32(icr)/4-128
			i := out + ox
			r[i] = norm(yy + 1.402*v)
			g[i] = norm(yy - 0.344136*u - 0.714136*v)
			bl[i] = norm(yy + 1.772*u)
		}
	}
}

// norm maps 0..255 to the network's input range; mid-grey is 0.
func norm(v float32) float32 { return (v/255 - 0.5) / 0.25 }

type sample struct {
	at     int
	weight float32
}

// windowSamples lists, for each of n outputs covering [o, o+length) of an
// axis of src pixels, the source positions and weights: the two bilinear
// neighbours when enlarging, or up to most evenly spread samples inside
// the output pixel's footprint when shrinking (a sparse box filter). The
// first stage takes 2 (exact enough for proposals, which the verifier checks
// at full resolution; a 12-megapixel photo is read at about a tenth of its
// pixels, 8 ms less than 3), the verifier 3. Positions are
// clamped to the photo.
func windowSamples(o, length float64, n, src, origin, most int) [][]sample {
	out := make([][]sample, n)
	scale := length / float64(n)
	k := 2 // samples an output: two bilinear neighbours, or up to most
	if scale > 1 {
		k = min(most, int(math.Ceil(scale-1e-9)))
	}
	all := make([]sample, n*k) // one allocation for every output's samples
	for i := range out {
		out[i] = all[i*k : (i+1)*k : (i+1)*k]
		if scale <= 1 {
			f := clamp(o+(float64(i)+0.5)*scale-0.5, 0, float64(src-1))
			j := int(f)
			fr := float32(f - float64(j))
			out[i][0], out[i][1] = sample{origin + j, 1 - fr}, sample{origin + min(j+1, src-1), fr}
			continue
		}
		for s := range k {
			f := o + (float64(i)+(float64(s)+0.5)/float64(k))*scale
			j := max(0, min(src-1, int(math.Floor(f))))
			out[i][s] = sample{origin + j, 1 / float32(k)}
		}
	}
	return out
}

// pixelReader returns a fast reader of a pixel's 8-bit RGB for the common
// decoded image types, falling back to image.Image.At.
func pixelReader(img image.Image) func(x, y int) (r, g, b float32) {
	switch m := img.(type) {
	case *image.RGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			return float32(m.Pix[i]), float32(m.Pix[i+1]), float32(m.Pix[i+2])
		}
	case *image.NRGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			a := float32(m.Pix[i+3]) / 255
			// Transparent areas read as mid-grey, as padding does.
			return float32(m.Pix[i])*a + 128*(1-a), float32(m.Pix[i+1])*a + 128*(1-a), float32(m.Pix[i+2])*a + 128*(1-a)
		}
	case *image.Gray:
		return func(x, y int) (float32, float32, float32) {
			v := float32(m.Pix[m.PixOffset(x, y)])
			return v, v, v
		}
	case *image.YCbCr:
		return func(x, y int) (float32, float32, float32) {
			yy := float32(m.Y[m.YOffset(x, y)])
			ci := m.COffset(x, y)
			cb, cr := float32(m.Cb[ci])-128, float32(m.Cr[ci])-128
			return yy + 1.402*cr, yy - 0.344136*cb - 0.714136*cr, yy + 1.772*cb
		}
	}
	return func(x, y int) (float32, float32, float32) {
		r, g, b, _ := img.At(x, y).RGBA()
		return float32(r >> 8), float32(g >> 8), float32(b >> 8)
	}
}

// String describes a plate for logs and the CLI's summary.
func (p Plate) String() string {
	r := p.Quad.Bounds()
	return fmt.Sprintf("plate %dx%d at (%d,%d) score %.2f", r.Dx(), r.Dy(), r.Min.X, r.Min.Y, p.Score)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
