//go:build backdropsheet

// Package backdropsheet draws docs/backdrop-sheet.jpg.
package backdropsheet

// A contact sheet of car-shadow on the sample backdrop, to look at: the
// first 12 photos of plates-web-cc0 (in file order) that are no plate
// close-up (no labelled plate wider than 45% of the photo) and whose
// cut-out is a whole car (at least 12% of the photo, 3% clear of the left,
// right and bottom edges, no wider than 3.3 times its height), each run through Process as a call with
// backgroundImage=docs/samples/backdrop.jpg and the default placement
// (the last four with reflection=true), the photo itself beside it.
//
//	BACKDROPSHEET_OUT=$PWD/docs/backdrop-sheet.jpg \
//	    go test -tags backdropsheet -run TestBackdropSheet ./train/shadow/backdropsheet/
//
// (The path is the test's, run in train/shadow/backdropsheet/: give it whole. A .png name
// gets a PNG. BACKDROPSHEET_DIR, when set, also gets each answer as it
// came, at full size. PLATES_DATA names the shared sets' folder if not
// ../shared/datasets beside the repository.)

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"carphoto/imageops"
	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
	"carphoto/imageops/shadow"
)

func TestBackdropSheet(t *testing.T) {
	out := os.Getenv("BACKDROPSHEET_OUT")
	if out == "" {
		out = "/tmp/backdrop-sheet.jpg"
	}
	root := os.Getenv("PLATES_DATA")
	if root == "" {
		root = datasets.Dir()
	}
	dir := filepath.Join(root, "plates-web-cc0")
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Skip(err)
	}
	var labels []struct {
		File   string `json:"file"`
		Width  int    `json:"width"`
		Plates []struct {
			W float64 `json:"w"`
		} `json:"plates"`
	}
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	backdrop, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "samples", "backdrop.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const cols, tw, th, want = 3, 640, 300, 12
	var tiles []image.Image
	for _, l := range labels {
		if len(tiles) == want {
			break
		}
		closeUp := false
		for _, p := range l.Plates {
			closeUp = closeUp || p.W > 0.45*float64(l.Width)
		}
		if closeUp {
			continue // a plate close-up: no whole car
		}
		photo, err := os.ReadFile(filepath.Join(dir, l.File))
		if err != nil {
			t.Fatal(err)
		}
		in, err := codec.Decode(ctx, photo, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !wholeCar(t, in.Image) {
			continue
		}
		p := imageops.Params{Op: imageops.CarShadow, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, Reflection: len(tiles) >= want-4}
		res, err := imageops.Process(ctx, imageops.Input{Photo: photo, Backdrop: backdrop}, p)
		if err != nil {
			t.Fatalf("%s: %v", l.File, err)
		}
		got, err := codec.Decode(ctx, res.Body, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if d := os.Getenv("BACKDROPSHEET_DIR"); d != "" {
			if err := os.WriteFile(filepath.Join(d, filepath.Base(l.File)+".png"), res.Body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		caption := filepath.Base(l.File)
		if p.Reflection {
			caption += " reflection"
		}
		tiles = append(tiles, sheetTile(got.Image, in.Image, tw, th, caption))
	}
	if len(tiles) < want {
		t.Fatalf("%d whole-car photos found, want %d", len(tiles), want)
	}
	sheet := image.NewRGBA(image.Rect(0, 0, cols*tw, (len(tiles)+cols-1)/cols*th))
	for i, tl := range tiles {
		draw.Draw(sheet, tl.Bounds().Add(image.Pt(i%cols*tw, i/cols*th)), tl, image.Point{}, draw.Src)
	}
	var buf bytes.Buffer
	if filepath.Ext(out) == ".png" {
		err = codec.EncodePNG(&buf, sheet, nil)
	} else {
		err = codec.EncodeJPEG(&buf, sheet, 85, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// wholeCar reports whether img's cut-out is a whole car: its solid matte
// covers at least 12% of the photo, stays clear of the left, right and
// bottom edges (a car cut by the frame cannot stand on a floor), and is
// at most 3.3 times as wide as high (a plate close-up is 4 or more).
func wholeCar(tb testing.TB, img image.Image) bool {
	tb.Helper()
	car, err := cutout.Cut(context.Background(), img)
	if err != nil {
		tb.Fatal(err)
	}
	if cutout.CarShare(car) < 0.12 {
		return false
	}
	var box image.Rectangle
	for y := car.Rect.Min.Y; y < car.Rect.Max.Y; y++ {
		for x := car.Rect.Min.X; x < car.Rect.Max.X; x++ {
			if car.NRGBAAt(x, y).A >= 128 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	m := car.Rect.Dx() * 3 / 100
	return box.Min.X > car.Rect.Min.X+m && box.Max.X < car.Rect.Max.X-m && box.Max.Y < car.Rect.Max.Y-m &&
		box.Dx() <= box.Dy()*33/10
}

// sheetTile is a w×h tile: the photo in a column on the left, a sixth
// of w wide, and the result, scaled to fill the rest, caption along the
// bottom.
func sheetTile(result, photo image.Image, w, h int, caption string) image.Image {
	tile := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(tile, tile.Rect, image.NewUniform(color.RGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
	pw := w / 6
	rb := result.Bounds()
	rw := min(w-pw, (h-16)*rb.Dx()/rb.Dy())
	draw.CatmullRom.Scale(tile, image.Rect(w-rw, 0, w, h-16), result, rb, draw.Src, nil)
	pb := photo.Bounds()
	ph := (pw - 8) * pb.Dy() / pb.Dx()
	draw.CatmullRom.Scale(tile, image.Rect(4, 4, pw-4, 4+ph), photo, pb, draw.Src, nil)
	d := font.Drawer{Dst: tile, Src: image.NewUniform(color.White), Face: basicfont.Face7x13, Dot: fixed.P(4, h-4)}
	d.DrawString(caption)
	return tile
}
