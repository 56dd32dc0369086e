package plates

import (
	"context"
	"image"
	"math"
	"slices"

	"carphoto/imageops/textdet"
)

// A plate is text that anyone can read, so the finder also looks for text:
// PP-OCRv4's text detector (imageops/textdet) runs on the photo, and each
// line of text it finds becomes a proposal beside the first stage's,
// judged by the same verifiers and, where they are unsure, read (read.go).
// The first stage, trained on the plate sets, misses plates of designs and
// sources it never saw (yellow, black, behind a watermark); the text
// detector, trained on text of every kind, marks them (docs/research/benchmarks-log.md).
//
// A photo up to detailFrom pixels long is looked at once, at textSide. A
// larger one is looked at coarsely, at coarseTextSide, and then in detail:
// the first stage looks again at detailSeedSide, and around its strongest
// proposals (where a plate may be) the text detector looks at tiles of the
// photo near its full resolution, at most maxTiles of at most tileSide
// pixels a side: a plate whose characters the coarse look sees a few
// pixels high, or sheared past what the detector knows at that size, is
// marked there. On a 4000-pixel photo the look at 960 reduces the photo
// 4.2 times: a plate 100 pixels high on a steeply angled front bumper
// (docs/samples/listing.jpg) is nowhere in its map (its probability there
// under 1e-8) and appears from a reduction of 3.3; the first stage at
// detailSeedSide proposes it. The coarse look, the seed look and the tiles
// together cost less than the look at 960 they replace (a text look's
// time grows with its pixels: about 66 ms at 640×480, 150 at 960×736,
// one core; the seed look about 35 ms on 12 MP).
const (
	// textSide is the long side, in pixels, of the text detector's look at
	// a photo up to detailFrom: at 640 it marks fewer small plates (248
	// against 256 of 259).
	textSide = 960
	// detailFrom is the photo's long side above which the look is coarse,
	// then detailed: up to it the look at textSide reduces the photo at
	// most 1.7 times.
	detailFrom = 1600
	// coarseTextSide is the coarse look's long side.
	coarseTextSide = 640
	// detailSeedSide is the long side of the first stage's look that
	// places the tiles.
	detailSeedSide = 800
	// maxTiles and tileSide bound the detail: at most maxTiles tiles, each
	// at most tileSide working pixels a side (and so at most maxTiles ×
	// tileSide² pixels looked at in detail).
	maxTiles = 1
	tileSide = 320
	// maxText is the most text regions proposed, strongest first.
	maxText = 32
	// maxDetailLines is the most lines the tiles add.
	maxDetailLines = 8
)

// textPrior is the first stage's probability a text proposal carries into
// its score (Judging.score): even odds, so that the text detector, which
// says "text", not "plate", leaves the judgement to the verifiers, and
// Judging.Text how sure they must be.
const textPrior = 0.5

// textProposals returns the text regions of img, found at a long side of
// side, as proposals, in the pixels of a photo of which img is a reduction
// by scale (img pixels per photo pixel).
func textProposals(ctx context.Context, img image.Image, side int, scale float64) ([]box, error) {
	regs, err := textdet.Find(ctx, img, side)
	if err != nil {
		return nil, err
	}
	regs = regs[:min(len(regs), maxText)]
	o := img.Bounds().Min
	props := make([]box, 0, len(regs))
	for _, r := range regs {
		props = append(props, textBox(r, func(p textdet.Point) Point {
			return Point{(p.X - float64(o.X)) / scale, (p.Y - float64(o.Y)) / scale}
		}))
	}
	return props, nil
}

// textBox is a text region as a proposal, its corners mapped by at and
// ordered so that its top edge is its long side, read left to right.
func textBox(r textdet.Region, at func(textdet.Point) Point) box {
	var q Quad
	for i, p := range r.Quad {
		q[i] = at(p)
	}
	if dist(q[0], q[1]) < dist(q[0], q[3]) {
		// A line turned past 45°: its long side is its width, read from
		// the end further left.
		if q[0].X-q[3].X > 0 {
			q = Quad{q[3], q[0], q[1], q[2]}
		} else {
			q = Quad{q[1], q[2], q[3], q[0]}
		}
	}
	lo, hi := q.extent()
	return box{score: textPrior, text: true, x0: lo.X, y0: lo.Y, x1: hi.X, y1: hi.Y, line: q}
}

// regionFunc gives the photo's pixels covering r (photo pixels, from the
// photo's bounds' origin), reduced by a power of two g of at most most:
// Source.Region, or a whole photo's sub-image (g 1). The image's pixel
// (x, y) is the photo's (g·x, g·y) less off.
type regionFunc func(r image.Rectangle, most int) (img image.Image, g int, off image.Point)

// subImages is the regionFunc of a decoded photo: its sub-images.
func subImages(img image.Image) regionFunc {
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return nil
	}
	o := img.Bounds().Min
	return func(r image.Rectangle, _ int) (image.Image, int, image.Point) {
		return sub.SubImage(r.Add(o).Intersect(img.Bounds())), 1, o
	}
}

// sourceRegions is the regionFunc of a Source.
func sourceRegions(src Source) regionFunc {
	return func(r image.Rectangle, most int) (image.Image, int, image.Point) {
		img, g := src.Region(r.Intersect(src.Bounds()), most)
		return img, g, image.Point{}
	}
}

