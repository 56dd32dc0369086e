package bench

import (
	"carphoto/imageops"
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
	"carphoto/internal/testenv/benchphoto"
	"carphoto/internal/testenv/platechars"
)

// Plates implements `carphoto bench plates [--split heldout|val|train|all]
// [--labels FILE] DIR` over DIR/labels.json (or FILE, its photos' paths
// relative to DIR): recall (a labelled plate is found when at least
// 95% of its box lies inside the detected quads), false detections per
// image (a detection overlapping no labelled plate), detection time p50/p95
// on the set's photos, and p50 on a 12-megapixel photo (decode excluded).
// Recall is also given by the labelled plate's width; --scale shrinks every
// photo first, so that the sets' plates stand in for smaller ones, and
// --mosaic lays them out side by side, so that they stand in for plates
// small in a large photo. Recall and false detections are given again for
// the scored photos that have no copy among the other splits' photos
// (datasets.Fingerprint). On the held-out split it also gives the share of
// plates whose characters are hidden (platechars: at least 95% of the text
// regions a text detector found on the plate, read from --chars), and
// names the plates left readable.
func Plates(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench plates", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var o benchPlatesOpts
	fs.StringVar(&o.split, "split", "heldout", "photos to score: heldout, val (the tuning split), train (what the networks learnt: how well they fit) or all")
	runs := fs.Int("n", 7, "timed runs on the 12 MP photo (0 skips it)")
	fs.BoolVar(&o.verbose, "v", false, "print every missed plate and false detection")
	fs.Float64Var(&o.scale, "scale", 1, "shrink every photo and its labels by this factor first (0 < scale <= 1): a stress test of small plates")
	fs.StringVar(&o.labels, "labels", "", "labels to score against instead of DIR/labels.json, in its format, photo paths relative to DIR (one DIR only)")
	fs.IntVar(&o.tiles, "mosaic", 1, "lay the photos out N×N to a photo at their own resolution first: a stress test of plates small in a large photo")
	sheet := fs.String("sheet", "", "with --reader, write a JPEG contact sheet of the plates the reader added and the false detections it added, each before (left) and after (right): hidden regions red, labelled plates blue")
	fs.BoolVar(&o.answers, "answers", true, "read each labelled plate of blur-plates' answer again with the text reader and count those where a plate-like string can still be read")
	fs.BoolVar(&o.reader, "reader", true, "also run the finder without the text reader, and list the plates the reader's decision added and the false hides it added")
	charsFile := fs.String("chars", defaultChars, "the held-out plates' characters (train/plates/chars.py), to count the plates whose characters are hidden")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var dirs []string
	for fs.NArg() > 0 { // flags may also follow a DIR
		dirs = append(dirs, fs.Arg(0))
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
	}
	if len(dirs) == 0 {
		return errors.New("bench plates: usage: carphoto bench plates [--split heldout|val|train|all] [--labels FILE] [--chars FILE] [-n N] [-v] [--scale F] [--mosaic N] DIR...")
	}
	if !(o.scale > 0 && o.scale <= 1) {
		return fmt.Errorf("bench plates: --scale %g: want a factor in (0, 1]", o.scale)
	}
	if o.tiles < 1 || o.tiles > 8 {
		return fmt.Errorf("bench plates: --mosaic %d: want 1 to 8 photos a side", o.tiles)
	}
	if o.labels != "" && len(dirs) > 1 {
		return errors.New("bench plates: --labels goes with one DIR")
	}
	if o.split == "heldout" && o.tiles == 1 {
		chars, err := platechars.Load(*charsFile)
		switch {
		case errors.Is(err, os.ErrNotExist) && *charsFile == defaultChars:
			o.noChars = fmt.Sprintf("%s not found (run from the repository root, or name it with --chars)", defaultChars)
		case err != nil:
			return fmt.Errorf("bench plates: --chars: %w", err)
		default:
			o.chars, o.charsFile = chars, *charsFile
		}
	}
	var scores []*plateScore
	first := ""
	for _, dir := range dirs {
		sc, photo, err := benchPlatesSet(ctx, dir, o, stdout)
		if err != nil {
			return err
		}
		scores = append(scores, sc)
		if first == "" {
			first = photo
		}
	}
	if *sheet != "" {
		var rows []image.Image
		for _, sc := range scores {
			rows = append(rows, sc.reader.sheet...)
		}
		if err := writeSheet(*sheet, rows); err != nil {
			return fmt.Errorf("bench plates: --sheet: %w", err)
		}
	}
	if len(dirs) > 1 {
		fmt.Fprintf(stdout, "\n| set (%s split) | photos | characters hidden, plates >= %d px | recall, plates >= %d px | narrower | hidden / box median, p90 | IoU median | false / photo | time p50 / p95 |\n|---|---|---|---|---|---|---|---|---|\n", o.split, minWide, minWide)
		for i, sc := range scores {
			chars := "–"
			if sc.chars.measured {
				chars = fmt.Sprintf("%.3f (%d/%d)", frac(sc.chars.hidden, sc.chars.total), sc.chars.hidden, sc.chars.total)
			}
			fmt.Fprintf(stdout, "| %s | %d | %s | %.3f (%d/%d) | %d/%d | %.2f, %.2f | %.2f | %.3f (%d) | %.0f / %.0f ms |\n",
				filepath.Base(filepath.Clean(dirs[i])), sc.images, chars, frac(sc.wide.found, sc.wide.total), sc.wide.found, sc.wide.total,
				sc.found-sc.wide.found, sc.total-sc.wide.total, Percentile(sc.area, 50), Percentile(sc.area, 90), Percentile(sc.iou, 50),
				frac(sc.falses, sc.images), sc.falses, Percentile(sc.times, 50), Percentile(sc.times, 95))
		}
	}
	if *runs == 0 {
		return nil
	}
	data, err := os.ReadFile(first)
	if err != nil {
		return fmt.Errorf("bench plates: %w", err)
	}
	big, err := benchphoto.Enlarge(ctx, data, 12, 0)
	if err != nil {
		return fmt.Errorf("bench plates: 12 MP photo: %w", err)
	}
	p, err := codec.Decode(ctx, big, toolLimits)
	if err != nil {
		return fmt.Errorf("bench plates: 12 MP photo: %w", err)
	}
	var bigTimes []float64
	for range *runs {
		start := time.Now()
		if _, err := plates.Detect(ctx, p.Image); err != nil {
			return fmt.Errorf("bench plates: %w", err)
		}
		bigTimes = append(bigTimes, Millis(time.Since(start)))
	}
	b := p.Image.Bounds()
	fmt.Fprintf(stdout, "12 MP photo (%dx%d %T, %s enlarged): detection p50 %.1f ms over %d runs (networks: %s)\n",
		b.Dx(), b.Dy(), p.Image, filepath.Base(first), Percentile(bigTimes, 50), len(bigTimes), imageops.Arithmetic())
	return nil
}

