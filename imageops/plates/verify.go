package plates

import (
	"context"
	_ "embed"
	"fmt"
	"image"
	"math"
	"slices"

	"carphoto/imageops/internal/nn"
)

// The second stage is a verifier trained by train/plates/verifier.py
// (batch norm folded into each convolution) on the first stage's proposals
// in the four plate sets' training photos, with the plates the labels miss
// (unlabelled.json, unlabelled-pending.json), windows turned up to 25°
// (--roll), plates repainted in other designs (--swap) and car photos with
// no plate (--plateless). It gives the plate's four corners (a PLQ layout).
//
//go:embed verifier.bin
var verifierBin []byte

// The verifier sees a window around each proposal, cut from the
// full-resolution photo: centred on the proposal's box (bw × bh),
// max(ctxW·bw, ctxH·bh) wide and half as high, resampled to inH × inW.
// Keep in step with train/plates/verifier.py.
const (
	inH, inW     = 48, 96
	ctxW, ctxH   = 1.75, 3.5
	maxProposals = 24 // the strongest proposals of a look (workSide, coarseSide) kept
)

// layout is a verifier's shape, as LAYOUTS in train/plates/verifier.py: its
// stem's channels, each depthwise-separable block's channels and stride (the
// window halves four times, to 3×6), the hidden layer's width, and the
// weights file's magic, which says which layout a file holds.
type layout struct {
	magic  string
	stem   int
	blocks []stage
	hidden int
}

type stage struct{ cout, stride int }

// Both give the plate logit, then the plate's four corners (x, y in units
// of the window, clockwise from the top-left).
var layouts = []layout{
	{magic: "PLQ1", stem: 12, blocks: []stage{{24, 2}, {24, 1}, {48, 2}, {48, 1}, {64, 2}}, hidden: 64},
	{magic: "PLQ2", stem: 12, blocks: []stage{{24, 2}, {32, 1}, {64, 2}, {64, 1}, {128, 2}, {128, 1}}, hidden: 64},
}

// verifier mirrors Verifier in train/plates/verifier.py layer for layer.
type verifier struct {
	stem     *nn.Conv
	blocks   []block
	fc1, fc2 *nn.Conv // fully connected, as 1×1 convolutions on a 1×1 map
}

func newVerifier(l layout) *verifier {
	v := &verifier{stem: &nn.Conv{Kind: nn.Full3, Cin: 3, Cout: l.stem, Stride: 2, ReLU: true}}
	cin := l.stem
	for _, s := range l.blocks {
		v.blocks = append(v.blocks, newBlock(cin, s.cout, s.stride))
		cin = s.cout
	}
	v.fc1 = point(cin*(inH/16)*(inW/16), l.hidden, true)
	v.fc2 = point(l.hidden, 9, false)
	return v
}

func (v *verifier) layers() []*nn.Conv {
	ls := []*nn.Conv{v.stem}
	for _, b := range v.blocks {
		ls = append(ls, b.dw, b.pw)
	}
	return append(ls, v.fc1, v.fc2)
}

