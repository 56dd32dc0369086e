package cutout

import (
	"context"
	"image"
	"math"

	"carphoto/imageops/codec"
)

// boxMean returns the mean of src (w×h) over the (2r+1)² window around each pixel,
// the window clipped to the image. Two running-sum passes: O(1) a pixel whatever r.
func boxMean(src []float32, w, h, r int) []float32 {
	out := make([]float32, w*h)
	boxMeanTo(out, src, make([]float32, w*h), w, h, r)
	return out
}

// boxMeanTo writes boxMean(src) to dst, with tmp (w×h) as scratch; dst may be src.
func boxMeanTo(dst, src, tmp []float32, w, h, r int) {
	// Along the rows: columns whose window is clipped at the left, whole, and
	// clipped at the right, each with its own count.
	lo := min(r+1, w)  // no pixel leaves the window yet
	hi := max(w-r, lo) // pixels still enter it
	inner := float32(2*r + 1)
	for y := 0; y < h; y++ {
		row, out := src[y*w:(y+1)*w], tmp[y*w:(y+1)*w]
		var s float32
		for x := 0; x < min(r, w); x++ {
			s += row[x]
		}
		for x := 0; x < lo; x++ {
			if x+r < w {
				s += row[x+r]
			}
			out[x] = s / float32(min(x+r, w-1)+1)
		}
		for x := lo; x < hi; x++ {
			s += row[x+r]
			s -= row[x-r-1]
			out[x] = s / inner
		}
		for x := hi; x < w; x++ {
			if x+r < w {
				s += row[x+r]
			}
			if x-r-1 >= 0 {
				s -= row[x-r-1]
			}
			out[x] = s / float32(w-1-max(x-r, 0)+1)
		}
	}
	sum := make([]float32, w)
	for y := 0; y < min(r, h); y++ {
		for x, v := range tmp[y*w : (y+1)*w] {
			sum[x] += v
		}
	}
	for y := 0; y < h; y++ {
		if y+r < h {
			for x, v := range tmp[(y+r)*w : (y+r+1)*w] {
				sum[x] += v
			}
		}
		if y-r-1 >= 0 {
			for x, v := range tmp[(y-r-1)*w : (y-r)*w] {
				sum[x] -= v
			}
		}
		n := float32(min(y+r, h-1) - max(y-r, 0) + 1)
		out := dst[y*w : (y+1)*w]
		for x, v := range sum {
			out[x] = v / n
		}
	}
}

// guided is a colour guided filter (He, Sun, Tang 2013) fitted at one resolution:
// within each window the output is a linear function a·I + b of the guide's colour,
// so the matte follows the photo's own edges. Its coefficients, averaged, can be
// evaluated at a finer resolution ("fast guided filter").
type guided struct {
	w, h int
	a    [3][]float32
	b    []float32
}

// fitGuided fits the filter of radius r and regulariser eps to the input p under guide I.
// Its fifteen planes are carved from one allocation: the thirteen window means, a
// product and the box filter's scratch; the coefficients then take the place of the
// means they are made from.
func fitGuided(I *plane, p []float32, r int, eps float32) *guided {
	w, h := I.w, I.h
	n := w * h
	R, G, B := I.ch(0), I.ch(1), I.ch(2)
	buf := make([]float32, 15*n)
	next := func() []float32 {
		s := buf[:n:n]
		buf = buf[n:]
		return s
	}
	tmp, xy := next(), next()
	mean := func(x []float32) []float32 {
		out := next()
		boxMeanTo(out, x, tmp, w, h, r)
		return out
	}
	prod := func(x, y []float32) []float32 {
		for i := range xy {
			xy[i] = x[i] * y[i]
		}
		return mean(xy)
	}
	mR, mG, mB, mP := mean(R), mean(G), mean(B), mean(p)
	pR, pG, pB := prod(R, p), prod(G, p), prod(B, p)
	rr, rg, rb := prod(R, R), prod(R, G), prod(R, B)
	gg, gb, bb := prod(G, G), prod(G, B), prod(B, B)
	// Pixel i's coefficients replace its own means, read just before.
	g := &guided{w: w, h: h, a: [3][]float32{pR, pG, pB}, b: mP}
	for i := 0; i < n; i++ {
		cr := pR[i] - mR[i]*mP[i]
		cg := pG[i] - mG[i]*mP[i]
		cb := pB[i] - mB[i]*mP[i]
		s00 := rr[i] - mR[i]*mR[i] + eps
		s01 := rg[i] - mR[i]*mG[i]
		s02 := rb[i] - mR[i]*mB[i]
		s11 := gg[i] - mG[i]*mG[i] + eps
		s12 := gb[i] - mG[i]*mB[i]
		s22 := bb[i] - mB[i]*mB[i] + eps
		// Inverse of the symmetric covariance by its adjugate.
		i00 := s11*s22 - s12*s12
		i01 := s02*s12 - s01*s22
		i02 := s01*s12 - s02*s11
		i11 := s00*s22 - s02*s02
		i12 := s01*s02 - s00*s12
		i22 := s00*s11 - s01*s01
		det := s00*i00 + s01*i01 + s02*i02
		a0 := (i00*cr + i01*cg + i02*cb) / det
		a1 := (i01*cr + i11*cg + i12*cb) / det
		a2 := (i02*cr + i12*cg + i22*cb) / det
		b := mP[i] - a0*mR[i] - a1*mG[i] - a2*mB[i]
		g.a[0][i], g.a[1][i], g.a[2][i], g.b[i] = a0, a1, a2, b
	}
	for c := range g.a {
		boxMeanTo(g.a[c], g.a[c], tmp, w, h, r)
	}
	boxMeanTo(g.b, g.b, tmp, w, h, r)
	return g
}

