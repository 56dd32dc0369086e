package imageops

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"testing"
	"unicode"

	"carphoto/imageops/codec"
	"carphoto/imageops/textrec"
	"carphoto/internal/testenv/imgtest"
)

// TestBlurPlatesHidesTheListingPlate: the listing-size sample (4000×2672,
// a white BMW, its plate "5511 G…" about 100 px high on a steeply angled
// front bumper at the photo's right edge) comes back from blur-plates with
// its plate unreadable. The text reader reads a plate-like string on the
// plate's quad in the photo sent and none in the answer. A 960-pixel look
// at the whole photo marks no text there: the plate is found only by the
// detail look (imageops/plates/text.go).
func TestBlurPlatesHidesTheListingPlate(t *testing.T) {
	photo, err := os.ReadFile(imgtest.SamplePath("listing.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := Process(ctx, Input{Photo: photo, Limits: codec.Limits{MaxPixels: 2e7}}, Params{Op: BlurPlates, Style: "blur"})
	if err != nil {
		t.Fatal(err)
	}
	if res.PlatesFound < 1 {
		t.Errorf("X-Plates-Found %d, want the BMW's plate", res.PlatesFound)
	}
	// The plate's corners, clockwise from its top-left (it rises to the
	// right).
	plate := textrec.Quad{{X: 3712, Y: 1618}, {X: 3932, Y: 1508}, {X: 3927, Y: 1682}, {X: 3707, Y: 1772}}
	before, err := jpeg.Decode(bytes.NewReader(photo))
	if err != nil {
		t.Fatal(err)
	}
	after, err := jpeg.Decode(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	if b := after.Bounds(); b != before.Bounds() {
		t.Fatalf("answer %v, want the photo's %v", b, before.Bounds())
	}
	for _, c := range []struct {
		name     string
		img      image.Image
		readable bool
	}{{"the photo sent", before, true}, {"blur-plates' answer", after, false}} {
		r, err := textrec.Read(ctx, c.img, plate)
		if err != nil {
			t.Fatal(err)
		}
		if got := plateLikeReading(r); got != c.readable {
			t.Errorf("%s: a plate-like string read on the plate: %v, want %v", c.name, got, c.readable)
		}
	}
}

// TestPlateLogoDesignsTheListingPlate: plate-logo puts the design on the
// listing sample's plate (issue 80): the finder doubts it (a turned plate
// on a white bumper), but it sits where a plate sits on the BMW the
// vehicle detector finds, so it is designed, not only hidden.
func TestPlateLogoDesignsTheListingPlate(t *testing.T) {
	photo, err := os.ReadFile(imgtest.SamplePath("listing.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	design, err := os.ReadFile(imgtest.SamplePath("plate-design.png"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Process(t.Context(), Input{Photo: photo, Design: design, Limits: codec.Limits{MaxPixels: 2e7}}, Params{Op: PlateLogo})
	if err != nil {
		t.Fatal(err)
	}
	if res.PlatesFound < 1 || res.PlatesDesigned < 1 {
		t.Errorf("X-Plates-Found %d, X-Plates-Designed %d: want the BMW's plate found and designed", res.PlatesFound, res.PlatesDesigned)
	}
}

// plateLikeReading is the answer check of carphoto-lab bench plates: 4 or
// more letters and digits, a digit among them, read with a mean confidence
// of at least 0.6.
func plateLikeReading(r textrec.Reading) bool {
	letters, digits := 0, 0
	for _, c := range r.Text {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c < unicode.MaxASCII && unicode.IsLetter(c):
			letters++
		}
	}
	return letters+digits >= 4 && digits >= 1 && r.Mean() >= 0.6
}
