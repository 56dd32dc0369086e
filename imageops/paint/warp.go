package paint

import (
	"image"
	"math"
	"sync"

	"carphoto/imageops/plates"
)

// homography is a 3×3 projective map in row-major order: a point (x, y)
// goes to ((h0·x + h1·y + h2) / w, (h3·x + h4·y + h5) / w) with
// w = h6·x + h7·y + h8. It is how a flat plate looks under perspective.
type homography [9]float64

// squareToQuad returns the homography that takes the unit square's corners
// (0,0), (1,0), (1,1), (0,1) to q's corners in order (Heckbert's closed form).
func squareToQuad(q plates.Quad) homography {
	x0, y0, x1, y1 := q[0].X, q[0].Y, q[1].X, q[1].Y
	x2, y2, x3, y3 := q[2].X, q[2].Y, q[3].X, q[3].Y
	sx, sy := x0-x1+x2-x3, y0-y1+y2-y3
	var g, h float64
	if sx != 0 || sy != 0 {
		dx1, dx2, dy1, dy2 := x1-x2, x3-x2, y1-y2, y3-y2
		den := dx1*dy2 - dx2*dy1
		g = (sx*dy2 - dx2*sy) / den
		h = (dx1*sy - sx*dy1) / den
	}
	return homography{
		x1 - x0 + g*x1, x3 - x0 + h*x3, x0,
		y1 - y0 + g*y1, y3 - y0 + h*y3, y0,
		g, h, 1,
	}
}

// apply maps (x, y); ok is false where the point lies on or beyond the
// map's horizon, where the projection has no meaning.
func (m homography) apply(x, y float64) (px, py float64, ok bool) {
	w := m[6]*x + m[7]*y + m[8]
	if w <= 1e-9 {
		return 0, 0, false
	}
	return (m[0]*x + m[1]*y + m[2]) / w, (m[3]*x + m[4]*y + m[5]) / w, true
}

// inverse returns the inverse map, normalised so that points in front of
// the plane keep a positive w.
func (m homography) inverse() homography {
	a, b, c, d, e, f, g, h, i := m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]
	inv := homography{
		e*i - f*h, c*h - b*i, b*f - c*e,
		f*g - d*i, a*i - c*g, c*d - a*f,
		d*h - e*g, b*g - a*h, a*e - b*d,
	}
	// The adjugate is the inverse up to scale; pick the sign that keeps
	// w > 0 for points of the quad (the unit square has w = 1 there).
	if det := a*inv[0] + b*inv[3] + c*inv[6]; det < 0 {
		for k := range inv {
			inv[k] = -inv[k]
		}
	}
	return inv
}

// polygon is a convex quadrilateral whose corners run clockwise on screen
// (y down).
type polygon []plates.Point

// convexClockwise returns q as a convex clockwise polygon starting at the
// plate's top-left corner: a counter-clockwise quad is reversed, and the
// corners are rotated so that the first edge is the one pointing most to
// the right (the top edge of a plate turned less than 45°), so a quad that
// starts at another corner does not turn the design sideways. ok is false
// for a quad that is not convex (a self-intersecting or dented detector
// output) or has no area.
func convexClockwise(q plates.Quad) (polygon, bool) {
	sign := 0
	for i := range 4 {
		a, b, c := q[i], q[(i+1)%4], q[(i+2)%4]
		cross := (b.X-a.X)*(c.Y-b.Y) - (b.Y-a.Y)*(c.X-b.X)
		s := 0
		switch {
		case cross > 1e-9:
			s = 1
		case cross < -1e-9:
			s = -1
		}
		if s == 0 || (sign != 0 && s != sign) {
			return nil, false
		}
		sign = s
	}
	if sign < 0 {
		q = plates.Quad{q[0], q[3], q[2], q[1]}
	}
	first, best := 0, math.Inf(-1)
	for i := range 4 {
		a, b := q[i], q[(i+1)%4]
		if right := (b.X - a.X) / math.Hypot(b.X-a.X, b.Y-a.Y); right > best+1e-9 {
			first, best = i, right
		}
	}
	return polygon{q[first], q[(first+1)%4], q[(first+2)%4], q[(first+3)%4]}, true
}