// fillFrom returns, for every pixel, the colour of the nearby pixels whose weight wt is
// set, filling the rest of the image outwards from them (push-pull: a pyramid of
// weighted means, read back from coarse to fine). Used to know the car's and the
// background's colours where they mix along the outline.
func fillFrom(I *plane, wt []float32) *plane {
	type level struct {
		w, h int
		c    [3][]float32 // weighted colour sums; level 0's, I·wt, are computed where read
		n    []float32    // weight sums
	}
	colours := [3][]float32{I.ch(0), I.ch(1), I.ch(2)}
	sum := func(l *level, c, i int) float32 {
		if l.c[c] == nil {
			return colours[c][i] * wt[i]
		}
		return l.c[c][i]
	}
	l0 := level{w: I.w, h: I.h, n: wt}
	levels := []*level{&l0}
	for l := &l0; l.w > 1 || l.h > 1; {
		nw, nh := (l.w+1)/2, (l.h+1)/2
		buf := make([]float32, 4*nw*nh)
		next := &level{w: nw, h: nh, n: buf[:nw*nh]}
		for c := range next.c {
			next.c[c] = buf[(c+1)*nw*nh : (c+2)*nw*nh]
		}
		for y := 0; y < l.h; y++ {
			for x := 0; x < l.w; x++ {
				i, j := y*l.w+x, (y/2)*nw+x/2
				next.n[j] += l.n[i]
				for c := range 3 {
					next.c[c][j] += sum(l, c, i)
				}
			}
		}
		levels = append(levels, next)
		l = next
	}
	// Pull: each level's colour is its own weighted mean where it has enough weight,
	// its parent's elsewhere, blended by the weight. Level 0's go straight into the
	// answer's planes.
	top := levels[len(levels)-1]
	parent := make([][3]float32, 1)
	for c := range 3 {
		if top.n[0] > 0 {
			parent[0][c] = sum(top, c, 0) / top.n[0]
		} else {
			parent[0][c] = 0.5
		}
	}
	out := newPlane(3, I.h, I.w)
	pw, ph := 1, 1
	for k := len(levels) - 2; k >= 0; k-- {
		l := levels[k]
		var cur [][3]float32
		if k > 0 {
			cur = make([][3]float32, l.w*l.h)
		}
		x0s, x1s, fxs := make([]int, l.w), make([]int, l.w), make([]float32, l.w)
		for x := range l.w {
			x0s[x], x1s[x], fxs[x] = halfWeight(pw, x)
		}
		for y := 0; y < l.h; y++ {
			y0, y1, fy := halfWeight(ph, y)
			top, bot := parent[y0*pw:(y0+1)*pw], parent[y1*pw:(y1+1)*pw]
			for x := 0; x < l.w; x++ {
				x0, x1, fx := x0s[x], x1s[x], fxs[x]
				i := y*l.w + x
				n := l.n[i]
				a := min(n, 1)
				for c := range 3 {
					// The parent's colour, bilinear (nearest would show its blocks).
					t := top[x0][c] + (top[x1][c]-top[x0][c])*fx
					b := bot[x0][c] + (bot[x1][c]-bot[x0][c])*fx
					p := t + (b-t)*fy
					own := float32(0)
					if n > 0 {
						own = sum(l, c, i) / n
					}
					if k > 0 {
						cur[i][c] = a*own + (1-a)*p
					} else {
						out.d[c*len(l.n)+i] = a*own + (1-a)*p
					}
				}
			}
		}
		parent, pw, ph = cur, l.w, l.h
	}
	if len(levels) == 1 { // a single pixel: its own colour, or grey
		for c := range 3 {
			out.d[c] = parent[0][c]
		}
	}
	return out
}

// halfWeight maps index i of a level onto its parent level of pn samples (half the
// resolution): the two parent neighbours and the weight of the second.
func halfWeight(pn, i int) (int, int, float32) {
	s := (float32(i)+0.5)/2 - 0.5
	if s <= 0 {
		return 0, 0, 0
	}
	i0 := int(s)
	if i0 >= pn-1 {
		return pn - 1, pn - 1, 0
	}
	return i0, i0 + 1, s - float32(i0)
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
