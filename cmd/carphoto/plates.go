package main

import (
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

	"carphoto/imageops"
	"carphoto/imageops/plates"
)

// platesLine is one line of `carphoto plates --json`.
type platesLine struct {
	File   string       `json:"file"`
	Width  int          `json:"width"`
	Height int          `json:"height"`
	Plates []platesJSON `json:"plates"`
	MS     float64      `json:"ms"`
}

type platesJSON struct {
	Quad  [4][2]float64 `json:"quad"`
	Score float64       `json:"score"`
}

// platesError is the line `carphoto plates --json` writes for a file it
// could not read or search, in place of its platesLine.
type platesError struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// runPlates implements `carphoto plates [--json] FILE...`: it finds the
// plates in each photo (EXIF orientation applied) and prints, per file,
// either one JSON line or a readable summary. A file that cannot be read
// (missing, not an image, truncated) does not stop the others: it gets an
// error line (JSON) or a message on stderr, and the command fails at the end.
func runPlates(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plates", flag.ContinueOnError)
	fs.SetOutput(stdout)
	asJSON := fs.Bool("json", false, "one JSON line per file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("plates: usage: carphoto plates [--json] FILE...")
	}
	enc := json.NewEncoder(stdout)
	failed := 0
	for _, file := range fs.Args() {
		line, err := platesOf(ctx, file)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && *asJSON:
			failed++
			if err := enc.Encode(platesError{File: file, Error: err.Error()}); err != nil {
				return err
			}
		case err != nil:
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
		case *asJSON:
			if err := enc.Encode(line); err != nil {
				return err
			}
		default:
			fmt.Fprintf(stdout, "%s: %dx%d, %d plate(s) in %.0f ms\n", file, line.Width, line.Height, len(line.Plates), line.MS)
			for _, p := range line.Plates {
				q := p.Quad
				fmt.Fprintf(stdout, "  score %.2f  corners (%.0f,%.0f) (%.0f,%.0f) (%.0f,%.0f) (%.0f,%.0f)\n",
					p.Score, q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1], q[3][0], q[3][1])
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("plates: %d of %d files could not be searched", failed, fs.NArg())
	}
	return nil
}

// platesOf decodes file and finds its plates: the --json line for it.
func platesOf(ctx context.Context, file string) (platesLine, error) {
	photo, err := decodeFile(ctx, file)
	if err != nil {
		return platesLine{}, err
	}
	img := photo.Image
	start := time.Now()
	found, err := plates.Detect(ctx, img)
	took := time.Since(start)
	if err != nil {
		return platesLine{}, err
	}
	b := img.Bounds()
	line := platesLine{File: file, Width: b.Dx(), Height: b.Dy(), Plates: []platesJSON{}, MS: ms(took)}
	for _, p := range found {
		var j platesJSON
		for i, c := range p.Quad {
			j.Quad[i] = [2]float64{math.Round(c.X*100) / 100, math.Round(c.Y*100) / 100}
		}
		j.Score = math.Round(p.Score*1000) / 1000
		line.Plates = append(line.Plates, j)
	}
	return line, nil
}

