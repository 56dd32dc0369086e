//go:build studiosheet

// Package studiosheet draws docs/studio-sheet.jpg (issue 56).
package studiosheet

// A contact sheet of the virtual studio, before and after a change of the
// cut-out: car-shadow on the sample backdrop at the default placement, for
// 24 whole-car photos, 8 from each of plates-web-cc0, plates-openimages and
// plates-openlpr (the last two built by ../shared/datasets/extra/build.py).
// Each set's photos are taken in the order of fnv32a of their file name: the
// first 8 that are at least 400 px wide, no plate close-up (no labelled
// plate wider than 30% of the photo) and whose cut-out is a whole car (at
// least 12% of the photo, 3% clear of the left, right and bottom edges, no
// wider than 3.3 times its height).
//
// Two runs. The first, with the code before the change, picks the photos
// (by its own cut-out) and saves each answer to STUDIOSHEET_BEFORE:
//
//	STUDIOSHEET_SAVE=1 STUDIOSHEET_BEFORE=/tmp/studio-before \
//	    go test -tags studiosheet -run TestStudioSheet ./train/shadow/studiosheet/
//
// The second, with the change, runs the same photos and draws the sheet:
// each photo, its answer before and after:
//
//	STUDIOSHEET_BEFORE=/tmp/studio-before STUDIOSHEET_OUT=$PWD/docs/studio-sheet.jpg \
//	    go test -tags studiosheet -run TestStudioSheet ./train/shadow/studiosheet/

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"carphoto/imageops"
	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/datasets"
)

const perSet = 8

func TestStudioSheet(t *testing.T) {
	before := os.Getenv("STUDIOSHEET_BEFORE")
	if before == "" {
		t.Skip("STUDIOSHEET_BEFORE names the folder of the answers before the change")
	}
	save := os.Getenv("STUDIOSHEET_SAVE") == "1"
	backdrop, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "samples", "backdrop.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{
		filepath.Join(datasets.Dir(), "plates-web-cc0"),
		filepath.Join(datasets.ExtraDir(), "plates-openimages"),
		filepath.Join(datasets.ExtraDir(), "plates-openlpr"),
	}
	ctx := context.Background()
	var tiles []image.Image
	for _, dir := range sets {
		var files []string
		if save {
			files = pick(t, dir)
			if err := os.MkdirAll(before, 0o755); err != nil {
				t.Fatal(err)
			}
		} else {
			files = picked(t, before, filepath.Base(dir))
		}
		for _, f := range files {
			photo, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			p := imageops.Params{Op: imageops.CarShadow, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}
			res, err := imageops.Process(ctx, imageops.Input{Photo: photo, Backdrop: backdrop}, p)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			saved := filepath.Join(before, filepath.Base(dir)+"--"+filepath.Base(f)+".jpg")
			if save {
				if err := os.WriteFile(saved, res.Body, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			old, err := os.ReadFile(saved)
			if err != nil {
				t.Fatal(err)
			}
			tiles = append(tiles, tile(t, photo, old, res.Body, filepath.Base(f)))
		}
	}
	if save {
		t.Logf("saved the answers before the change in %s", before)
		return
	}
	const cols = 2
	tb := tiles[0].Bounds()
	sheet := image.NewRGBA(image.Rect(0, 0, cols*tb.Dx(), (len(tiles)+cols-1)/cols*tb.Dy()))
	for i, tl := range tiles {
		draw.Draw(sheet, tb.Add(image.Pt(i%cols*tb.Dx(), i/cols*tb.Dy())), tl, image.Point{}, draw.Src)
	}
	out := os.Getenv("STUDIOSHEET_OUT")
	if out == "" {
		out = "/tmp/studio-sheet.jpg"
	}
	var buf bytes.Buffer
	if err := codec.EncodeJPEG(&buf, sheet, 82, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d photos", out, len(tiles))
}

// pick returns the set's first perSet whole-car photos, in the order of
// fnv32a of their file names.
func pick(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
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
	hash := func(s string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(filepath.Base(s)))
		return h.Sum32()
	}
	slices.SortFunc(labels, func(a, b struct {
		File   string `json:"file"`
		Width  int    `json:"width"`
		Plates []struct {
			W float64 `json:"w"`
		} `json:"plates"`
	}) int {
		return int(int64(hash(a.File)) - int64(hash(b.File)))
	})
	var files []string
	for _, l := range labels {
		if len(files) == perSet {
			break
		}
		closeUp := false
		for _, p := range l.Plates {
			closeUp = closeUp || p.W > 0.3*float64(l.Width)
		}
		if closeUp || l.Width < 400 {
			continue
		}
		photo, err := os.ReadFile(filepath.Join(dir, l.File))
		if err != nil {
			t.Fatal(err)
		}
		in, err := codec.Decode(context.Background(), photo, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if wholeCar(t, in.Image) {
			files = append(files, l.File)
		}
	}
	if len(files) < perSet {
		t.Fatalf("%s: %d whole-car photos, want %d", dir, len(files), perSet)
	}
	return files
}

// picked returns the files of set whose answers the first run saved in
// before, in the order it picked them.
func picked(t *testing.T, before, set string) []string {
	t.Helper()
	ents, err := os.ReadDir(before)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		if name, ok := strings.CutPrefix(e.Name(), set+"--"); ok {
			files = append(files, filepath.Join("images", strings.TrimSuffix(name, ".jpg")))
		}
	}
	if len(files) != perSet {
		t.Fatalf("%s: %d answers saved in %s, want %d", set, len(files), before, perSet)
	}
	return files
}

// wholeCar reports whether img's cut-out is a whole car (see the package
// comment).
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

// tile is the photo, the answer before and the answer after, side by side,
// with the file's name and a number to name defects by.
func tile(t *testing.T, photo, before, after []byte, name string) image.Image {
	t.Helper()
	const w, h, pw = 1000, 260, 200
	dec := func(b []byte) image.Image {
		im, err := codec.Decode(context.Background(), b, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return im.Image
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(out, out.Rect, image.NewUniform(color.RGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
	put := func(im image.Image, x0, x1 int) {
		b := im.Bounds()
		bw, bh := x1-x0-4, h-20
		if b.Dx()*bh > b.Dy()*bw {
			bh = bw * b.Dy() / b.Dx()
		} else {
			bw = bh * b.Dx() / b.Dy()
		}
		draw.CatmullRom.Scale(out, image.Rect(x0+2, 2, x0+2+bw, 2+bh), im, b, draw.Src, nil)
	}
	put(dec(photo), 0, pw)
	put(dec(before), pw, pw+(w-pw)/2)
	put(dec(after), pw+(w-pw)/2, w)
	d := font.Drawer{Dst: out, Src: image.NewUniform(color.White), Face: basicfont.Face7x13, Dot: fixed.P(4, h-5)}
	d.DrawString(fmt.Sprintf("%s    before | after", name))
	return out
}
