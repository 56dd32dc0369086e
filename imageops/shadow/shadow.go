package shadow

import (
	"context"
	"image"
	"math"

	"carphoto"
	"carphoto/imageops/codec"
)

// ShadowOptions selects the extras of car-shadow.
type ShadowOptions struct {
	// Reflection adds a floor reflection under the shadow (beta).
	Reflection bool
	// ReuseCar lets CarShadow draw on the car itself and return it when the
	// shadow fits on the car's own canvas, instead of copying the car onto a
	// new one (a 12 MP cut-out is 48 MB). The caller must not use the car
	// afterwards.
	ReuseCar bool
}

// Shadow shape, as fractions of the car's size unit (about its height; see
// shadowUnit). Tuned by eye on cars-seg side, three-quarter and front views.
const (
	// The contact shadow: dark and tight where a tyre or a low sill meets
	// the floor, vanishing once the underside is a little above it.
	contactStrength = 0.95
	contactGap      = 0.02  // underside height at which it falls to 1/e
	contactSigmaX   = 0.015 // blur along the floor line
	contactSigmaY   = 0.006 // blur across it (the floor is foreshortened)

	// The ambient occlusion under the body: softer and wider, weaker where
	// the underside is high above the floor.
	ambientStrength = 0.72
	ambientGap      = 0.30
	ambientSigmaX   = 0.05
	ambientSigmaY   = 0.025

	// The wide, faint penumbra that lets the floor fade out around the car.
	penumbraStrength = 0.28
	penumbraGap      = 0.6
	penumbraSigmaX   = 0.10
	penumbraSigmaY   = 0.05

	// The shadow grid spans this far above the floor line (the gap under
	// the body, hidden by the car where it is solid), below it, and beside
	// the car; the outer half of the margins below and beside is a taper to
	// zero, which bounds the canvas growth.
	shadowAbove  = 0.45
	shadowBelow  = 0.30
	shadowBeside = 0.28
)

// CarShadow returns the car on a transparent canvas, grown as needed so
// nothing is clipped, with a realistic ground shadow under it (and, with
// Reflection, a floor reflection under the shadow). car is an RGBA cut-out
// (non-premultiplied; alpha = the car matte), bounds at (0,0).
//
// The floor contact comes from the matte alone (see ground). The shadow is
// drawn in floor-relative coordinates on a small grid, blurred there and
// upsampled bilinearly, so it follows a slanted or bent floor line exactly
// and costs little on a large photo. It is composited under the car: every
// pixel of the car with alpha 255 is copied unchanged.
func CarShadow(ctx context.Context, car *image.NRGBA, opt ShadowOptions) (*image.NRGBA, error) {
	if car == nil || car.Rect.Empty() {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "the image is empty: it has no pixels")
	}
	gr, ok := findGround(car)
	if !ok {
		if shadowFullyTransparent(car) {
			return nil, carphoto.Errorf(carphoto.EInvalidParams, "the image has no visible car: the cut-out is fully transparent")
		}
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "the image has no visible car: no pixel of the cut-out is more than half opaque")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lay := newShadowLayout(&gr, car.Rect.Dx(), car.Rect.Dy())
	sh := paintShadow(&gr, lay)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rf *reflection
	if opt.Reflection {
		rf = newReflection(car, &gr, lay)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return composeShadow(car, &gr, lay, sh, rf, opt.ReuseCar), nil
}

// shadowFullyTransparent reports whether every pixel of m has alpha 0.
func shadowFullyTransparent(m *image.NRGBA) bool {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	for y := 0; y < h; y++ {
		row := m.Pix[y*m.Stride : y*m.Stride+4*w]
		for x := 3; x < len(row); x += 4 {
			if row[x] != 0 {
				return false
			}
		}
	}
	return true
}

// shadowLayout is the geometry shared by the shadow, the reflection and the
// compositing: the car's size unit, the floor under every canvas column and
// the canvas itself. Coordinates are relative to the input's Min.
type shadowLayout struct {
	unit   float64
	canvas image.Rectangle // contains the input's rectangle
	floor  []float64       // floor y at the centre of each canvas column
}

// shadowUnit is the car's size unit: its height, or its length / 3.5 for
// very flat outlines, so shadows keep their proportions across views.
func shadowUnit(box image.Rectangle) float64 {
	return math.Max(1, math.Max(float64(box.Dy()), float64(box.Dx())/3.5))
}

