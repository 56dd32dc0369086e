package paint

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
)

// blockPhoto is a 4:2:0 JPEG of a textured scene, w×h.
func blockPhoto(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 7), uint8(y * 5), uint8((x ^ y) * 3), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestBlockJPEGHidesPlate hides a plate through the block path: the plate
// is black in the answer, and every pixel of an MCU the hidden region does
// not reach decodes as in the input.
func TestBlockJPEGHidesPlate(t *testing.T) {
	in := blockPhoto(t, 203, 141)
	ctx := context.Background()
	b, err := OpenBlockJPEG(ctx, in, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	q := plates.Quad{{X: 70, Y: 60}, {X: 130, Y: 62}, {X: 129, Y: 80}, {X: 71, Y: 78}}
	out, err := b.HidePlates(ctx, []plates.Quad{q}, StyleBlack)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := jpeg.Decode(bytes.NewReader(in))
	o, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	reach, _ := plateReach(q)
	mcu := image.Rect(reach.Min.X/16*16, reach.Min.Y/16*16, (reach.Max.X+15)/16*16, (reach.Max.Y+15)/16*16)
	for y := range 141 {
		for x := range 203 {
			pa, po := a.(*image.YCbCr).YCbCrAt(x, y), o.(*image.YCbCr).YCbCrAt(x, y)
			inside := image.Pt(x, y).In(mcu)
			if !inside && pa != po {
				t.Fatalf("pixel (%d,%d) outside the edited MCUs %v changed: %v → %v", x, y, mcu, pa, po)
			}
		}
	}
	if y := o.(*image.YCbCr).YCbCrAt(100, 70).Y; y > 40 {
		t.Errorf("the plate's centre has luma %d after hiding in black", y)
	}
}

func TestBlockJPEGEditShare(t *testing.T) {
	b, err := OpenBlockJPEG(context.Background(), blockPhoto(t, 400, 300), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	small := plates.Quad{{X: 100, Y: 100}, {X: 140, Y: 100}, {X: 140, Y: 110}, {X: 100, Y: 110}}
	large := plates.Quad{{X: 50, Y: 100}, {X: 350, Y: 100}, {X: 350, Y: 180}, {X: 50, Y: 180}}
	if s := b.EditShare([]plates.Quad{small}); s > 0.1 {
		t.Errorf("a 40×10 plate of a 400×300 photo: share %.2f", s)
	}
	if s := b.EditShare([]plates.Quad{large}); s < 0.5 {
		t.Errorf("a 300×80 plate of a 400×300 photo: share %.2f", s)
	}
}

// TestBlockJPEGPlaceLogoMatchesFullPath checks that plate-logo looks the
// same through the block path (the JPEG edited in its own blocks) as
// through the full path (the photo decoded and painted in place): the
// design on the plate and the surroundings carried over its margin, for
// a plate in the open and one at the photo's edge, and the blur of a
// doubtful detection.
func TestBlockJPEGPlaceLogoMatchesFullPath(t *testing.T) {
	ctx := context.Background()
	scene := renderScene()
	quads := []plates.Quad{
		{{X: 150, Y: 150}, {X: 330, Y: 140}, {X: 328, Y: 230}, {X: 152, Y: 236}},
		renderRect(520, 300, 90, 40), // past the right edge
	}
	unsure := []plates.Quad{renderRect(60, 320, 80, 30)}
	for i, q := range append(quads, unsure...) {
		renderPlate(scene, q, uint64(i+1))
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, scene, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBlockJPEG(ctx, buf.Bytes(), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := b.PlaceLogo(ctx, quads, unsure, logoSquareOnBlue())
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := jpeg.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := jpeg.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	full, err := PlaceLogoInPlace(ctx, decoded, quads, unsure, logoSquareOnBlue())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(quads, unsure...) {
		_, w := plateReach(q)
		d, n := renderMeanDiff(copyForRender(full), copyForRender(blocks), w.Intersect(full.Bounds()), func(int, int) bool { return true })
		t.Logf("plate %v: %d px, mean grey difference %.2f", q.Bounds(), n, d)
		// The block path codes the edited MCUs again at the file's
		// quality: JPEG noise, no visible difference.
		if d > 1.5 {
			t.Errorf("plate %v: the block path's answer differs from the full path's by %.2f grey levels on average; want ≤ 1.5", q.Bounds(), d)
		}
	}
}
