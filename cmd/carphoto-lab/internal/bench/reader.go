package bench

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"math"
	"os"
	"strings"
	"unicode"

	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
	"carphoto/imageops/textrec"
	"carphoto/internal/testenv/platechars"
)

// readerScore is what the text reader's decision changed on a set: the
// plates whose characters it hid that the finder without it left
// readable, those it left readable that the finder without it hid, and
// the detections over no labelled plate it added or took away.
type readerScore struct {
	measured              bool
	added, lost           []string
	falseAdded, falseGone []string
	// answerReadable lists the labelled plates where the reader still
	// reads a plate-like string in the answer (answerCheck).
	answerReadable []string
	answered       bool
	// sheet holds a before/after pair for each plate added and each
	// false detection added (bench plates --sheet).
	sheet []image.Image
}

// compare scores the finder without the reader (before) against with it
// (got) on one photo.
func (sc *plateScore) compare(p benchPhoto, before, got []plates.Plate) {
	r := &sc.reader
	r.measured = true
	for i, b := range p.plates {
		if b.W < minWide {
			continue
		}
		was, now := b.CoveredBy(before) >= 0.95, b.CoveredBy(got) >= 0.95
		if p.chars != nil {
			c := p.chars[i]
			was, now = c.Hidden(before) >= platechars.HiddenShare, c.Hidden(got) >= platechars.HiddenShare
		}
		where := fmt.Sprintf("%s (%.0fx%.0f at %.0f,%.0f)", p.name, b.W, b.H, b.X, b.Y)
		switch {
		case now && !was:
			r.added = append(r.added, where)
			r.sheet = append(r.sheet, sheetPair(p, around(image.Rect(int(b.X), int(b.Y), int(b.X+b.W), int(b.Y+b.H))), before, got))
		case was && !now:
			r.lost = append(r.lost, where)
		}
	}
	falses := func(ds []plates.Plate) []plates.Plate {
		var out []plates.Plate
		for _, d := range ds {
			hit := false
			for _, b := range p.plates {
				hit = hit || b.Overlaps(d.Hide)
			}
			if !hit {
				out = append(out, d)
			}
		}
		return out
	}
	fb, fg := falses(before), falses(got)
	in := func(d plates.Plate, ds []plates.Plate) bool {
		for _, o := range ds {
			if o.Quad.Bounds().Overlaps(d.Quad.Bounds()) {
				return true
			}
		}
		return false
	}
	for _, d := range fg {
		if !in(d, fb) {
			r.falseAdded = append(r.falseAdded, fmt.Sprintf("%s (%v)", p.name, d))
			r.sheet = append(r.sheet, sheetPair(p, around(d.Quad.Bounds()), before, got))
		}
	}
	for _, d := range fb {
		if !in(d, fg) {
			r.falseGone = append(r.falseGone, fmt.Sprintf("%s (%v)", p.name, d))
		}
	}
}

// print writes what the reader changed.
func (r readerScore) print(stdout io.Writer) {
	if !r.measured && !r.answered {
		return
	}
	fmt.Fprintf(stdout, "the reader's decision: %d plates hidden that were readable without it: %s\n", len(r.added), strings.Join(r.added, ", "))
	fmt.Fprintf(stdout, "the reader's decision: %d plates readable that were hidden without it: %s\n", len(r.lost), strings.Join(r.lost, ", "))
	fmt.Fprintf(stdout, "the reader's decision: %d false detections added: %s\n", len(r.falseAdded), strings.Join(r.falseAdded, ", "))
	fmt.Fprintf(stdout, "the reader's decision: %d false detections gone: %s\n", len(r.falseGone), strings.Join(r.falseGone, ", "))
	if r.answered {
		fmt.Fprintf(stdout, "the answer read again: a plate-like string read inside %d labelled plates: %s\n", len(r.answerReadable), strings.Join(r.answerReadable, ", "))
	}
}

// sheetTile is the side, in pixels, of each half of a contact sheet's
// before/after pair.
const sheetTile = 240

// sheetPair draws, for the region of p around r (photo pixels), the
// photo with before's hide regions outlined (left) and got's (right), the
// labelled plates in blue: one row of a contact sheet.
func sheetPair(p benchPhoto, r image.Rectangle, before, got []plates.Plate) image.Image {
	r = r.Intersect(p.img.Bounds())
	out := image.NewRGBA(image.Rect(0, 0, 2*sheetTile+8, sheetTile))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.RGBA{255, 255, 255, 255}), image.Point{}, draw.Src)
	s := float64(sheetTile) / float64(max(r.Dx(), r.Dy(), 1))
	for half, ds := range [][]plates.Plate{before, got} {
		ox := half * (sheetTile + 8)
		for y := range sheetTile {
			for x := range sheetTile {
				sx, sy := r.Min.X+int(float64(x)/s), r.Min.Y+int(float64(y)/s)
				if sx < r.Max.X && sy < r.Max.Y {
					out.Set(ox+x, y, p.img.At(sx, sy))
				}
			}
		}
		at := func(q plates.Point) (float64, float64) {
			return float64(ox) + (q.X-float64(r.Min.X))*s, (q.Y - float64(r.Min.Y)) * s
		}
		for _, b := range p.plates {
			q := plates.Quad{{X: b.X, Y: b.Y}, {X: b.X + b.W, Y: b.Y}, {X: b.X + b.W, Y: b.Y + b.H}, {X: b.X, Y: b.Y + b.H}}
			outline(out, q, at, color.RGBA{0, 90, 255, 255}, ox)
		}
		for _, d := range ds {
			outline(out, d.Hide, at, color.RGBA{255, 0, 0, 255}, ox)
		}
	}
	return out
}

