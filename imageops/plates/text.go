package plates

import (
	"context"
	"image"

	"carphoto/imageops/textdet"
)

// A plate is text that anyone can read, so the finder also looks for text:
// PP-OCRv4's text detector (imageops/textdet) runs on the photo at
// textSide, and each line of text it finds becomes a proposal beside the
// first stage's, judged by the same verifiers. The first stage, trained on
// the plate sets, misses plates of designs and sources it never saw
// (yellow, black, behind a watermark); the text detector, trained on text
// of every kind, marks them (docs/BENCHMARKS.md).
const (
	// textSide is the long side, in pixels, of the text detector's look: at
	// 640 it marks fewer small plates (248 against 256 of 259).
	textSide = 960
	// maxText is the most text regions proposed, strongest first.
	maxText = 32
)

// textPrior is the first stage's probability a text proposal carries into
// its score (Judging.score): even odds, so that the text detector, which
// says "text", not "plate", leaves the judgement to the verifiers, and
// Judging.Text how sure they must be.
const textPrior = 0.5

// textProposals returns the text regions of img as proposals, in the
// pixels of a photo of which img is a reduction by scale (img pixels per
// photo pixel).
func textProposals(ctx context.Context, img image.Image, scale float64) ([]box, error) {
	regs, err := textdet.Find(ctx, img, textSide)
	if err != nil {
		return nil, err
	}
	regs = regs[:min(len(regs), maxText)]
	o := img.Bounds().Min
	props := make([]box, 0, len(regs))
	for _, r := range regs {
		lo, hi := r.Quad.Extent()
		props = append(props, box{
			score: textPrior, text: true,
			x0: (lo.X - float64(o.X)) / scale, y0: (lo.Y - float64(o.Y)) / scale,
			x1: (hi.X - float64(o.X)) / scale, y1: (hi.Y - float64(o.Y)) / scale,
		})
	}
	return props, nil
}

// proposeAll returns the first stage's proposals and then the text
// detector's for img, a reduction by scale of the photo, in the photo's
// pixels. The text detector runs beside the first stage, on another core
// when one is free: a photo's answer then waits for the longer of the two
// looks, not their sum (the CPU they take is the same).
func (n *net) proposeAll(ctx context.Context, img image.Image, scale float64, s Settings) ([]box, error) {
	type found struct {
		props []box
		err   error
	}
	text := make(chan found, 1)
	go func() {
		props, err := textProposals(ctx, img, scale)
		text <- found{props, err}
	}()
	props, err := n.propose(ctx, img, s)
	t := <-text
	if err != nil {
		return nil, err
	}
	if t.err != nil {
		return nil, t.err
	}
	for i, p := range props {
		props[i] = box{score: p.score, x0: p.x0 / scale, y0: p.y0 / scale, x1: p.x1 / scale, y1: p.y1 / scale}
	}
	return append(props, t.props...), nil
}