func newShadowLayout(gr *ground, w, h int) *shadowLayout {
	lay := &shadowLayout{unit: shadowUnit(gr.box)}
	lay.canvas = image.Rect(0, 0, w, h)
	return lay
}

// floorAt returns the floor y at canvas column x.
func (l *shadowLayout) floorAt(x int) float64 { return l.floor[x-l.canvas.Min.X] }

// grow extends the canvas to r and recomputes the floor under every column.
func (l *shadowLayout) grow(gr *ground, r image.Rectangle) {
	l.canvas = l.canvas.Union(r)
	l.floor = l.floor[:0]
	for x := l.canvas.Min.X; x < l.canvas.Max.X; x++ {
		l.floor = append(l.floor, gr.at(float64(x)+0.5))
	}
}

// shadowGrid is a coarse alpha buffer in floor-relative coordinates: cell
// (i, j) covers image columns x0+i·dx … and heights v0+j·dy … relative to
// the floor line (positive below it).
type shadowGrid struct {
	w, h   int
	x0, v0 float64
	dx, dy float64
	a      []float32
}

func newShadowGrid(x0, x1, v0, v1, dx, dy float64) *shadowGrid {
	g := &shadowGrid{x0: x0, v0: v0, dx: dx, dy: dy}
	g.w = int(math.Ceil((x1 - x0) / dx))
	g.h = int(math.Ceil((v1 - v0) / dy))
	g.w, g.h = max(g.w, 1), max(g.h, 1)
	g.a = make([]float32, g.w*g.h)
	return g
}

// sampleColumn returns the bilinear value at floor offset v in the column
// between grid columns i and i+1 (weight tx on i+1).
func (g *shadowGrid) sampleColumn(i int, tx, v float32) float32 {
	fy := (v-float32(g.v0))/float32(g.dy) - 0.5
	if fy <= -1 || fy >= float32(g.h) {
		return 0
	}
	j := int(fy+1) - 1 // floor for fy > -1
	ty := fy - float32(j)
	var top, bot float32
	if j >= 0 {
		top = g.at(i, j)*(1-tx) + g.at(i+1, j)*tx
	}
	if j+1 < g.h {
		bot = g.at(i, j+1)*(1-tx) + g.at(i+1, j+1)*tx
	}
	return top*(1-ty) + bot*ty
}

// at returns cell (i, j), zero for a column outside the grid.
func (g *shadowGrid) at(i, j int) float32 {
	if i < 0 || i >= g.w {
		return 0
	}
	return g.a[j*g.w+i]
}

// shadowLayer is one of the three shadows: its darkness where the
// underside touches the floor, how fast it fades as the underside rises,
// and its blur.
type shadowLayer struct {
	strength, gap, sigmaX, sigmaY float64
	above, below                  float64 // painted band around the floor line
}