// benchPlatesOpts are `bench plates`'s settings for every set.
type benchPlatesOpts struct {
	split, labels string
	verbose       bool
	reader        bool
	answers       bool
	scale         float64
	tiles         int
	// chars holds the held-out plates' characters by set (nil: not
	// measured, for the reason noChars gives).
	chars              map[string]platechars.Set
	charsFile, noChars string
}

// defaultChars is where train/plates/chars.py writes the held-out plates'
// characters, from the repository root.
const defaultChars = "imageops/plates/testdata/heldout-chars.json"

// benchPlatesSet scores the detector on one labelled set in dir, prints
// its figures, and returns them with the path of its first scored photo.
func benchPlatesSet(ctx context.Context, dir string, o benchPlatesOpts, stdout io.Writer) (*plateScore, string, error) {
	labelsFile := o.labels
	if labelsFile == "" {
		labelsFile = filepath.Join(dir, "labels.json")
	}
	raw, err := os.ReadFile(labelsFile)
	if err != nil {
		return nil, "", fmt.Errorf("bench plates: %w", err)
	}
	var labels []struct {
		File   string       `json:"file"`
		Plates []plates.Box `json:"plates"`
	}
	if err := json.Unmarshal(raw, &labels); err != nil {
		return nil, "", fmt.Errorf("bench plates: %s: %w", labelsFile, err)
	}
	var inSplit func(name string) bool
	switch o.split {
	case "heldout":
		inSplit = datasets.HeldOut
	case "val":
		inSplit = datasets.Validation
	case "train":
		inSplit = datasets.Training
	case "all":
		inSplit = func(string) bool { return true }
	default:
		return nil, "", fmt.Errorf("bench plates: --split %q: want heldout, val, train or all", o.split)
	}
	// The other splits' photos, to find the scored photos' copies among.
	var others []*datasets.Fingerprint
	for _, l := range labels {
		if inSplit(filepath.Base(l.File)) {
			continue
		}
		photo, err := decodeFile(ctx, filepath.Join(dir, l.File))
		if err != nil {
			return nil, "", fmt.Errorf("bench plates: %s: %w", filepath.Base(l.File), err)
		}
		others = append(others, datasets.FingerprintOf(photo.Image))
	}
	setName := filepath.Base(filepath.Clean(dir))
	chars, noChars := o.chars[setName], o.noChars
	switch {
	case o.split != "heldout":
		noChars = "held-out split only"
	case o.tiles > 1:
		noChars = "not with --mosaic"
	case o.chars != nil && (chars == nil || o.labels != ""):
		noChars = fmt.Sprintf("%s holds no plates of %s", o.charsFile, setName)
		chars = nil
	}
	var scored []benchPhoto
	for _, l := range labels {
		name := filepath.Base(l.File)
		if !inSplit(name) {
			continue
		}
		path := filepath.Join(dir, l.File)
		photo, err := decodeFile(ctx, path)
		if err != nil {
			return nil, "", fmt.Errorf("bench plates: %s: %w", name, err)
		}
		p := benchPhoto{name: name, path: path, img: photo.Image, plates: l.Plates}
		p.copied = datasets.FingerprintOf(p.img).CopiedIn(others)
		if chars != nil {
			if p.chars, err = charsOf(chars, l.File, l.Plates); err != nil {
				return nil, "", fmt.Errorf("bench plates: %s: %w", o.charsFile, err)
			}
		}
		if o.scale != 1 {
			p.img = shrink(p.img, o.scale)
			for i, b := range p.plates {
				p.plates[i] = plates.Box{X: b.X * o.scale, Y: b.Y * o.scale, W: b.W * o.scale, H: b.H * o.scale}
			}
			for i, c := range p.chars {
				p.chars[i] = c.Scaled(o.scale)
			}
		}
		scored = append(scored, p)
	}
	if len(scored) == 0 {
		return nil, "", fmt.Errorf("bench plates: no %s photos in %s", o.split, dir)
	}
	first := scored[0].path
	if o.tiles > 1 {
		if scored = mosaics(scored, o.tiles); len(scored) == 0 {
			return nil, "", fmt.Errorf("bench plates: --mosaic %d: fewer than %d %s photos in %s to lay out", o.tiles, o.tiles*o.tiles, o.split, dir)
		}
	}
	sc := newPlateScore()
	sc.chars.measured, sc.chars.not = chars != nil, noChars
	for _, p := range scored {
		if o.answers {
			var err error
			if p.unread, err = unreadPlates(ctx, p); err != nil {
				return nil, "", fmt.Errorf("bench plates: %s: %w", p.name, err)
			}
		}
		start := time.Now()
		got, err := plates.Detect(ctx, p.img)
		sc.times = append(sc.times, Millis(time.Since(start)))
		if err != nil {
			return nil, "", fmt.Errorf("bench plates: %s: %w", p.name, err)
		}
		sc.add(p, got, o.verbose, stdout)
		if o.answers {
			readable, err := answerCheck(ctx, p, got)
			if err != nil {
				return nil, "", fmt.Errorf("bench plates: %s: %w", p.name, err)
			}
			sc.reader.answered = true
			sc.reader.answerReadable = append(sc.reader.answerReadable, readable...)
		}
		if o.reader {
			before, err := plates.DetectUnread(ctx, p.img)
			if err != nil {
				return nil, "", fmt.Errorf("bench plates: %s: %w", p.name, err)
			}
			sc.compare(p, before, got)
		}
	}
	shrunk := ""
	if o.scale != 1 {
		shrunk = fmt.Sprintf(", shrunk to %g", o.scale)
	}
	if o.tiles > 1 {
		shrunk += fmt.Sprintf(", laid out %d×%d", o.tiles, o.tiles)
	}
	sc.print(stdout, fmt.Sprintf("%s, split %s%s", filepath.Base(filepath.Clean(dir)), o.split, shrunk), len(others) > 0)
	return sc, first, nil
}

