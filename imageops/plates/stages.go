//go:build platestune || platesaudit || platesmine

package plates

import (
	"context"
	"image"
)

// The finder taken apart, stage by stage, for the research tools of
// train/plates (the tuning sweeps, the mining of the verifier's training
// windows, the review sheets): they run other networks (NewStages) and
// other Settings, and score each stage's answers. The product runs
// Detect and DetectIn; nothing here changes what they do.

// Networks are the weights files research runs in place of the embedded
// ones, each as its training program writes it.
type Networks struct {
	First []byte   // the first stage (train/plates/train.py); nil: the embedded one
	Jury  [][]byte // the verifiers, averaged in this order (verifier.py); none: the embedded one
}

// NewStages loads the networks nw names.
func NewStages(nw Networks) (*Stages, error) {
	st, err := networks(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	out := *st
	if nw.First != nil {
		if out.net, err = parseNet(nw.First); err != nil {
			return nil, err
		}
	}
	if len(nw.Jury) > 0 {
		if out.jury, err = parseJury(nw.Jury); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// CoarseSide is the long side, in pixels, of the first stage's second,
// coarse look at a photo (Settings.WorkSide is the first's).
const CoarseSide = coarseSide

// Proposal is a box proposed for the jury to judge, in photo pixels
// relative to the photo's bounds' origin.
type Proposal struct {
	Score          float64 // the first stage's probability of a plate (a text proposal's is fixed)
	X0, Y0, X1, Y1 float64
	Text           bool // the text detector's, not the first stage's
}

// IoU is p's area shared with q over the area of their union.
func (p Proposal) IoU(q Proposal) float64 { return p.box().iou(q.box()) }

// Inside is the share of p's area that lies inside q.
func (p Proposal) Inside(q Proposal) float64 { return p.box().inside(q.box()) }

func (p Proposal) box() box {
	return box{score: p.Score, x0: p.X0, y0: p.Y0, x1: p.X1, y1: p.Y1, text: p.Text}
}

func proposalsOf(bs []box) []Proposal {
	out := make([]Proposal, len(bs))
	for i, b := range bs {
		out[i] = Proposal{Score: b.score, X0: b.x0, Y0: b.y0, X1: b.x1, Y1: b.y1, Text: b.text}
	}
	return out
}

// Detect is the finder's Detect with st's networks and settings s, the
// vehicle rules left out.
func (st *Stages) Detect(ctx context.Context, img image.Image, s Settings) ([]Plate, error) {
	return detect(ctx, img, nil, st, s)
}

// Propose runs the first stage on img, its look at s.WorkSide and its
// coarse one: the proposals Detect gives the jury besides the text
// detector's (TextProposals).
func (st *Stages) Propose(ctx context.Context, img image.Image, s Settings) ([]Proposal, error) {
	props, err := st.net.propose(ctx, img, s)
	if err != nil {
		return nil, err
	}
	return proposalsOf(props), nil
}

// ProposeAt runs the first stage on img resized to a long side of side
// pixels alone (s.WorkSide or CoarseSide, say), its cells decoded as
// s.Propose says.
func (st *Stages) ProposeAt(ctx context.Context, img image.Image, side int, s Settings) ([]Proposal, error) {
	props, err := st.net.proposeAt(ctx, img, side, s.Propose)
	if err != nil {
		return nil, err
	}
	return proposalsOf(props), nil
}

// TextProposals are the text detector's regions of img, the proposals
// Detect adds to the first stage's, strongest first.
func TextProposals(ctx context.Context, img image.Image) ([]Proposal, error) {
	props, err := textProposals(ctx, img, textSide, 1)
	if err != nil {
		return nil, err
	}
	return proposalsOf(props), nil
}

// Verdict is the jury's judgement of a proposal, before any threshold
// (Settings.Plates).
type Verdict struct{ v verified }

// Verify has the jury judge each proposal on img, looking again as
// s.Relook says: Detect's second stage.
func (st *Stages) Verify(ctx context.Context, img image.Image, props []Proposal, s Settings) ([]Verdict, error) {
	bs := make([]box, len(props))
	for i, p := range props {
		bs[i] = p.box()
	}
	vs, err := st.verify(ctx, wholeView(img), bs, s)
	if err != nil {
		return nil, err
	}
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		out[i] = Verdict{v}
	}
	return out, nil
}

// Look is the jury's first look at p on img, before any second one: its
// log-odds that the window around p holds a plate, and the bounds of the
// plate's corners it gives (a proposal of no score).
func (st *Stages) Look(img image.Image, p Proposal) (float64, Proposal) {
	l, b, _ := st.jury.judge(wholeView(img), p.box())
	return l, proposalsOf([]box{b})[0]
}

// Score is a verdict's probability of being a plate, the first stage's
// weighed in as s.Judge says.
func (s Settings) Score(v Verdict) float64 { return s.Judge.score(v.v) }

// Plates are the plates Detect reports from the jury's verdicts on a photo
// with bounds b: those whose score clears s.Judge's thresholds, less
// those a stronger one overlaps.
func (s Settings) Plates(verdicts []Verdict, b image.Rectangle) []Plate {
	vs := make([]verified, len(verdicts))
	for i, v := range verdicts {
		vs[i] = v.v
	}
	return s.Judge.plates(vs, b)
}
