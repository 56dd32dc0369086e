//go:build samplesheet

// Package samplesheet draws docs/samples-sheet.jpg: what the service makes
// of the samples that ship in docs/samples, the docs' curl lines' inputs.
package samplesheet

// One row per sample photo (listing.jpg, 4000×2672; car.jpg, 600×399): the
// photo, blur-plates, plate-logo with docs/samples/plate-design.png,
// car-shadow at its defaults, and car-shadow on docs/samples/backdrop.jpg
// at the default placement (the README's studio line), each through
// imageops.Process as the service runs it, captioned with the answer's
// size and what its headers would say. A second sheet,
// docs/samples-studio.jpg, is the listing sample's studio answer itself,
// at half size, to judge the cut-out's edge and the shadow.
//
//	SAMPLESHEET_OUT=$PWD/docs go test -tags samplesheet -run TestSampleSheet ./train/shadow/samplesheet/
//
// (About 20 s of one core.)

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"carphoto/imageops"
	"carphoto/imageops/codec"
	"carphoto/imageops/shadow"
)

func TestSampleSheet(t *testing.T) {
	out := os.Getenv("SAMPLESHEET_OUT")
	if out == "" {
		out = t.TempDir()
	}
	samples := filepath.Join("..", "..", "..", "docs", "samples")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(samples, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	design, backdrop := read("plate-design.png"), read("backdrop.jpg")
	ctx := context.Background()
	placement := &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}
	const tw, th = 420, 300
	var rows [][]image.Image
	for _, name := range []string{"listing.jpg", "car.jpg"} {
		photo := read(name)
		in, err := codec.Decode(ctx, photo, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		b := in.Image.Bounds()
		row := []image.Image{tile(in.Image, tw, th, fmt.Sprintf("%s %dx%d", name, b.Dx(), b.Dy()))}
		for _, c := range []struct {
			label string
			p     imageops.Params
			in    imageops.Input
		}{
			{"blur-plates", imageops.Params{Op: imageops.BlurPlates}, imageops.Input{Photo: photo}},
			{"plate-logo", imageops.Params{Op: imageops.PlateLogo}, imageops.Input{Photo: photo, Design: design}},
			{"car-shadow", imageops.Params{Op: imageops.CarShadow, Background: &imageops.Colour{R: 255, G: 255, B: 255, A: 255}}, imageops.Input{Photo: photo}},
			{"studio", imageops.Params{Op: imageops.CarShadow, Backdrop: placement}, imageops.Input{Photo: photo, Backdrop: backdrop}},
		} {
			res, err := imageops.Process(ctx, c.in, c.p)
			if err != nil {
				t.Fatalf("%s %s: %v", name, c.label, err)
			}
			got, err := codec.Decode(ctx, res.Body, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			gb := got.Image.Bounds()
			caption := fmt.Sprintf("%s %dx%d", c.label, gb.Dx(), gb.Dy())
			switch {
			case c.p.Op != imageops.CarShadow:
				caption += fmt.Sprintf(" plates %d", res.PlatesFound)
			case c.p.Backdrop != nil:
				caption += fmt.Sprintf(" scale %.3f", res.CarScale)
			}
			if len(res.CarTruncated) > 0 {
				caption += " cut " + strings.Join(res.CarTruncated, ",")
			}
			t.Logf("%s: %s", name, caption)
			row = append(row, tile(got.Image, tw, th, caption))
			if name == "listing.jpg" && c.label == "studio" {
				half := image.NewRGBA(image.Rect(0, 0, gb.Dx()/2, gb.Dy()/2))
				draw.CatmullRom.Scale(half, half.Rect, got.Image, gb, draw.Src, nil)
				write(t, filepath.Join(out, "samples-studio.jpg"), half)
			}
		}
		rows = append(rows, row)
	}
	sheet := image.NewRGBA(image.Rect(0, 0, len(rows[0])*tw, len(rows)*th))
	for r, row := range rows {
		for c, tl := range row {
			draw.Draw(sheet, tl.Bounds().Add(image.Pt(c*tw, r*th)), tl, image.Point{}, draw.Src)
		}
	}
	write(t, filepath.Join(out, "samples-sheet.jpg"), sheet)
}

// tile is a w×h tile: img scaled to fit above a caption line, on a
// checkerboard where it is transparent.
func tile(img image.Image, w, h int, caption string) image.Image {
	t := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint8(200)
			if (x/10+y/10)%2 == 0 {
				v = 160
			}
			t.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	b := img.Bounds()
	iw, ih := w-8, (w-8)*b.Dy()/b.Dx()
	if ih > h-24 {
		ih, iw = h-24, (h-24)*b.Dx()/b.Dy()
	}
	r := image.Rect((w-iw)/2, 4, (w-iw)/2+iw, 4+ih)
	draw.CatmullRom.Scale(t, r, img, b, draw.Over, nil)
	draw.Draw(t, image.Rect(0, h-18, w, h), image.NewUniform(color.RGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
	d := font.Drawer{Dst: t, Src: image.NewUniform(color.White), Face: basicfont.Face7x13, Dot: fixed.P(4, h-5)}
	d.DrawString(caption)
	return t
}

func write(t *testing.T, path string, img image.Image) {
	t.Helper()
	var buf bytes.Buffer
	if err := codec.EncodeJPEG(&buf, img, 85, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