// plateScore adds up `bench plates`'s figures over a set's photos.
type plateScore struct {
	images, total, found, falses int
	unique                       struct{ images, total, found, falses int } // photos with no copy among others
	bySize                       []struct{ found, total int }
	wide                         struct{ found, total int } // plates at least minWide pixels wide
	area, iou                    []float64                  // per found wide plate: hidden area ÷ box area, IoU of quad and box
	curve                        []struct {
		found int
		area  []float64
	}
	times  []float64
	reader readerScore
	chars  struct {
		measured      bool
		not           string                      // why not measured
		total, hidden int                         // plates >= minWide px; those whose characters are hidden
		unread        struct{ total, hidden int } // the same of the plates the reader reads nothing plate-like on
		standIn       int                         // plates whose text the text detector missed
		readable      []string
	}
}

// minWide is the narrowest plate, in pixels, that the recall figure
// counts: a narrower plate's characters are a pixel or two wide,
// unreadable. Narrower plates are reported apart.
const minWide = 20

// curveMargins are the margins, in plate heights, of the
// recall-versus-tightness curve: the hidden region each would give.
var curveMargins = []float64{0, 0.05, 0.1, 0.12, 0.15, 0.2, 0.3, 0.45}

func newPlateScore() *plateScore {
	return &plateScore{bySize: make([]struct{ found, total int }, len(widthClasses)), curve: make([]struct {
		found int
		area  []float64
	}, len(curveMargins))}
}

