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
	type found struct{ cx, cy, dx, dy float64 }
	var blocks []found
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
			blocks = append(blocks, found{float64(blk.Min.X+blk.Max.X) / 2, float64(blk.Min.Y+blk.Max.Y) / 2, float64(dx), float64(dy)})
		}
	}
	if textured < 3 {
		// Too flat to follow (no plate is): it goes on as it went.
		return motion{quad: moved(q, guess), shift: guess, ok: true}
	}
	if len(blocks) < 3 || 2*len(blocks) < textured {
		return motion{quad: q}
	}
	// Fit a shift t and a scale s about the blocks' centre m: a block at
	// c moves by t + (s-1)(c-m).
	var mx, my, tx, ty float64
	for _, f := range blocks {
		mx, my, tx, ty = mx+f.cx, my+f.cy, tx+f.dx, ty+f.dy
	}
	n := float64(len(blocks))
	mx, my, tx, ty = mx/n, my/n, tx/n, ty/n
	var num, den float64
	for _, f := range blocks {
		ux, uy := f.cx-mx, f.cy-my
		num += ux*(f.dx-tx) + uy*(f.dy-ty)
		den += ux*ux + uy*uy
	}
	s := 1.0
	if den > 0 {
		s = 1 + num/den
	}
	if s < 0.8 || s > 1.25 {
		return motion{quad: q}
	}
	var res float64
	for _, f := range blocks {
		ex := f.dx - tx - (s-1)*(f.cx-mx)
		ey := f.dy - ty - (s-1)*(f.cy-my)
		res += ex*ex + ey*ey
	}
	if math.Sqrt(res/n) > math.Max(2, 0.1*h) {
		return motion{quad: q}
	}
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