// paintShadow draws the contact, ambient and penumbra shadows on a coarse
// floor-relative grid and grows the layout's canvas to hold them.
func paintShadow(gr *ground, lay *shadowLayout) *shadowGrid {
	u := lay.unit
	padX := shadowBeside * u
	x0 := math.Floor(float64(gr.box.Min.X) - padX) // on pixel edges
	x1 := math.Ceil(float64(gr.box.Max.X) + padX)
	dx := math.Max(1, (x1-x0)/640)
	dy := math.Max(0.5, 0.003*u)
	sg := newShadowGrid(x0, x1, -shadowAbove*u, shadowBelow*u, dx, dy)

	// The smallest gap between the underside and the floor under each grid
	// column.
	gaps := make([]float64, sg.w)
	for i := range gaps {
		gaps[i] = math.NaN()
	}
	for x := gr.box.Min.X; x < gr.box.Max.X; x++ {
		i := int((float64(x) + 0.5 - x0) / dx) // the cell holding the pixel's centre
		d := gr.gap(x, gr.at(float64(x)+0.5))
		if !math.IsNaN(d) && (math.IsNaN(gaps[i]) || d < gaps[i]) {
			gaps[i] = math.Max(0, d)
		}
	}

	layers := []shadowLayer{
		{contactStrength, contactGap, contactSigmaX, contactSigmaY, 0.012, 0.01},
		{ambientStrength, ambientGap, ambientSigmaX, ambientSigmaY, -1, 0.02},
		{penumbraStrength, penumbraGap, penumbraSigmaX, penumbraSigmaY, -1, 0.03},
	}
	one := make([]float32, len(sg.a))
	for i := range sg.a {
		sg.a[i] = 1 // product of (1 - layer) while painting
	}
	for _, ly := range layers {
		clear(one)
		for i, d := range gaps {
			if math.IsNaN(d) {
				continue
			}
			val := float32(ly.strength * math.Exp(-d/(ly.gap*u)))
			above := ly.above * u
			if ly.above < 0 { // up to the underside, a little into the car
				above = d + 0.02*u
			}
			j0 := int(math.Floor((-above - sg.v0) / dy))
			j1 := int(math.Ceil((ly.below*u - sg.v0) / dy))
			for j := max(j0, 0); j < min(j1, sg.h); j++ {
				one[j*sg.w+i] = val
			}
		}
		shadowBlur(one, sg.w, sg.h, ly.sigmaX*u/dx, ly.sigmaY*u/dy)
		for k, v := range one {
			sg.a[k] *= 1 - v
		}
	}
	shadowTaper(sg, gr, padX, gaps)
	// Extent of visible shadow, then turn the product into alpha.
	minI, maxI, maxJ := sg.w, -1, -1
	for j := 0; j < sg.h; j++ {
		for i := 0; i < sg.w; i++ {
			k := j*sg.w + i
			sg.a[k] = 1 - sg.a[k]
			if sg.a[k] >= 0.5/255 {
				minI, maxI, maxJ = min(minI, i), max(maxI, i), max(maxJ, j)
			}
		}
	}
	lay.grow(gr, image.Rectangle{})
	if maxI < 0 {
		return sg
	}
	// Bilinear sampling reaches one cell past the last visible one.
	xa := int(math.Floor(x0+float64(minI-1)*dx)) - 1
	xb := int(math.Ceil(x0+float64(maxI+2)*dx)) + 1
	bottom := sg.v0 + float64(maxJ+2)*dy + 1
	low := 0.0
	for x := xa; x < xb; x++ {
		low = math.Max(low, gr.at(float64(x)+0.5)+bottom)
	}
	lay.grow(gr, image.Rect(xa, 0, xb, int(math.Ceil(low))))
	return sg
}

// shadowTaper fades the painted product (1 = no shadow) to no shadow
// over the outer half of the grid's margins beside the car and below the
// floor, so that the blur tails end inside the grid, and above a ceiling
// beside the car: the blur would otherwise carry the shadow under a bumper
// up past the bumper's end, a grey wall beside the car. The ceiling is the
// underside's height (gaps, NaN where a column has no car) falling off
// 1.5 times as fast as the distance from the car, down to 0.05 units; the
// shadow fades out from 30 % of it to a little above it.
func shadowTaper(sg *shadowGrid, gr *ground, padX float64, gaps []float64) {
	u := padX / shadowBeside
	ramp := func(d, width float64) float32 { // 1 at d <= 0, 0 at d >= width
		if d <= 0 {
			return 1
		}
		if d >= width {
			return 0
		}
		t := d / width
		return float32(1 - t*t*(3-2*t))
	}
	half := padX / 2
	wx := make([]float32, sg.w)
	ceil := make([]float64, sg.w)
	for i := range wx {
		x := sg.x0 + (float64(i)+0.5)*sg.dx
		d := math.Max(float64(gr.box.Min.X)-half-x, x-float64(gr.box.Max.X)-half)
		wx[i] = ramp(d, half)
		ceil[i] = math.Inf(-1)
		if !math.IsNaN(gaps[i]) {
			ceil[i] = gaps[i] + 0.02*u
		}
	}
	for i := 1; i < sg.w; i++ { // fall off away from the car, both ways
		if math.IsNaN(gaps[i]) {
			ceil[i] = math.Max(ceil[i], ceil[i-1]-1.5*sg.dx)
		}
	}
	for i := sg.w - 2; i >= 0; i-- {
		if math.IsNaN(gaps[i]) {
			ceil[i] = math.Max(ceil[i], ceil[i+1]-1.5*sg.dx)
		}
	}
	for i := range ceil {
		ceil[i] = math.Max(ceil[i], 0.05*u)
	}
	vEnd := sg.v0 + float64(sg.h)*sg.dy
	for j := 0; j < sg.h; j++ {
		v := sg.v0 + (float64(j)+0.5)*sg.dy
		wy := ramp(v-vEnd/2, vEnd/2)
		for i := 0; i < sg.w; i++ {
			k := j*sg.w + i
			w := wx[i] * wy
			if v < 0 && math.IsNaN(gaps[i]) {
				c := ceil[i]
				w *= ramp(-v-0.3*c, 0.7*c+0.04*u)
			}
			sg.a[k] = 1 - (1-sg.a[k])*w
		}
	}
}