// parseVerifier reads the weights file: a layout's magic, a tensor count,
// then each layer's weight and bias tensors (see nn.Reader).
func parseVerifier(data []byte) (*verifier, error) {
	for _, l := range layouts {
		if len(data) >= 4 && string(data[:4]) == l.magic {
			v := newVerifier(l)
			if err := readLayers(data, l.magic, "plate verifier weights", v.layers()); err != nil {
				return nil, err
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("plate verifier weights: bad magic")
}

// jury is the verifiers whose judgements are averaged.
type jury []*verifier

// embeddedJury is the embedded verifier (embedded).
func embeddedJury() (jury, error) {
	_, j, err := embedded()
	return j, err
}

// parseJury reads the jury's weights files, in the order given.
func parseJury(files [][]byte) (jury, error) {
	var j jury
	for _, data := range files {
		v, err := parseVerifier(data)
		if err != nil {
			return nil, err
		}
		j = append(j, v)
	}
	return j, nil
}

// forward returns the plate logit and the plate's corners (x, y, clockwise
// from the top-left) as fractions of the window's width and height.
func (v *verifier) forward(x *nn.Tensor) []float32 {
	x = v.stem.Apply(x)
	for _, b := range v.blocks {
		x = b.apply(x)
	}
	flat := &nn.Tensor{C: x.C * x.H * x.W, H: 1, W: 1, Data: x.Data}
	return v.fc2.Apply(v.fc1.Apply(flat)).Data
}

// win is a proposal's window in photo pixels (relative to the bounds' origin).
type win struct{ x, y, w, h float64 }

func windowOf(d box) win {
	bw, bh := max(d.x1-d.x0, 1), max(d.y1-d.y0, 1)
	ww := max(ctxW*bw, ctxH*bh, 8)
	wh := ww / 2
	return win{(d.x0+d.x1)/2 - ww/2, (d.y0+d.y1)/2 - wh/2, ww, wh}
}

// cut resamples the window of img to the verifier's input, normalised.
// A decoded JPEG's planes are averaged as they are and converted to RGB
// once per input pixel (the conversion is linear, so this is the same as
// averaging converted samples).
func cut(v view, w win) *nn.Tensor {
	img, k, px := v.at(w)
	t := nn.NewTensor(3, inH, inW)
	bounds := v.photo
	xs := windowSamples(w.x, w.w, inW, bounds.Dx(), bounds.Min.X, 3)
	ys := windowSamples(w.y, w.h, inH, bounds.Dy(), bounds.Min.Y, 3)
	r, g, b := t.Plane(0), t.Plane(1), t.Plane(2)
	if m, ok := img.(*image.YCbCr); ok {
		// Plane offsets are separable: row part plus column part. A
		// reduced region's pixel (x, y) is photo pixels (k·x, k·y) on.
		o, e := m.Rect.Min, m.Rect.Max
		reduce := func(p, lo, hi int) int { return min(max(p/k, lo), hi-1) }
		type at struct {
			y, c   int
			weight float32
		}
		offsets := func(ss [][]sample, f func(p int) at) [][]at {
			out := make([][]at, len(ss))
			all := make([]at, 0, len(ss)*len(ss[0])) // every output has as many samples
			for i, s := range ss {
				start := len(all)
				for _, p := range s {
					a := f(p.at)
					a.weight = p.weight
					all = append(all, a)
				}
				out[i] = all[start:len(all):len(all)]
			}
			return out
		}
		cols := offsets(xs, func(x int) at {
			x = reduce(x, o.X, e.X)
			return at{y: m.YOffset(x, o.Y) - m.YOffset(o.X, o.Y), c: m.COffset(x, o.Y) - m.COffset(o.X, o.Y)}
		})
		rows := offsets(ys, func(y int) at {
			y = reduce(y, o.Y, e.Y)
			return at{y: m.YOffset(o.X, y), c: m.COffset(o.X, y)}
		})
		for oy, sy := range rows {
			for ox, sx := range cols {
				var yy, cb, cr float32
				for _, py := range sy {
					for _, p := range sx {
						wt := py.weight * p.weight
						ci := py.c + p.c
						yy += wt * float32(m.Y[py.y+p.y])
						cb += wt * float32(m.Cb[ci])
						cr += wt * float32(m.Cr[ci])
					}
				}
				cb, cr = cb-128, cr-128
				i := oy*inW + ox
				r[i] = norm(yy + 1.402*cr)
				g[i] = norm(yy - 0.344136*cb - 0.714136*cr)
				b[i] = norm(yy + 1.772*cb)
			}
		}
		return t
	}
	for oy, sy := range ys {
		for ox, sx := range xs {
			var sr, sg, sb float32
			for _, py := range sy {
				for _, p := range sx {
					wt := py.weight * p.weight
					cr, cg, cb := px(p.at, py.at)
					sr += wt * cr
					sg += wt * cg
					sb += wt * cb
				}
			}
			i := oy*inW + ox
			r[i], g[i], b[i] = norm(sr), norm(sg), norm(sb)
		}
	}
	return t
}

// verified is a proposal the jury judged: the verifiers' (averaged) and the
// first stage's probabilities of its being a plate, and its refined box, in
// photo pixels relative to the bounds' origin.
type verified struct {
	p, first float64
	box      box
	quad     Quad    // the plate's corners (box is their bounds)
	text     bool    // proposed by the text detector
	prop     box     // the proposal judged (for a text proposal, its line)
	read     float64 // the reading judge's probability, when it accepted it (read.go)
}

// outright is the first verifier's log-odds (p ≈ 0.01) under which a
// proposal is rejected without asking the others: most proposals are
// grilles and lamps it is sure of, and each further look costs as much.
const outright = -4.6

// Relooking is the second look: a proposal whose jury log-odds is at least
// From is judged again, in a window cut around the box the first look
// refined: the verifiers learnt plates mostly from windows centred on them,
// and a proposal off a plate's centre is judged less surely. With Mean its
// log-odds is the mean of both looks' (else the second's), its box the
// second's. Chosen on the validation split (docs/research/plates.md, "A
// second look around the refined box"): the same plates found at 0.7, fewer
// false detections, more plates of turned photos.
//
// With Flip the second look judges the window and its mirror image and
// averages the two: the corners' errors of the two are partly independent.
// On the four sets' validation photos at 0.75 it found 12 more plates of
// 1165 (web +3, dash-cam −1, Open Images +2, open-lpr +8) for 2 more false
// detections (docs/research/plates.md). Times is how many times a proposal
// is judged again, each time around the box the last look gave.
type Relooking struct {
	From  float64
	Mean  bool
	Flip  bool
	Times int
}

// verify judges each proposal (photo pixels) on img: every verifier of
// st's jury looks at the same window, unless the first rejects it
// outright; their plate log-odds and boxes are averaged. A proposal of
// log-odds at least s.Relook.From is judged again around the box they
// refined.
func (st *Stages) verify(ctx context.Context, img view, props []box, s Settings) ([]verified, error) {
	j := st.jury
	out := make([]verified, 0, len(props))
	for _, d := range props {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l, b, q := j.judge(img, d)
		for range s.Relook.Times {
			if l < s.Relook.From || b.x1 <= b.x0 || b.y1 <= b.y0 {
				break
			}
			l2, b2, q2 := j.judge(img, b)
			if s.Relook.Flip {
				l2, b2, q2 = j.judgeBoth(img, b)
			}
			if s.Relook.Mean {
				l2 = (l + l2) / 2
			}
			l, b, q = l2, b2, q2
		}
		out = append(out, verified{p: 1 / (1 + math.Exp(-l)), first: d.score, box: b, quad: q, text: d.text, prop: d})
	}
	return out, nil
}

// judgeBoth is judge averaged with the jury's judgement of the same window
// mirrored left to right, its corners mirrored back.
func (j jury) judgeBoth(img view, d box) (float64, box, Quad) {
	w := windowOf(d)
	x := cut(img, w)
	l, q := j.judgeWindow(x, w)
	mirror(x)
	lm, qm := j.judgeWindow(x, w)
	// Mirrored back, the mirror's top-right corner is the plate's top-left.
	at := func(p Point) Point { return Point{2*w.x + w.w - p.X, p.Y} }
	qm = Quad{at(qm[1]), at(qm[0]), at(qm[3]), at(qm[2])}
	for i := range q {
		q[i] = Point{(q[i].X + qm[i].X) / 2, (q[i].Y + qm[i].Y) / 2}
	}
	lo, hi := q.extent()
	return (l + lm) / 2, box{x0: lo.X, y0: lo.Y, x1: hi.X, y1: hi.Y}, q
}

// mirror turns x left to right in place.
func mirror(x *nn.Tensor) {
	for c := range x.C {
		p := x.Plane(c)
		for y := range x.H {
			slices.Reverse(p[y*x.W : (y+1)*x.W])
		}
	}
}

// judge gives the jury's log-odds that the window around d holds a plate,
// the plate's corners (averaged, photo pixels) and their bounds.
func (j jury) judge(img view, d box) (float64, box, Quad) {
	w := windowOf(d)
	l, q := j.judgeWindow(cut(img, w), w)
	lo, hi := q.extent()
	return l, box{x0: lo.X, y0: lo.Y, x1: hi.X, y1: hi.Y}, q
}

// judgeWindow gives the jury's log-odds that the window w, cut as x, holds
// a plate and the plate's corners (averaged, photo pixels).
func (j jury) judgeWindow(x *nn.Tensor, w win) (float64, Quad) {
	var sum [9]float64
	n := 0.0
	for k, v := range j {
		if k > 0 && sum[0]/n < outright {
			break // rejected outright by those asked so far: not worth another look
		}
		for i, o := range v.forward(x) {
			sum[i] += float64(o)
		}
		n++
	}
	at := func(i int) Point { return Point{w.x + sum[i]/n*w.w, w.y + sum[i+1]/n*w.h} }
	return sum[0] / n, Quad{at(1), at(3), at(5), at(7)}
}
