// Package cutout separates the car from the rest of a photo: an alpha matte (Matte)
// and the car on a transparent background with its edge colours cleaned (Cut).
//
// U²-Net-p, a salient-object network (Qin et al. 2020), fine-tuned on car photos
// (train/cutout/u2finetune.py, converted by u2netp.py, embedded in u2netp.bin, run in
// Go by u2net.go), finds the car on a copy of the photo of about 320×240 pixels. Its matte is made a car's: thin
// attachments are cut off by an opening, blobs much smaller than the largest dropped,
// holes inside the car filled. On a copy of about 768 pixels, a guided filter is
// fitted to it and the car's and the background's colours are filled in from beyond
// a band around its outline. Only in that band, at full resolution, is alpha
// refined: from the guided filter (and, where it is trusted, from where each pixel's
// colour lies between the car's and the background's). Colours there are
// decontaminated by removing the background's share of each edge pixel.
package cutout

import (
	"context"
	"image"
	"math"

	"carphoto/imageops/codec"
)

// Working sizes and refinement settings, tuned on the cars-seg images that are not
// held out (see docs/research/cutout.md).
const (
	midLong = 768  // long side of the grid the guided filter is fitted on
	bandLo  = 0.02 // the coarse matte's values strictly between bandLo and
	bandHi  = 0.98 // bandHi (after upsampling) form the refined band
)

// Settings are the cut-out's tuned settings: the network's input size, the
// clean-up of its answer and the refinement. Matte and Cut run
// DefaultSettings(); train/cutout/tune sweeps others (NetworkPass).
type Settings struct {
	// NetW×NetH is the network's input area (4:3, landscape; see
	// docs/research/cutout.md), in the photo's proportions unless NetExact.
	NetW, NetH int
	NetExact   bool
	// OpenRadius is the radius, in U²-Net-p output pixels, of the opening
	// that cuts thin attachments (a pole, a kerb line, a strip of road) off
	// the car before its blobs are counted; KeepBlobs keeps blobs of the
	// opened mask at least this fraction of the largest (other cars in the
	// photo), or from oneCarKeep up the main blob alone: the one car.
	OpenRadius int
	KeepBlobs  float64
	// The refinement: the guided filter's radius, in network output pixels;
	// how far from the outline, in network pixels, the refined band
	// reaches; the weight of the colour projection's alpha where it is
	// reliable.
	GuidedRadius float64
	BandGrow     float64
	Project      float32
	// Mirror runs the network on the photo and on its mirror image and
	// averages the two maps (the second mirrored back): twice the
	// network's time (issue 70, item 3).
	Mirror bool
}

// DefaultSettings are the settings chosen on the cars-seg photos that are
// not held out, but for KeepBlobs: the cut-out is the one car (issue 56),
// though cars-seg labels every car in a photo, so on its few photos of
// several cars the one car scores lower (docs/research/cutout.md).
func DefaultSettings() Settings {
	return Settings{NetW: 320, NetH: 240, OpenRadius: 2, KeepBlobs: oneCarKeep, GuidedRadius: 1.5, BandGrow: 2.5, Project: 0.5}
}

// Matte returns the car's alpha matte (255 = car) for img as displayed, with img's bounds.
func Matte(ctx context.Context, img image.Image) (*image.Alpha, error) {
	b := img.Bounds()
	m := image.NewAlpha(image.Rect(0, 0, b.Dx(), b.Dy()))
	if err := matte(ctx, newRows(img), m, DefaultSettings()); err != nil {
		return nil, err
	}
	m.Rect = m.Rect.Add(b.Min)
	return m, nil
}

// Cut returns the car on a transparent background: img's pixels with alpha set to the
// matte and the colours of partly transparent edge pixels decontaminated, so no halo
// of the old background shows on another backdrop; fully transparent pixels are
// zero. Same size as img, bounds at (0,0).
//
// The photo is read a row at a time: the network runs on its shrunk copy, and only
// then is the answer allocated and filled, so no full-size copy of the photo is ever
// held beside the network's working memory.
func Cut(ctx context.Context, img image.Image) (*image.NRGBA, error) {
	b := img.Bounds()
	src := newRows(img)
	s := DefaultSettings()
	c, err := coarse(ctx, src, s)
	if err != nil {
		return nil, err
	}
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if b.Empty() {
		return out, ctx.Err()
	}
	if err := refine(ctx, src, c, s.params(), out); err != nil {
		return nil, err
	}
	return out, ctx.Err()
}