// add scores one photo's detections against its labelled plates.
func (sc *plateScore) add(p benchPhoto, got []plates.Plate, verbose bool, stdout io.Writer) {
	sc.images++
	if !p.copied {
		sc.unique.images++
		sc.unique.total += len(p.plates)
	}
	for i, b := range p.plates {
		sc.total++
		class := &sc.bySize[widthClass(b.W)]
		class.total++
		wide := b.W >= minWide
		if wide {
			sc.wide.total++
		}
		// The detection that is this plate: the quad most like its box.
		best, bestIoU := b.Match(got)
		c := b.CoveredBy(got)
		if c >= 0.95 {
			sc.found++
			class.found++
			if !p.copied {
				sc.unique.found++
			}
			if wide {
				sc.wide.found++
				sc.area = append(sc.area, got[best].Hide.Area()/(b.W*b.H))
				sc.iou = append(sc.iou, bestIoU)
			}
		} else if verbose {
			fmt.Fprintf(stdout, "missed %s: plate %.0fx%.0f at (%.0f,%.0f), %.0f%% covered\n", p.name, b.W, b.H, b.X, b.Y, 100*c)
		}
		if !wide {
			continue
		}
		if p.chars != nil {
			sc.addChars(p, i, got)
		}
		// What each margin of the curve would have hidden.
		for k, m := range curveMargins {
			grown := make([]plates.Plate, len(got))
			for i, d := range got {
				grown[i].Hide = d.Quad.Grow(max(m*d.Quad.Height(), plates.MinHidePx))
			}
			if b.CoveredBy(grown) >= 0.95 {
				sc.curve[k].found++
				sc.curve[k].area = append(sc.curve[k].area, grown[best].Hide.Area()/(b.W*b.H))
			}
		}
	}
	for _, d := range got {
		hit := false
		for _, b := range p.plates {
			hit = hit || b.Overlaps(d.Hide)
		}
		if !hit {
			sc.falses++
			if !p.copied {
				sc.unique.falses++
			}
			if verbose {
				fmt.Fprintf(stdout, "false %s: %v\n", p.name, d)
			}
		}
	}
}