// outline draws q's edges on img, mapped by at, within the half starting
// at column ox.
func outline(img *image.RGBA, q plates.Quad, at func(plates.Point) (float64, float64), c color.RGBA, ox int) {
	for i := range q {
		x0, y0 := at(q[i])
		x1, y1 := at(q[(i+1)%4])
		n := int(max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
		for k := 0; k <= n; k++ {
			t := float64(k) / float64(n)
			x, y := int(x0+t*(x1-x0)), int(y0+t*(y1-y0))
			if x >= ox && x < ox+sheetTile && y >= 0 && y < sheetTile {
				img.SetRGBA(x, y, c)
			}
		}
	}
}

// around is a square region of about 3 times r's width around r.
func around(r image.Rectangle) image.Rectangle {
	side := 3 * max(r.Dx(), 2*r.Dy(), 16)
	c := r.Min.Add(r.Max).Div(2)
	return image.Rect(c.X-side/2, c.Y-side/2, c.X+side/2, c.Y+side/2)
}

// writeSheet writes the rows as a JPEG contact sheet, one pair a row.
func writeSheet(path string, rows []image.Image) error {
	if len(rows) == 0 {
		return nil
	}
	out := image.NewRGBA(image.Rect(0, 0, 2*sheetTile+8, len(rows)*(sheetTile+8)))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.RGBA{255, 255, 255, 255}), image.Point{}, draw.Src)
	for i, r := range rows {
		draw.Draw(out, r.Bounds().Add(image.Pt(0, i*(sheetTile+8))), r, image.Point{}, draw.Src)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := jpeg.Encode(f, out, &jpeg.Options{Quality: 80}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// answerCheck is a second, independent check of the hiding: it reads, with
// the text reader, each labelled plate (at least minWide px wide) of the
// answer blur-plates gives for got, and returns the plates where a
// plate-like string can still be read there (4 or more letters and digits,
// a digit among them, mean confidence at least 0.6). What is read is
// counted, never printed.
func answerCheck(ctx context.Context, p benchPhoto, got []plates.Plate) ([]string, error) {
	b := p.img.Bounds()
	answer := image.NewRGBA(b)
	draw.Draw(answer, b, p.img, b.Min, draw.Src)
	quads := make([]plates.Quad, len(got))
	for i, d := range got {
		quads[i] = d.Quad
	}
	painted, err := paint.HidePlatesInPlace(ctx, answer, quads, paint.StyleBlur)
	if err != nil {
		return nil, err
	}
	var readable []string
	for _, l := range p.plates {
		if l.W < minWide {
			continue
		}
		ok, err := readsLikePlate(ctx, painted, l)
		if err != nil {
			return nil, err
		}
		if ok {
			readable = append(readable, fmt.Sprintf("%s (%.0fx%.0f at %.0f,%.0f)", p.name, l.W, l.H, l.X, l.Y))
		}
	}
	return readable, nil
}

// unreadPlates reports, for each labelled plate of p, whether the reader
// reads no plate-like string on it in the photo itself: a script it cannot
// read, or a plate too small or blurred for it. The finder's reading can
// neither help nor hurt those, so their figures must stay as they were.
func unreadPlates(ctx context.Context, p benchPhoto) ([]bool, error) {
	out := make([]bool, len(p.plates))
	for i, l := range p.plates {
		ok, err := readsLikePlate(ctx, p.img, l)
		if err != nil {
			return nil, err
		}
		out[i] = !ok
	}
	return out, nil
}

// readsLikePlate reports whether the reader reads a plate-like string
// (4 or more letters and digits, a digit among them, mean confidence at
// least 0.6) in the box l of img.
func readsLikePlate(ctx context.Context, img image.Image, l plates.Box) (bool, error) {
	q := textrec.Quad{{X: l.X, Y: l.Y}, {X: l.X + l.W, Y: l.Y}, {X: l.X + l.W, Y: l.Y + l.H}, {X: l.X, Y: l.Y + l.H}}
	r, err := textrec.Read(ctx, img, q)
	if err != nil {
		return false, err
	}
	letters, digits := 0, 0
	for _, c := range r.Text {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c < 128 && unicode.IsLetter(c):
			letters++
		}
	}
	return letters+digits >= 4 && digits >= 1 && r.Mean() >= 0.6, nil
}