// shadowBlur blurs a w×h buffer with three box passes per axis, close to a
// Gaussian of the given standard deviations (in cells). Values beyond the
// edges count as zero.
func shadowBlur(a []float32, w, h int, sigmaX, sigmaY float64) {
	rx, ry := shadowBoxRadius(sigmaX), shadowBoxRadius(sigmaY)
	n := max(w, h)
	src, dst := make([]float32, n), make([]float32, n)
	if rx > 0 {
		for j := 0; j < h; j++ {
			row := a[j*w : (j+1)*w]
			for p := 0; p < 3; p++ {
				copy(src, row)
				shadowBoxLine(src[:w], dst[:w], rx)
				copy(row, dst[:w])
			}
		}
	}
	if ry > 0 {
		for i := 0; i < w; i++ {
			for j := 0; j < h; j++ {
				src[j] = a[j*w+i]
			}
			for p := 0; p < 3; p++ {
				shadowBoxLine(src[:h], dst[:h], ry)
				src, dst = dst, src
			}
			for j := 0; j < h; j++ {
				a[j*w+i] = src[j]
			}
		}
	}
}

// shadowBoxRadius is the radius of a box whose three passes approximate a
// Gaussian of standard deviation sigma.
func shadowBoxRadius(sigma float64) int {
	return int(math.Round((math.Sqrt(4*sigma*sigma+1) - 1) / 2))
}

// shadowBoxLine writes to dst the mean of src over a window of radius r around
// each element, with zeros beyond the ends.
func shadowBoxLine(src, dst []float32, r int) {
	n := len(src)
	var sum float32
	for k := 0; k <= r && k < n; k++ {
		sum += src[k]
	}
	inv := 1 / float32(2*r+1)
	for k := 0; k < n; k++ {
		dst[k] = sum * inv
		if k+r+1 < n {
			sum += src[k+r+1]
		}
		if k-r >= 0 {
			sum -= src[k-r]
		}
	}
}

// composeShadow copies the car onto the layout's canvas and puts the
// shadow, and the reflection when given, under it. With reuse, a canvas
// that is the car's own rectangle is the car itself.
func composeShadow(car *image.NRGBA, gr *ground, lay *shadowLayout, sh *shadowGrid, rf *reflection, reuse bool) *image.NRGBA {
	cv := lay.canvas
	ox, oy := -cv.Min.X, -cv.Min.Y
	w, h := car.Rect.Dx(), car.Rect.Dy()
	out := car
	if !reuse || cv != image.Rect(0, 0, w, h) || car.Rect.Min != (image.Point{}) {
		out = image.NewNRGBA(image.Rect(0, 0, cv.Dx(), cv.Dy()))
		for y := 0; y < h; y++ {
			copy(out.Pix[(y+oy)*out.Stride+4*ox:], car.Pix[y*car.Stride:y*car.Stride+4*w])
		}
	}

	cols := shadowColumns(gr, lay, sh, rf)
	top := cv.Max.Y
	for _, c := range cols {
		if c.y0 < c.y1 {
			top = min(top, c.y0)
		}
	}
	for y := max(top, cv.Min.Y); y < cv.Max.Y; y++ {
		row := out.Pix[(y+oy)*out.Stride : (y+oy+1)*out.Stride]
		cy := float32(y) + 0.5
		for i := range cols {
			c := &cols[i]
			if y < c.y0 || y >= c.y1 {
				continue
			}
			px := row[4*i : 4*i+4 : 4*i+4]
			if px[3] == 255 {
				continue
			}
			v := cy - c.floor
			var s float32
			if v < c.shadowEnd {
				s = sh.sampleColumn(c.sx, c.stx, v)
			}
			var rr, rg, rb, ra float32
			if rf != nil && v > 0 {
				rr, rg, rb, ra = rf.sampleColumn(c.rx, c.rtx, v)
			}
			if s < 0.5/255 && ra < 0.5/255 {
				continue
			}
			if px[3] == 0 && rf == nil { // floor only, no reflection: the black shadow alone
				px[0], px[1], px[2], px[3] = 0, 0, 0, codec.UnitByte(s)
				continue
			}
			// Under the car: the black shadow over the reflection.
			ua := s + ra*(1-s)
			ur, ug, ub := rr*(1-s), rg*(1-s), rb*(1-s)
			if px[3] == 0 { // floor only: no car to blend
				inv := 1 / ua
				px[0], px[1], px[2], px[3] = codec.UnitByte(ur*inv), codec.UnitByte(ug*inv), codec.UnitByte(ub*inv), codec.UnitByte(ua)
				continue
			}
			ca := float32(px[3]) / 255
			a := ca + ua*(1-ca)
			k := (1 - ca) / a
			kc := ca / a
			px[0] = codec.UnitByte(float32(px[0])/255*kc + ur*k)
			px[1] = codec.UnitByte(float32(px[1])/255*kc + ug*k)
			px[2] = codec.UnitByte(float32(px[2])/255*kc + ub*k)
			px[3] = codec.UnitByte(a)
		}
	}
	return out
}