// runBenchPlates implements `carphoto bench plates [--split heldout|val|train|all]
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
// (plates.Fingerprint).
func runBenchPlates(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench plates", flag.ContinueOnError)
	fs.SetOutput(stdout)
	split := fs.String("split", "heldout", "photos to score: heldout, val (the tuning split), train (what the networks learnt: how well they fit) or all")
	runs := fs.Int("n", 7, "timed runs on the 12 MP photo (0 skips it)")
	verbose := fs.Bool("v", false, "print every missed plate and false detection")
	scale := fs.Float64("scale", 1, "shrink every photo and its labels by this factor first (0 < scale <= 1): a stress test of small plates")
	labelsFile := fs.String("labels", "", "labels to score against instead of DIR/labels.json, in its format, photo paths relative to DIR")
	tiles := fs.Int("mosaic", 1, "lay the photos out N×N to a photo at their own resolution first: a stress test of plates small in a large photo")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("bench plates: usage: carphoto bench plates [--split heldout|val|train|all] [--labels FILE] [-n N] [-v] [--scale F] [--mosaic N] DIR")
	}
	dir := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil { // flags may also follow DIR
		return err
	}
	if !(*scale > 0 && *scale <= 1) {
		return fmt.Errorf("bench plates: --scale %g: want a factor in (0, 1]", *scale)
	}
	if *tiles < 1 || *tiles > 8 {
		return fmt.Errorf("bench plates: --mosaic %d: want 1 to 8 photos a side", *tiles)
	}
	if *labelsFile == "" {
		*labelsFile = filepath.Join(dir, "labels.json")
	}
	raw, err := os.ReadFile(*labelsFile)
	if err != nil {
		return fmt.Errorf("bench plates: %w", err)
	}
	var labels []struct {
		File   string       `json:"file"`
		Plates []plates.Box `json:"plates"`
	}
	if err := json.Unmarshal(raw, &labels); err != nil {
		return fmt.Errorf("bench plates: %s: %w", *labelsFile, err)
	}
	var inSplit func(name string) bool
	switch *split {
	case "heldout":
		inSplit = plates.HeldOut
	case "val":
		inSplit = plates.Validation
	case "train":
		inSplit = plates.Training
	case "all":
		inSplit = func(string) bool { return true }
	default:
		return fmt.Errorf("bench plates: --split %q: want heldout, val, train or all", *split)
	}
	// The other splits' photos, to find the scored photos' copies among.
	var others []*plates.Fingerprint
	for _, l := range labels {
		if inSplit(filepath.Base(l.File)) {
			continue
		}
		photo, err := decodeFile(ctx, filepath.Join(dir, l.File))
		if err != nil {
			return fmt.Errorf("bench plates: %s: %w", filepath.Base(l.File), err)
		}
		others = append(others, plates.FingerprintOf(photo.Image))
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
			return fmt.Errorf("bench plates: %s: %w", name, err)
		}
		p := benchPhoto{name: name, path: path, img: photo.Image, plates: l.Plates}
		p.copied = plates.FingerprintOf(p.img).CopiedIn(others)
		if *scale != 1 {
			p.img = shrink(p.img, *scale)
			for i, b := range p.plates {
				p.plates[i] = plates.Box{X: b.X * *scale, Y: b.Y * *scale, W: b.W * *scale, H: b.H * *scale}
			}
		}
		scored = append(scored, p)
	}
	if len(scored) == 0 {
		return fmt.Errorf("bench plates: no %s photos in %s", *split, dir)
	}
	first := scored[0].path
	if *tiles > 1 {
		if scored = mosaics(scored, *tiles); len(scored) == 0 {
			return fmt.Errorf("bench plates: --mosaic %d: fewer than %d %s photos in %s to lay out", *tiles, *tiles**tiles, *split, dir)
		}
	}
	var (
		images, total, found, falses int
		unique                       struct{ images, total, found, falses int } // photos with no copy among others
		times                        []float64
	)
	bySize := make([]struct{ found, total int }, len(widthClasses))
	for _, p := range scored {
		name, img, copied := p.name, p.img, p.copied
		start := time.Now()
		got, err := plates.Detect(ctx, img)
		times = append(times, ms(time.Since(start)))
		if err != nil {
			return fmt.Errorf("bench plates: %s: %w", name, err)
		}
		images++
		if !copied {
			unique.images++
			unique.total += len(p.plates)
		}
		for _, b := range p.plates {
			total++
			class := &bySize[widthClass(b.W)]
			class.total++
			if c := b.CoveredBy(got); c >= 0.95 {
				found++
				class.found++
				if !copied {
					unique.found++
				}
			} else if *verbose {
				fmt.Fprintf(stdout, "missed %s: plate %.0fx%.0f at (%.0f,%.0f), %.0f%% covered\n", name, b.W, b.H, b.X, b.Y, 100*c)
			}
		}
		for _, d := range got {
			hit := false
			for _, b := range p.plates {
				hit = hit || b.Overlaps(d.Quad)
			}
			if !hit {
				falses++
				if !copied {
					unique.falses++
				}
				if *verbose {
					fmt.Fprintf(stdout, "false %s: %v\n", name, d)
				}
			}
		}
	}
	shrunk := ""
	if *scale != 1 {
		shrunk = fmt.Sprintf(", shrunk to %g", *scale)
	}
	if *tiles > 1 {
		shrunk += fmt.Sprintf(", laid out %d×%d", *tiles, *tiles)
	}
	fmt.Fprintf(stdout, "%s, split %s%s: %d photos, %d plates\n", filepath.Base(filepath.Clean(dir)), *split, shrunk, images, total)
	fmt.Fprintf(stdout, "recall %.3f (%d of %d found, >= 95%% of the box inside the quads)\n", float64(found)/float64(max(total, 1)), found, total)
	classes := make([]string, len(bySize))
	for i, c := range bySize {
		classes[i] = fmt.Sprintf("%s px %d/%d", widthClasses[i].name, c.found, c.total)
	}
	fmt.Fprintf(stdout, "recall by plate width: %s\n", strings.Join(classes, ", "))
	fmt.Fprintf(stdout, "false detections %.3f per photo (%d)\n", float64(falses)/float64(images), falses)
	if len(others) > 0 {
		fmt.Fprintf(stdout, "photos with no copy in the other splits (%d of %d; a copy is the same photo or a frame a moment apart): %d plates, recall %.3f (%d), false detections %.3f per photo (%d)\n",
			unique.images, images, unique.total, float64(unique.found)/float64(max(unique.total, 1)), unique.found,
			float64(unique.falses)/float64(max(unique.images, 1)), unique.falses)
	}
	fmt.Fprintf(stdout, "detection p50 %.1f ms, p95 %.1f ms (decode excluded)\n", pct(times, 50), pct(times, 95))
	if *runs == 0 {
		return nil
	}
	data, err := os.ReadFile(first)
	if err != nil {
		return fmt.Errorf("bench plates: %w", err)
	}
	big, err := upscaleJPEG(ctx, data, 12)
	if err != nil {
		return fmt.Errorf("bench plates: 12 MP photo: %w", err)
	}
	p, err := imageops.Decode(ctx, big, toolLimits)
	if err != nil {
		return fmt.Errorf("bench plates: 12 MP photo: %w", err)
	}
	var bigTimes []float64
	for range *runs {
		start := time.Now()
		if _, err := plates.Detect(ctx, p.Image); err != nil {
			return fmt.Errorf("bench plates: %w", err)
		}
		bigTimes = append(bigTimes, ms(time.Since(start)))
	}
	b := p.Image.Bounds()
	fmt.Fprintf(stdout, "12 MP photo (%dx%d %T, %s enlarged): detection p50 %.1f ms over %d runs\n",
		b.Dx(), b.Dy(), p.Image, filepath.Base(first), pct(bigTimes, 50), len(bigTimes))
	return nil
}

// benchPhoto is a photo `bench plates` scores, with its labelled plates.
type benchPhoto struct {
	name, path string
	img        image.Image
	plates     []plates.Box
	copied     bool // a copy of it (or of one of a mosaic's) is in another split
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
