package imageops

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
	"carphoto/internal/testenv/imgtest"
)

// platePhoto is a real photo of a car whose plate the detector finds, with
// a transparent band across its top and a half-transparent one down its
// right side, as a cut-out or a composited listing image has.
func platePhoto(t *testing.T) *image.NRGBA {
	t.Helper()
	data := imgtest.Sample(t, "car.jpg")
	p, err := codec.Decode(context.Background(), data, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	img := codec.ToNRGBA(p.Image)
	b := img.Rect
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			switch {
			case y < b.Dy()/8:
				img.Pix[img.PixOffset(x, y)+3] = 0
			case x >= b.Dx()*11/12:
				img.Pix[img.PixOffset(x, y)+3] = 128
			}
		}
	}
	return img
}

// nearHide reports whether (x, y) lies in the bounds of a hidden region or
// a quarter of its height around them, which the blur's soft edge reaches.
func nearHide(found []plates.Plate, x, y int) bool {
	for _, f := range found {
		lo, hi := f.Hide[0], f.Hide[0]
		for _, p := range f.Hide {
			lo = plates.Point{X: min(lo.X, p.X), Y: min(lo.Y, p.Y)}
			hi = plates.Point{X: max(hi.X, p.X), Y: max(hi.Y, p.Y)}
		}
		m := max(4, (hi.Y-lo.Y)/4)
		if float64(x) >= lo.X-m && float64(x) <= hi.X+m && float64(y) >= lo.Y-m && float64(y) <= hi.Y+m {
			return true
		}
	}
	return false
}

// A PNG or WebP with transparency comes back from blur-plates in its own
// format with the same alpha, the plate hidden; asked for a JPEG, the
// transparent parts come out white, not black.
func TestTransparentInputKeepsFormatAndAlpha(t *testing.T) {
	img := platePhoto(t)
	found, err := plates.Detect(context.Background(), img)
	if err != nil || len(found) == 0 {
		t.Fatalf("the test photo's plate is not found (%v); pick another photo", err)
	}
	lim := codec.Limits{MaxPixels: 1e7}
	for _, format := range []string{"png", "webp"} {
		t.Run(format, func(t *testing.T) {
			var in bytes.Buffer
			if format == "png" {
				err = codec.EncodePNG(&in, img, nil)
			} else {
				err = codec.EncodeWebP(&in, img, 90)
			}
			if err != nil {
				t.Fatal(err)
			}
			sent, err := codec.Decode(context.Background(), in.Bytes(), lim)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Process(context.Background(), Input{Photo: in.Bytes(), Limits: lim}, Params{Op: BlurPlates, Style: "blur"})
			if err != nil {
				t.Fatal(err)
			}
			if res.ContentType != "image/"+format || res.PlatesFound == 0 {
				t.Fatalf("answer %q with %d plates, want image/%s with the plate", res.ContentType, res.PlatesFound, format)
			}
			got, err := codec.Decode(context.Background(), res.Body, lim)
			if err != nil {
				t.Fatal(err)
			}
			a, b := codec.ToNRGBA(sent.Image), codec.ToNRGBA(got.Image)
			if a.Rect != b.Rect {
				t.Fatalf("size %v, sent %v", b.Rect, a.Rect)
			}
			changed, plate := 0, 0
			for y := range a.Rect.Dy() {
				for x := range a.Rect.Dx() {
					i := a.PixOffset(x, y)
					if nearHide(found, x, y) {
						if a.Pix[i] != b.Pix[i] {
							plate++
						}
						continue
					}
					if a.Pix[i+3] != b.Pix[i+3] {
						changed++
					}
				}
			}
			if changed > 0 {
				t.Errorf("alpha changed at %d pixels outside the plates", changed)
			}
			if plate == 0 {
				t.Errorf("the plate's pixels are unchanged: not hidden")
			}
		})
	}
	t.Run("jpeg asked", func(t *testing.T) {
		var in bytes.Buffer
		if err := codec.EncodePNG(&in, img, nil); err != nil {
			t.Fatal(err)
		}
		res, err := Process(context.Background(), Input{Photo: in.Bytes(), Limits: lim}, Params{Op: BlurPlates, Style: "blur", Format: "jpeg"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := codec.Decode(context.Background(), res.Body, lim)
		if err != nil || res.ContentType != "image/jpeg" || got.Format != "jpeg" {
			t.Fatalf("answer %q (%v), want a JPEG", res.ContentType, err)
		}
		r, g, b, _ := got.Image.At(img.Rect.Dx()/2, 2).RGBA()
		if r>>8 < 245 || g>>8 < 245 || b>>8 < 245 {
			t.Errorf("a transparent pixel came out (%d,%d,%d), want white", r>>8, g>>8, b>>8)
		}
	})
}

// format asks for another answer format than the operation's own: a JPEG
// photo comes back as WebP or PNG, and car-shadow as a JPEG on white.
func TestFormatAsked(t *testing.T) {
	lim := codec.Limits{MaxPixels: 1e7}
	in := phoneJPEG(t, 320, 200, 85, nil)
	for _, format := range []string{"webp", "png"} {
		res, err := Process(context.Background(), Input{Photo: in, Limits: lim}, Params{Op: BlurPlates, Format: format})
		if err != nil {
			t.Fatal(err)
		}
		got, err := codec.Decode(context.Background(), res.Body, lim)
		if err != nil || res.ContentType != "image/"+format || got.Format != format {
			t.Errorf("asked %s: answer %q, decoded as %v (%v)", format, res.ContentType, got, err)
		}
	}
	car := image.NewNRGBA(image.Rect(0, 0, 240, 120))
	for y := 30; y < 110; y++ {
		for x := 20; x < 220; x++ {
			car.SetNRGBA(x, y, color.NRGBA{200, 30, 40, 255})
		}
	}
	var png bytes.Buffer
	if err := codec.EncodePNG(&png, car, nil); err != nil {
		t.Fatal(err)
	}
	res, err := Process(context.Background(), Input{Photo: png.Bytes(), Limits: lim}, Params{Op: CarShadow, Format: "jpeg"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := codec.Decode(context.Background(), res.Body, lim)
	if err != nil || res.ContentType != "image/jpeg" {
		t.Fatalf("car-shadow asked jpeg: %q (%v)", res.ContentType, err)
	}
	if r, g, b, _ := got.Image.At(3, 3).RGBA(); r>>8 < 245 || g>>8 < 245 || b>>8 < 245 {
		t.Errorf("car-shadow as JPEG: the background is (%d,%d,%d), want white", r>>8, g>>8, b>>8)
	}
}

// An answer written in pieces of every size, across the blocks' edges, comes
// back byte for byte, in one slice of its own length.
func TestAnswerBufferJoins(t *testing.T) {
	var want []byte
	var b answerBuffer
	for i := 0; len(want) < 9<<20; i++ {
		piece := bytes.Repeat([]byte{byte(i)}, (i*7919)%(300<<10)+1)
		if n, err := b.Write(piece); n != len(piece) || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", len(piece), n, err)
		}
		want = append(want, piece...)
	}
	got := b.Bytes()
	if !bytes.Equal(got, want) {
		t.Fatalf("joined %d bytes differ from the %d written", len(got), len(want))
	}
	if cap(got) != len(want) {
		t.Errorf("the answer's slice holds %d bytes for %d", cap(got), len(want))
	}
}