// shadowColumn is what compositing needs of one canvas column: the floor,
// the rows where the shadow or the reflection is not zero, and the bilinear
// column index and weight into each grid.
type shadowColumn struct {
	floor     float32
	shadowEnd float32 // floor offset past which the shadow is zero
	y0, y1    int
	sx, rx    int
	stx, rtx  float32
}

func shadowColumns(gr *ground, lay *shadowLayout, sh *shadowGrid, rf *reflection) []shadowColumn {
	// Rows of each shadow grid column that hold any shadow.
	first, last := make([]int, sh.w), make([]int, sh.w)
	for i := range first {
		first[i], last[i] = sh.h, -1
		for j := 0; j < sh.h; j++ {
			if sh.a[j*sh.w+i] >= 0.25/255 {
				first[i], last[i] = min(first[i], j), j
			}
		}
	}
	cols := make([]shadowColumn, lay.canvas.Dx())
	for k := range cols {
		x := lay.canvas.Min.X + k
		c := &cols[k]
		floor := lay.floor[k]
		c.floor = float32(floor)
		lo, hi := math.Inf(1), math.Inf(-1)
		fx := (float64(x)+0.5-sh.x0)/sh.dx - 0.5
		c.sx = int(math.Floor(fx))
		c.stx = float32(fx - float64(c.sx))
		jf, jl := sh.h, -1
		for i := c.sx; i <= c.sx+1; i++ {
			if i >= 0 && i < sh.w {
				jf, jl = min(jf, first[i]), max(jl, last[i])
			}
		}
		if jf <= jl {
			lo = sh.v0 + (float64(jf)-0.5)*sh.dy
			hi = sh.v0 + (float64(jl)+1.5)*sh.dy
			c.shadowEnd = float32(hi)
			// Under the car the floor shows only below its underside:
			// no shadow behind a window or between the spokes.
			if gap := gr.gap(x, floor); gap >= 0 {
				lo = math.Max(lo, -gap-2)
			}
		}
		c.rx = -2 // no reflection unless within the car's columns
		if rf != nil && x >= rf.x0-1 && x < rf.x0+int(math.Ceil(float64(rf.w)*rf.cell))+1 {
			rx := (float64(x-rf.x0)+0.5)/rf.cell - 0.5
			c.rx = int(math.Floor(rx))
			c.rtx = float32(rx - float64(c.rx))
			lo = math.Min(lo, 0)
			hi = math.Max(hi, rf.depth)
		}
		// Rows whose centre y+0.5 lies strictly between floor+lo and
		// floor+hi.
		if lo < hi {
			c.y0 = max(int(math.Floor(floor+lo-0.5))+1, lay.canvas.Min.Y)
			c.y1 = min(int(math.Ceil(floor+hi-0.5)), lay.canvas.Max.Y)
		}
	}
	return cols
}