// params are the refinement's settings.
type params struct {
	gfRadius float64 // guided filter radius, in network output pixels
	gfEps    float32 // guided filter regulariser (colours in 0..1)
	sharpen  float32 // contrast applied to the guided filter's alpha around 0.5
	project  float32 // weight of the colour projection's alpha where it is reliable
	bandGrow float64 // the refined band reaches this many network pixels from the outline
}

// params are s's refinement settings; the guided filter's regulariser and
// sharpening are fixed.
func (s Settings) params() params {
	return params{gfRadius: s.GuidedRadius, gfEps: 1e-3, sharpen: 3, project: s.Project, bandGrow: s.BandGrow}
}

// coarseMatte is the network's cleaned car probability on a small grid, with the
// photo shrunk to the refinement grid.
type coarseMatte struct {
	mid    *plane    // the photo on the refinement grid (colours 0..1)
	prob   []float32 // car probability, lw×lh, cleaned
	raw    []float32 // the network's probability before cleaning
	lw, lh int
}

// matte writes the full-resolution alpha of the photo src reads to dst.
func matte(ctx context.Context, src *rows, dst *image.Alpha, s Settings) error {
	if src.b.Empty() {
		return ctx.Err()
	}
	c, err := coarse(ctx, src, s)
	if err != nil {
		return err
	}
	return refine(ctx, src, c, s.params(), dst)
}

// coarse runs U²-Net-p on a shrunk copy of the photo and keeps the car in its output.
func coarse(ctx context.Context, src *rows, s Settings) (*coarseMatte, error) {
	W, H := src.b.Dx(), src.b.Dy()
	if W == 0 || H == 0 {
		return &coarseMatte{}, ctx.Err()
	}
	// The refinement grid: at most midLong on the long side.
	mw, mh := fitLong(W, H, midLong)
	mid := shrink(src, mw, mh)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := u2Prob(ctx, mid, s)
	if err != nil {
		return nil, err
	}
	raw := append([]float32(nil), p.d...)
	cleanCar(p.d, p.w, p.h, s.KeepBlobs, s.OpenRadius)
	return &coarseMatte{mid: mid, prob: p.d, raw: raw, lw: p.w, lh: p.h}, nil
}

