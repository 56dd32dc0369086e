package cutout

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

// at evaluates the filter on the guide I itself (same resolution as the fit).
func (g *guided) at(I *plane) []float32 {
	out := make([]float32, g.w*g.h)
	R, G, B := I.ch(0), I.ch(1), I.ch(2)
	for i := range out {
		out[i] = g.a[0][i]*R[i] + g.a[1][i]*G[i] + g.a[2][i]*B[i] + g.b[i]
	}
	return out
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
