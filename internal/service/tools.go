package service

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carphoto/imageops"
)

// The command-line tools on photo files: `carphoto plates` and `carphoto
// cutout`, a published interface (names, flags and output), each a thin
// command over imageops' door.

// toolLimits caps the photos the tools read: the service's default.
var toolLimits = imageops.Limits{MaxPixels: imageops.DefaultMaxPixels}

// platesLine is one line of `carphoto plates --json`.
type platesLine struct {
	File   string       `json:"file"`
	Width  int          `json:"width"`
	Height int          `json:"height"`
	Plates []platesJSON `json:"plates"`
	MS     float64      `json:"ms"`
}

// platesJSON is one plate: its corners (quad) and the region a hiding
// style covers (hide: the quad grown by the margin rule), each clockwise
// from the top-left corner, in pixels of the displayed photo.
type platesJSON struct {
	Quad  [4][2]float64 `json:"quad"`
	Hide  [4][2]float64 `json:"hide"`
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

// platesOf reads file and finds its plates: the --json line for it.
func platesOf(ctx context.Context, file string) (platesLine, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return platesLine{}, err
	}
	found, err := imageops.FindPlatesInPhoto(ctx, data, toolLimits)
	if err != nil {
		return platesLine{}, err
	}
	round := func(x, unit float64) float64 { return math.Round(x*unit) / unit }
	line := platesLine{File: file, Width: found.Width, Height: found.Height, Plates: []platesJSON{},
		MS: float64(found.Search.Microseconds()) / 1000}
	for _, p := range found.Plates {
		var j platesJSON
		for i := range p.Quad {
			j.Quad[i] = [2]float64{round(p.Quad[i][0], 100), round(p.Quad[i][1], 100)}
			j.Hide[i] = [2]float64{round(p.Hide[i][0], 100), round(p.Hide[i][1], 100)}
		}
		j.Score = round(p.Score, 1000)
		line.Plates = append(line.Plates, j)
	}
	return line, nil
}

// runCutout implements `carphoto cutout -o DIR FILE...`: writes DIR/<name>.png (the car
// on a transparent background, same size as the oriented input) for each FILE.
func runCutout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cutout", flag.ContinueOnError)
	fs.SetOutput(stdout)
	dir := fs.String("o", "", "output directory (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() == 0 {
		return errors.New("cutout: usage: carphoto cutout -o DIR FILE...")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("cutout: %w", err)
	}
	failed := 0
	for _, file := range fs.Args() {
		start := time.Now()
		out, w, h, err := cutoutFile(ctx, file, *dir)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
			continue
		}
		fmt.Fprintf(stdout, "%s\t%dx%d\t%d ms\n", out, w, h, time.Since(start).Milliseconds())
	}
	if failed > 0 {
		return fmt.Errorf("cutout: %d of %d files could not be cut out", failed, fs.NArg())
	}
	return nil
}

// cutoutFile cuts the car out of file and writes it, a PNG of the same
// name, to dir: the PNG's path and size.
func cutoutFile(ctx context.Context, file, dir string) (out string, w, h int, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", 0, 0, err
	}
	png, w, h, err := imageops.CutOutPNG(ctx, data, toolLimits)
	if err != nil {
		return "", 0, 0, err
	}
	out = filepath.Join(dir, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+".png")
	if err := os.WriteFile(out, png, 0o666); err != nil {
		return "", 0, 0, err
	}
	return out, w, h, nil
}
