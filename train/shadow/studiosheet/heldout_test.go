//go:build studiosheet

package studiosheet

// The studio sheet of issue 70 (item 6): car-shadow with plates=blur on the
// sample backdrop at the default placement, for the 24 held-out photos of
// train/cutout/heldout.txt (chosen before any training), each photo beside
// its answer, numbered to be judged in writing (docs/research/cutout.md).
// A refusal is drawn as its error code. With STUDIOSHEET_ANSWERS each answer
// is also saved there at full size (NN-name.jpg, a refusal as NN-name.txt
// with its error), to be judged at the size a dealer publishes it.
//
//	STUDIOSHEET_OUT=$PWD/docs/studio-sheet-heldout.jpg STUDIOSHEET_ANSWERS=/tmp/answers \
//	    go test -tags studiosheet -run TestStudioSheetHeldOut ./train/shadow/studiosheet/

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

	"carphoto"
	"carphoto/imageops"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/datasets"
)

func TestStudioSheetHeldOut(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	list, err := os.ReadFile(filepath.Join(root, "train", "cutout", "heldout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	backdrop, err := os.ReadFile(filepath.Join(root, "docs", "samples", "backdrop.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	answers := os.Getenv("STUDIOSHEET_ANSWERS")
	if answers != "" {
		if err := os.MkdirAll(answers, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	const w, h, pw = 640, 240, 240
	var tiles []image.Image
	for _, line := range strings.Split(string(list), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		set, file, _ := strings.Cut(line, "/")
		dir := filepath.Join(datasets.Dir(), set)
		if set != "plates-web-cc0" {
			dir = datasets.Extra(t, set)
		}
		photo, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		p := imageops.Params{Op: imageops.CarShadow, Plates: imageops.Plates{Hide: paint.StyleBlur},
			Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}
		res, perr := imageops.Process(ctx, imageops.Input{Photo: photo, Backdrop: backdrop}, p)
		if answers != "" {
			name := filepath.Join(answers, fmt.Sprintf("%02d-%s", len(tiles)+1, strings.TrimSuffix(filepath.Base(file), ".jpg")))
			var err error
			if perr != nil {
				err = os.WriteFile(name+".txt", []byte(perr.Error()+"\n"), 0o644)
			} else {
				err = os.WriteFile(name+".jpg", res.Body, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		out := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.Draw(out, out.Rect, image.NewUniform(color.RGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
		put := func(b []byte, x0, x1 int) {
			im, err := codec.Decode(ctx, b, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			r := im.Image.Bounds()
			bw, bh := x1-x0-4, h-20
			if r.Dx()*bh > r.Dy()*bw {
				bh = bw * r.Dy() / r.Dx()
			} else {
				bw = bh * r.Dx() / r.Dy()
			}
			draw.CatmullRom.Scale(out, image.Rect(x0+2, 2, x0+2+bw, 2+bh), im.Image, r, draw.Src, nil)
		}
		put(photo, 0, pw)
		label := fmt.Sprintf("%d  %s", len(tiles)+1, filepath.Base(file))
		if perr != nil {
			label += "   " + carphoto.ErrorCode(perr)
		} else {
			put(res.Body, pw, w)
		}
		d := font.Drawer{Dst: out, Src: image.NewUniform(color.White), Face: basicfont.Face7x13, Dot: fixed.P(4, h-5)}
		d.DrawString(label)
		tiles = append(tiles, out)
	}
	const cols = 2
	sheet := image.NewRGBA(image.Rect(0, 0, cols*w, (len(tiles)+cols-1)/cols*h))
	for i, tl := range tiles {
		draw.Draw(sheet, image.Rect(0, 0, w, h).Add(image.Pt(i%cols*w, i/cols*h)), tl, image.Point{}, draw.Src)
	}
	out := os.Getenv("STUDIOSHEET_OUT")
	if out == "" {
		out = "/tmp/studio-sheet-heldout.jpg"
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