// edgeNormal returns the unit outward normal of edge i (from corner i to i+1).
func (p polygon) edgeNormal(i int) (nx, ny float64) {
	a, b := p[i], p[(i+1)%len(p)]
	dx, dy := b.X-a.X, b.Y-a.Y
	l := math.Hypot(dx, dy)
	if l == 0 {
		return 0, 0
	}
	return dy / l, -dx / l
}

// offset returns the polygon with every edge moved outward by t pixels
// (inward when t < 0). For a convex polygon this is exact; it is only used
// with shrinks smaller than half the polygon's thickness.
func (p polygon) offset(t float64) polygon {
	n := len(p)
	out := make(polygon, n)
	for i := range n {
		prev := (i + n - 1) % n
		// Corner i is where the moved edges prev and i meet.
		n1x, n1y := p.edgeNormal(prev)
		n2x, n2y := p.edgeNormal(i)
		// Solve n1·x = n1·p[i] + t and n2·x = n2·p[i] + t.
		c1 := n1x*p[i].X + n1y*p[i].Y + t
		c2 := n2x*p[i].X + n2y*p[i].Y + t
		det := n1x*n2y - n1y*n2x
		if math.Abs(det) < 1e-12 {
			out[i] = plates.Point{X: p[i].X + t*n2x, Y: p[i].Y + t*n2y}
			continue
		}
		out[i] = plates.Point{X: (c1*n2y - c2*n1y) / det, Y: (n1x*c2 - n2x*c1) / det}
	}
	return out
}

// signedDistance returns the distance in pixels from (x, y) to the polygon's
// outline, negative inside. For many points, use outline.
func (p polygon) signedDistance(x, y float64) float64 {
	o := p.outline()
	return o.signedDistance(x, y)
}

// outline is a quadrilateral with its edges' unit outward normals worked
// out once, for distance queries at every pixel of an area.
type outline struct {
	pts    polygon
	nx, ny [4]float64
}

// outline returns p, which has four corners, ready for distance queries.
func (p polygon) outline() outline {
	o := outline{pts: p[:4:4]}
	for i := range 4 {
		o.nx[i], o.ny[i] = p.edgeNormal(i)
	}
	return o
}

// insideSpan returns the open interval of x on the row y where (x, y) is
// inside the outline (every edge's signed distance at most 0), empty (lo ≥
// hi) when the row misses it.
func (o *outline) insideSpan(y float64) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for i, p := range o.pts {
		// (x − p.X)·nx + (y − p.Y)·ny ≤ 0
		c := (y - p.Y) * o.ny[i]
		switch nx := o.nx[i]; {
		case nx > 0:
			hi = min(hi, p.X-c/nx)
		case nx < 0:
			lo = max(lo, p.X-c/nx)
		case c > 0:
			return 1, 0
		}
	}
	return lo, hi
}

// signedDistance returns the distance in pixels from (x, y) to the outline,
// negative inside. It is exact inside and outside, so a shape made by
// thresholding it has evenly anti-aliased, round-cornered edges.
func (o *outline) signedDistance(x, y float64) float64 {
	p := o.pts
	inside := math.Inf(-1)
	for i := range 4 {
		inside = max(inside, (x-p[i].X)*o.nx[i]+(y-p[i].Y)*o.ny[i])
	}
	if inside <= 0 {
		return inside
	}
	d2 := math.Inf(1)
	for i := range 4 {
		a, b := p[i], p[(i+1)%4]
		dx, dy := b.X-a.X, b.Y-a.Y
		t := 0.0
		if l2 := dx*dx + dy*dy; l2 > 0 {
			t = min(1, max(0, ((x-a.X)*dx+(y-a.Y)*dy)/l2))
		}
		ex, ey := x-a.X-t*dx, y-a.Y-t*dy
		d2 = min(d2, ex*ex+ey*ey)
	}
	return math.Sqrt(d2)
}

// bounds returns the integer rectangle holding the polygon.
func (p polygon) bounds() image.Rectangle {
	minX, minY, maxX, maxY := p[0].X, p[0].Y, p[0].X, p[0].Y
	for _, c := range p[1:] {
		minX, maxX = min(minX, c.X), max(maxX, c.X)
		minY, maxY = min(minY, c.Y), max(maxY, c.Y)
	}
	return image.Rect(int(math.Floor(minX)), int(math.Floor(minY)), int(math.Ceil(maxX)), int(math.Ceil(maxY)))
}