// proposeAll returns the first stage's proposals and then the text
// detector's for img, a reduction by scale of a photo of bounds photo
// (from its origin), in the photo's pixels; region gives the photo's
// pixels for the detail (nil: no detail). The text detector's coarse look
// runs beside the first stage, on another core when one is free: a
// photo's answer then waits for the longer of the two looks, not their
// sum (the CPU they take is the same).
func (n *net) proposeAll(ctx context.Context, img image.Image, scale float64, photo image.Rectangle, region regionFunc, s Settings) ([]box, error) {
	type found struct {
		props []box
		err   error
	}
	detail := region != nil && max(photo.Dx(), photo.Dy()) > detailFrom
	side := textSide
	if detail {
		side = coarseTextSide
	}
	text := make(chan found, 1)
	go func() {
		props, err := textProposals(ctx, img, side, scale)
		text <- found{props, err}
	}()
	props, err := n.propose(ctx, img, s)
	var seeds []box
	if err == nil && detail {
		seeds, err = n.proposeAt(ctx, img, detailSeedSide, s.Propose)
	}
	t := <-text
	if err != nil {
		return nil, err
	}
	if t.err != nil {
		return nil, t.err
	}
	toPhoto(props, scale)
	lines := t.props
	if detail {
		toPhoto(seeds, scale)
		more, err := detailLines(ctx, region, photo, newSeeds(seeds, props, lines), lines)
		if err != nil {
			return nil, err
		}
		lines = append(lines, more...)
	}
	return append(props, lines...), nil
}

// toPhoto maps the first stage's boxes bs, found on a reduction by scale
// of the photo, to the photo's pixels.
func toPhoto(bs []box, scale float64) {
	for i, p := range bs {
		bs[i] = box{score: p.score, x0: p.x0 / scale, y0: p.y0 / scale, x1: p.x1 / scale, y1: p.y1 / scale}
	}
}

// newSeeds are the seeds of the finer look where the coarse looks have
// nothing: no proposal of the first stage's own looks overlaps them (IoU
// 0.3: the jury judges those anyway), no coarse text line has its centre
// in them (the jury judges that line, and the reader reads it), and they
// are small enough that their text is small in the coarse look (their
// long side at most tileSide photo pixels); strongest first.
func newSeeds(seeds, props, lines []box) []box {
	var out []box
	for _, sd := range seeds {
		if max(sd.x1-sd.x0, sd.y1-sd.y0) > tileSide || slices.ContainsFunc(props, func(p box) bool { return sd.iou(p) >= 0.3 }) ||
			slices.ContainsFunc(lines, func(l box) bool {
				cx, cy := (l.x0+l.x1)/2, (l.y0+l.y1)/2
				return cx >= sd.x0 && cx <= sd.x1 && cy >= sd.y0 && cy <= sd.y1
			}) {
			continue
		}
		out = append(out, sd)
	}
	return out
}

// detailLines looks for text in tiles of the photo around the seeds (the
// first stage's proposals, strongest first; photo pixels), near full
// resolution, and returns the lines found there (at least minLineHeight
// high) that no line of known already marks: a plate's line, or a part of
// one the detector split at a gap, which the reading joins (continuing). A tile holds its seed with as much again around
// it, so the detector sees the plate's surroundings, and is looked at so
// that its long side is at most tileSide working pixels and the photo is
// never enlarged more than twice; a seed whose centre lies in a tile
// already looked at adds none.
func detailLines(ctx context.Context, region regionFunc, photo image.Rectangle, seeds, known []box) ([]box, error) {
	var tiles []image.Rectangle
	var out []box
	for _, sd := range seeds {
		if len(tiles) == maxTiles || len(out) >= maxDetailLines {
			break
		}
		cx, cy := (sd.x0+sd.x1)/2, (sd.y0+sd.y1)/2
		if slices.ContainsFunc(tiles, func(t image.Rectangle) bool {
			return image.Pt(int(cx), int(cy)).In(t)
		}) {
			continue
		}
		half := max(sd.x1-sd.x0, sd.y1-sd.y0, 48)
		r := image.Rect(int(cx-half), int(cy-half), int(math.Ceil(cx+half)), int(math.Ceil(cy+half))).Intersect(image.Rect(0, 0, photo.Dx(), photo.Dy()))
		if r.Empty() {
			continue
		}
		tiles = append(tiles, r)
		long := max(r.Dx(), r.Dy())
		zoom := min(2, float64(tileSide)/float64(long)) // working pixels a photo pixel
		most := 1
		for float64(most*2) <= 1/zoom {
			most *= 2
		}
		img, g, off := region(r, most)
		if img.Bounds().Empty() {
			continue
		}
		regs, err := textdet.Find(ctx, img, max(32, int(math.Round(float64(long)*zoom))))
		if err != nil {
			return nil, err
		}
		for _, reg := range regs {
			b := textBox(reg, func(p textdet.Point) Point {
				return Point{p.X*float64(g) - float64(off.X), p.Y*float64(g) - float64(off.Y)}
			})
			marked := func(k box) bool { return b.iou(k) >= 0.5 }
			if h, _ := lineSize(b); h < minLineHeight || slices.ContainsFunc(known, marked) || slices.ContainsFunc(out, marked) {
				continue
			}
			out = append(out, b)
			if len(out) == maxDetailLines {
				break
			}
		}
	}
	return out, nil
}

// lineSize is a text line's height and width across its own slant (its
// bounds' where it has no quad of its own).
func lineSize(b box) (h, w float64) {
	if q, ok := b.slanted(); ok {
		return q.Height(), q.Width()
	}
	return b.y1 - b.y0, b.x1 - b.x0
}
