package video

import (
	"image"
	"math"

	"carphoto/imageops"
)

// Tracking between looks: a plate's neighbourhood (its bounds grown by
// half its height) is cut into a grid of blocks, each block is found again
// in the next frame's luma by block matching, and the plate's quad is
// moved by the shift and scale that fit the blocks' moves. The match is
// weak when too few textured blocks are found again, or when their moves
// disagree: then the caller looks.

const (
	gridCols, gridRows = 4, 2
	blockSamples       = 256 // at most this many pixels of a block are compared
)

// motion is what follow found: the moved quad, the shift of its centre,
// and whether the match holds.
type motion struct {
	quad  imageops.Quad
	shift imageops.Point
	ok    bool
}

// follow finds the plate at q in frame a again in frame b, searching
// around the shift guess (the plate's last move).
func follow(a, b *image.YCbCr, q imageops.Quad, guess imageops.Point) motion {
	h := max(q.Height(), 4)
	area := q.Grow(0.5 * h).Bounds().Intersect(a.Rect)
	if area.Dx() < 2*gridCols || area.Dy() < 2*gridRows {
		return motion{quad: q}
	}
	radius := int(math.Min(math.Max(0.4*h, 6), 24))
	gx, gy := int(math.Round(guess.X)), int(math.Round(guess.Y))
	var blocks []blockMove
	textured := 0
	for r := range gridRows {
		for c := range gridCols {
			blk := image.Rect(area.Min.X+area.Dx()*c/gridCols, area.Min.Y+area.Dy()*r/gridRows,
				area.Min.X+area.Dx()*(c+1)/gridCols, area.Min.Y+area.Dy()*(r+1)/gridRows)
			step := max(1, int(math.Sqrt(float64(blk.Dx()*blk.Dy())/blockSamples)))
			tex := texture(a, blk, step)
			if tex < 3 {
				continue // flat: its match says nothing
			}
			textured++
			dx, dy, sad, ok := search(a, b, blk, step, gx, gy, radius)
			if !ok || sad > 0.5*tex+2 {
				continue
			}
			blocks = append(blocks, blockMove{float64(blk.Min.X+blk.Max.X) / 2, float64(blk.Min.Y+blk.Max.Y) / 2, float64(dx), float64(dy)})
		}
	}
	if textured < 3 {
		// Too flat to follow (no plate is): it goes on as it went.
		return motion{quad: moved(q, guess), shift: guess, ok: true}
	}
	if len(blocks) < 3 || 2*len(blocks) < textured {
		return motion{quad: q}
	}
	// Fit a shift and a scale to the blocks' moves; the blocks that
	// disagree with the fit most (a bar crossing part of the plate, a
	// match on a repeating pattern) are left out and it is fitted again.
	f := fitMoves(blocks)
	tol := math.Max(1.5, 0.05*h)
	kept := blocks[:0:0]
	for _, b := range blocks {
		if f.residual(b) <= tol {
			kept = append(kept, b)
		}
	}
	if len(kept) < len(blocks) {
		if len(kept) < 3 || 2*len(kept) < textured {
			return motion{quad: q}
		}
		f = fitMoves(kept)
	}
	if f.s < 0.9 || f.s > 1.1 || f.rms > tol {
		return motion{quad: q}
	}
	mx, my, tx, ty, s := f.mx, f.my, f.tx, f.ty, f.s
	var out imageops.Quad
	for i, p := range q {
		out[i] = imageops.Point{X: mx + tx + s*(p.X-mx), Y: my + ty + s*(p.Y-my)}
	}
	return motion{quad: out, shift: imageops.Point{X: centre(out).X - centre(q).X, Y: centre(out).Y - centre(q).Y}, ok: true}
}