// addChars scores whether the characters of p's plate i (at least
// minWide px wide) are hidden by the detections got.
func (sc *plateScore) addChars(p benchPhoto, i int, got []plates.Plate) {
	c := p.chars[i]
	sc.chars.total++
	if c.StandIn {
		sc.chars.standIn++
	}
	share := c.Hidden(got)
	hidden := share >= platechars.HiddenShare
	if p.unread != nil && p.unread[i] {
		sc.chars.unread.total++
		if hidden {
			sc.chars.unread.hidden++
		}
	}
	if hidden {
		sc.chars.hidden++
	} else {
		b := c.Box
		sc.chars.readable = append(sc.chars.readable, fmt.Sprintf("%s (%.0fx%.0f at %.0f,%.0f: %.0f%%)", p.name, b.W, b.H, b.X, b.Y, 100*share))
	}
}

// charsOf returns the characters of the labelled plates of file, by
// plate (the zero Plate for a plate under minWide px wide).
func charsOf(set platechars.Set, file string, boxes []plates.Box) ([]platechars.Plate, error) {
	out := make([]platechars.Plate, len(boxes))
	for i, b := range boxes {
		if b.W < minWide {
			continue
		}
		c, ok := set.Of(file, b)
		if !ok {
			return nil, fmt.Errorf("%s: no characters for the plate %.0fx%.0f at (%.0f,%.0f): labels changed since train/plates/chars.py ran", file, b.W, b.H, b.X, b.Y)
		}
		out[i] = c
	}
	return out, nil
}

// print writes the figures under the title; copies says whether the
// scored photos were checked for copies among the other splits.
func (sc *plateScore) print(stdout io.Writer, title string, copies bool) {
	fmt.Fprintf(stdout, "%s: %d photos, %d plates\n", title, sc.images, sc.total)
	if c := sc.chars; c.measured {
		fmt.Fprintf(stdout, "characters hidden %.3f (%d of %d plates >= %d px: >= 95%% of their text regions inside the hidden regions; text not found on %d, the box's central 60%% stood in)\n",
			frac(c.hidden, c.total), c.hidden, c.total, minWide, c.standIn)
		fmt.Fprintf(stdout, "left readable (%d; %% of the characters hidden): %s\n", len(c.readable), strings.Join(c.readable, ", "))
		if c.unread.total > 0 {
			fmt.Fprintf(stdout, "characters hidden on the plates the reader reads no plate-like string on in the photo (scripts it cannot read, plates too small or blurred to read) %.3f (%d of %d)\n",
				frac(c.unread.hidden, c.unread.total), c.unread.hidden, c.unread.total)
		}
	} else {
		fmt.Fprintf(stdout, "characters hidden: not measured (%s)\n", c.not)
	}
	fmt.Fprintf(stdout, "recall %.3f (%d of %d found, >= 95%% of the box inside the hidden regions)\n", frac(sc.found, sc.total), sc.found, sc.total)
	fmt.Fprintf(stdout, "recall of plates >= %d px wide %.3f (%d of %d); narrower %d of %d\n", minWide, frac(sc.wide.found, sc.wide.total),
		sc.wide.found, sc.wide.total, sc.found-sc.wide.found, sc.total-sc.wide.total)
	classes := make([]string, len(sc.bySize))
	for i, c := range sc.bySize {
		classes[i] = fmt.Sprintf("%s px %d/%d", widthClasses[i].name, c.found, c.total)
	}
	fmt.Fprintf(stdout, "recall by plate width: %s\n", strings.Join(classes, ", "))
	fmt.Fprintf(stdout, "hidden area / plate box area (found plates >= %d px): median %.2f, p90 %.2f; IoU of quad and box: median %.2f\n",
		minWide, Percentile(sc.area, 50), Percentile(sc.area, 90), Percentile(sc.iou, 50))
	fmt.Fprintf(stdout, "false detections %.3f per photo (%d)\n", float64(sc.falses)/float64(max(sc.images, 1)), sc.falses)
	if copies {
		fmt.Fprintf(stdout, "photos with no copy in the other splits (%d of %d; a copy is the same photo or a frame a moment apart): %d plates, recall %.3f (%d), false detections %.3f per photo (%d)\n",
			sc.unique.images, sc.images, sc.unique.total, frac(sc.unique.found, sc.unique.total), sc.unique.found,
			float64(sc.unique.falses)/float64(max(sc.unique.images, 1)), sc.unique.falses)
	}
	fmt.Fprintf(stdout, "margin curve (plates >= %d px; margin in plate heights: recall, hidden/box median, p90):", minWide)
	for k, m := range curveMargins {
		c := sc.curve[k]
		fmt.Fprintf(stdout, "  %.2f: %.3f %.2f %.2f", m, frac(c.found, sc.wide.total), Percentile(c.area, 50), Percentile(c.area, 90))
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "detection p50 %.1f ms, p95 %.1f ms (decode excluded)\n", Percentile(sc.times, 50), Percentile(sc.times, 95))
	sc.reader.print(stdout)
}