// refine turns the coarse matte into the photo's full-resolution alpha: a guided
// filter fitted on the refinement grid, evaluated at full resolution in the band
// around the car's outline. dst (W×H, bounds at 0,0) is an *image.Alpha, which gets
// the alpha alone, or an *image.NRGBA, zero on entry, which gets the cut-out: the
// photo's pixels with the alpha, their colours cleaned where the car's edge mixes
// with the background, zero where the alpha is.
func refine(ctx context.Context, src *rows, c *coarseMatte, par params, dst image.Image) error {
	W, H := src.b.Dx(), src.b.Dy()
	// Alpha of pixel (x, y) at alpha[y*aStride+x*aStep]; with an NRGBA, the colours
	// are read straight into its rows, and cleaned there.
	var alpha, pixels []byte
	var aStride, aStep, pStride int
	decontaminate := false
	switch d := dst.(type) {
	case *image.Alpha:
		alpha, aStride, aStep = d.Pix, d.Stride, 1
		pixels = make([]byte, 4*W)
	case *image.NRGBA:
		alpha, aStride, aStep = d.Pix[3:], d.Stride, 4
		pixels, pStride = d.Pix, d.Stride
		decontaminate = true
	default:
		panic("cutout: refine writes an *image.Alpha or an *image.NRGBA")
	}
	mid, mw, mh := c.mid, c.mid.w, c.mid.h
	pMid := bilinear(c.prob, c.lw, c.lh, mw, mh)
	r := max(1, int(math.Round(par.gfRadius*float64(mw)/float64(c.lw))))
	g := fitGuided(mid, pMid, r, par.gfEps)
	if err := ctx.Err(); err != nil {
		return err
	}
	// A trimap: the band within bandGrow network pixels of the coarse outline is
	// unknown; the car and the background beyond it are known, and their colours are
	// filled into the band (push-pull) to tell what each band pixel is made of.
	band := bandOf(pMid, mw, mh, max(1, int(math.Round(par.bandGrow*float64(mw)/float64(c.lw)))))
	wF, wB := make([]float32, len(pMid)), make([]float32, len(pMid))
	for i, v := range pMid {
		switch {
		case band[i]:
		case v >= 0.5:
			wF[i] = 1
		default:
			wB[i] = 1
		}
	}
	fg, bg := fillFrom(mid, wF), fillFrom(mid, wB)
	if err := ctx.Err(); err != nil {
		return err
	}

	// Full resolution: outside the band the coarse matte decides. Inside it, where the
	// car's and the background's colours differ, alpha is where the pixel's colour lies
	// between them; where they do not, the guided filter's coefficients (bilinear from
	// the grid) applied to the pixel's own colour.
	mx := make([]int, W)
	for x := range mx {
		mx[x] = x * mw / W
	}
	// Grid column k covers pixels xs[k] to xs[k+1].
	xs := make([]int, mw+1)
	for x := W - 1; x >= 0; x-- {
		xs[mx[x]] = x
	}
	xs[mw] = W
	// The grid cells of each grid row that are car or band: the rest of the row is
	// background, whose colours are not read.
	spanLo, spanHi := make([]int, mh), make([]int, mh)
	for my := range mh {
		spanLo[my], spanHi[my] = mw, -1
		for k := range mw {
			if m := my*mw + k; band[m] || pMid[m] >= 0.5 {
				spanLo[my], spanHi[my] = min(spanLo[my], k), k
			}
		}
	}
	x0s, x1s, fxs := axisMap(mw, W)
	// The ten grid planes a band pixel reads (the guided filter's coefficients,
	// the car's and the background's colours), interpolated along x on grid rows
	// y0 and y1 once for the ~W/mw pixel rows that share them: pixel x's pair for
	// plane p at hz[20x+2p:], filled for grid column k's pixels when rows (y0, y1)
	// first need them (filled[k], 0 for never). The same sums as interpolating
	// per pixel, so the same alpha.
	planes := [10][]float32{g.a[0], g.a[1], g.a[2], g.b, fg.ch(0), fg.ch(1), fg.ch(2), bg.ch(0), bg.ch(1), bg.ch(2)}
	hz := make([]float32, 20*W)
	filled := make([]int, mw)
	const inv255 = 1.0 / 255
	// Opaque band pixels that look like a mix of car and background get their
	// cleaned colour if they touch the edge: a transparent or partly transparent
	// pixel around them, known once the next row's alpha is. pending holds the
	// previous row's, ready holds this row's.
	type mixed struct {
		x       int
		r, g, b uint8
	}
	var pending, ready []mixed
	clean := func(y int, ps []mixed) {
		for _, p := range ps {
			edge := false
			for yy := max(0, y-1); yy <= min(H-1, y+1) && !edge; yy++ {
				for xx := max(0, p.x-1); xx <= min(W-1, p.x+1); xx++ {
					if alpha[yy*aStride+xx*aStep] < 255 {
						edge = true
						break
					}
				}
			}
			if edge {
				i := y*pStride + 4*p.x
				pixels[i], pixels[i+1], pixels[i+2] = p.r, p.g, p.b
			}
		}
	}
	for y := 0; y < H; y++ {
		if y%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		my := y * mh / H
		y0, y1, fy := axisWeight(mh, H, y)
		arow := alpha[y*aStride:]
		if spanLo[my] > spanHi[my] {
			// Background: alpha and colours zero, as they are on entry for an
			// NRGBA; an Alpha may be reused.
			if aStep == 1 {
				clear(arow[:W])
			}
			clean(y-1, pending)
			pending = pending[:0]
			continue
		}
		xa, xb := xs[spanLo[my]], xs[spanHi[my]+1]
		prow := pixels[y*pStride:]
		src.read(y, xa, xb, prow[4*xa:4*xb])
		if aStep == 1 {
			clear(arow[:xa])
			clear(arow[xb:W])
		}
		ready = ready[:0]
		for k := spanLo[my]; k <= spanHi[my]; k++ {
			m := my*mw + k
			if !band[m] {
				// A run of pixels the coarse matte decides.
				lo, hi := xs[k], xs[k+1]
				if pMid[m] >= 0.5 {
					for x := lo; x < hi; x++ {
						arow[x*aStep] = 255
					}
				} else if aStep == 1 {
					clear(arow[lo:hi])
				} else {
					clear(prow[4*lo : 4*hi])
				}
				continue
			}
			if key := y0*mh + y1 + 1; filled[k] != key {
				filled[k] = key
				for x := xs[k]; x < xs[k+1]; x++ {
					i00, i01, i10, i11 := y0*mw+x0s[x], y0*mw+x1s[x], y1*mw+x0s[x], y1*mw+x1s[x]
					h := hz[20*x : 20*x+20]
					for p, s := range planes {
						h[2*p] = s[i00] + (s[i01]-s[i00])*fxs[x]
						h[2*p+1] = s[i10] + (s[i11]-s[i10])*fxs[x]
					}
				}
			}
			for x := xs[k]; x < xs[k+1]; x++ {
				h := hz[20*x : 20*x+20]
				lerp := func(p int) float32 { return h[2*p] + (h[2*p+1]-h[2*p])*fy }
				R := float32(prow[4*x]) * inv255
				G := float32(prow[4*x+1]) * inv255
				B := float32(prow[4*x+2]) * inv255
				q := lerp(0)*R + lerp(1)*G + lerp(2)*B + lerp(3)
				q = (q-0.5)*par.sharpen + 0.5

				// Projection on the line from the background's colour to the car's.
				fr, fgG, fb := lerp(4), lerp(5), lerp(6)
				dr, dg, db := lerp(7)-fr, lerp(8)-fgG, lerp(9)-fb
				n := dr*dr + dg*dg + db*db
				s := float32(0) // the background's share of the pixel
				if n > 1e-4 {
					// min(max(num/n, 0), 1), dividing only when the clamps do not
					// decide (division is monotonic: num ≥ n gives num/n ≥ 1).
					switch num := (R-fr)*dr + (G-fgG)*dg + (B-fb)*db; {
					case num <= 0:
					case num >= n:
						s = 1
					default:
						s = min(num/n, 1)
					}
					// Trust the projection where the two colours are far apart and the
					// pixel lies close to the line between them: min(max((n-0.01)/0.04,
					// 0), 1) · min(max(1-off/0.01, 0), 1), the same way.
					er, eg, eb := R-fr-s*dr, G-fgG-s*dg, B-fb-s*db
					trust := float32(0)
					if off := er*er + eg*eg + eb*eb; off < 0.01 {
						trust = max(1-off/0.01, 0)
						if d := n - 0.01; d < 0.04 {
							trust *= max(d/0.04, 0)
						}
					}
					q = trust*par.project*(1-s) + (1-trust*par.project)*q
				}
				a := uint8(0)
				switch {
				case q >= 1:
					a = 255
				case q > 0:
					a = uint8(q*255 + 0.5)
				}
				arow[x*aStep] = a
				if !decontaminate {
					continue
				}
				if a == 0 {
					prow[4*x], prow[4*x+1], prow[4*x+2] = 0, 0, 0
					continue
				}
				// Remove the pixel's share of the background's colour, s(B-F): a mix
				// αF + (1-α)B comes back as F whatever α was estimated.
				r, g, b := codec.UnitByte(R-s*dr), codec.UnitByte(G-s*dg), codec.UnitByte(B-s*db)
				if a < 255 {
					prow[4*x], prow[4*x+1], prow[4*x+2] = r, g, b
				} else if s > 0.1 {
					ready = append(ready, mixed{x, r, g, b})
				}
			}
		}
		clean(y-1, pending)
		pending, ready = ready, pending
	}
	clean(H-1, pending)
	return nil
}