// sampleBilinear returns the premultiplied colour of src at (x, y) in
// pixel-centre coordinates (pixel i has its centre at i), by bilinear
// interpolation. Outside the image the colour is transparent, so the edge
// of a warped design fades over one pixel instead of stepping.
func sampleBilinear(src *image.RGBA, x, y float64) (r, g, b, a float64) {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int(x0), int(y0)
	w, h := src.Rect.Dx(), src.Rect.Dy()
	if ix < -1 || iy < -1 || ix >= w || iy >= h {
		return 0, 0, 0, 0
	}
	weights := [4]float64{(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy}
	for k, wt := range weights {
		px, py := ix+k%2, iy+k/2
		if wt == 0 || px < 0 || py < 0 || px >= w || py >= h {
			continue
		}
		o := py*src.Stride + px*4
		s := src.Pix[o : o+4 : o+4]
		r += wt * float64(s[0])
		g += wt * float64(s[1])
		b += wt * float64(s[2])
		a += wt * float64(s[3])
	}
	return r, g, b, a
}

// boxBlur3 blurs the RGBA pixels of img in place with three passes of a box
// filter of radius r in each direction: a close approximation of a Gaussian
// with σ = √(r(r+1)) whose cost does not depend on r. (bild's Gaussian
// spans only ±radius with σ = √(2·radius), so a σ of 30 px would need a
// 900-tap kernel.) Pixels beyond the edges repeat the edge pixel.
func boxBlur3(img *image.RGBA, r int) {
	if r < 1 {
		return
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	line := make([]int32, w*4)
	tmp := make([]int32, w*4)
	// Rows.
	for y := range h {
		row := img.Pix[y*img.Stride : y*img.Stride+w*4]
		for i, v := range row {
			line[i] = int32(v)
		}
		for range 3 {
			boxPass(line[:w*4], tmp[:w*4], w, r)
			line, tmp = tmp, line
		}
		for i := range row {
			row[i] = uint8(line[i])
		}
	}
	// Columns: a strip of up to 64 at once, a row of running sums across
	// the strip (its rows read whole, in order), each pass's rounded
	// means the next one's samples as in boxPass.
	const strip = 64 * 4
	buf := blurBufs.Get().(*[]int32)
	defer blurBufs.Put(buf)
	if cap(*buf) < 2*strip*h+strip {
		*buf = make([]int32, 2*strip*h+strip)
	}
	for x0 := 0; x0 < w*4; x0 += strip {
		ww := min(strip, w*4-x0)
		a, b, sum := (*buf)[:ww*h], (*buf)[ww*h:2*ww*h], (*buf)[2*ww*h:2*ww*h+ww]
		for y := range h {
			row := a[y*ww : (y+1)*ww]
			for i, v := range img.Pix[y*img.Stride+x0 : y*img.Stride+x0+ww] {
				row[i] = int32(v)
			}
		}
		for range 3 {
			columnPass(a, b, sum, ww, h, r)
			a, b = b, a
		}
		for y := range h {
			row := img.Pix[y*img.Stride+x0 : y*img.Stride+x0+ww]
			for i, v := range a[y*ww : (y+1)*ww] {
				row[i] = uint8(v)
			}
		}
	}
}

// blurBufs are boxBlur3's column strips, kept between calls: a video
// blurs a plate every frame, and new ones each time kept the garbage
// collector busy.
var blurBufs = sync.Pool{New: func() any { return new([]int32) }}

// columnPass is boxPass down every column of src (h rows of ww samples)
// at once into dst, with sum (ww long) for the running sums.
func columnPass(src, dst, sum []int32, ww, h, r int) {
	div := int32(2*r + 1)
	m, half := reciprocal(div), div/2
	at := func(y int) []int32 { y = min(h-1, max(0, y)); return src[y*ww : (y+1)*ww] }
	clear(sum)
	for k := -r; k <= r; k++ {
		for i, v := range at(k) {
			sum[i] += v
		}
	}
	for y := range h {
		o := dst[y*ww : (y+1)*ww]
		if m == 0 {
			for i, v := range sum {
				o[i] = (v + half) / div
			}
		} else {
			for i, v := range sum {
				o[i] = int32(uint64(v+half) * m >> 40)
			}
		}
		add, sub := at(y+r+1), at(y-r)
		for i := range sum {
			sum[i] += add[i] - sub[i]
		}
	}
}

// reciprocal is ⌈2⁴⁰/div⌉, with which ⌊v·m / 2⁴⁰⌋ is ⌊v/div⌋ for every v
// below 2⁴⁰/div; a box's sum plus div/2 stays under 256·div, which is less
// for div below 2¹⁶. Zero (divide) for div of 2¹⁵ and more.
func reciprocal(div int32) uint64 {
	if div >= 1<<15 {
		return 0
	}
	return (uint64(1)<<40 + uint64(div) - 1) / uint64(div)
}

// boxPass writes to dst the rounded mean of the 2r+1 samples of src around
// each of its n four-channel samples, repeating the end samples. The four
// channels run side by side, and the division by 2r+1 is a multiplication
// by its reciprocal, exact for every sum a pass can hold (boxPassDiv, the
// plain division, is the reference; at 1080p a video frame's plate blur
// spent most of its time dividing).
func boxPass(src, dst []int32, n, r int) {
	div := int32(2*r + 1)
	m, half := reciprocal(div), div/2
	if m == 0 {
		boxPassDiv(src, dst, n, r)
		return
	}
	at := func(i int) int { return min(n-1, max(0, i)) * 4 }
	var s0, s1, s2, s3 int32
	for i := -r; i <= r; i++ {
		j := at(i)
		s0, s1, s2, s3 = s0+src[j], s1+src[j+1], s2+src[j+2], s3+src[j+3]
	}
	dst = dst[:n*4]
	step := func(i, a, b int) {
		o := dst[i*4 : i*4+4 : i*4+4]
		o[0] = int32(uint64(s0+half) * m >> 40)
		o[1] = int32(uint64(s1+half) * m >> 40)
		o[2] = int32(uint64(s2+half) * m >> 40)
		o[3] = int32(uint64(s3+half) * m >> 40)
		in, out := src[a:a+4:a+4], src[b:b+4:b+4]
		s0 += in[0] - out[0]
		s1 += in[1] - out[1]
		s2 += in[2] - out[2]
		s3 += in[3] - out[3]
	}
	// The samples whose box reaches past neither end need no clamping
	// (and the loop over them no closure: the sums stay in registers).
	lo, hi := min(r, n), max(min(n-r-1, n), min(r, n))
	for i := 0; i < lo; i++ {
		step(i, at(i+r+1), at(i-r))
	}
	if hi > lo {
		out, in, d := src[(lo-r)*4:(hi-r)*4], src[(lo+r+1)*4:(hi+r+1)*4], dst[lo*4:hi*4]
		t0, t1, t2, t3 := s0, s1, s2, s3
		for k := 0; k+3 < len(d); k += 4 {
			o, a, b := d[k:k+4:k+4], in[k:k+4:k+4], out[k:k+4:k+4]
			o[0] = int32(uint64(t0+half) * m >> 40)
			o[1] = int32(uint64(t1+half) * m >> 40)
			o[2] = int32(uint64(t2+half) * m >> 40)
			o[3] = int32(uint64(t3+half) * m >> 40)
			t0 += a[0] - b[0]
			t1 += a[1] - b[1]
			t2 += a[2] - b[2]
			t3 += a[3] - b[3]
		}
		s0, s1, s2, s3 = t0, t1, t2, t3
	}
	for i := hi; i < n; i++ {
		step(i, at(i+r+1), at(i-r))
	}
}

// boxPassDiv is boxPass with a division a sample.
func boxPassDiv(src, dst []int32, n, r int) {
	div := int32(2*r + 1)
	for c := range 4 {
		at := func(i int) int32 { return src[min(n-1, max(0, i))*4+c] }
		var sum int32
		for i := -r; i <= r; i++ {
			sum += at(i)
		}
		for i := range n {
			dst[i*4+c] = (sum + div/2) / div
			sum += at(i+r+1) - at(i-r)
		}
	}
}
