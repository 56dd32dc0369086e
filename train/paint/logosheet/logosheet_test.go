//go:build logosheet

// Package logosheet draws a contact sheet of plate-logo on real photos.
package logosheet

// A contact sheet of plate-logo on real photos, to look at: validation
// photos of the web set with plates of about 2:1 (the shapes a 4.7:1
// design fits worst), and of the open-lpr set where PLATES_EXTRA names the
// folder it was built in (train/plates/README.md). Each tile is the
// labelled plate's surroundings after plate-logo, as the worker paints it
// (a design on plates scoring at least plates.DesignConfidence, a blur on
// the others), with the detections' scores in the corner.
//
//	LOGOSHEET_OUT=$PWD/docs/plate-logo-after.jpg PLATES_EXTRA=~/carphoto-data \
//	    go test -tags logosheet -run TestLogoSheet ./train/paint/logosheet/
//
// (The path is the test's, run in train/paint/logosheet/: give it whole. A .png name
// gets a PNG. PLATES_DATA names the shared sets' folder if not
// ../shared/datasets beside the repository.)

import (
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
	"carphoto/internal/testenv/imgtest"
)

func TestLogoSheet(t *testing.T) {
	out := os.Getenv("LOGOSHEET_OUT")
	if out == "" {
		out = "/tmp/plate-logo-sheet.jpg"
	}
	root := os.Getenv("PLATES_DATA")
	if root == "" {
		root = datasets.Dir()
	}
	type pick struct {
		dir   string
		most  int
		every int
	}
	picks := []pick{{filepath.Join(root, "plates-web-cc0"), 8, 1}}
	if extra := os.Getenv("PLATES_EXTRA"); extra != "" {
		picks = append(picks, pick{filepath.Join(extra, "plates-openlpr"), 4, 9})
	}
	design := sheetDesign(t)
	ctx := context.Background()
	var tiles []image.Image
	for _, pk := range picks {
		raw, err := os.ReadFile(filepath.Join(pk.dir, "labels.json"))
		if err != nil {
			t.Skip(err)
		}
		var labels []struct {
			File   string       `json:"file"`
			Plates []plates.Box `json:"plates"`
		}
		if err := json.Unmarshal(raw, &labels); err != nil {
			t.Fatal(err)
		}
		n, seen := 0, 0
		for _, l := range labels {
			if n == pk.most || !datasets.Validation(l.File) || len(l.Plates) == 0 {
				continue
			}
			b := l.Plates[0]
			if b.W < 70 || b.W/b.H > 2.8 {
				continue
			}
			if seen++; (seen-1)%pk.every != 0 {
				continue
			}
			n++
			img := imgtest.DecodeFile(t, filepath.Join(pk.dir, l.File))
			found, err := plates.Detect(ctx, img)
			if err != nil {
				t.Fatal(err)
			}
			painted, caption := sheetPaint(t, img, found, design)
			tiles = append(tiles, sheetTile(painted, b, filepath.Base(l.File)+" "+caption))
			// Each detection too doubtful for the design, blurred instead
			// (a grille badge, say), gets a tile of its own.
			for _, f := range found {
				if f.Score < plates.DesignConfidence && b.IoU(f.Quad) < 0.3 {
					r := f.Quad.Bounds()
					fb := plates.Box{X: float64(r.Min.X), Y: float64(r.Min.Y), W: float64(r.Dx()), H: float64(r.Dy())}
					fb.X, fb.W = fb.X-fb.W/2, fb.W*2 // a wider view: it is small
					tiles = append(tiles, sheetTile(painted, fb, fmt.Sprintf("%s %.2f blurred", filepath.Base(l.File), f.Score)))
				}
			}
		}
	}
	const cols, tw, th = 4, 320, 200
	sheet := image.NewRGBA(image.Rect(0, 0, cols*tw, (len(tiles)+cols-1)/cols*th))
	for i, tl := range tiles {
		draw.Draw(sheet, tl.Bounds().Add(image.Pt(i%cols*tw, i/cols*th)), tl, image.Point{}, draw.Src)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A .png name gets a PNG (for viewers that read no JPEG).
	if filepath.Ext(out) == ".png" {
		err = codec.EncodePNG(f, sheet, nil)
	} else {
		err = codec.EncodeJPEG(f, sheet, 85, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tiles: %s", len(tiles), out)
}

// sheetPaint paints plate-logo's answer on img, as the worker does, and
// gives the scores.
func sheetPaint(t *testing.T, img image.Image, found []plates.Plate, design image.Image) (*image.RGBA, string) {
	var sure, unsure []plates.Quad
	caption := ""
	for _, f := range found {
		if f.Score >= plates.DesignConfidence {
			sure = append(sure, f.Quad)
		} else {
			unsure = append(unsure, f.Quad)
		}
		caption += fmt.Sprintf(" %.2f", f.Score)
	}
	out, err := paint.PlaceLogo(context.Background(), img, sure, unsure, design)
	if err != nil {
		t.Fatal(err)
	}
	return out, caption
}

// sheetDesign is a dealer's design: white lettering on dark blue, 520×110
// (a European plate's shape).
func sheetDesign(t *testing.T) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 520, 110))
	draw.Draw(img, img.Rect, image.NewUniform(color.RGBA{16, 40, 110, 255}), image.Point{}, draw.Src)
	ft, err := opentype.Parse(gobold.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: 58, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	d := font.Drawer{Dst: img, Src: image.White, Face: face}
	text := "CITY CARS"
	w := d.MeasureString(text).Ceil()
	d.Dot = fixed.P((520-w)/2, 76)
	d.DrawString(text)
	return img
}

// sheetTile is a 320×200 view of the labelled plate b's surroundings.
func sheetTile(img image.Image, b plates.Box, caption string) image.Image {
	const tw, th = 320, 200
	cw := b.W * 1.3
	cx, cy := b.X+b.W/2, b.Y+b.H/2
	src := image.Rect(int(cx-cw), int(cy-cw*th/tw), int(cx+cw), int(cy+cw*th/tw))
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.Gray{40}), image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, src, draw.Over, nil)
	bg := image.Rect(0, 0, len(caption)*7+6, 18)
	draw.Draw(dst, bg, image.NewUniform(color.RGBA{0, 0, 0, 160}), image.Point{}, draw.Over)
	d := font.Drawer{Dst: dst, Src: image.NewUniform(color.RGBA{255, 255, 0, 255}), Face: basicfont.Face7x13, Dot: fixed.P(3, 13)}
	d.DrawString(caption)
	return dst
}