// fitLong returns w×h scaled so the long side is at most long (never enlarged).
func fitLong(w, h, long int) (int, int) {
	if max(w, h) <= long {
		return w, h
	}
	if w >= h {
		return long, max(1, int(math.Round(float64(h)*float64(long)/float64(w))))
	}
	return max(1, int(math.Round(float64(w)*float64(long)/float64(h)))), long
}

// bandOf marks the grid pixels within r (a square neighbourhood) of the coarse
// matte's outline (where it crosses 0.5) or of its uncertain values.
func bandOf(p []float32, w, h, r int) []bool {
	raw := make([]bool, len(p))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			v := p[i]
			in := v >= 0.5
			raw[i] = v > bandLo && v < bandHi ||
				x > 0 && (p[i-1] >= 0.5) != in || y > 0 && (p[i-w] >= 0.5) != in
		}
	}
	return dilateBox(dilateBox(raw, w, h, r, 1, w), h, w, r, w, 1)
}

// dilateBox dilates along one axis: n lines of m pixels, pixel k of line j at
// j*lineStep + k*step.
func dilateBox(in []bool, n, m, r, lineStep, step int) []bool {
	out := make([]bool, len(in))
	for j := 0; j < n; j++ {
		last := -1 << 30 // index of the last set pixel seen, going forwards
		for k := 0; k < m; k++ {
			if in[j*lineStep+k*step] {
				last = k
			}
			if k-last <= r {
				out[j*lineStep+k*step] = true
			}
		}
		last = 1 << 30 // going backwards
		for k := m - 1; k >= 0; k-- {
			if in[j*lineStep+k*step] {
				last = k
			}
			if last-k <= r {
				out[j*lineStep+k*step] = true
			}
		}
	}
	return out
}

