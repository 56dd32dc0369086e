package plates

import (
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/vehicles"
	"cmp"
	"context"
	"fmt"
	"image"
	"math"
	"slices"
)

// Detect finds every licence plate in img (displayed orientation) and
// returns each as a perspective quad, clockwise from top-left, with the
// region to hide around it and a score in [0,1]. An image with no plate
// gives an empty slice.
//
// Two stages: a small fully-convolutional network on the photo resized to
// workSide, and again to coarseSide for close-ups, proposes boxes
// generously, then the verifiers (a jury) look at each of the strongest
// proposals again in a window cut from the full-resolution photo, reject
// what is not a plate and give the plate's four corners. The photo's
// vehicles (imageops/vehicles) bound what is kept (vehicle.go).
func Detect(ctx context.Context, img image.Image) ([]Plate, error) {
	if img.Bounds().Empty() {
		return []Plate{}, nil
	}
	vs, err := vehicles.Detect(ctx, img)
	if err != nil {
		return nil, fmt.Errorf("find vehicles: %w", err)
	}
	return DetectAmong(ctx, img, vs)
}

// DetectAmong is Detect with the photo's vehicles already found (by
// vehicles.Detect on img): a caller that runs the detector for its own
// ends passes its result, and the photo is looked at once. vs nil leaves
// the vehicle rules out.
func DetectAmong(ctx context.Context, img image.Image, vs []vehicles.Object) ([]Plate, error) {
	return detect(ctx, img, vs, nil, DefaultSettings())
}

// detect is DetectAmong with the networks st (nil: the embedded ones) and
// settings s.
func detect(ctx context.Context, img image.Image, vs []vehicles.Object, st *Stages, s Settings) ([]Plate, error) {
	if img.Bounds().Empty() {
		return []Plate{}, nil
	}
	return find(ctx, sight{preview: img, scale: 1, regions: subImages(img), view: wholeView(img)}, vs, st, s)
}

// sight is what the finder reads of a photo: the first stage's input
// (the photo itself, or a Source's preview at scale preview pixels a photo
// pixel) with the regions its text detector may read closer, and the view
// the verifiers cut their windows from.
type sight struct {
	preview image.Image
	scale   float64
	regions regionFunc
	view    view
}

// find is the finder's one pipeline, on a decoded photo (detect) and on a
// Source (DetectInAmong) alike: the first stage proposes on the preview,
// the jury judges each proposal on the view's pixels, the lines that need
// it are read (s.Judge.Read), the plates that clear s.Judge are reported,
// and the vehicles vs bound what is kept. st nil runs the embedded
// networks.
func find(ctx context.Context, l sight, vs []vehicles.Object, st *Stages, s Settings) ([]Plate, error) {
	st, err := networks(ctx, st)
	if err != nil {
		return nil, err
	}
	b := l.view.photo
	props, err := st.net.proposeAll(ctx, l.preview, l.scale, image.Rect(0, 0, b.Dx(), b.Dy()), l.regions, s)
	if err != nil {
		return nil, err
	}
	judged, err := st.verify(ctx, l.view, props, s)
	if err != nil {
		return nil, err
	}
	if s.Judge.Read {
		if err := s.Judge.decide(ctx, l.view, judged); err != nil {
			return nil, err
		}
	}
	found, err := s.Judge.found(ctx, l.view, judged, b)
	if err != nil {
		return nil, err
	}
	return onVehicles(found, vs), nil
}

// Stages are the networks the finder runs: the first stage and the jury of
// verifiers. The product's are embedded and loaded once; NewStages loads
// others for research and is the only way to make a Stages (stages.go).
type Stages struct {
	net  *net
	jury jury
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
// (docs/research/benchmarks-log.md).
const coarseSide = 192

// coarseExtra is the most proposals the coarse look adds.
const coarseExtra = 4

// propose runs the first stage on img at s.WorkSide and at coarseSide: the
// strongest proposals, in photo pixels relative to the bounds' origin.
// Why two looks and not three: docs/research/plates.md.
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