// texture is the mean absolute deviation of a's luma over blk, read every
// step pixels.
func texture(a *image.YCbCr, blk image.Rectangle, step int) float64 {
	var sum, n int
	for y := blk.Min.Y; y < blk.Max.Y; y += step {
		row := a.Y[a.YOffset(blk.Min.X, y):]
		for x := 0; x < blk.Dx(); x += step {
			sum += int(row[x])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	mean := sum / n
	dev := 0
	for y := blk.Min.Y; y < blk.Max.Y; y += step {
		row := a.Y[a.YOffset(blk.Min.X, y):]
		for x := 0; x < blk.Dx(); x += step {
			dev += abs(int(row[x]) - mean)
		}
	}
	return float64(dev) / float64(n)
}

// search finds where blk of a lies in b, within radius of the shift
// (gx, gy): every second shift first, then the shifts around the best. It
// returns the shift and the mean absolute difference there; ok is false
// when no shift keeps the block inside b.
func search(a, b *image.YCbCr, blk image.Rectangle, step, gx, gy, radius int) (int, int, float64, bool) {
	best, bx, by := math.MaxInt, 0, 0
	try := func(dx, dy int) {
		if !blk.Add(image.Pt(dx, dy)).In(b.Rect) {
			return
		}
		if s := sad(a, b, blk, step, dx, dy, best); s < best {
			best, bx, by = s, dx, dy
		}
	}
	for dy := gy - radius; dy <= gy+radius; dy += 2 {
		for dx := gx - radius; dx <= gx+radius; dx += 2 {
			try(dx, dy)
		}
	}
	if best == math.MaxInt {
		return 0, 0, 0, false
	}
	cx, cy := bx, by
	for dy := cy - 1; dy <= cy+1; dy++ {
		for dx := cx - 1; dx <= cx+1; dx++ {
			if dx != cx || dy != cy {
				try(dx, dy)
			}
		}
	}
	n := ((blk.Dx() + step - 1) / step) * ((blk.Dy() + step - 1) / step)
	return bx, by, float64(best) / float64(n), true
}

// sad is the sum of absolute differences between blk of a and blk shifted
// by (dx, dy) of b, read every step pixels; it stops once past limit.
func sad(a, b *image.YCbCr, blk image.Rectangle, step, dx, dy, limit int) int {
	sum := 0
	for y := blk.Min.Y; y < blk.Max.Y; y += step {
		ra := a.Y[a.YOffset(blk.Min.X, y):]
		rb := b.Y[b.YOffset(blk.Min.X+dx, y+dy):]
		for x := 0; x < blk.Dx(); x += step {
			sum += abs(int(ra[x]) - int(rb[x]))
		}
		if sum >= limit {
			return sum
		}
	}
	return sum
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// centre is the mean of a quad's corners.
func centre(q imageops.Quad) imageops.Point {
	var c imageops.Point
	for _, p := range q {
		c.X += p.X / 4
		c.Y += p.Y / 4
	}
	return c
}

// moved is q shifted by d.
func moved(q imageops.Quad, d imageops.Point) imageops.Quad {
	for i := range q {
		q[i].X += d.X
		q[i].Y += d.Y
	}
	return q
}

// thumb is a frame's luma averaged over a grid of 16×16 cells (read at
// every fourth pixel): what a scene cut changes.
func thumb(f *image.YCbCr, dst []uint8) []uint8 {
	dst = dst[:0]
	r := f.Rect
	for y := r.Min.Y; y+16 <= r.Max.Y; y += 16 {
		for x := r.Min.X; x+16 <= r.Max.X; x += 16 {
			s := 0
			for j := 0; j < 16; j += 4 {
				row := f.Y[f.YOffset(x, y+j):]
				s += int(row[0]) + int(row[4]) + int(row[8]) + int(row[12])
			}
			dst = append(dst, uint8(s/16))
		}
	}
	return dst
}

// cut reports whether two frames' thumbs differ as a scene cut does: the
// mean cell changes by more than 24 levels of 255.
func cut(a, b []uint8) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	d := 0
	for i := range a {
		d += abs(int(a[i]) - int(b[i]))
	}
	return d > 24*len(a)
}

// blockMove is a block's centre in the first frame and its move to the
// second.
type blockMove struct{ cx, cy, dx, dy float64 }

// moveFit is a shift (tx, ty) and a scale s about the point (mx, my): a
// block at c moves by t + (s-1)(c-m); rms is how far the blocks' moves
// are from it.
type moveFit struct{ mx, my, tx, ty, s, rms float64 }

func fitMoves(blocks []blockMove) moveFit {
	var f moveFit
	for _, b := range blocks {
		f.mx, f.my, f.tx, f.ty = f.mx+b.cx, f.my+b.cy, f.tx+b.dx, f.ty+b.dy
	}
	n := float64(len(blocks))
	f.mx, f.my, f.tx, f.ty = f.mx/n, f.my/n, f.tx/n, f.ty/n
	var num, den float64
	for _, b := range blocks {
		ux, uy := b.cx-f.mx, b.cy-f.my
		num += ux*(b.dx-f.tx) + uy*(b.dy-f.ty)
		den += ux*ux + uy*uy
	}
	f.s = 1
	if den > 0 {
		f.s = 1 + num/den
	}
	var sq float64
	for _, b := range blocks {
		r := f.residual(b)
		sq += r * r
	}
	f.rms = math.Sqrt(sq / n)
	return f
}

// residual is how far b's move is from the fit's, in pixels.
func (f moveFit) residual(b blockMove) float64 {
	return math.Hypot(b.dx-f.tx-(f.s-1)*(b.cx-f.mx), b.dy-f.ty-(f.s-1)*(b.cy-f.my))
}