// components labels the 4-connected regions of pixels where in(i) holds; label -1
// elsewhere. It returns the labels and each region's size.
func components(w, h int, in func(i int) bool) ([]int32, []int) {
	labels := make([]int32, w*h)
	for i := range labels {
		labels[i] = -1
	}
	var sizes []int
	var stack []int
	for start := range labels {
		if labels[start] >= 0 || !in(start) {
			continue
		}
		l := int32(len(sizes))
		size := 0
		labels[start] = l
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			size++
			x, y := i%w, i/w
			for _, n := range [4][3]int{{x - 1, y, i - 1}, {x + 1, y, i + 1}, {x, y - 1, i - w}, {x, y + 1, i + w}} {
				if n[0] < 0 || n[0] >= w || n[1] < 0 || n[1] >= h {
					continue
				}
				if j := n[2]; labels[j] < 0 && in(j) {
					labels[j] = l
					stack = append(stack, j)
				}
			}
		}
		sizes = append(sizes, size)
	}
	return labels, sizes
}

// fill sets every value of d to v.
func fill(d []float32, v float32) {
	for i := range d {
		d[i] = v
	}
}

// cleanCar keeps the car in U²-Net-p's probabilities p (w×h), in place: the mask
// (p >= 0.5) is opened by a square of radius open, so parts joined to the car by a
// neck narrower than the square come apart; blobs of the opened mask smaller than
// keep times the largest are dropped (with keep >= oneCarKeep, every blob but the
// main one, mainBlob), and so is everything farther than open+1 from the blobs
// kept. Holes inside the car are filled.
func cleanCar(p []float32, w, h int, keep float64, open int) {
	fg := make([]bool, len(p))
	for i, v := range p {
		fg[i] = v >= 0.5
	}
	core := fg
	if open > 0 {
		core = erode(fg, w, h, open)
		core = dilateBox(dilateBox(core, h, w, open, w, 1), w, h, open, 1, w)
	}
	labels, sizes := components(w, h, func(i int) bool { return core[i] })
	largest := 0
	for _, s := range sizes {
		largest = max(largest, s)
	}
	if largest == 0 {
		fill(p, 0)
		return
	}
	kept := make([]bool, len(p))
	if keep >= oneCarKeep {
		car := int32(mainBlob(labels, sizes, w, h))
		for i, l := range labels {
			kept[i] = l == car
		}
	} else {
		for i, l := range labels {
			kept[i] = l >= 0 && float64(sizes[l]) >= keep*float64(largest)
		}
	}
	near := dilateBox(dilateBox(kept, h, w, open+1, w, 1), w, h, open+1, 1, w)
	for i := range p {
		if !near[i] {
			p[i] = 0
		}
	}
	// Holes: background regions that do not reach the border.
	bgLabels, bgSizes := components(w, h, func(i int) bool { return p[i] < 0.5 })
	touches := make([]bool, len(bgSizes))
	for i, l := range bgLabels {
		x, y := i%w, i/w
		if l >= 0 && (x == 0 || y == 0 || x == w-1 || y == h-1) {
			touches[l] = true
		}
	}
	for i, l := range bgLabels {
		if l >= 0 && !touches[l] {
			p[i] = 1
		}
	}
}

// erode returns the pixels of in (w×h) whose square neighbourhood of radius r lies
// wholly inside in (the image's border counts as inside).
func erode(in []bool, w, h, r int) []bool {
	out := make([]bool, len(in))
	for i, v := range in {
		out[i] = !v
	}
	out = dilateBox(dilateBox(out, h, w, r, w, 1), w, h, r, 1, w)
	for i, v := range out {
		out[i] = !v
	}
	return out
}