func frac(a, b int) float64 { return float64(a) / float64(max(b, 1)) }

// benchPhoto is a photo `bench plates` scores, with its labelled plates.
type benchPhoto struct {
	name, path string
	img        image.Image
	plates     []plates.Box
	chars      []platechars.Plate // by plate, when measured; nil otherwise
	copied     bool               // a copy of it (or of one of a mosaic's) is in another split
	unread     []bool             // by plate, with --answers: the reader reads no plate-like string on it in the photo
}

// mosaics lays photos out n×n to a photo, in cells as large as the group's
// largest photo (the rest mid-grey), the plates moved along: first those
// with no copy in another split, then the others, so that a mosaic is of
// either kind. A group of fewer than n×n left over is dropped.
func mosaics(photos []benchPhoto, n int) []benchPhoto {
	var out []benchPhoto
	for _, copied := range []bool{false, true} {
		var group []benchPhoto
		for _, p := range photos {
			if p.copied != copied {
				continue
			}
			if group = append(group, p); len(group) < n*n {
				continue
			}
			cw, ch := 0, 0
			for _, g := range group {
				cw, ch = max(cw, g.img.Bounds().Dx()), max(ch, g.img.Bounds().Dy())
			}
			dst := image.NewRGBA(image.Rect(0, 0, n*cw, n*ch))
			draw.Draw(dst, dst.Rect, image.NewUniform(color.Gray{Y: 128}), image.Point{}, draw.Src)
			m := benchPhoto{name: group[0].name + "+", path: group[0].path, img: dst, plates: []plates.Box{}, copied: copied}
			for k, g := range group {
				at := image.Pt(k%n*cw, k/n*ch)
				b := g.img.Bounds()
				draw.Draw(dst, b.Sub(b.Min).Add(at), g.img, b.Min, draw.Src)
				for _, pl := range g.plates {
					m.plates = append(m.plates, plates.Box{X: pl.X + float64(at.X), Y: pl.Y + float64(at.Y), W: pl.W, H: pl.H})
				}
			}
			out = append(out, m)
			group = group[:0]
		}
	}
	return out
}

// widthClasses group labelled plates by width in pixels for the benchmark's
// recall by size, the smallest first.
var widthClasses = []struct {
	name  string
	below float64
}{{"<20", 20}, {"20-40", 40}, {"40-80", 80}, {">=80", math.Inf(1)}}

func widthClass(w float64) int {
	for i, c := range widthClasses {
		if w < c.below {
			return i
		}
	}
	return len(widthClasses) - 1
}

// shrink returns img resampled to f of its size (Catmull-Rom, which
// filters over the source pixels a destination pixel spans, as a camera
// farther away would see the scene).
func shrink(img image.Image, f float64) image.Image {
	b := img.Bounds()
	return resized(img, max(1, int(math.Round(float64(b.Dx())*f))), max(1, int(math.Round(float64(b.Dy())*f))))
}
